package io.meterstore.trino.versions;

import com.google.common.collect.ImmutableList;
import io.airlift.slice.Slice;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.meterstore.trino.base.MeterstoreTypes;
import io.trino.spi.Page;
import io.trino.spi.PageBuilder;
import io.trino.spi.block.Block;
import io.trino.spi.block.Int128ArrayBlock;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.SourcePage;
import io.trino.spi.metrics.Metrics;
import io.trino.spi.type.Int128;
import io.trino.spi.type.Type;

import java.io.IOException;
import java.util.List;
import java.util.OptionalLong;

import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * Merges the rows of several data files, each sorted by (malo_id, obis_code, "from", the key's other columns, version), into one stream in
 * that order, so the versions of a key that a late correction appended in another file meet the key's other versions.
 * Only the cold splits that resolve several files take this path; it copies rows, the single-file path does not.
 */
public final class SortedMergePageSource
        implements ConnectorPageSource
{
    private final List<Cursor> cursors;
    private final VersionResolution.Layout layout;
    private final List<Type> types;
    private final PageBuilder pageBuilder;
    private long completedPositions;
    private boolean finished;

    public SortedMergePageSource(List<ConnectorPageSource> sources, VersionResolution.Layout layout)
    {
        this.cursors = requireNonNull(sources, "sources is null").stream().map(Cursor::new).collect(ImmutableList.toImmutableList());
        this.layout = requireNonNull(layout, "layout is null");
        this.types = layout.columns().stream().map(MeterstoreColumnHandle::type).collect(ImmutableList.toImmutableList());
        this.pageBuilder = new PageBuilder(types);
    }

    @Override
    public SourcePage getNextSourcePage()
    {
        if (finished) {
            return null;
        }
        while (!pageBuilder.isFull()) {
            Cursor smallest = null;
            for (Cursor cursor : cursors) {
                if (cursor.advance() && (smallest == null || compare(cursor, smallest) < 0)) {
                    smallest = cursor;
                }
            }
            if (smallest == null) {
                finished = true;
                break;
            }
            pageBuilder.declarePosition();
            for (int channel = 0; channel < types.size(); channel++) {
                Block block = smallest.page.getBlock(channel);
                pageBuilder.getBlockBuilder(channel).append(block.getUnderlyingValueBlock(), block.getUnderlyingValuePosition(smallest.position));
            }
            smallest.position++;
        }
        Page page = pageBuilder.build();
        pageBuilder.reset();
        completedPositions += page.getPositionCount();
        return SourcePage.create(page);
    }

    private int compare(Cursor left, Cursor right)
    {
        int result = slice(left, layout.maloId()).compareTo(slice(right, layout.maloId()));
        if (result != 0) {
            return result;
        }
        result = slice(left, layout.obisCode()).compareTo(slice(right, layout.obisCode()));
        if (result != 0) {
            return result;
        }
        result = Long.compare(epochMicros(left, layout.from()), epochMicros(right, layout.from()));
        if (result != 0) {
            return result;
        }
        // the key's other columns sort between "from" and version (none for the default key)
        for (int channel : layout.keyChannels()) {
            result = slice(left, channel).compareTo(slice(right, channel));
            if (result != 0) {
                return result;
            }
        }
        return version(left).compareTo(version(right));
    }

    private static Slice slice(Cursor cursor, int channel)
    {
        return VARCHAR.getSlice(cursor.page.getBlock(channel), cursor.position);
    }

    private static long epochMicros(Cursor cursor, int channel)
    {
        return MeterstoreTypes.epochMicros(cursor.page.getBlock(channel), cursor.position);
    }

    private Int128 version(Cursor cursor)
    {
        Block block = cursor.page.getBlock(layout.version());
        Int128ArrayBlock values = (Int128ArrayBlock) block.getUnderlyingValueBlock();
        int position = block.getUnderlyingValuePosition(cursor.position);
        return Int128.valueOf(values.getInt128High(position), values.getInt128Low(position));
    }

    /** The current row of one file's pages. */
    private static final class Cursor
    {
        private final ConnectorPageSource source;
        private SourcePage page;
        private int position;

        Cursor(ConnectorPageSource source)
        {
            this.source = requireNonNull(source, "source is null");
        }

        /** Whether there is a current row; reads the next non-empty page when the current one is done. */
        boolean advance()
        {
            while (page == null || position >= page.getPositionCount()) {
                if (source.isFinished()) {
                    return false;
                }
                // the tiers' page sources never block: a null page before the end is an empty read
                page = source.getNextSourcePage();
                position = 0;
            }
            return true;
        }
    }

    @Override
    public long getCompletedBytes()
    {
        return cursors.stream().mapToLong(cursor -> cursor.source.getCompletedBytes()).sum();
    }

    @Override
    public OptionalLong getCompletedPositions()
    {
        return OptionalLong.of(completedPositions);
    }

    @Override
    public long getReadTimeNanos()
    {
        return cursors.stream().mapToLong(cursor -> cursor.source.getReadTimeNanos()).sum();
    }

    @Override
    public boolean isFinished()
    {
        return finished;
    }

    @Override
    @SuppressWarnings("deprecation") // the readers' memory, as the single-file path reports it
    public long getMemoryUsage()
    {
        return pageBuilder.getRetainedSizeInBytes() + cursors.stream().mapToLong(cursor -> cursor.source.getMemoryUsage()).sum();
    }

    @Override
    public Metrics getMetrics()
    {
        Metrics metrics = Metrics.EMPTY;
        for (Cursor cursor : cursors) {
            metrics = metrics.mergeWith(cursor.source.getMetrics());
        }
        return metrics;
    }

    @Override
    public void close()
            throws IOException
    {
        IOException failure = null;
        for (Cursor cursor : cursors) {
            try {
                cursor.source.close();
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
}
