package io.meterstore.core;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * Hot partitions are one per archival step, aligned to the Unix epoch in UTC and named
 * {@code <table>_YYYY_MM_DD_HHMM} after their start.
 */
public record PartitionNaming(String table, Duration step)
{
    public static final Duration DEFAULT_STEP = Duration.ofDays(1);
    private static final DateTimeFormatter SUFFIX = DateTimeFormatter.ofPattern("uuuu_MM_dd_HHmm");
    private static final long DAY_SECONDS = 86_400;
    // "_2026_01_01_0000": a constant, so that configuration messages can name the length
    private static final int SUFFIX_LENGTH = 16;
    // PostgreSQL truncates identifiers at 63 bytes; a partition name must survive that intact
    public static final int MAX_TABLE_NAME_LENGTH = 63 - SUFFIX_LENGTH;
    private static final String TABLE_NAME = "[a-z_][a-z0-9_]*";

    public PartitionNaming
    {
        requireNonNull(table, "table is null");
        requireNonNull(step, "step is null");
        checkArgument(table.matches(TABLE_NAME), "Table name '%s' must be lowercase letters, digits and underscores", table);
        checkArgument(table.length() <= MAX_TABLE_NAME_LENGTH, "Table name '%s' is longer than %s characters", table, MAX_TABLE_NAME_LENGTH);
        checkArgument(isValidStep(step), "Archival step %s must be whole minutes that divide a day, or whole days", step);
    }

    /** Whether {@code table} can name a hot table and its partitions: what configurations check before anything runs. */
    public static boolean isValidTableName(String table)
    {
        return table.matches(TABLE_NAME) && table.length() <= MAX_TABLE_NAME_LENGTH;
    }

    /** Whether {@code step} can be an archival step. */
    public static boolean isValidStep(Duration step)
    {
        long seconds = step.toSeconds();
        // names have minute resolution, and epoch alignment must put every day boundary on a partition boundary
        return step.equals(Duration.ofSeconds(seconds)) && seconds >= 60 && seconds % 60 == 0 && (DAY_SECONDS % seconds == 0 || seconds % DAY_SECONDS == 0);
    }

    public Instant alignDown(Instant instant)
    {
        long stepSeconds = step.toSeconds();
        return Instant.ofEpochSecond(Math.floorDiv(instant.getEpochSecond(), stepSeconds) * stepSeconds);
    }

    /** {@link #alignDown} as a PostgreSQL expression over a timestamptz expression: the start of its partition. */
    public String alignDownSql(String timestamptz)
    {
        // the step is a whole number of seconds, the origin the epoch: exactly the alignment above
        return "date_bin(interval '%d seconds', %s, timestamptz '1970-01-01 00:00:00+00')".formatted(step.toSeconds(), timestamptz);
    }

    public boolean isAligned(Instant instant)
    {
        return instant.getNano() == 0 && alignDown(instant).equals(instant);
    }

    public String partitionName(Instant start)
    {
        checkArgument(isAligned(start), "Partition start %s is not aligned to the archival step %s", start, step);
        return table + "_" + SUFFIX.format(LocalDateTime.ofInstant(start, ZoneOffset.UTC));
    }

    /** The start a partition name stands for, or empty if the name is not one of this table's partitions. */
    public Optional<Instant> partitionStart(String name)
    {
        if (name.length() != table.length() + SUFFIX_LENGTH || !name.startsWith(table + "_")) {
            return Optional.empty();
        }
        try {
            String suffix = name.substring(table.length() + 1);
            LocalDateTime start = LocalDateTime.parse(suffix, SUFFIX);
            // java.time resolves impossible dates leniently (02_30 becomes 02_28): only a name that round-trips is ours
            if (!SUFFIX.format(start).equals(suffix)) {
                return Optional.empty();
            }
            // deliberately not checked against the step: a reader configured with another step must still see every partition
            return Optional.of(start.toInstant(ZoneOffset.UTC));
        }
        catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }

    /** A LIKE pattern that matches every partition name of this table (and is re-checked by {@link #partitionStart}). */
    public String likePattern()
    {
        return table.replace("_", "\\_") + "\\_____\\___\\___\\_____";
    }
}
