package io.meterstore.trino.hot;

import com.google.common.collect.ImmutableList;
import io.airlift.slice.SizeOf;
import io.trino.spi.SplitWeight;
import io.trino.spi.connector.ConnectorSplit;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

import static com.google.common.base.Preconditions.checkArgument;
import static io.airlift.slice.SizeOf.estimatedSizeOf;
import static io.airlift.slice.SizeOf.instanceSize;
import static io.meterstore.trino.cold.ColdSplitPlanner.TARGET_SPLIT_SIZE_BYTES;
import static java.util.Objects.requireNonNull;
import static java.util.stream.Collectors.joining;

/**
 * Hot partitions read by name in one statement: never through the parent, so a partition detached by a concurrent
 * archival is still read by a plan made before the watermark moved. A scan gets a split per partition, read in
 * parallel; a read of a few meters one split for all the partitions it meets (the primary key's index finds each
 * partition's few rows), so that it takes one turn at the node's PostgreSQL connections, not one per partition.
 *
 * @param partitions the partitions, all marked or all not
 * @param snapshot the query's PostgreSQL snapshot, which the split's transaction imports
 * @param watermarkEpochMicros the W the query planned with; every hot statement carries "from" >= W
 * @param limit a pushed LIMIT: the statement may stop after this many rows
 * @param estimatedBytes the partitions' size in PostgreSQL at planning, for the split's weight; 0 when unknown
 * @param marked every row of the partitions carries its supersession mark in the query's snapshot: its winners are read
 * as {@code superseded_at IS NULL}, unordered, without resolution
 * @param fewMeters the read names a few meters, whose rows the index finds in each partition: a short statement, which
 * may take the turn at the pool's connections kept from scans
 */
public record HotSplit(
        HotSnapshot snapshot,
        String schema,
        List<String> partitions,
        long watermarkEpochMicros,
        Optional<Long> lowerEpochMicros,
        Optional<Long> upperEpochMicros,
        OptionalLong limit,
        long estimatedBytes,
        boolean marked,
        boolean fewMeters)
        implements ConnectorSplit
{
    private static final int INSTANCE_SIZE = instanceSize(HotSplit.class);
    // as Trino's Hive connector: a tiny partition still costs a statement and a round trip
    private static final double MINIMUM_WEIGHT = 0.05;

    public HotSplit
    {
        requireNonNull(snapshot, "snapshot is null");
        requireNonNull(schema, "schema is null");
        partitions = ImmutableList.copyOf(requireNonNull(partitions, "partitions is null"));
        checkArgument(!partitions.isEmpty(), "no partition");
        requireNonNull(lowerEpochMicros, "lowerEpochMicros is null");
        requireNonNull(upperEpochMicros, "upperEpochMicros is null");
        requireNonNull(limit, "limit is null");
        checkArgument(estimatedBytes >= 0, "estimatedBytes is negative: %s", estimatedBytes);
    }

    /** The split of {@code partitions} alone, a subset of its own (what a dynamic filter leaves of it). */
    public HotSplit withPartitions(List<String> partitions)
    {
        checkArgument(this.partitions.containsAll(partitions), "not partitions of the split: %s", partitions);
        return new HotSplit(snapshot, schema, partitions, watermarkEpochMicros, lowerEpochMicros, upperEpochMicros, limit, estimatedBytes, marked, fewMeters);
    }

    /** The partitions as an error message names them: {@code hot partition 'schema.partition'}, or several comma-separated. */
    public String describePartitions()
    {
        return (partitions.size() == 1 ? "hot partition " : "hot partitions ") + partitions.stream().map(partition -> "'%s.%s'".formatted(schema, partition)).collect(joining(", "));
    }

    /** Proportional to the partitions' size against the cold tier's target split size, so a worker takes many small partitions at once. */
    @Override
    public SplitWeight getSplitWeight()
    {
        if (estimatedBytes == 0) {
            return SplitWeight.standard();
        }
        return SplitWeight.fromProportion(Math.clamp((double) estimatedBytes / TARGET_SPLIT_SIZE_BYTES, MINIMUM_WEIGHT, 1.0));
    }

    @Override
    public long getRetainedSizeInBytes()
    {
        return INSTANCE_SIZE + estimatedSizeOf(snapshot.id()) + estimatedSizeOf(schema) + estimatedSizeOf(partitions, SizeOf::estimatedSizeOf);
    }
}
