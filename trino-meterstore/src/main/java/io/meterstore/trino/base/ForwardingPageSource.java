package io.meterstore.trino.base;

import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.metrics.Metrics;

import java.io.IOException;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;

import static java.util.Objects.requireNonNull;

/** A page source that changes its delegate's pages and passes everything else on: progress, memory, metrics, close. */
public abstract class ForwardingPageSource
        implements ConnectorPageSource
{
    private final ConnectorPageSource delegate;

    protected ForwardingPageSource(ConnectorPageSource delegate)
    {
        this.delegate = requireNonNull(delegate, "delegate is null");
    }

    protected final ConnectorPageSource delegate()
    {
        return delegate;
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
