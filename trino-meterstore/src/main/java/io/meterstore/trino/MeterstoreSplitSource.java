package io.meterstore.trino;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import io.meterstore.core.MeterstoreException;
import io.meterstore.trino.base.MeterstoreErrorCode;
import io.meterstore.trino.base.MeterstoreMetrics;
import io.meterstore.trino.cold.ColdSplitStream;
import io.trino.spi.connector.ConnectorSplit;
import io.trino.spi.connector.ConnectorSplitSource;
import io.trino.spi.connector.DynamicFilterSnapshot;
import io.trino.spi.metrics.Metrics;

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
 */
final class MeterstoreSplitSource
        implements ConnectorSplitSource
{
    private final Queue<ConnectorSplit> hotSplits;
    private final Optional<ColdSplitStream> cold;
    private final Map<String, Long> hotMetrics;
    private final long dynamicFilterWaitMillis;

    MeterstoreSplitSource(List<ConnectorSplit> hotSplits, Optional<ColdSplitStream> cold, Map<String, Long> hotMetrics, long dynamicFilterWaitMillis)
    {
        this.hotSplits = new ArrayDeque<>(requireNonNull(hotSplits, "hotSplits is null"));
        this.cold = requireNonNull(cold, "cold is null");
        this.hotMetrics = ImmutableMap.copyOf(requireNonNull(hotMetrics, "hotMetrics is null"));
        this.dynamicFilterWaitMillis = dynamicFilterWaitMillis;
    }

    @Override
    public CompletableFuture<List<ConnectorSplit>> getNextBatch(int maxSize, DynamicFilterSnapshot dynamicFilter)
    {
        ImmutableList.Builder<ConnectorSplit> batch = ImmutableList.builder();
        int size = 0;
        while (size < maxSize && !hotSplits.isEmpty()) {
            batch.add(hotSplits.poll());
            size++;
        }
        if (size < maxSize && cold.isPresent()) {
            try {
                batch.addAll(cold.get().next(maxSize - size));
            }
            catch (MeterstoreException e) {
                throw MeterstoreErrorCode.toTrinoException(e);
            }
        }
        return completedFuture(batch.build());
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
        cold.ifPresent(stream -> metrics.putAll(stream.metrics()));
        return MeterstoreMetrics.counts(metrics.buildOrThrow());
    }

    @Override
    public void close()
    {
        cold.ifPresent(ColdSplitStream::close);
    }
}
