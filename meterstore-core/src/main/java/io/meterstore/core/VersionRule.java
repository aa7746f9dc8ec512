package io.meterstore.core;

import java.math.BigInteger;
import java.time.Instant;

import static java.util.Objects.requireNonNull;

/**
 * The one rule for which version of a reading wins: among the versions of a merge key (malo_id, obis_code, "from")
 * within one version_scope, the highest version, a tie broken by the latest recorded_at. The connector resolves reads
 * with it, the writers of the cold tier split winners from superseded versions with it; each calls it rather than
 * restating it. A key delivered under two version scopes has a winner in each.
 */
public final class VersionRule
{
    private VersionRule() {}

    /** Positive when the first version beats the second, negative when it loses, zero when they are equal. */
    public static int compare(BigInteger version, Instant recordedAt, BigInteger otherVersion, Instant otherRecordedAt)
    {
        int byVersion = version.compareTo(otherVersion);
        if (byVersion != 0) {
            return byVersion;
        }
        return recordedAt.compareTo(otherRecordedAt);
    }

    /**
     * As {@link #compare(BigInteger, Instant, BigInteger, Instant)}, for versions held as the two halves of a signed
     * 128-bit integer (as Trino's decimal(20,0) blocks hold them) and recorded_at as microseconds since the epoch.
     */
    public static int compare(long versionHigh, long versionLow, long recordedAtMicros, long otherVersionHigh, long otherVersionLow, long otherRecordedAtMicros)
    {
        int byVersion = Long.compare(versionHigh, otherVersionHigh);
        if (byVersion == 0) {
            byVersion = Long.compareUnsigned(versionLow, otherVersionLow);
        }
        if (byVersion != 0) {
            return byVersion;
        }
        return Long.compare(recordedAtMicros, otherRecordedAtMicros);
    }

    /** Whether {@code reading} beats {@code other}, a version of the same key and scope. */
    public static boolean beats(Reading reading, Reading other)
    {
        return compare(reading.version(), reading.recordedAt(), other.version(), other.recordedAt()) > 0;
    }

    /** Whether two versions compete: the same merge key in the same version scope. */
    public static boolean sameKey(Reading reading, Reading other)
    {
        requireNonNull(reading, "reading is null");
        requireNonNull(other, "other is null");
        return reading.maloId().equals(other.maloId())
                && reading.obisCode().equals(other.obisCode())
                && reading.from().equals(other.from())
                && reading.versionScope().equals(other.versionScope());
    }
}
