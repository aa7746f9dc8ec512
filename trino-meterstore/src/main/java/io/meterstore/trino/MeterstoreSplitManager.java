package io.meterstore.trino;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import com.google.inject.Inject;
import io.meterstore.core.MeterstoreException;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.TierSplit;
import io.meterstore.core.TieringWatermark;
import io.meterstore.trino.base.FromRange;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.meterstore.trino.base.MeterstoreErrorCode;
import io.meterstore.trino.base.MeterstoreMetrics;
import io.meterstore.trino.base.MeterstoreTables;
import io.meterstore.trino.base.MeterstoreTypes;
import io.meterstore.trino.cold.ColdRead;
import io.meterstore.trino.cold.ColdSplitPlanner;
import io.meterstore.trino.cold.ColdSplitStream;
import io.meterstore.trino.completeness.CompletenessSplit;
import io.meterstore.trino.completeness.CompletenessTableHandle;
import io.meterstore.trino.handle.MeterstoreTableHandle;
import io.meterstore.trino.hot.HotAggregationSplit;
import io.meterstore.trino.hot.HotSplit;
import io.meterstore.trino.hot.HotSplitPlan;
import io.meterstore.trino.hot.HotSplitPlanner;
import io.meterstore.trino.hot.HotSqlPredicate;
import io.meterstore.trino.hot.QuerySnapshots;
import io.meterstore.trino.versions.VersionResolution;
import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.ConnectorSplit;
import io.trino.spi.connector.ConnectorSplitManager;
import io.trino.spi.connector.ConnectorSplitSource;
import io.trino.spi.connector.ConnectorTableHandle;
import io.trino.spi.connector.ConnectorTransactionHandle;
import io.trino.spi.connector.Constraint;
import io.trino.spi.connector.FixedSplitSource;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.TupleDomain;
import org.apache.iceberg.Table;

import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

import static java.util.Objects.requireNonNull;

/**
 * Splits a query at the watermark its table handle pinned: hot splits for the partitions at or above W, cold splits
 * for the Iceberg files of the pinned snapshot below W. The two halves are disjoint, so together they are a UNION ALL.
 * A hot partition holds every version of its keys, and so does a cold split of a resolving read. The splits are handed
 * out in batches as the engine asks: hot splits first, then the cold ones as they are planned ({@link ColdSplitStream}).
 */
