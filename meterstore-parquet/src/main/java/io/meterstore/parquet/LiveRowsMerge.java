package io.meterstore.parquet;

import com.google.common.collect.ImmutableList;
import io.meterstore.core.TableColumn;
import io.meterstore.core.TableColumns;
import io.trino.parquet.Column;
import io.trino.parquet.ParquetReaderOptions;
import io.trino.parquet.ParquetTypeUtils;
import io.trino.parquet.metadata.BlockMetadata;
import io.trino.parquet.metadata.ParquetMetadata;
import io.trino.parquet.reader.MetadataReader;
import io.trino.parquet.reader.ParquetReader;
import io.trino.parquet.reader.RowGroupInfo;
import io.trino.spi.Page;
import io.trino.spi.PageBuilder;
import io.trino.spi.block.Block;
import io.trino.spi.block.BlockBuilder;
import io.trino.spi.connector.SourcePage;
import org.apache.iceberg.io.FileIO;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.io.MessageColumnIO;
import org.apache.parquet.schema.MessageType;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;

import static com.google.common.base.Preconditions.checkArgument;
import static io.trino.memory.context.AggregatedMemoryContext.newSimpleAggregatedMemoryContext;
import static io.trino.parquet.metadata.PrunedBlockMetadata.createPrunedColumnsMetadata;
import static java.util.Objects.requireNonNull;
import static org.joda.time.DateTimeZone.UTC;

/**
 * The live rows of a set of data files, every column of their table (its attribute columns after the readings columns),
 * as one stream sorted by (malo_id, obis_code, "from",
 * version): each file is read with Trino's Parquet reader, the positions its Iceberg position deletes remove are
 * dropped, and the files, each sorted, are merged. What compaction feeds {@link ResolvedMonthWriter#write} with: at any
 * time it holds one page per file and one page being built, never a month.
 * <p>
 * A file whose rows are not in that order cannot be merged: it fails the merge with an error naming it, so that no
 * month is rewritten from rows out of order.
 */
public final class LiveRowsMerge
{
    private LiveRowsMerge() {}

    /** A data file to read and the positions of its rows that position deletes remove, ascending. */
    public record LiveFile(String location, long length, long[] deletedPositions)
    {
        public LiveFile
        {
            requireNonNull(location, "location is null");
            checkArgument(length >= 0, "length is negative");
            deletedPositions = deletedPositions.clone();
            Arrays.sort(deletedPositions);
        }
    }

    public interface PageConsumer
    {
        void accept(Page page)
                throws IOException;
    }

    /**
     * Streams the live rows of {@code files}, data files of a table of {@code columns}, merged in sort order, in pages of
     * at most {@code pageRows} rows, a channel per column; the rows read.
     */
    public static long merge(TableColumns columns, FileIO io, List<LiveFile> files, int pageRows, PageConsumer consumer)
            throws IOException
    {
        requireNonNull(columns, "columns is null");
        requireNonNull(io, "io is null");
        requireNonNull(consumer, "consumer is null");
        checkArgument(pageRows > 0, "pageRows must be positive");
        List<FileCursor> cursors = new ArrayList<>();
        try {
            PriorityQueue<FileCursor> queue = new PriorityQueue<>(Math.max(1, files.size()), FileCursor::compareTo);
            for (LiveFile file : files) {
                FileCursor cursor = new FileCursor(columns, io, file);
                cursors.add(cursor);
                if (cursor.advance()) {
                    queue.add(cursor);
                }
            }
            PageBuilder output = new PageBuilder(pageRows, ReadingsParquetSchema.trinoTypes(columns));
            long rows = 0;
            while (!queue.isEmpty()) {
                FileCursor smallest = queue.poll();
                smallest.appendTo(output);
                rows++;
                if (output.getPositionCount() >= pageRows) {
                    consumer.accept(output.build());
                    output.reset();
                }
                if (smallest.advance()) {
                    queue.add(smallest);
                }
            }
            if (!output.isEmpty()) {
                consumer.accept(output.build());
            }
            return rows;
        }
        finally {
            closeAll(cursors);
        }
    }

