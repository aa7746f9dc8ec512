package io.meterstore.trino.cold;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import com.google.common.primitives.Ints;
import io.meterstore.trino.base.MeterstoreMetrics;
import io.trino.parquet.ParquetCorruptionException;
import io.trino.parquet.ParquetDataSourceId;
import io.trino.parquet.reader.ParquetReader;
import io.trino.spi.Page;
import io.trino.spi.TrinoException;
import io.trino.spi.block.Block;
import io.trino.spi.block.LongArrayBlock;
import io.trino.spi.block.RunLengthEncodedBlock;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.SourcePage;
import io.trino.spi.metrics.Metrics;
import io.trino.spi.type.Type;
import org.apache.iceberg.deletes.PositionDeleteIndex;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.stream.IntStream;

import static com.google.common.base.Preconditions.checkArgument;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_COLD_READ_FAILED;
import static java.util.Objects.requireNonNull;

/**
 * The pages of one cold split, as Trino's Parquet reader decodes them, without the rows the split's position delete
 * files remove. On request the file row position of every row follows the query's columns as one more channel.
 */
final class ColdPageSource
        implements ConnectorPageSource
{
    /** The channel of a column the file does not have: it reads as null. */
    static final int NULL_CHANNEL = -1;

    private final ParquetReader parquetReader;
    private final List<Type> types;
    private final int[] readerChannels;
    // the common case: every column read once, in order, so the reader's lazy pages pass through untouched
    private final boolean passThrough;
    private final Optional<PositionDeleteIndex> deletes;
    private final boolean rowPositions;
    private final boolean resolving;

    // row groups starting inside the split, and those the pushed predicate could not exclude
    private final long rowGroups;
    private final long rowGroupsRead;

    private boolean closed;
    private long completedPositions;
    private long deletedPositions;

    /**
     * @param deletes the positions of the file's deleted rows; when present, the reader must read every row of its row
     * groups (no page-index filtering), so that a batch's rows are consecutive file positions
     * @param rowPositions append each row's position in the file as a last bigint channel
     * @param resolving the split is read to resolve versions: its row groups are counted as resolved
     */
    ColdPageSource(ParquetReader parquetReader, List<Type> types, List<Integer> readerChannels, long rowGroups, long rowGroupsRead, Optional<PositionDeleteIndex> deletes, boolean rowPositions, boolean resolving)
    {
        this.rowGroups = rowGroups;
        this.rowGroupsRead = rowGroupsRead;
        this.parquetReader = requireNonNull(parquetReader, "parquetReader is null");
        this.types = ImmutableList.copyOf(requireNonNull(types, "types is null"));
        this.readerChannels = Ints.toArray(requireNonNull(readerChannels, "readerChannels is null"));
        checkArgument(types.size() == readerChannels.size(), "types and readerChannels differ in size");
        this.deletes = requireNonNull(deletes, "deletes is null").filter(PositionDeleteIndex::isNotEmpty);
        this.rowPositions = rowPositions;
        this.resolving = resolving;
        this.passThrough = !rowPositions && IntStream.range(0, this.readerChannels.length).allMatch(channel -> this.readerChannels[channel] == channel);
    }

    @Override
    public long getCompletedBytes()
    {
        return parquetReader.getDataSource().getReadBytes();
    }

    @Override
    public OptionalLong getCompletedPositions()
    {
        return OptionalLong.of(completedPositions);
    }

    @Override
    public long getReadTimeNanos()
    {
        return parquetReader.getDataSource().getReadTimeNanos();
    }

    @Override
    public boolean isFinished()
    {
        return closed;
    }

    @Override
    public SourcePage getNextSourcePage()
    {
        if (closed) {
            return null;
        }
        SourcePage page;
        try {
            page = parquetReader.nextPage();
        }
        catch (IOException | RuntimeException e) {
            closeAfterFailure(e);
            throw translate(parquetReader.getDataSource().getId(), e);
        }
        if (page == null) {
            close();
            return null;
        }
        int positions = page.getPositionCount();
        completedPositions += positions;
        // the file position of the batch's first row; its rows follow each other, since no page index filters them
        long firstRow = deletes.isPresent() || rowPositions ? parquetReader.lastBatchStartRow() : 0;
        int[] kept = null;
        if (deletes.isPresent()) {
            PositionDeleteIndex deleted = deletes.get();
            int count = 0;
            for (int position = 0; position < positions; position++) {
                if (!deleted.isDeleted(firstRow + position)) {
                    if (kept != null) {
                        kept[count] = position;
                    }
                    count++;
                }
                else if (kept == null) {
                    // the first deleted row: from here on the kept positions are listed
                    kept = new int[positions];
                    for (int previous = 0; previous < position; previous++) {
                        kept[previous] = previous;
                    }
                }
            }
            if (kept != null) {
                deletedPositions += positions - count;
                page.selectPositions(kept, 0, count);
                positions = count;
            }
        }
        if (passThrough) {
            return page;
        }
        Block[] blocks = new Block[readerChannels.length + (rowPositions ? 1 : 0)];
        for (int channel = 0; channel < readerChannels.length; channel++) {
            blocks[channel] = readerChannels[channel] == NULL_CHANNEL
                    ? RunLengthEncodedBlock.create(types.get(channel), null, positions)
                    : page.getBlock(readerChannels[channel]);
        }
        if (rowPositions) {
            long[] values = new long[positions];
            for (int position = 0; position < positions; position++) {
                values[position] = firstRow + (kept == null ? position : kept[position]);
            }
            blocks[readerChannels.length] = new LongArrayBlock(positions, Optional.empty(), values);
        }
        return SourcePage.create(new Page(positions, blocks));
    }

    @Override
    @SuppressWarnings("deprecation") // the provider's MemoryContext overload forwards this to the engine
    public long getMemoryUsage()
    {
        return parquetReader.getMemoryContext().getBytes();
    }

    @Override
    public Metrics getMetrics()
    {
        return parquetReader.getMetrics().mergeWith(MeterstoreMetrics.counts(ImmutableMap.of(
                MeterstoreMetrics.COLD_ROW_GROUPS, rowGroups,
                MeterstoreMetrics.COLD_ROW_GROUPS_READ, rowGroupsRead,
                MeterstoreMetrics.COLD_ROW_GROUPS_RESOLVED, resolving ? rowGroupsRead : 0L,
                MeterstoreMetrics.COLD_ROWS_READ, completedPositions,
                MeterstoreMetrics.COLD_ROWS_DELETED, deletedPositions)));
    }

    @Override
    public void close()
    {
        if (closed) {
            return;
        }
        closed = true;
        try {
            parquetReader.close();
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void closeAfterFailure(Exception failure)
    {
        try {
            close();
        }
        catch (RuntimeException e) {
            if (e != failure) {
                failure.addSuppressed(e);
            }
        }
    }

    static TrinoException translate(ParquetDataSourceId dataSourceId, Exception exception)
    {
        if (exception instanceof TrinoException trinoException) {
            return trinoException;
        }
        if (exception instanceof ParquetCorruptionException) {
            return new TrinoException(METERSTORE_COLD_READ_FAILED, "Corrupt Parquet data file '%s': %s".formatted(dataSourceId, exception.getMessage()), exception);
        }
        return new TrinoException(METERSTORE_COLD_READ_FAILED, "Failed to read Parquet data file '%s': %s".formatted(dataSourceId, exception.getMessage()), exception);
    }
}
