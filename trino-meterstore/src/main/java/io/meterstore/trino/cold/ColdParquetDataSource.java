package io.meterstore.trino.cold;

import io.airlift.slice.Slice;
import io.trino.filesystem.TrinoInput;
import io.trino.filesystem.TrinoInputFile;
import io.trino.parquet.AbstractParquetDataSource;
import io.trino.parquet.ParquetCorruptionException;
import io.trino.parquet.ParquetDataSourceId;
import io.trino.parquet.ParquetReaderOptions;

import java.io.IOException;

import static java.lang.Math.toIntExact;

/**
 * A Parquet file read through Trino's file system; {@link AbstractParquetDataSource} counts bytes and read time. A file
 * no larger than the Parquet reader's small-file threshold (3 MB, the default of Trino's Hive and Iceberg connectors)
 * is read whole at its first read, in one request, as those connectors read it: on object storage every read is a
 * request, and a small file's footer, bloom filters and column chunks would otherwise cost one each.
 */
final class ColdParquetDataSource
        extends AbstractParquetDataSource
{
    private final TrinoInput input;
    private final boolean readWhole;
    private Slice content;

    ColdParquetDataSource(TrinoInputFile file, long fileSize, ParquetReaderOptions options)
            throws IOException
    {
        super(new ParquetDataSourceId(file.location().toString()), fileSize, options);
        this.input = file.newInput();
        this.readWhole = fileSize <= options.getSmallFileThreshold().toBytes();
    }

    @Override
    protected Slice readTailInternal(int length)
            throws IOException
    {
        if (readWhole) {
            Slice whole = content();
            return whole.slice(whole.length() - length, length);
        }
        return input.readTail(length);
    }

    @Override
    protected void readInternal(long position, byte[] buffer, int bufferOffset, int bufferLength)
            throws IOException
    {
        if (readWhole) {
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
        }
        return content;
    }

    @Override
    public void close()
            throws IOException
    {
        content = null;
        input.close();
    }
}
