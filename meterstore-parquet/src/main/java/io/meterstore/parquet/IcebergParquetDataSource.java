package io.meterstore.parquet;

import io.trino.parquet.AbstractParquetDataSource;
import io.trino.parquet.ParquetDataSourceId;
import io.trino.parquet.ParquetReaderOptions;
import org.apache.iceberg.io.IOUtil;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.SeekableInputStream;

import java.io.IOException;

/** A Parquet file of the table's storage, read through Iceberg's FileIO, for Trino's Parquet reader. */
final class IcebergParquetDataSource
        extends AbstractParquetDataSource
{
    private final SeekableInputStream input;

    IcebergParquetDataSource(InputFile file)
    {
        super(new ParquetDataSourceId(file.location()), file.getLength(), ParquetReaderOptions.defaultOptions());
        this.input = file.newStream();
    }

    @Override
    protected void readInternal(long position, byte[] buffer, int bufferOffset, int bufferLength)
            throws IOException
    {
        input.seek(position);
        IOUtil.readFully(input, buffer, bufferOffset, bufferLength);
    }

    @Override
    public void close()
            throws IOException
    {
        input.close();
    }
}
