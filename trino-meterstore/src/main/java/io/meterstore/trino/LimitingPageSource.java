package io.meterstore.trino;

import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.SourcePage;
import io.trino.spi.metrics.Metrics;

import java.io.IOException;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/** Stops a split after a pushed LIMIT's rows and closes its reader, so the rest of the split is never read. */
final class LimitingPageSource
        implements ConnectorPageSource
{
    private final ConnectorPageSource delegate;
    private long remaining;

    LimitingPageSource(ConnectorPageSource delegate, long limit)
    {
        this.delegate = requireNonNull(delegate, "delegate is null");
        checkArgument(limit >= 0, "limit is negative: %s", limit);
        this.remaining = limit;
    }

    @Override
    public SourcePage getNextSourcePage()
    {
        if (remaining == 0) {
            return null;
        }
        SourcePage page = delegate.getNextSourcePage();
        if (page == null) {
            return null;
        }
        if (page.getPositionCount() >= remaining) {
            int positions = (int) remaining;
            // the reader stays open until Trino closes this source: the page's blocks load lazily from it
            remaining = 0;
            if (positions < page.getPositionCount()) {
                int[] kept = new int[positions];
                for (int position = 0; position < positions; position++) {
                    kept[position] = position;
                }
                page.selectPositions(kept, 0, positions);
            }
            return page;
        }
        remaining -= page.getPositionCount();
        return page;
    }

    @Override
    public boolean isFinished()
    {
        return remaining == 0 || delegate.isFinished();
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
    public long getMemoryUsage()
    {
        return delegate.getMemoryUsage();
    }

    @Override
    public CompletableFuture<?> isBlocked()
    {
        return delegate.isBlocked();
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
