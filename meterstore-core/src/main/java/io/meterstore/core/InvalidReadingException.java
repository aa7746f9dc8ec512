package io.meterstore.core;

/** A value that breaks a rule of the readings model; the message names the value and the rule. */
public class InvalidReadingException
        extends IllegalArgumentException
{
    public InvalidReadingException(String message)
    {
        super(message);
    }
}
