package io.meterstore.archiver.lease;

/** The session of a held lease died or no longer holds its lock: the cycle must stop before it changes anything more. */
public class LeaseLostException
        extends RuntimeException
{
    public LeaseLostException(String message)
    {
        super(message);
    }

    public LeaseLostException(String message, Throwable cause)
    {
        super(message, cause);
    }
}
