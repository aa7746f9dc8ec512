package io.meterstore.trino.cold;

import com.google.common.collect.ImmutableList;
import io.trino.spi.connector.ConnectorSplit;

import java.util.List;

import static com.google.common.base.Preconditions.checkArgument;
import static io.airlift.slice.SizeOf.instanceSize;
import static java.util.Objects.requireNonNull;

/**
 * Whole data files that hold every version of the merge keys in their "from" range, for a read that resolves versions:
 * usually one archived file, with the files of late corrections to it when there are any. Each file is sorted by
 * (malo_id, obis_code, "from", version), so one pass over their merged rows resolves every key.
 */
public record ColdFileGroupSplit(List<ColdSplit> files)
        implements ConnectorSplit
{
    private static final int INSTANCE_SIZE = instanceSize(ColdFileGroupSplit.class);

    public ColdFileGroupSplit
    {
        files = ImmutableList.copyOf(requireNonNull(files, "files is null"));
        checkArgument(!files.isEmpty(), "files is empty");
        checkArgument(files.stream().allMatch(ColdSplit::coversWholeFile), "a file group reads whole files");
    }

    @Override
    public long getRetainedSizeInBytes()
    {
        return INSTANCE_SIZE + files.stream().mapToLong(ColdSplit::getRetainedSizeInBytes).sum();
    }
}
