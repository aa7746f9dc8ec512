package io.meterstore.trino.cold;

import com.google.common.collect.ImmutableList;
import io.trino.spi.connector.ConnectorSplit;

import java.util.List;

import static com.google.common.base.Preconditions.checkArgument;
import static io.airlift.slice.SizeOf.instanceSize;
import static java.util.Objects.requireNonNull;

/**
 * Whole data files that hold every version of the merge keys in {@code keys}, for a read that resolves versions: the
 * files of a month whose "from" ranges overlap and whose malo_id ranges meet the part, usually a day's winners and
 * superseded files with the files of late corrections to it. Each file is sorted by (malo_id, obis_code, "from",
 * version), so one pass over their merged rows, those outside the part dropped, resolves every key of the part.
 */
public record ColdFileGroupSplit(List<ColdSplit> files, KeyRange keys)
        implements ConnectorSplit
{
    private static final int INSTANCE_SIZE = instanceSize(ColdFileGroupSplit.class);

    public ColdFileGroupSplit
    {
        files = ImmutableList.copyOf(requireNonNull(files, "files is null"));
        requireNonNull(keys, "keys is null");
        checkArgument(!files.isEmpty(), "files is empty");
        checkArgument(files.stream().allMatch(ColdSplit::coversWholeFile), "a file group reads whole files");
    }

    @Override
    public long getRetainedSizeInBytes()
    {
        return INSTANCE_SIZE + keys.getRetainedSizeInBytes() + files.stream().mapToLong(ColdSplit::getRetainedSizeInBytes).sum();
    }
}
