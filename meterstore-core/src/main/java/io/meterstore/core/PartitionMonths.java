package io.meterstore.core;

import org.apache.iceberg.expressions.Expression;

import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneOffset;

/**
 * The months the cold tier is partitioned by, month("from") ({@link IcebergTableSpec}): calendar months of UTC, which a
 * partition value counts from January 1970. Archival, compaction, retention and the resolved layout all cut "from" at
 * these bounds, so they are computed here alone.
 */
public final class PartitionMonths
{
    private static final YearMonth PARTITION_EPOCH = YearMonth.of(1970, 1);

    private PartitionMonths() {}

    /** The first instant of {@code month}. */
    public static Instant start(YearMonth month)
    {
        return month.atDay(1).atStartOfDay(ZoneOffset.UTC).toInstant();
    }

    /** The first instant after {@code month}: the month is [start, end). */
    public static Instant end(YearMonth month)
    {
        return start(month.plusMonths(1));
    }

    /** The month whose partition holds an interval starting at {@code from}. */
    public static YearMonth of(Instant from)
    {
        return YearMonth.from(from.atOffset(ZoneOffset.UTC));
    }

    /** The month of a month("from") partition value: months since January 1970. */
    public static YearMonth ofPartitionValue(int monthsSinceEpoch)
    {
        return PARTITION_EPOCH.plusMonths(monthsSinceEpoch);
    }

    /** The month("from") partition value of {@code month}: months since January 1970. */
    public static int partitionValue(YearMonth month)
    {
        return (month.getYear() - PARTITION_EPOCH.getYear()) * 12 + month.getMonthValue() - PARTITION_EPOCH.getMonthValue();
    }

    /** Iceberg: "from" in {@code month}. */
    public static Expression iceberg(YearMonth month)
    {
        return Tier.icebergBetween(start(month), end(month));
    }
}
