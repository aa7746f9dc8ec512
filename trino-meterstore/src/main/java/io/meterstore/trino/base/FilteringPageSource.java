package io.meterstore.trino.base;

import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.SourcePage;
import io.trino.spi.metrics.Metrics;

import java.io.IOException;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;

import static java.util.Objects.requireNonNull;

/**
 * Passes a delegate's pages on, each trimmed to the positions a subclass keeps; everything else is the delegate's.
 * The page's blocks stay lazy: only the columns the subclass reads to decide are loaded.
 */
public abstract class FilteringPageSource
        implements ConnectorPageSource
{
    private final ConnectorPageSource delegate;

    protected FilteringPageSource(ConnectorPageSource delegate)
    {
        this.delegate = requireNonNull(delegate, "delegate is null");
    }

    /** Writes the positions of {@code page} to keep, ascending, into {@code kept}; returns how many. */
    protected abstract int keep(SourcePage page, int[] kept);

    @Override
    public SourcePage getNextSourcePage()
    {
        SourcePage page = delegate.getNextSourcePage();
        if (page == null) {
            return null;
        }
        int[] kept = new int[page.getPositionCount()];
        int count = keep(page, kept);
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
