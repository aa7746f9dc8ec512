package io.meterstore.trino.base;

import com.google.common.annotations.VisibleForTesting;
import com.google.inject.Inject;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.metrics.IMetricsTracker;
import io.meterstore.core.TiersConfig;
import io.trino.spi.TrinoException;
import jakarta.annotation.PreDestroy;
import org.postgresql.Driver;
import org.postgresql.PGConnection;
import org.postgresql.PGProperty;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import static io.airlift.concurrent.Threads.daemonThreadsNamed;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_POSTGRES_UNAVAILABLE;
import static java.util.Objects.requireNonNull;
import static java.util.concurrent.TimeUnit.MINUTES;
import static java.util.concurrent.TimeUnit.NANOSECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;

/**
 * The hot tier's connections on this node: a bounded HikariCP pool for planning, statistics, hot splits and the
 * coordinator's INSERT commit, at most {@code meterstore.postgresql.max-connections} at once. Opening a connection
 * costs about 14 ms; a pooled one is handed out in microseconds.
 * <p>
 * Splits take theirs with {@link #connectionAsync}, keyed by their query: they hold at most the pool's size less
 * {@code meterstore.postgresql.reserved-connections}, and a connection one of them gives back goes to the waiting query
 * that holds the fewest ({@link FairConnectionQueue}), so a dashboard's one split does not queue behind the dozens a
 * month's aggregation started first. Planning, statistics and the metadata tables take theirs with {@link #connection}
 * and {@link #read}, from the reserved ones too: they never wait behind splits.
 * <p>
 * A driver waiting for a connection yields its thread instead of blocking it, because the splits that hold the
 * pool's connections need those threads to finish and give them back. A borrower waits as long as the pool keeps
 * giving connections back or its holders keep reading rows ({@link #progressed}: a busy node queues its splits, and
 * scans that hold every connection for minutes make a dashboard wait, they do not fail it), and fails once for
 * {@code meterstore.postgresql.pool-stall-timeout} none came back, no holder read a row and PostgreSQL executes none of
 * the holders' statements that return their rows only when they end ({@link #execute}; waiting for a lock is not
 * executing): then the holders wait for something that waits for the pool, and waiting longer helps nobody.
 * Nothing that keeps a connection beyond its statement's end may use the pool: a session advisory lock (the archiver's
 * lease) would move to whoever borrows the connection next.
 * <p>
 * The transactions that keep a query's snapshot open for its hot reads ({@code hot.QuerySnapshots}, on the
 * coordinator) take theirs from a second pool of the same size ({@link #snapshotConnection}): each is held for a whole
 * query, and held from this pool they could leave none for the splits that query waits for.
 */
