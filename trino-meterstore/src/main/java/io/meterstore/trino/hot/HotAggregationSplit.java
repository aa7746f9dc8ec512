package io.meterstore.trino.hot;

import com.google.common.collect.ImmutableList;
import io.trino.spi.connector.ConnectorSplit;

import java.util.List;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static io.airlift.slice.SizeOf.estimatedSizeOf;
import static io.airlift.slice.SizeOf.instanceSize;
import static java.util.Objects.requireNonNull;

/**
 * The one split of a pushed-down aggregation: every hot partition the query's range meets, read by name in one
 * statement, so PostgreSQL aggregates them together (in parallel where it can).
 *
 * @param snapshot the query's PostgreSQL snapshot, which the statement's transaction imports; none when no partition is read
 * @param watermarkEpochMicros the W the query planned with; every branch carries "from" >= W
 */
public record HotAggregationSplit(
        Optional<HotSnapshot> snapshot,
        String schema,
        List<String> partitions,
        long watermarkEpochMicros,
        Optional<Long> lowerEpochMicros,
        Optional<Long> upperEpochMicros)
        implements ConnectorSplit
{
    private static final int INSTANCE_SIZE = instanceSize(HotAggregationSplit.class);

    public HotAggregationSplit
    {
        requireNonNull(snapshot, "snapshot is null");
        requireNonNull(schema, "schema is null");
        partitions = ImmutableList.copyOf(requireNonNull(partitions, "partitions is null"));
        requireNonNull(lowerEpochMicros, "lowerEpochMicros is null");
        requireNonNull(upperEpochMicros, "upperEpochMicros is null");
        checkArgument(snapshot.isPresent() || partitions.isEmpty(), "partitions are read without a snapshot");
    }

    @Override
    public long getRetainedSizeInBytes()
    {
        return INSTANCE_SIZE + estimatedSizeOf(schema) + estimatedSizeOf(partitions, partition -> estimatedSizeOf(partition));
    }
}
