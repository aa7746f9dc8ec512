package io.meterstore.trino.hot;

import io.trino.spi.SplitWeight;
import io.trino.spi.connector.ConnectorSplit;

import java.util.Optional;
import java.util.OptionalLong;

import static com.google.common.base.Preconditions.checkArgument;
import static io.airlift.slice.SizeOf.estimatedSizeOf;
import static io.airlift.slice.SizeOf.instanceSize;
import static io.meterstore.trino.cold.ColdSplitPlanner.TARGET_SPLIT_SIZE_BYTES;
import static java.util.Objects.requireNonNull;

/**
 * One hot partition, read by name: never through the parent, so a partition detached by a concurrent archival is
 * still read by a plan made before the watermark moved.
 *
 * @param snapshot the query's PostgreSQL snapshot, which the split's transaction imports
 * @param watermarkEpochMicros the W the query planned with; every hot statement carries "from" >= W
 * @param limit a pushed LIMIT: the statement may stop after this many rows
 * @param estimatedBytes the partition's size in PostgreSQL at planning, for the split's weight; 0 when unknown
 * @param marked every row of the partition carries its supersession mark in the query's snapshot: its winners are read
 * as {@code superseded_at IS NULL}, unordered, without resolution
 */
public record HotSplit(
        HotSnapshot snapshot,
        String schema,
        String partition,
        long watermarkEpochMicros,
        Optional<Long> lowerEpochMicros,
        Optional<Long> upperEpochMicros,
        OptionalLong limit,
        long estimatedBytes,
        boolean marked)
        implements ConnectorSplit
{
    private static final int INSTANCE_SIZE = instanceSize(HotSplit.class);
    // as Trino's Hive connector: a tiny partition still costs a statement and a round trip
    private static final double MINIMUM_WEIGHT = 0.05;

    public HotSplit
    {
        requireNonNull(snapshot, "snapshot is null");
        requireNonNull(schema, "schema is null");
        requireNonNull(partition, "partition is null");
        requireNonNull(lowerEpochMicros, "lowerEpochMicros is null");
        requireNonNull(upperEpochMicros, "upperEpochMicros is null");
        requireNonNull(limit, "limit is null");
        checkArgument(estimatedBytes >= 0, "estimatedBytes is negative: %s", estimatedBytes);
    }

    /** Proportional to the partition's size against the cold tier's target split size, so a worker takes many small partitions at once. */
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
        return INSTANCE_SIZE + estimatedSizeOf(snapshot.id()) + estimatedSizeOf(schema) + estimatedSizeOf(partition);
    }
}
