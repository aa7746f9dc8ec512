package io.meterstore.trino.hot;

import io.meterstore.trino.base.MeterstoreMetrics;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.SourcePage;
import io.trino.spi.metrics.Metrics;

import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.function.Function;

import static java.util.Objects.requireNonNull;

/**
 * A hot page source that starts once the connection pool hands it a connection. Until then it reports itself blocked,
 * so the driver gives its thread back instead of holding it: the splits that hold the pool's connections need those
 * threads to finish and return them, and a thread blocked in the pool could otherwise wait for itself. A page source
 * whose start is long, a pushed-down aggregation whose whole statement runs in it (seconds of PostgreSQL's work for a
 * month), starts on one of the pool's threads and reports itself blocked until then too: on a driver thread it would
 * hold one of the node's few (twice its cores) from every other query, a dashboard's one-meter read too. A read's COPY
 * starts on the driver, which goes on to read its rows: starting it elsewhere would send every split through the
 * engine's queue of drivers once more. Its metrics add how long the split waited for the connection, and the pool's
 * size, to the read's.
 */
public final class ConnectionAwaitingPageSource
        implements ConnectorPageSource
{
    private final CompletableFuture<Connection> connection;
    // completes once the wait is recorded: a split that finishes at once never reports the wait of a connection it holds as 0
    private final CompletableFuture<Connection> ready;
    // the page source started on the pool's threads, or null when the split was closed before its start began; empty
    // for one the driver starts
    private final Optional<CompletableFuture<ConnectorPageSource>> started;
    private final Function<Connection, ConnectorPageSource> start;
    private final int poolConnections;
    private final long createdNanos = System.nanoTime();
    private volatile long waitNanos;
    private Optional<ConnectorPageSource> delegate = Optional.empty();
    private volatile boolean closed;

    /**
     * @param starter runs {@code start}, for one whose start is long: the pool's threads for its splits' statements; empty
     * for the driver to start it
     * @param poolConnections the size of the pool the connection comes from, reported with the wait
     * @param start creates the page source that reads with the connection and owns it from then on
     */
    public ConnectionAwaitingPageSource(CompletableFuture<Connection> connection, Optional<Executor> starter, int poolConnections, Function<Connection, ConnectorPageSource> start)
    {
        this.connection = requireNonNull(connection, "connection is null");
        this.poolConnections = poolConnections;
        this.start = requireNonNull(start, "start is null");
        // measured when the pool hands it out, not when the driver next looks
        this.ready = connection.whenComplete((_, _) -> waitNanos = System.nanoTime() - createdNanos);
        this.started = requireNonNull(starter, "starter is null").map(executor -> ready.thenApplyAsync(this::startUnlessClosed, executor));
    }

    private ConnectorPageSource startUnlessClosed(Connection connection)
    {
        if (closed) {
            closeQuietly(connection);
            return null;
        }
        return start.apply(connection);
    }

    @Override
    public CompletableFuture<?> isBlocked()
    {
        CompletableFuture<?> awaited = started.isPresent() ? started.get() : ready;
        if (!awaited.isDone()) {
            return awaited;
        }
        return delegate.map(ConnectorPageSource::isBlocked).orElse(NOT_BLOCKED);
    }

    @Override
    public SourcePage getNextSourcePage()
    {
        if (delegate.isEmpty()) {
            if (started.isPresent()) {
                if (!started.get().isDone()) {
                    return null;
                }
                delegate = Optional.of(joined(started.get()));
            }
            else {
                if (!ready.isDone()) {
                    return null;
                }
                delegate = Optional.of(start.apply(joined(ready)));
            }
        }
        return delegate.get().getNextSourcePage();
    }

    private static <T> T joined(CompletableFuture<T> future)
    {
        try {
            return future.join();
        }
        catch (CompletionException e) {
            if (e.getCause() instanceof TrinoException trinoException) {
                throw trinoException;
            }
            throw e;
        }
    }

    @Override
    public boolean isFinished()
    {
        return closed || delegate.map(ConnectorPageSource::isFinished).orElse(false);
    }

    @Override
    public long getCompletedBytes()
    {
        return delegate.map(ConnectorPageSource::getCompletedBytes).orElse(0L);
    }

    @Override
    public OptionalLong getCompletedPositions()
    {
        return delegate.map(ConnectorPageSource::getCompletedPositions).orElse(OptionalLong.of(0));
    }

    @Override
    public long getReadTimeNanos()
    {
        return delegate.map(ConnectorPageSource::getReadTimeNanos).orElse(0L);
    }

    @Override
    public long getMemoryUsage()
    {
        return delegate.map(ConnectorPageSource::getMemoryUsage).orElse(0L);
    }

    @Override
    public Metrics getMetrics()
    {
        Metrics read = delegate.map(ConnectorPageSource::getMetrics).orElse(Metrics.EMPTY);
        if (!ready.isDone()) {
            return read;
        }
        return read.mergeWith(MeterstoreMetrics.connectionWait(poolConnections, waitNanos));
    }

    @Override
    public void close()
            throws IOException
    {
        if (closed) {
            return;
        }
        closed = true;
        if (delegate.isPresent()) {
            delegate.get().close();
            return;
        }
        // not started yet: leaves the pool's queue; a connection handed out meanwhile is given back unstarted, and a
        // start under way closes its page source once it ends (a start that fails gives back its connection itself)
        if (!connection.cancel(false)) {
            if (started.isPresent()) {
                started.get().thenAccept(ConnectionAwaitingPageSource::closeQuietly);
            }
            else {
                connection.thenAccept(ConnectionAwaitingPageSource::closeQuietly);
            }
        }
    }

    private static void closeQuietly(ConnectorPageSource pageSource)
    {
        if (pageSource == null) {
            return;
        }
        try {
            pageSource.close();
        }
        catch (IOException | RuntimeException ignored) {
            // its connection goes back to the pool or is discarded by the page source itself
        }
    }

    private static void closeQuietly(Connection connection)
    {
        try {
            connection.close();
        }
        catch (SQLException ignored) {
            // nothing was read with it
        }
    }
}
