package io.meterstore.trino.cold;

import io.airlift.slice.Slice;
import io.trino.filesystem.TrinoInput;
import io.trino.filesystem.TrinoInputFile;
import io.trino.memory.context.AggregatedMemoryContext;
import io.trino.memory.context.LocalMemoryContext;
import io.trino.parquet.AbstractParquetDataSource;
import io.trino.parquet.ParquetCorruptionException;
import io.trino.parquet.ParquetDataSourceId;
import io.trino.parquet.ParquetReaderOptions;

import java.io.IOException;
import java.util.Optional;

import static java.lang.Math.toIntExact;

/**
 * A Parquet file read through Trino's file system; {@link AbstractParquetDataSource} counts bytes and read time. Read for
 * a scan ({@link #forScan}), a file no larger than the Parquet reader's small-file threshold (3 MB, the default of Trino's
 * Hive and Iceberg connectors) is read whole at its first read, in one request, as those connectors read it: on object
 * storage every read is a request, and a small file's footer, bloom filters and column chunks would otherwise cost one
 * each. The buffer counts in the scan's memory. A file read for its footer or a delete file alone is read by ranges.
 */
final class ColdParquetDataSource
        extends AbstractParquetDataSource
{
    private final TrinoInput input;
    // present when the file is read whole: the memory its content takes
    private final Optional<LocalMemoryContext> wholeFileMemory;
    private Slice content;

    /** A file read by the ranges the reader asks for. */
    ColdParquetDataSource(TrinoInputFile file, long fileSize, ParquetReaderOptions options)
            throws IOException
    {
        this(file, fileSize, options, Optional.empty());
    }

    private ColdParquetDataSource(TrinoInputFile file, long fileSize, ParquetReaderOptions options, Optional<LocalMemoryContext> wholeFileMemory)
            throws IOException
    {
        super(new ParquetDataSourceId(file.location().toString()), fileSize, options);
        this.input = file.newInput();
        this.wholeFileMemory = wholeFileMemory;
    }

    /** A file a scan reads: whole when it is small, its content counted in {@code memory}. */
    static ColdParquetDataSource forScan(TrinoInputFile file, long fileSize, ParquetReaderOptions options, AggregatedMemoryContext memory)
            throws IOException
    {
        boolean small = fileSize <= options.getSmallFileThreshold().toBytes();
        return new ColdParquetDataSource(file, fileSize, options, small
                ? Optional.of(memory.newLocalMemoryContext(ColdParquetDataSource.class.getSimpleName()))
                : Optional.empty());
    }

    @Override
    protected Slice readTailInternal(int length)
            throws IOException
    {
        if (wholeFileMemory.isPresent()) {
            Slice whole = content();
            return whole.slice(whole.length() - length, length);
        }
        return input.readTail(length);
    }

    @Override
    protected void readInternal(long position, byte[] buffer, int bufferOffset, int bufferLength)
            throws IOException
    {
        if (wholeFileMemory.isPresent()) {
            content().getBytes(toIntExact(position), buffer, bufferOffset, bufferLength);
            return;
        }
        input.readFully(position, buffer, bufferOffset, bufferLength);
    }

    private Slice content()
            throws IOException
    {
        if (content == null) {
            Slice whole = input.readTail(toIntExact(getEstimatedSize()));
            if (whole.length() != getEstimatedSize()) {
                throw new ParquetCorruptionException(getId(), "File has %s bytes where the table's metadata records %s", whole.length(), getEstimatedSize());
            }
            content = whole;
            wholeFileMemory.orElseThrow().setBytes(whole.getRetainedSize());
        }
        return content;
    }

    @Override
    public void close()
            throws IOException
    {
        content = null;
        wholeFileMemory.ifPresent(LocalMemoryContext::close);
        input.close();
    }
}
