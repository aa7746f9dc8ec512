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
 * @param markedPartitions those of {@code partitions} whose rows all carry their supersession marks in the snapshot: a
 * read of winners takes their rows with {@code superseded_at IS NULL}, and resolves the others' versions in the statement
 * @param watermarkEpochMicros the W the query planned with; every branch carries "from" >= W
 */
public record HotAggregationSplit(
        Optional<HotSnapshot> snapshot,
        String schema,
        List<String> partitions,
        List<String> markedPartitions,
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
        markedPartitions = ImmutableList.copyOf(requireNonNull(markedPartitions, "markedPartitions is null"));
        checkArgument(partitions.containsAll(markedPartitions), "a marked partition is not read");
        requireNonNull(lowerEpochMicros, "lowerEpochMicros is null");
        requireNonNull(upperEpochMicros, "upperEpochMicros is null");
        checkArgument(snapshot.isPresent() || partitions.isEmpty(), "partitions are read without a snapshot");
    }

    @Override
    public long getRetainedSizeInBytes()
    {
        return INSTANCE_SIZE + estimatedSizeOf(schema) + estimatedSizeOf(partitions, partition -> estimatedSizeOf(partition))
                + estimatedSizeOf(markedPartitions, partition -> estimatedSizeOf(partition));
    }
}
