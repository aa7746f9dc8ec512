package io.meterstore.trino.versions;

import io.meterstore.trino.cold.KeyRange;
import io.trino.spi.block.Block;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.SourcePage;
import io.trino.spi.metrics.Metrics;

import java.io.IOException;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;

import static io.meterstore.trino.MeterstoreTypes.epochMicros;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * The rows of one file of a resolution split that lie in the split's part of the key space: a row group straddling
 * two parts is read by both splits, and each keeps only its own keys, so no key is resolved twice.
 */
public final class KeyRangePageSource
        implements ConnectorPageSource
{
    private final ConnectorPageSource delegate;
    private final KeyRange.Matcher keys;
    private final int maloIdChannel;
    private final int fromChannel;

    public KeyRangePageSource(ConnectorPageSource delegate, KeyRange keys, VersionResolution.Layout layout)
    {
        this.delegate = requireNonNull(delegate, "delegate is null");
        this.keys = requireNonNull(keys, "keys is null").matcher();
        this.maloIdChannel = layout.maloId();
        this.fromChannel = layout.from();
    }

    @Override
    public SourcePage getNextSourcePage()
    {
        SourcePage page = delegate.getNextSourcePage();
        if (page == null) {
            return null;
        }
        Block maloIds = page.getBlock(maloIdChannel);
        Block froms = page.getBlock(fromChannel);
        int[] kept = new int[page.getPositionCount()];
        int count = 0;
        for (int position = 0; position < page.getPositionCount(); position++) {
            if (keys.contains(VARCHAR.getSlice(maloIds, position), epochMicros(froms, position))) {
                kept[count++] = position;
            }
        }
        if (count < page.getPositionCount()) {
            page.selectPositions(kept, 0, count);
        }
        return page;
    }

    @Override
    public boolean isFinished()
    {
        return delegate.isFinished();
    }

    @Override
    public CompletableFuture<?> isBlocked()
    {
        return delegate.isBlocked();
    }

    @Override
    public long getCompletedBytes()
    {
        return delegate.getCompletedBytes();
    }

    @Override
    public OptionalLong getCompletedPositions()
    {
        return delegate.getCompletedPositions();
    }

    @Override
    public long getReadTimeNanos()
    {
        return delegate.getReadTimeNanos();
    }

    @Override
    @SuppressWarnings("deprecation") // forwards the reader's memory
    public long getMemoryUsage()
    {
        return delegate.getMemoryUsage();
    }

    @Override
    public Metrics getMetrics()
    {
        return delegate.getMetrics();
    }

    @Override
    public void close()
            throws IOException
    {
        delegate.close();
    }
}
