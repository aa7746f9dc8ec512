package io.meterstore.trino.cold;

import io.airlift.units.DataSize;
import io.trino.filesystem.Location;
import io.trino.filesystem.TrinoInput;
import io.trino.filesystem.TrinoInputFile;
import io.trino.filesystem.TrinoInputStream;
import io.trino.filesystem.local.LocalFileSystem;
import io.trino.memory.context.AggregatedMemoryContext;
import io.trino.parquet.ParquetCorruptionException;
import io.trino.parquet.ParquetReaderOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

import static io.trino.memory.context.AggregatedMemoryContext.newSimpleAggregatedMemoryContext;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A scan reads a file no larger than the small-file threshold with one request, however many parts of it the Parquet
 * reader asks for (on object storage each request is a round trip), and counts the buffer in its memory; a larger file,
 * or a file read for its footer alone, by the ranges asked for.
 */
final class TestColdParquetDataSource
{
    private static final int FILE_BYTES = 10_000;

    @TempDir
    Path directory;

    @Test
    void testSmallFileIsReadWithOneRequest()
            throws IOException
    {
        byte[] bytes = file();
        CountingInputFile file = new CountingInputFile(new LocalFileSystem(directory).newInputFile(Location.of("local:///file.parquet")));
        AggregatedMemoryContext memory = newSimpleAggregatedMemoryContext();
        try (ColdParquetDataSource source = ColdParquetDataSource.forScan(file, FILE_BYTES, ParquetReaderOptions.defaultOptions(), memory)) {
            assertReads(source, bytes);
            assertThat(memory.getBytes()).isGreaterThanOrEqualTo(FILE_BYTES);
        }
        assertThat(file.requests.get()).isEqualTo(1);
        assertThat(memory.getBytes()).isZero();
    }

    @Test
    void testFooterReadOfSmallFileIsReadByRanges()
            throws IOException
    {
        // planning reads a file's footer for its row groups' keys: the whole file would be wasted there
        byte[] bytes = file();
        CountingInputFile file = new CountingInputFile(new LocalFileSystem(directory).newInputFile(Location.of("local:///file.parquet")));
        try (ColdParquetDataSource source = new ColdParquetDataSource(file, FILE_BYTES, ParquetReaderOptions.defaultOptions())) {
            assertReads(source, bytes);
        }
        assertThat(file.requests.get()).isEqualTo(3);
    }

    @Test
    void testLargerFileIsReadByRanges()
            throws IOException
    {
        byte[] bytes = file();
        CountingInputFile file = new CountingInputFile(new LocalFileSystem(directory).newInputFile(Location.of("local:///file.parquet")));
        ParquetReaderOptions options = ParquetReaderOptions.builder().withSmallFileThreshold(DataSize.ofBytes(FILE_BYTES - 1)).build();
        try (ColdParquetDataSource source = ColdParquetDataSource.forScan(file, FILE_BYTES, options, newSimpleAggregatedMemoryContext())) {
            assertReads(source, bytes);
        }
        assertThat(file.requests.get()).isEqualTo(3);
    }

    @Test
    void testSmallFileShorterThanItsMetadataSays()
            throws IOException
    {
        file();
        TrinoInputFile file = new LocalFileSystem(directory).newInputFile(Location.of("local:///file.parquet"));
        try (ColdParquetDataSource source = ColdParquetDataSource.forScan(file, FILE_BYTES + 1, ParquetReaderOptions.defaultOptions(), newSimpleAggregatedMemoryContext())) {
            assertThatThrownBy(() -> source.readTail(100))
                    .isInstanceOf(ParquetCorruptionException.class)
                    .hasMessageContaining("File has 10000 bytes where the table's metadata records 10001");
        }
    }

    // the footer, then two column chunks, as the reader asks for them
    private static void assertReads(ColdParquetDataSource source, byte[] bytes)
            throws IOException
    {
        assertThat(source.readTail(100).getBytes()).isEqualTo(Arrays.copyOfRange(bytes, FILE_BYTES - 100, FILE_BYTES));
        assertThat(source.readFully(0, 50).getBytes()).isEqualTo(Arrays.copyOfRange(bytes, 0, 50));
        assertThat(source.readFully(5_000, 1_000).getBytes()).isEqualTo(Arrays.copyOfRange(bytes, 5_000, 6_000));
    }

    private byte[] file()
            throws IOException
    {
        byte[] bytes = new byte[FILE_BYTES];
        new Random(7).nextBytes(bytes);
        Files.write(directory.resolve("file.parquet"), bytes);
        return bytes;
    }

    /** Counts the reads that reach the file system, each a request on object storage. */
    private static final class CountingInputFile
            implements TrinoInputFile
    {
        private final TrinoInputFile delegate;
        private final AtomicInteger requests = new AtomicInteger();

        CountingInputFile(TrinoInputFile delegate)
        {
            this.delegate = delegate;
        }

        @Override
        public TrinoInput newInput()
                throws IOException
        {
            TrinoInput input = delegate.newInput();
            return new TrinoInput()
            {
                @Override
                public void readFully(long position, byte[] buffer, int bufferOffset, int bufferLength)
                        throws IOException
                {
                    requests.incrementAndGet();
                    input.readFully(position, buffer, bufferOffset, bufferLength);
                }

                @Override
                public int readTail(byte[] buffer, int bufferOffset, int bufferLength)
                        throws IOException
                {
                    requests.incrementAndGet();
                    return input.readTail(buffer, bufferOffset, bufferLength);
                }

                @Override
                public void close()
                        throws IOException
                {
                    input.close();
                }
            };
        }

        @Override
        public TrinoInputStream newStream()
                throws IOException
        {
            return delegate.newStream();
        }

        @Override
        public long length()
                throws IOException
        {
            return delegate.length();
        }

        @Override
        public Instant lastModified()
                throws IOException
        {
            return delegate.lastModified();
        }

        @Override
        public boolean exists()
                throws IOException
        {
            return delegate.exists();
        }

        @Override
        public Location location()
        {
            return delegate.location();
        }
    }
}
