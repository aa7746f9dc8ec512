package io.meterstore.core;

import com.google.common.hash.HashFunction;
import com.google.common.hash.Hashing;

import static com.google.common.base.Preconditions.checkArgument;
import static java.nio.charset.StandardCharsets.UTF_8;

/**
 * The secret under which an erasure records its scope: HMAC-SHA256 of each erased malo_id, so the audit trail and the
 * suppression list never hold the identifier of the person whose data was erased, and still recognise it when the
 * same malo_id is written again. Without the key the scope cannot be recomputed, so it must be the same on every
 * node and in the archiver ({@code meterstore.erasure.hmac-key}); its {@link #fingerprint()} is recorded beside each
 * scope so that a changed key is noticed instead of silently matching nothing. Never printed.
 */
public final class ErasureKey
{
    public static final int MIN_LENGTH = 32;
    // what the fingerprint is the HMAC of: a fixed text, never a malo_id
    private static final String FINGERPRINT_INPUT = "meterstore.erasure.key-fingerprint";

    private final HashFunction hmac;
    private final String fingerprint;

    private ErasureKey(String secret)
    {
        this.hmac = Hashing.hmacSha256(secret.getBytes(UTF_8));
        this.fingerprint = hmac.hashString(FINGERPRINT_INPUT, UTF_8).toString().substring(0, 16);
    }

    /** The key of {@code secret}, at least {@value #MIN_LENGTH} characters (e.g. {@code openssl rand -hex 32}). */
    public static ErasureKey of(String secret)
    {
        checkArgument(secret.length() >= MIN_LENGTH, "meterstore.erasure.hmac-key must have at least %s characters", MIN_LENGTH);
        return new ErasureKey(secret);
    }

    /** The scope of {@code maloId}: its HMAC-SHA256 under this key, as 64 lowercase hex digits. */
    public String scope(String maloId)
    {
        return hmac.hashString(maloId, UTF_8).toString();
    }

    /** 16 hex digits that tell keys apart without revealing them. */
    public String fingerprint()
    {
        return fingerprint;
    }

    @Override
    public String toString()
    {
        return "ErasureKey{fingerprint=" + fingerprint + "}";
    }
}
