package io.meterstore.trino.cold;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import com.google.common.primitives.Ints;
import io.meterstore.trino.MeterstoreMetrics;
import io.trino.parquet.ParquetCorruptionException;
import io.trino.parquet.ParquetDataSourceId;
import io.trino.parquet.reader.ParquetReader;
import io.trino.spi.Page;
import io.trino.spi.TrinoException;
import io.trino.spi.block.Block;
import io.trino.spi.block.RunLengthEncodedBlock;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.SourcePage;
import io.trino.spi.metrics.Metrics;
import io.trino.spi.type.Type;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.OptionalLong;
import java.util.stream.IntStream;

import static com.google.common.base.Preconditions.checkArgument;
import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_COLD_READ_FAILED;
import static java.util.Objects.requireNonNull;

/** The pages of one cold split, as Trino's Parquet reader decodes them. */
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

    // row groups starting inside the split, and those the pushed predicate could not exclude
    private final long rowGroups;
    private final long rowGroupsRead;

    private boolean closed;
    private long completedPositions;

    ColdPageSource(ParquetReader parquetReader, List<Type> types, List<Integer> readerChannels, long rowGroups, long rowGroupsRead)
    {
        this.rowGroups = rowGroups;
        this.rowGroupsRead = rowGroupsRead;
        this.parquetReader = requireNonNull(parquetReader, "parquetReader is null");
        this.types = ImmutableList.copyOf(requireNonNull(types, "types is null"));
        this.readerChannels = Ints.toArray(requireNonNull(readerChannels, "readerChannels is null"));
        checkArgument(types.size() == readerChannels.size(), "types and readerChannels differ in size");
        this.passThrough = IntStream.range(0, this.readerChannels.length).allMatch(channel -> this.readerChannels[channel] == channel);
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
        completedPositions += page.getPositionCount();
        if (passThrough) {
            return page;
        }
        Block[] blocks = new Block[readerChannels.length];
        for (int channel = 0; channel < readerChannels.length; channel++) {
            blocks[channel] = readerChannels[channel] == NULL_CHANNEL
                    ? RunLengthEncodedBlock.create(types.get(channel), null, page.getPositionCount())
                    : page.getBlock(readerChannels[channel]);
        }
        return SourcePage.create(new Page(page.getPositionCount(), blocks));
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
                MeterstoreMetrics.COLD_ROWS_READ, completedPositions)));
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