    private static void closeAll(List<FileCursor> cursors)
            throws IOException
    {
        IOException failure = null;
        for (FileCursor cursor : cursors) {
            try {
                cursor.close();
            }
            catch (IOException e) {
                if (failure == null) {
                    failure = e;
                }
                else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** One file's live rows, a page at a time, with the row the merge stands on. */
    private static final class FileCursor
            implements Closeable
    {
        private final LiveFile file;
        private final IcebergParquetDataSource source;
        private final ParquetReader reader;
        private final int channels;
        private final int[] keyChannels;
        private Page page;
        private int position = -1;
        private int nextDeleted;

        FileCursor(TableColumns columns, FileIO io, LiveFile file)
                throws IOException
        {
            this.file = file;
            this.channels = columns.size();
            this.keyChannels = columns.keyChannels();
            this.source = new IcebergParquetDataSource(io.newInputFile(file.location(), file.length()));
            try {
                this.reader = reader(columns, source);
            }
            catch (IOException | RuntimeException e) {
                source.close();
                throw e;
            }
        }

        /** Moves to the next live row; false at the end of the file. */
        boolean advance()
                throws IOException
        {
            Page previous = page;
            int previousPosition = position;
            position++;
            while (page == null || position >= page.getPositionCount()) {
                Optional<Page> next = nextLivePage();
                if (next.isEmpty()) {
                    return false;
                }
                page = next.get();
                position = 0;
            }
            if (previous != null && previousPosition >= 0 && VersionColumns.compareSortKey(keyChannels, previous, previousPosition, page, position) > 0) {
                throw new IllegalStateException("Data file '%s' is not sorted by (malo_id, obis_code, \"from\", the key's other columns, version): its rows cannot be merged into a compacted month"
                        .formatted(file.location()));
            }
            return true;
        }

        void appendTo(PageBuilder output)
        {
            for (int channel = 0; channel < channels; channel++) {
                Block block = page.getBlock(channel);
                BlockBuilder builder = output.getBlockBuilder(channel);
                builder.append(block.getUnderlyingValueBlock(), block.getUnderlyingValuePosition(position));
            }
            output.declarePosition();
        }

        int compareTo(FileCursor other)
        {
            return VersionColumns.compareSortKey(keyChannels, page, position, other.page, other.position);
        }

        /** The next page with a live row, the deleted positions dropped. */
        private Optional<Page> nextLivePage()
                throws IOException
        {
            while (true) {
                SourcePage sourcePage = reader.nextPage();
                if (sourcePage == null) {
                    return Optional.empty();
                }
                long start = reader.lastBatchStartRow();
                Page loaded = sourcePage.getPage();
                int count = loaded.getPositionCount();
                long[] deleted = file.deletedPositions();
                while (nextDeleted < deleted.length && deleted[nextDeleted] < start) {
                    nextDeleted++;
                }
                if (nextDeleted == deleted.length || deleted[nextDeleted] >= start + count) {
                    return Optional.of(loaded);
                }
                int[] kept = new int[count];
                int keptCount = 0;
                for (int row = 0; row < count; row++) {
                    if (nextDeleted < deleted.length && deleted[nextDeleted] == start + row) {
                        nextDeleted++;
                        continue;
                    }
                    kept[keptCount++] = row;
                }
                if (keptCount > 0) {
                    return Optional.of(loaded.getPositions(kept, 0, keptCount));
                }
            }
        }

        @Override
        public void close()
                throws IOException
        {
            try (source) {
                reader.close();
            }
        }

        private static ParquetReader reader(TableColumns tableColumns, IcebergParquetDataSource source)
                throws IOException
        {
            ParquetMetadata metadata = MetadataReader.readFooter(source, Optional.empty());
            MessageType schema = metadata.getFileMetaData().getSchema();
            MessageColumnIO columnIO = ParquetTypeUtils.getColumnIO(schema, schema);
            ImmutableList.Builder<Column> columns = ImmutableList.builder();
            for (TableColumn column : tableColumns.all()) {
                columns.add(new Column(column.name(), ParquetTypeUtils.constructField(
                                ReadingsParquetSchema.trinoType(column.kind()),
                                ParquetTypeUtils.lookupColumnByName(columnIO, column.name()))
                        .orElseThrow(() -> new IOException("Data file '%s' has no column '%s'".formatted(source.getId(), column.name())))));
            }
            Map<List<String>, ColumnDescriptor> descriptors = ParquetTypeUtils.getDescriptors(schema, schema);
            ImmutableList.Builder<RowGroupInfo> rowGroups = ImmutableList.builder();
            long rowOffset = 0;
            for (BlockMetadata block : metadata.getBlocks()) {
                rowGroups.add(new RowGroupInfo(createPrunedColumnsMetadata(block, source.getId(), descriptors), rowOffset, Optional.empty()));
                rowOffset += block.rowCount();
            }
            // no predicate and no page-index filtering: every row is read, so positions count from the file's first row
            return new ParquetReader(
                    Optional.ofNullable(metadata.getFileMetaData().getCreatedBy()),
                    columns.build(),
                    false,
                    rowGroups.build(),
                    source,
                    UTC,
                    newSimpleAggregatedMemoryContext(),
                    ParquetReaderOptions.defaultOptions(),
                    exception -> exception instanceof IOException ioException ? new UncheckedIOException(ioException) : new RuntimeException(exception),
                    Optional.empty(),
                    Optional.empty(),
                    Optional.empty());
        }
    }
}
