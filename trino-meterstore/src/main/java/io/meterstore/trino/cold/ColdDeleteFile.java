package io.meterstore.trino.cold;

import static com.google.common.base.Preconditions.checkArgument;
import static io.airlift.slice.SizeOf.estimatedSizeOf;
import static io.airlift.slice.SizeOf.instanceSize;
import static java.util.Objects.requireNonNull;

/**
 * An Iceberg position delete file that applies to the data file of a split, as the pinned snapshot's scan planned it.
 *
 * @param path the delete file's location
 * @param fileSize its size, from the manifest, so reading needs no file-status call
 * @param recordCount the deleted positions it holds, for this and possibly other data files
 */
public record ColdDeleteFile(String path, long fileSize, long recordCount)
{
    private static final int INSTANCE_SIZE = instanceSize(ColdDeleteFile.class);

    public ColdDeleteFile
    {
        requireNonNull(path, "path is null");
        checkArgument(fileSize >= 0, "fileSize is negative: %s", fileSize);
        checkArgument(recordCount >= 0, "recordCount is negative: %s", recordCount);
    }

    long getRetainedSizeInBytes()
    {
        return INSTANCE_SIZE + estimatedSizeOf(path);
    }
}
