package io.meterstore.trino;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import io.meterstore.core.MeterstoreException;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.TierSplit;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.meterstore.trino.base.MeterstoreErrorCode;
import io.meterstore.trino.base.MeterstoreMetrics;
import io.meterstore.trino.base.MeterstoreTypes;
import io.meterstore.trino.cold.ColdSplitStream;
import io.meterstore.trino.hot.HotSplit;
import io.meterstore.trino.versions.VersionResolution;
import io.trino.spi.connector.ConnectorSplit;
import io.trino.spi.connector.ConnectorSplitSource;
import io.trino.spi.connector.DynamicFilterSnapshot;
import io.trino.spi.metrics.Metrics;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.Range;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.predicate.ValueSet;

import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;

import static java.util.Objects.requireNonNull;
import static java.util.concurrent.CompletableFuture.completedFuture;

/**
 * The splits of one table scan, in batches: the hot splits (one per partition, known at once), then the cold splits
 * as the {@link ColdSplitStream} plans them. Its metrics show what planning pruned and how the cold tier was read, per
 * table scan in the query's statistics. At most one batch is asked for at a time, as the SPI promises.
 * <p>
 * The engine holds the first batch back until a join's dynamic filter is complete or the requested wait has passed,
 * as for Trino's Iceberg connector; each batch then leaves out the hot partitions whose "from" range and the Iceberg
 * files whose "from" and malo_id bounds the filter, as far as it is known, excludes.
 */
final class MeterstoreSplitSource
        implements ConnectorSplitSource
{
    private static final MeterstoreColumnHandle FROM = MeterstoreTypes.columnHandle(ReadingsColumn.FROM);

    private final Queue<ConnectorSplit> hotSplits;
    private final Map<String, TierSplit.Range> hotPartitionRanges;
    private final Optional<ColdSplitStream> cold;
    private final Map<String, Long> hotMetrics;
    private final VersionResolution resolution;
    private final long dynamicFilterWaitMillis;
    private long hotPartitionsDynamicallyPruned;

    /**
     * @param hotPartitionRanges the "from" range of each hot split's partition, by partition name
     * @param resolution the read's resolution, which decides what of a dynamic filter may prune before it
     */
    MeterstoreSplitSource(
            List<ConnectorSplit> hotSplits,
            Map<String, TierSplit.Range> hotPartitionRanges,
            Optional<ColdSplitStream> cold,
            Map<String, Long> hotMetrics,
            VersionResolution resolution,
            long dynamicFilterWaitMillis)
    {
        this.hotSplits = new ArrayDeque<>(requireNonNull(hotSplits, "hotSplits is null"));
        this.hotPartitionRanges = ImmutableMap.copyOf(requireNonNull(hotPartitionRanges, "hotPartitionRanges is null"));
        this.cold = requireNonNull(cold, "cold is null");
        this.hotMetrics = ImmutableMap.copyOf(requireNonNull(hotMetrics, "hotMetrics is null"));
        this.resolution = requireNonNull(resolution, "resolution is null");
        this.dynamicFilterWaitMillis = dynamicFilterWaitMillis;
    }

    @Override
    public CompletableFuture<List<ConnectorSplit>> getNextBatch(int maxSize, DynamicFilterSnapshot dynamicFilter)
    {
        // a resolving read prunes by key columns only: a domain on value or quality would drop a key's winning version
        // and let an older one win. A filter on a column PostgreSQL aggregates names no column of the table
        TupleDomain<MeterstoreColumnHandle> filter = resolution.pushable(dynamicFilter.currentPredicate()
                .filter((column, _) -> column instanceof MeterstoreColumnHandle)
                .transformKeys(MeterstoreColumnHandle.class::cast));
        ImmutableList.Builder<ConnectorSplit> batch = ImmutableList.builder();
        int size = 0;
        while (size < maxSize && !hotSplits.isEmpty()) {
            ConnectorSplit split = hotSplits.poll();
            if (split instanceof HotSplit hotSplit) {
                // a split of several partitions keeps those the filter admits
                List<String> admitted = hotSplit.partitions().stream()
                        .filter(partition -> admits(filter, hotPartitionRanges.get(partition)))
                        .toList();
                hotPartitionsDynamicallyPruned += hotSplit.partitions().size() - admitted.size();
                if (admitted.isEmpty()) {
                    continue;
                }
                split = admitted.size() == hotSplit.partitions().size() ? hotSplit : hotSplit.withPartitions(admitted);
            }
            batch.add(split);
            size++;
        }
        if (filter.isNone()) {
            // an empty build side: no row of the scan can join
            cold.ifPresent(ColdSplitStream::skipRemaining);
            return completedFuture(batch.build());
        }
        if (size < maxSize && cold.isPresent()) {
            try {
                batch.addAll(cold.get().next(maxSize - size, filter));
            }
            catch (MeterstoreException e) {
                throw MeterstoreErrorCode.toTrinoException(e);
            }
        }
        return completedFuture(batch.build());
    }

    /** Whether a hot partition's range holds an instant the filter admits in "from". */
    private static boolean admits(TupleDomain<MeterstoreColumnHandle> filter, TierSplit.Range partition)
    {
        if (filter.isNone()) {
            return false;
        }
        Domain from = filter.getDomains().orElseThrow().get(FROM);
        if (from == null) {
            return true;
        }
        // a partition's range is [start, end): bounded, since the planner took it from the partition catalogue
        Range range = Range.range(
                FROM.type(),
                MeterstoreTypes.toTimestamp(MeterstoreTypes.toEpochMicros(partition.lower().orElseThrow())),
                true,
                MeterstoreTypes.toTimestamp(MeterstoreTypes.toEpochMicros(partition.upper().orElseThrow())),
                false);
        return from.overlaps(Domain.create(ValueSet.ofRanges(range), false));
    }

    /** Every split at once: for a reader that needs the whole plan, such as the completeness report's one split. */
    List<ConnectorSplit> all()
    {
        ImmutableList.Builder<ConnectorSplit> all = ImmutableList.<ConnectorSplit>builder().addAll(hotSplits);
        hotSplits.clear();
        try {
            cold.ifPresent(stream -> all.addAll(stream.all()));
        }
        catch (MeterstoreException e) {
            throw MeterstoreErrorCode.toTrinoException(e);
        }
        return all.build();
    }

    @Override
    public boolean isFinished()
    {
        return hotSplits.isEmpty() && cold.map(ColdSplitStream::isFinished).orElse(true);
    }

    @Override
    public long getRequestedDynamicFilterWaitTimeoutMillis()
    {
        return dynamicFilterWaitMillis;
    }

    @Override
    public Metrics getMetrics()
    {
        ImmutableMap.Builder<String, Long> metrics = ImmutableMap.<String, Long>builder().putAll(hotMetrics);
        metrics.put(MeterstoreMetrics.DYNAMIC_FILTER_WAIT_TIMEOUT_MILLIS, dynamicFilterWaitMillis);
        if (hotMetrics.containsKey(MeterstoreMetrics.HOT_PARTITIONS)) {
            metrics.put(MeterstoreMetrics.HOT_PARTITIONS_DYNAMIC_FILTER_SKIPPED, hotPartitionsDynamicallyPruned);
        }
        cold.ifPresent(stream -> metrics.putAll(stream.metrics()));
        return MeterstoreMetrics.counts(metrics.buildOrThrow());
    }

    @Override
    public void close()
    {
        cold.ifPresent(ColdSplitStream::close);
    }
}
