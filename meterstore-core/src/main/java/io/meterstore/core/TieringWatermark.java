package io.meterstore.core;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * The boundary between the tiers: PostgreSQL holds exactly the rows with "from" at or above it, Iceberg exactly
 * the rows below it. It lives in the Iceberg snapshot summary, so data and boundary become durable in one commit.
 */
public record TieringWatermark(Instant instant)
        implements Comparable<TieringWatermark>
{
    /** A table with no snapshot has W = the Unix epoch: everything is hot. */
    public static final TieringWatermark EPOCH = new TieringWatermark(Instant.EPOCH);

    public static final String WATERMARK_KEY = "meterstore.tiering_watermark";
    public static final String ROW_COUNT_KEY = "meterstore.row_count";
    public static final String ARCHIVED_RANGE_KEY = "meterstore.archived_range";
    public static final String ARCHIVAL_STEP_KEY = "meterstore.archival_step";
    public static final String ARCHIVED_AT_KEY = "meterstore.archived_at";
    /** The hot partition an archival commit streamed, so its drop can check the commit holds all its rows. */
    public static final String ARCHIVED_PARTITION_KEY = "meterstore.archived_partition";

    public TieringWatermark
    {
        requireNonNull(instant, "instant is null");
    }

    public static TieringWatermark of(Instant instant)
    {
        return new TieringWatermark(instant);
    }

    /** The watermark a snapshot summary carries, if it carries one. */
    public static Optional<TieringWatermark> fromSummary(Map<String, String> summary)
    {
        String value = summary == null ? null : summary.get(WATERMARK_KEY);
        if (value == null) {
            return Optional.empty();
        }
        return Optional.of(new TieringWatermark(parseInstant(WATERMARK_KEY, value)));
    }

    /** Whether an interval starting at {@code from} lives in PostgreSQL, by the one rule ({@link Tier}). */
    public boolean isHot(Instant from)
    {
        return Tier.of(from, this) == Tier.HOT;
    }

    public String toProperty()
    {
        return formatInstant(instant);
    }

    @Override
    public int compareTo(TieringWatermark other)
    {
        return instant.compareTo(other.instant);
    }

    public boolean isAfter(TieringWatermark other)
    {
        return instant.isAfter(other.instant);
    }

    /** RFC 3339 in UTC, as the Rust MeterStore writes it. */
    public static String formatInstant(Instant instant)
    {
        return DateTimeFormatter.ISO_INSTANT.format(instant);
    }

    public static Instant parseInstant(String key, String value)
    {
        try {
            return OffsetDateTime.parse(value, DateTimeFormatter.ISO_OFFSET_DATE_TIME).toInstant();
        }
        catch (DateTimeParseException e) {
            throw new MeterstoreException(MeterstoreException.Reason.WATERMARK_MALFORMED,
                    "Snapshot property '%s' is '%s', which is not an RFC 3339 instant: repair the snapshot summary or reassert the watermark".formatted(key, value), e);
        }
    }

    @Override
    public String toString()
    {
        return toProperty();
    }
}
