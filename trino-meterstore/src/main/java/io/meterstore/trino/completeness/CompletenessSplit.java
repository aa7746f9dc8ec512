package io.meterstore.trino.completeness;

import com.google.common.collect.ImmutableList;
import io.trino.spi.connector.ConnectorSplit;

import java.util.List;

import static io.airlift.slice.SizeOf.instanceSize;
import static java.util.Objects.requireNonNull;

/**
 * The one split of a completeness report: every split of the read of the table's winners over the period, hot
 * partitions and cold file groups alike. The report needs every day of a reading together to charge absent days to a
 * grid, so one page source reads them all (several at a time) and rolls them up.
 */
public record CompletenessSplit(List<ConnectorSplit> reads)
        implements ConnectorSplit
{
    private static final int INSTANCE_SIZE = instanceSize(CompletenessSplit.class);

    public CompletenessSplit
    {
        reads = ImmutableList.copyOf(requireNonNull(reads, "reads is null"));
    }

    @Override
    public long getRetainedSizeInBytes()
    {
        return INSTANCE_SIZE + reads.stream().mapToLong(ConnectorSplit::getRetainedSizeInBytes).sum();
    }
}