public final class PostgresConnectionPool
        implements AutoCloseable
{
    // one wait of the pool: a connection it fails to open within it means PostgreSQL is unreachable, and a query fails that soon
    private static final long ATTEMPT_SECONDS = 2;
    // SQLSTATEs of a connection PostgreSQL closed: a shutdown or restart, a crash, a terminated backend (class 08 too)
    private static final Set<String> SERVER_CLOSED_STATES = Set.of("57P01", "57P02", "57P03");
    public static final String APPLICATION_NAME = "trino-meterstore";
    public static final String SNAPSHOT_APPLICATION_NAME = "trino-meterstore-snapshot";
    // the connection that asks PostgreSQL about the holders' statements, opened only when a borrower would fail
    private static final String STALL_CHECK_APPLICATION_NAME = "trino-meterstore-stall-check";
    // the holders' statements PostgreSQL executes: active, and waiting neither for a lock nor for this node to read or write
    private static final String EXECUTING = """
            SELECT count(*) FROM pg_stat_activity
            WHERE pid = ANY(?) AND state = 'active' AND wait_event_type IS DISTINCT FROM 'Lock' AND wait_event_type IS DISTINCT FROM 'Client'""";

    private final HikariDataSource dataSource;
    private final String url;
    private final Properties stallCheckProperties;
    private final HikariDataSource snapshotDataSource;
    private final ThreadPoolExecutor waiters;
    // lends the splits' connections: a turn's borrow finds one free, so it is never held up by the waiters' work
    private final ThreadPoolExecutor lenders;
    // runs the splits' long starts: one thread per connection splits may hold, so none waits for a thread
    private final ThreadPoolExecutor starters;
    private final int maxConnections;
    private final int reservedConnections;
    private final FairConnectionQueue splitTurns;
    // how long a borrower waits while no connection is given back and no holder reads a row
    private final long stalledNanos;
    // System.nanoTime() when a connection was last given back to the pool, or a holder last read rows with one
    private final AtomicLong lastProgress = new AtomicLong(System.nanoTime());
    // System.nanoTime() when a snapshot's connection was last given back to its pool
    private final AtomicLong lastSnapshotGivenBack = new AtomicLong(System.nanoTime());
    // the backends of the holders running a statement that returns its rows only when it ends
    private final Set<Integer> executing = ConcurrentHashMap.newKeySet();

    @Inject
    public PostgresConnectionPool(TiersConfig config, MeterstoreConfig connectorConfig)
    {
        requireNonNull(config, "config is null");
        this.url = config.getPostgresqlUrl();
        this.stallCheckProperties = config.connectionProperties(STALL_CHECK_APPLICATION_NAME);
        this.stalledNanos = connectorConfig.getPostgresqlPoolStallTimeout().roundTo(NANOSECONDS);
        // a PostgreSQL too slow to answer within the stall timeout cannot show the statements executing
        PGProperty.CONNECT_TIMEOUT.set(stallCheckProperties, (int) ATTEMPT_SECONDS);
        PGProperty.SOCKET_TIMEOUT.set(stallCheckProperties, (int) NANOSECONDS.toSeconds(stalledNanos));
        this.maxConnections = connectorConfig.getPostgresqlMaxConnections();
        this.reservedConnections = connectorConfig.getPostgresqlReservedConnections();
        this.splitTurns = new FairConnectionQueue(maxConnections - reservedConnections);
        HikariConfig hikari = hikariConfig(config, "meterstore-postgresql", APPLICATION_NAME, maxConnections);
        hikari.setMetricsTrackerFactory((_, _) -> givenBack(lastProgress));
        this.dataSource = new HikariDataSource(hikari);
        HikariConfig snapshotHikari = hikariConfig(config, "meterstore-postgresql-snapshots", SNAPSHOT_APPLICATION_NAME, maxConnections);
        snapshotHikari.setMetricsTrackerFactory((_, _) -> givenBack(lastSnapshotGivenBack));
        this.snapshotDataSource = new HikariDataSource(snapshotHikari);
        this.waiters = new ThreadPoolExecutor(maxConnections, maxConnections, 1, MINUTES, new LinkedBlockingQueue<>(), daemonThreadsNamed("meterstore-postgresql-%s"));
        waiters.allowCoreThreadTimeOut(true);
        this.lenders = new ThreadPoolExecutor(splitConnections(), splitConnections(), 1, MINUTES, new LinkedBlockingQueue<>(), daemonThreadsNamed("meterstore-postgresql-lender-%s"));
        lenders.allowCoreThreadTimeOut(true);
        this.starters = new ThreadPoolExecutor(splitConnections(), splitConnections(), 1, MINUTES, new LinkedBlockingQueue<>(), daemonThreadsNamed("meterstore-postgresql-start-%s"));
        starters.allowCoreThreadTimeOut(true);
    }

    // the pool reports each connection given back with the time it was in use
    private static IMetricsTracker givenBack(AtomicLong last)
    {
        return new IMetricsTracker()
        {
            @Override
            public void recordConnectionUsageMillis(long elapsedBorrowedMillis)
            {
                last.set(System.nanoTime());
            }
        };
    }

    private static HikariConfig hikariConfig(TiersConfig config, String poolName, String applicationName, int maxConnections)
    {
        HikariConfig hikari = new HikariConfig();
        hikari.setPoolName(poolName);
        hikari.setJdbcUrl(config.getPostgresqlUrl());
        hikari.setUsername(config.getPostgresqlUser());
        config.getPostgresqlPassword().ifPresent(hikari::setPassword);
        hikari.addDataSourceProperty("ApplicationName", applicationName);
        hikari.setMaximumPoolSize(maxConnections);
        // connections are opened on demand and kept while in use: an idle catalog holds none after the idle timeout
        hikari.setMinimumIdle(0);
        // a database that is down fails the query that needs it, not the server start
        hikari.setInitializationFailTimeout(-1);
        hikari.setConnectionTimeout(SECONDS.toMillis(ATTEMPT_SECONDS));
        return hikari;
    }

    public int maxConnections()
    {
        return maxConnections;
    }

    /**
     * A holder of one of the pool's connections read rows with it (a hot split's page): borrowers waiting for a
     * connection wait on while holders make progress, however long each holds its connection. One volatile write.
     */
    public void progressed()
    {
        lastProgress.set(System.nanoTime());
    }

    /**
     * Runs {@code statement} on {@code connection}, one of the pool's, for a statement that returns its rows only when it
     * ends (a pushed-down aggregation, a completeness report's counts): while it runs, a borrower that would fail for
     * the stall timeout asks PostgreSQL whether it is executing the statement, and waits on if it is.
     */
    public void execute(Connection connection, SqlStatement statement)
            throws SQLException
    {
        int backend = connection.unwrap(PGConnection.class).getBackendPID();
        executing.add(backend);
        try {
            statement.run(connection);
        }
        finally {
            executing.remove(backend);
        }
    }

    /**
     * A connection of the pool for planning, statistics, the metadata tables or a write's commit, waiting for one to
     * be free (never for a split's); closing it gives it back.
     */
    public Connection connection()
    {
        return borrow(System.nanoTime());
    }

    private Connection borrow(long waitingSince)
    {
        while (true) {
            try {
                Connection connection = dataSource.getConnection();
                // the pool tests a connection before lending it only when it has been idle for more than half a second,
                // so one given back just before PostgreSQL restarted comes back dead, and a statement's first use of it
                // would fail: it and every other pooled one are evicted, and a fresh one is opened
                if (connection.isValid((int) ATTEMPT_SECONDS)) {
                    return connection;
                }
                dataSource.evictConnection(connection);
                dataSource.getHikariPoolMXBean().softEvictConnections();
            }
            catch (SQLException e) {
                // the pool names the failure to open a connection as the cause: the server is unreachable, waiting longer helps nobody
                if (e.getCause() != null) {
                    throw new TrinoException(METERSTORE_POSTGRES_UNAVAILABLE, "Cannot connect to PostgreSQL at '%s' as '%s': %s; check meterstore.postgresql.* and that the server is reachable"
                            .formatted(dataSource.getJdbcUrl(), dataSource.getUsername(), e.getCause().getMessage()), e);
                }
                if (stalled(waitingSince)) {
                    throw stalled(e);
                }
            }
        }
    }

    // how long a borrower waiting since then may still wait: until for the stall limit no connection came back and no holder read a row
    private long remainingNanos(long waitingSince)
    {
        return Math.max(waitingSince, lastProgress.get()) + stalledNanos - System.nanoTime();
    }

    /**
     * Whether a borrower waiting since {@code since} (or since something it counts as progress besides) has waited the
     * stall timeout for nothing: no connection given back, no row read, and PostgreSQL executes none of the holders'
     * statements. Finding one executing counts as progress, so the borrowers waiting meanwhile do not ask again.
     */
    private boolean stalled(long since)
    {
        if (remainingNanos(since) > 0) {
            return false;
        }
        if (executing.isEmpty()) {
            return true;
        }
        synchronized (executing) {
            return remainingNanos(since) <= 0 && !holdersExecuting();
        }
    }

    // asked on a connection of its own: the pool has none to spare when a borrower would fail
    private boolean holdersExecuting()
    {
        Integer[] backends = executing.toArray(Integer[]::new);
        try (Connection connection = new Driver().connect(url, stallCheckProperties);
                PreparedStatement statement = connection.prepareStatement(EXECUTING)) {
            Array pids = connection.createArrayOf("int4", backends);
            statement.setArray(1, pids);
            try (ResultSet result = statement.executeQuery()) {
                if (result.next() && result.getLong(1) > 0) {
                    lastProgress.set(System.nanoTime());
                    return true;
                }
            }
        }
        catch (SQLException | RuntimeException ignored) {
            // PostgreSQL cannot say: nothing else showed progress, so the holders count as stuck
        }
        return false;
    }

    private TrinoException stalled(Exception cause)
    {
        return new TrinoException(METERSTORE_POSTGRES_UNAVAILABLE, ("All %s PostgreSQL connections of this node stayed busy for %ss, none given back, no row read by their holders "
                + "and none of their statements executing in PostgreSQL: raise meterstore.postgresql.max-connections, or run fewer queries at once")
                .formatted(maxConnections, NANOSECONDS.toSeconds(stalledNanos)), cause);
    }

    /**
     * A connection to hold a query's snapshot open for the whole query, from the pool kept for that, waiting while
     * every one is held by a running query. Fails once for {@code meterstore.postgresql.pool-stall-timeout} no snapshot
     * came back and this node's hot reads made no progress (no connection of the other pool given back, no row read).
     */
    public Connection snapshotConnection()
    {
        long waitingSince = System.nanoTime();
        while (true) {
            try {
                return snapshotDataSource.getConnection();
            }
            catch (SQLException e) {
                if (e.getCause() != null) {
                    throw new TrinoException(METERSTORE_POSTGRES_UNAVAILABLE, "Cannot connect to PostgreSQL at '%s' as '%s': %s; check meterstore.postgresql.* and that the server is reachable"
                            .formatted(snapshotDataSource.getJdbcUrl(), snapshotDataSource.getUsername(), e.getCause().getMessage()), e);
                }
                // the queries holding the snapshots show their progress in the hot reads of this node
                if (stalled(Math.max(waitingSince, lastSnapshotGivenBack.get()))) {
                    throw new TrinoException(METERSTORE_POSTGRES_UNAVAILABLE, ("All %s PostgreSQL snapshots of this coordinator stayed held by running queries for %ss (one for each query that reads the hot tier), "
                            + "none given back and no progress of this node's hot reads (no connection given back, no row read, no statement executing): raise meterstore.postgresql.max-connections, or run fewer queries at once; "
                            + "a coordinator that runs no hot splits sees no rows read, so raise meterstore.postgresql.pool-stall-timeout above its longest query")
                            .formatted(maxConnections, NANOSECONDS.toSeconds(stalledNanos)), e);
                }
            }
        }
    }

    /**
     * A connection of the snapshot pool on which {@code begin} ran, for the caller to hold: as {@link #read}, {@code begin}
     * is repeated once on a fresh connection when PostgreSQL had closed the pooled one, so a restart fails no query
     * that starts after it.
     */
    public <T> Held<T> holdSnapshot(SqlRead<T> begin)
            throws SQLException
    {
        Connection connection = snapshotConnection();
        try {
            return new Held<>(connection, begin.read(connection));
        }
        catch (SQLException e) {
            discardSnapshotConnection(connection);
            if (!serverClosedConnection(e)) {
                throw e;
            }
            snapshotDataSource.getHikariPoolMXBean().softEvictConnections();
        }
        catch (RuntimeException e) {
            discardSnapshotConnection(connection);
            throw e;
        }
        Connection fresh = snapshotConnection();
        try {
            return new Held<>(fresh, begin.read(fresh));
        }
        catch (SQLException | RuntimeException e) {
            discardSnapshotConnection(fresh);
            throw e;
        }
    }

    /** A connection held beyond one read, and what began it. */
    public record Held<T>(Connection connection, T value)
    {
        public Held
        {
            requireNonNull(connection, "connection is null");
            requireNonNull(value, "value is null");
        }
    }

    /** Closes a snapshot's connection whose transaction could not be ended cleanly instead of giving it back. */
    public void discardSnapshotConnection(Connection connection)
    {
        snapshotDataSource.evictConnection(connection);
        lastSnapshotGivenBack.set(System.nanoTime());
    }

    /**
     * Runs a read that can simply be repeated, and repeats it once on a fresh connection when PostgreSQL closed the
     * pooled one after {@link #connection()} tested it (a restart, a failover): all pooled connections are evicted
     * then, not one per failing query.
     */
    public <T> T read(SqlRead<T> read)
            throws SQLException
    {
        try (Connection connection = connection()) {
            return read.read(connection);
        }
        catch (SQLException e) {
            if (!serverClosedConnection(e)) {
                throw e;
            }
            dataSource.getHikariPoolMXBean().softEvictConnections();
        }
        try (Connection connection = connection()) {
            return read.read(connection);
        }
    }

    private static boolean serverClosedConnection(SQLException e)
    {
        String state = e.getSQLState();
        return state != null && (state.startsWith("08") || SERVER_CLOSED_STATES.contains(state));
    }

    /**
     * A connection for a split of {@code queryId}, without blocking the caller: the future completes once the query's
     * turn comes. Closing the connection gives it back; cancelling the future before then leaves the queue.
     */
    public CompletableFuture<Connection> connectionAsync(String queryId)
    {
        return connectionAsync(queryId, false);
    }

    /**
     * {@link #connectionAsync} for a split that is a short read ({@code shortRead}: one statement over a few meters'
     * rows), which may take the turn kept from scans ({@link FairConnectionQueue}).
     */
    public CompletableFuture<Connection> connectionAsync(String queryId, boolean shortRead)
    {
        long waitingSince = System.nanoTime();
        CompletableFuture<Connection> connection = new CompletableFuture<>();
        splitTurns.take(queryId, shortRead, connection, turn -> lenders.execute(() -> lend(turn, connection, waitingSince)));
        if (!connection.isDone()) {
            failWhenStalled(connection, waitingSince);
        }
        return connection;
    }

    /**
     * The threads that run a split's long start on the connection {@link #connectionAsync} lent it (a pushed-down
     * aggregation's whole statement): PostgreSQL's work then holds one of these, never one of Trino's driver threads,
     * which a node has only twice its cores of. Each start holds one of the splits'
     * connections, and there is a thread for each, so a start never waits for a thread.
     */
    public Executor splitStarters()
    {
        return starters;
    }

    /** {@link #connectionAsync} for a caller that can wait on its own thread (a completeness report's reader). */
    public Connection connection(String queryId)
    {
        try {
            return connectionAsync(queryId).join();
        }
        catch (CompletionException e) {
            if (e.getCause() instanceof TrinoException trinoException) {
                throw trinoException;
            }
            throw e;
        }
    }

    /** The connections splits may hold at once: the pool's size less the reserved ones. */
    public int splitConnections()
    {
        return maxConnections - reservedConnections;
    }

    @VisibleForTesting
    int splitsWaiting()
    {
        return splitTurns.waiting();
    }

    /** The splits of {@code queryId} waiting for a connection, for a test that waits on the pool instead of the clock. */
    @VisibleForTesting
    public int splitsWaiting(String queryId)
    {
        return splitTurns.waiting(queryId);
    }

    private void lend(FairConnectionQueue.Turn turn, CompletableFuture<Connection> connection, long waitingSince)
    {
        Connection borrowed;
        try {
            // a turn is free, so the pool has a connection for it unless planning holds more than its reserve
            borrowed = borrow(waitingSince);
        }
        catch (RuntimeException e) {
            turn.giveBack();
            connection.completeExceptionally(e);
            return;
        }
        Connection lent = TurnConnection.lend(borrowed, turn::giveBack);
        if (!connection.complete(lent)) {
            // the split gave up meanwhile
            closeQuietly(lent);
        }
    }

    // a split waiting in the queue fails as a borrower of the pool does: once for the stall limit no connection came back and no holder read a row
    private void failWhenStalled(CompletableFuture<Connection> connection, long waitingSince)
    {
        long remaining = remainingNanos(waitingSince);
        CompletableFuture.delayedExecutor(Math.max(remaining, 0), NANOSECONDS, lenders).execute(() -> {
            if (connection.isDone()) {
                return;
            }
            if (!stalled(waitingSince)) {
                failWhenStalled(connection, waitingSince);
                return;
            }
            connection.completeExceptionally(stalled(null));
        });
    }

    /**
     * Runs {@code work} with a connection of the pool on one of the pool's threads, and gives the connection back
     * afterwards; the caller's thread does not wait. The connection is one {@link #connection} lends, not a split's.
     */
    public <T> CompletableFuture<T> withConnectionAsync(Function<Connection, T> work)
    {
        return CompletableFuture.supplyAsync(() -> {
            Connection connection = connection();
            try {
                return work.apply(connection);
            }
            finally {
                closeQuietly(connection);
            }
        }, waiters);
    }

    /**
     * Closes a connection that is in a state its next borrower must not inherit (a COPY abandoned midway) instead of
     * giving it back; the pool opens another when one is needed.
     */
    public void discard(Connection connection)
    {
        Optional<TurnConnection> lent = TurnConnection.of(connection);
        dataSource.evictConnection(lent.map(TurnConnection::connection).orElse(connection));
        lastProgress.set(System.nanoTime());
        lent.ifPresent(TurnConnection::giveBack);
    }

    private static void closeQuietly(Connection connection)
    {
        try {
            connection.close();
        }
        catch (SQLException ignored) {
            // the pool discards a connection it cannot reset
        }
    }

    @FunctionalInterface
    public interface SqlRead<T>
    {
        T read(Connection connection)
                throws SQLException;
    }

    @FunctionalInterface
    public interface SqlStatement
    {
        void run(Connection connection)
                throws SQLException;
    }

    @PreDestroy
    @Override
    public void close()
    {
        waiters.shutdownNow();
        lenders.shutdownNow();
        starters.shutdownNow();
        dataSource.close();
        snapshotDataSource.close();
    }
}
