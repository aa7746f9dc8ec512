package io.meterstore.core;

import com.google.common.collect.ImmutableMap;
import org.apache.iceberg.TableProperties;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static io.meterstore.core.MeterstoreException.Reason.SUMMARY_MALFORMED;
import static java.util.Objects.requireNonNull;

/**
 * How long a readings table keeps its history: a snapshot older than the retention is expired, except the newest
 * {@code minSnapshotsToKeep}. Recorded as Iceberg's own table properties, as the Rust MeterStore records them, so any
 * engine that expires the table keeps the same history and a reader can name the retention when a snapshot is gone.
 */
public record SnapshotRetention(Duration maxSnapshotAge, int minSnapshotsToKeep)
{
    /** Ten years (3,653 days), as the Rust MeterStore: a settlement can be rerun against any snapshot of the decade. */
    public static final Duration DEFAULT_MAX_SNAPSHOT_AGE = Duration.ofDays(3653);
    public static final int DEFAULT_MIN_SNAPSHOTS_TO_KEEP = 20;
    public static final SnapshotRetention DEFAULT = new SnapshotRetention(DEFAULT_MAX_SNAPSHOT_AGE, DEFAULT_MIN_SNAPSHOTS_TO_KEEP);

    public SnapshotRetention
    {
        requireNonNull(maxSnapshotAge, "maxSnapshotAge is null");
        checkArgument(!maxSnapshotAge.isNegative(), "maxSnapshotAge must not be negative");
        checkArgument(minSnapshotsToKeep >= 1, "minSnapshotsToKeep must be at least 1");
    }

    /** The table properties recording this retention. */
    public Map<String, String> properties()
    {
        return ImmutableMap.of(
                TableProperties.MAX_SNAPSHOT_AGE_MS, String.valueOf(maxSnapshotAge.toMillis()),
                TableProperties.MIN_SNAPSHOTS_TO_KEEP, String.valueOf(minSnapshotsToKeep));
    }

    /** The retention a table records, if it records both properties. */
    public static Optional<SnapshotRetention> of(Map<String, String> tableProperties)
    {
        String age = tableProperties.get(TableProperties.MAX_SNAPSHOT_AGE_MS);
        String keep = tableProperties.get(TableProperties.MIN_SNAPSHOTS_TO_KEEP);
        if (age == null || keep == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(new SnapshotRetention(Duration.ofMillis(Long.parseLong(age)), Integer.parseInt(keep)));
        }
        catch (IllegalArgumentException e) {
            throw new MeterstoreException(SUMMARY_MALFORMED, "Table properties '%s' = '%s' and '%s' = '%s' are not a snapshot retention: set them to a number of milliseconds and a number of snapshots of at least 1"
                    .formatted(TableProperties.MAX_SNAPSHOT_AGE_MS, age, TableProperties.MIN_SNAPSHOTS_TO_KEEP, keep), e);
        }
    }

    /** For operators: {@code snapshots older than 3653d, except the newest 20}. */
    public String describe()
    {
        return "snapshots older than %s, except the newest %s".formatted(format(maxSnapshotAge), minSnapshotsToKeep);
    }

    /** A duration as an operator writes it in the configuration: {@code 3653d}, {@code 12h}, {@code 90m}, {@code 30s}. */
    public static String format(Duration duration)
    {
        long seconds = duration.toSeconds();
        if (seconds % 86_400 == 0 && seconds != 0) {
            return seconds / 86_400 + "d";
        }
        if (seconds % 3_600 == 0 && seconds != 0) {
            return seconds / 3_600 + "h";
        }
        if (seconds % 60 == 0 && seconds != 0) {
            return seconds / 60 + "m";
        }
        if (duration.toMillis() % 1000 == 0) {
            return seconds + "s";
        }
        return duration.toMillis() + "ms";
    }
}
