package io.meterstore.trino.hot;

import io.trino.spi.connector.ConnectorSplit;

import java.util.Optional;

import static io.airlift.slice.SizeOf.estimatedSizeOf;
import static io.airlift.slice.SizeOf.instanceSize;
import static java.util.Objects.requireNonNull;

/**
 * One hot partition, read by name: never through the parent, so a partition detached by a concurrent archival is
 * still read by a plan made before the watermark moved.
 *
 * @param watermarkEpochMicros the W the query planned with; every hot statement carries "from" >= W
 */
public record HotSplit(
        String schema,
        String partition,
        long watermarkEpochMicros,
        Optional<Long> lowerEpochMicros,
        Optional<Long> upperEpochMicros)
        implements ConnectorSplit
{
    private static final int INSTANCE_SIZE = instanceSize(HotSplit.class);

    public HotSplit
    {
        requireNonNull(schema, "schema is null");
        requireNonNull(partition, "partition is null");
        requireNonNull(lowerEpochMicros, "lowerEpochMicros is null");
        requireNonNull(upperEpochMicros, "upperEpochMicros is null");
    }

    @Override
    public long getRetainedSizeInBytes()
    {
        return INSTANCE_SIZE + estimatedSizeOf(schema) + estimatedSizeOf(partition);
    }
}
