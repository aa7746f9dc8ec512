package io.meterstore.trino.cold;

import com.google.common.collect.ImmutableList;
import io.trino.spi.SplitWeight;
import io.trino.spi.connector.ConnectorSplit;

import java.util.List;

import static com.google.common.base.Preconditions.checkArgument;
import static io.airlift.slice.SizeOf.estimatedSizeOf;
import static io.airlift.slice.SizeOf.instanceSize;
import static java.util.Objects.requireNonNull;

/**
 * A byte range of one Parquet data file of the pinned snapshot. The range starts at a row group (the planner splits
 * at the file's recorded split offsets), and a reader takes exactly the row groups that start inside it, so the
 * splits of one file read each row group once.
 *
 * @param path the data file's location, as the Iceberg manifest records it
 * @param start the first byte of the range
 * @param length the length of the range in bytes
 * @param fileSize the file's size, from the manifest, so reading needs no file-status call
 * @param fileRecordCount the rows of the whole file, from the manifest
 * @param deletes the position delete files the pinned snapshot applies to the file: its rows at those positions are
 * not read
 */
public record ColdSplit(String path, long start, long length, long fileSize, long fileRecordCount, List<ColdDeleteFile> deletes)
        implements ConnectorSplit
{
    private static final int INSTANCE_SIZE = instanceSize(ColdSplit.class);
    // every Parquet file starts with the magic "PAR1"; its first row group starts right after it
    private static final int PARQUET_MAGIC_LENGTH = 4;
    // as Trino's Hive connector: a tiny split still costs a footer read
    private static final double MINIMUM_WEIGHT = 0.05;

    public ColdSplit(String path, long start, long length, long fileSize, long fileRecordCount)
    {
        this(path, start, length, fileSize, fileRecordCount, ImmutableList.of());
    }

    public ColdSplit
    {
        requireNonNull(path, "path is null");
        deletes = ImmutableList.copyOf(requireNonNull(deletes, "deletes is null"));
        checkArgument(start >= 0, "start is negative: %s", start);
        checkArgument(length >= 0, "length is negative: %s", length);
        checkArgument(fileSize >= start + length, "range [%s, %s) exceeds file size %s", start, start + length, fileSize);
        checkArgument(fileRecordCount >= 0, "fileRecordCount is negative: %s", fileRecordCount);
    }

    /** Whether this split holds every row group of the file. */
    public boolean coversWholeFile()
    {
        return start <= PARQUET_MAGIC_LENGTH && start + length == fileSize;
    }

    /** Whether the manifest's record count is this split's row count: every row group, and no row deleted. */
    public boolean rowsFromManifest()
    {
        return coversWholeFile() && deletes.isEmpty();
    }

    /** The same byte range with these delete files. */
    ColdSplit withDeletes(List<ColdDeleteFile> deletes)
    {
        return new ColdSplit(path, start, length, fileSize, fileRecordCount, deletes);
    }

    /** Proportional to the bytes of the range against the target split size, so a worker takes many small splits at once. */
    @Override
    public SplitWeight getSplitWeight()
    {
        return SplitWeight.fromProportion(Math.clamp((double) length / ColdSplitPlanner.TARGET_SPLIT_SIZE_BYTES, MINIMUM_WEIGHT, 1.0));
    }

    @Override
    public long getRetainedSizeInBytes()
    {
        return INSTANCE_SIZE + estimatedSizeOf(path) + deletes.stream().mapToLong(ColdDeleteFile::getRetainedSizeInBytes).sum();
    }
}
