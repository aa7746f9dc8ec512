package io.meterstore.trino;

import com.google.inject.Inject;
import io.meterstore.core.HotTier;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.TierSplit;
import io.meterstore.core.TieringWatermark;
import io.meterstore.trino.base.FromRange;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.meterstore.trino.base.MeterstoreTables;
import io.meterstore.trino.base.MeterstoreTypes;
import io.meterstore.trino.cold.ColdRowEstimate;
import io.meterstore.trino.handle.MeterstoreTableHandle;
import io.meterstore.trino.hot.HotPartitionSizes;
import io.meterstore.trino.hot.HotRowEstimate;
import io.trino.spi.TrinoException;
import io.trino.spi.statistics.ColumnStatistics;
import io.trino.spi.statistics.DoubleRange;
import io.trino.spi.statistics.Estimate;
import io.trino.spi.statistics.StatsUtil;
import io.trino.spi.statistics.TableStatistics;

import java.sql.SQLException;
import java.time.Instant;
import java.util.Optional;
import java.util.stream.Stream;

import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_HOT_READ_FAILED;
import static java.util.Objects.requireNonNull;

/**
 * Statistics for Trino's cost-based optimizer, cheap enough for every plan: the hot rows from PostgreSQL's own
 * statistics of the partitions at or above W (one catalogue read), the cold rows from the pinned snapshot's manifest
 * list (no manifest, no data file), both for the "from" range the handle was narrowed to. The resolved table gets
 * the same count, an upper bound: it has one row per merge key, and most keys have one version.
 */
public final class MeterstoreTableStatistics
{
    private final MeterstoreTables tables;

    @Inject
    public MeterstoreTableStatistics(MeterstoreTables tables)
    {
        this.tables = requireNonNull(tables, "tables is null");
    }

    public TableStatistics statistics(MeterstoreTableHandle handle)
    {
        if (handle.aggregation().isPresent()) {
            // the handle's columns are the aggregation's now; Trino estimates the groups itself
            return TableStatistics.empty();
        }
        TieringWatermark watermark = TieringWatermark.of(MeterstoreTypes.fromEpochMicros(handle.watermarkEpochMicros()));
        TierSplit.Range query = FromRange.of(handle.resolution().pruning(handle.constraint()));
        TierSplit tiers = TierSplit.of(query, watermark);

        ColdRowEstimate cold = tiers.cold().isPresent() && handle.snapshotId().isPresent()
                ? ColdRowEstimate.of(tables.icebergTableListing(handle.storageTable(), handle.snapshotId().get()), handle.snapshotId().get(), watermark.instant(), tiers.cold().get())
                : ColdRowEstimate.EMPTY;
        // a read as of an older snapshot has no hot tier: PostgreSQL keeps no history
        HotRowEstimate hot = !handle.historical() && tiers.hot().isPresent()
                ? hotRows(handle.storageTable(), tiers.hot().get())
                : HotRowEstimate.EMPTY;

        long rows = cold.rows() + hot.rows();
        TableStatistics.Builder statistics = TableStatistics.builder().setRowCount(Estimate.of(rows));
        for (MeterstoreColumnHandle column : MeterstoreTypes.columnHandles(handle.columns())) {
            ColumnStatistics.Builder columnStatistics = ColumnStatistics.builder();
            if (!column.column().nullable()) {
                // stored for every row in both tiers
                columnStatistics.setNullsFraction(Estimate.zero());
            }
            else if (column.is(ReadingsColumn.TO)) {
                // "to" is NULL in every row of a point table, and only there nullable
                columnStatistics.setNullsFraction(Estimate.of(1));
            }
            if (column.is(ReadingsColumn.FROM) && rows > 0) {
                fromRange(query, watermark, cold, hot).ifPresent(columnStatistics::setRange);
            }
            statistics.setColumnStatistics(column, columnStatistics.build());
        }
        return statistics.build();
    }

    private HotRowEstimate hotRows(String storageTable, TierSplit.Range hotRange)
    {
        HotTier hotTier = tables.hotTier(storageTable);
        try {
            return HotRowEstimate.of(tables.readPostgres(connection -> HotPartitionSizes.read(connection, hotTier)), hotTier.naming(), hotRange);
        }
        catch (SQLException e) {
            throw new TrinoException(METERSTORE_HOT_READ_FAILED, "Cannot read the partition statistics of %s: %s".formatted(hotTier.qualifiedParent(), e.getMessage()), e);
        }
    }

    /**
     * The "from" values the rows can have: from the oldest month or partition counted to the end of the newest
     * partition (or W, when the cold tier alone has rows), within the query's range.
     */
    private static Optional<DoubleRange> fromRange(TierSplit.Range query, TieringWatermark watermark, ColdRowEstimate cold, HotRowEstimate hot)
    {
        Optional<Instant> lowest = Stream.of(cold.lowestFrom(), hot.lowestFrom()).flatMap(Optional::stream).min(Instant::compareTo);
        if (lowest.isEmpty() || (cold.rows() > 0 && cold.lowestFrom().isEmpty())) {
            return Optional.empty();
        }
        Instant end = hot.highestFrom().orElse(watermark.instant());
        Instant lower = query.lower().filter(lowest.get()::isBefore).orElse(lowest.get());
        Instant upper = query.upper().filter(end::isAfter).orElse(end);
        if (!lower.isBefore(upper)) {
            return Optional.empty();
        }
        long lowerMicros = MeterstoreTypes.toEpochMicros(lower);
        // the range is inclusive, the end exclusive
        long upperMicros = MeterstoreTypes.toEpochMicros(upper) - 1;
        return Optional.of(new DoubleRange(statsValue(lowerMicros), statsValue(upperMicros)));
    }

    private static double statsValue(long epochMicros)
    {
        return StatsUtil.toStatsRepresentation(MeterstoreTypes.TIMESTAMP_TZ_MICROS, MeterstoreTypes.toTimestamp(epochMicros)).orElseThrow();
    }
}