public class MeterstoreSplitManager
        implements ConnectorSplitManager
{
    /**
     * At most this many meters, and a read's hot partitions are one statement, one split: 32 meters' rows of a day are
     * about 3,000 per OBIS code, which one connection streams in milliseconds, where a split per partition would take
     * a turn at the pool's connections for each.
     */
    public static final int ONE_STATEMENT_METERS = 32;

    private final MeterstoreTables tables;
    private final HotSplitPlanner hotPlanner;
    private final ColdSplitPlanner coldPlanner;
    private final QuerySnapshots querySnapshots;

    @Inject
    public MeterstoreSplitManager(MeterstoreTables tables, ColdSplitPlanner coldPlanner, QuerySnapshots querySnapshots)
    {
        this.tables = requireNonNull(tables, "tables is null");
        this.querySnapshots = requireNonNull(querySnapshots, "querySnapshots is null");
        this.hotPlanner = new HotSplitPlanner(tables);
        this.coldPlanner = requireNonNull(coldPlanner, "coldPlanner is null");
    }

    @Override
    public ConnectorSplitSource getSplits(ConnectorTransactionHandle transaction, ConnectorSession session, ConnectorTableHandle table, Set<ColumnHandle> dynamicFilterColumns, Constraint constraint)
    {
        if (table instanceof CompletenessTableHandle completeness) {
            // one split: the report rolls up every day of a reading, so it reads every split of the range itself
            // its counts are one statement per hot partition
            try (MeterstoreSplitSource reads = splits(session, completeness.readings(), 0, false)) {
                return new FixedSplitSource(new CompletenessSplit(reads.all()));
            }
        }
        MeterstoreTableHandle handle = (MeterstoreTableHandle) table;
        // the engine holds the splits back until the dynamic filters arrive or this passes, so they prune both tiers' splits
        long dynamicFilterWaitMillis = prunesBeyondPredicate(handle, dynamicFilterColumns) ? MeterstoreSessionProperties.getDynamicFilteringWaitTimeout(session).toMillis() : 0;
        return splits(session, handle, dynamicFilterWaitMillis, true);
    }

    /**
     * Whether a join's dynamic filter on {@code columns} can prune splits the query's own predicate does not: not when
     * that predicate already holds each of the columns to a list of values, as the planner infers it from a build side of
     * constant rows (a meter list joined as {@code VALUES}). The filter could then only drop values of a list the splits
     * were planned by already, and waiting for it would delay the query by up to the wait timeout for nothing; a page
     * source still applies it if it arrives.
     */
    private static boolean prunesBeyondPredicate(MeterstoreTableHandle handle, Set<ColumnHandle> columns)
    {
        if (columns.isEmpty()) {
            return false;
        }
        Map<MeterstoreColumnHandle, Domain> domains = handle.constraint().getDomains().orElse(Map.of());
        return !columns.stream().allMatch(column -> {
            Domain domain = domains.get(column);
            return domain != null && domain.getValues().isDiscreteSet();
        });
    }

    /**
     * The splits of a read of {@code handle}, both tiers, in batches; what planning them pruned in its metrics.
     *
     * @param fewMetersInOneStatement a read of at most {@link #ONE_STATEMENT_METERS} meters reads its hot partitions in
     * one statement
     */
    private MeterstoreSplitSource splits(ConnectorSession session, MeterstoreTableHandle handle, long dynamicFilterWaitMillis, boolean fewMetersInOneStatement)
    {
        VersionResolution resolution = handle.resolution();
        TupleDomain<MeterstoreColumnHandle> predicate = resolution.pruning(handle.constraint());
        TieringWatermark watermark = TieringWatermark.of(MeterstoreTypes.fromEpochMicros(handle.watermarkEpochMicros()));
        TierSplit tiers = TierSplit.of(FromRange.of(predicate), watermark);

        ImmutableList.Builder<ConnectorSplit> splits = ImmutableList.builder();
        ImmutableMap.Builder<String, TierSplit.Range> hotPartitionRanges = ImmutableMap.builder();
        ImmutableMap.Builder<String, Long> metrics = ImmutableMap.builder();
        if (handle.aggregation().isPresent()) {
            // the metadata pushed it only for a read that is hot alone: one statement over every partition the range meets
            TierSplit.Range hotRange = tiers.hot().orElse(new TierSplit.Range(Optional.of(watermark.instant()), Optional.of(watermark.instant())));
            HotSplitPlan hotPlan = tiers.hot().isPresent()
                    ? hotPlanner.plan(querySnapshots.snapshot(session.getQueryId()), handle.storageTable(), hotRange, handle.watermarkEpochMicros(), OptionalLong.empty(), resolution.resolve(), false)
                    : HotSplitPlan.EMPTY;
            splits.add(new HotAggregationSplit(
                    hotPlan.splits().stream().map(HotSplit::snapshot).findFirst(),
                    tables.schema(),
                    hotPlan.splits().stream().flatMap(split -> split.partitions().stream()).toList(),
                    hotPlan.splits().stream().filter(HotSplit::marked).flatMap(split -> split.partitions().stream()).toList(),
                    handle.watermarkEpochMicros(),
                    hotRange.lower().map(MeterstoreTypes::toEpochMicros),
                    hotRange.upper().map(MeterstoreTypes::toEpochMicros)));
            addHotMetrics(metrics, hotPlan);
            return new MeterstoreSplitSource(splits.build(), ImmutableMap.of(), Optional.empty(), metrics.buildOrThrow(), resolution, dynamicFilterWaitMillis);
        }
        if (!handle.historical() && tiers.hot().isPresent()) {
            // every hot read of the query, in any of its scans, sees one snapshot: a statement that wrote two partitions
            // is seen in both or in neither
            boolean oneStatement = fewMetersInOneStatement && readsFewMeters(predicate);
            HotSplitPlan hotPlan = hotPlanner.plan(querySnapshots.snapshot(session.getQueryId()), handle.storageTable(), tiers.hot().get(), handle.watermarkEpochMicros(), handle.limit(), resolution.resolve(), oneStatement);
            splits.addAll(hotPlan.splits());
            hotPartitionRanges.putAll(hotPlan.partitionRanges());
            addHotMetrics(metrics, hotPlan);
        }
        if (tiers.cold().isEmpty() || handle.snapshotId().isEmpty()) {
            return new MeterstoreSplitSource(splits.build(), hotPartitionRanges.buildOrThrow(), Optional.empty(), metrics.buildOrThrow(), resolution, dynamicFilterWaitMillis);
        }
        Table icebergTable = tables.icebergTableListing(handle.storageTable(), handle.snapshotId().get());
        // a resolving read gets every version of a key in one split, so the split alone resolves it, or a resolved month's winners
        ColdRead read = !resolution.resolve() ? ColdRead.VERSIONS : resolution.knownAtEpochMicros().isPresent() ? ColdRead.RESOLVED_AS_OF : ColdRead.WINNERS;
        ColdSplitStream cold;
        try {
            cold = coldPlanner.splits(session.getIdentity(), icebergTable, handle.snapshotId().get(), watermark, predicate, read, MeterstoreSessionProperties.getResolutionSplitRows(session));
        }
        catch (MeterstoreException e) {
            throw MeterstoreErrorCode.toTrinoException(e);
        }
        return new MeterstoreSplitSource(splits.build(), hotPartitionRanges.buildOrThrow(), Optional.of(cold), metrics.buildOrThrow(), resolution, dynamicFilterWaitMillis);
    }

    /**
     * The predicate holds malo_id, the leading column of every hot partition's primary key, to at most
     * {@link #ONE_STATEMENT_METERS} values, which the statement carries: each partition's rows are then found by the
     * index, and one statement over all of them is a dashboard's one turn at the pool's connections.
     */
    private static boolean readsFewMeters(TupleDomain<MeterstoreColumnHandle> predicate)
    {
        return predicate.getDomains().orElse(Map.of()).entrySet().stream()
                .anyMatch(entry -> entry.getKey().is(ReadingsColumn.MALO_ID)
                        && HotSqlPredicate.isPushedAsEquality(entry.getKey(), entry.getValue())
                        && entry.getValue().getValues().getDiscreteSet().size() <= ONE_STATEMENT_METERS);
    }

    private static void addHotMetrics(ImmutableMap.Builder<String, Long> metrics, HotSplitPlan hotPlan)
    {
        metrics.put(MeterstoreMetrics.HOT_PARTITIONS, hotPlan.partitions())
                .put(MeterstoreMetrics.HOT_PARTITIONS_SKIPPED, hotPlan.partitions() - hotPlan.partitionsRead())
                .put(MeterstoreMetrics.HOT_SPLITS, (long) hotPlan.splits().size());
    }
}
