package io.meterstore.trino.base;

import io.airlift.units.Duration;
import io.meterstore.core.TiersConfig;
import io.meterstore.testing.TestingDatabase;
import io.meterstore.testing.TestingPostgresServer;
import io.trino.spi.TrinoException;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.NANOSECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A borrower of the pool waits as long as connections keep coming back, their holders read rows or PostgreSQL executes
 * their statements, however long its turn takes, and fails with the setting to raise once none of it happened for the
 * stall limit
 * ({@code meterstore.postgresql.pool-stall-timeout}: 2 s here, 30 s by default). Splits take turns by query: a
 * connection given back goes to the waiting query holding the fewest, and planning never waits behind splits.
 */
final class TestPostgresConnectionPool
{
    private static final Duration STALL_TIMEOUT = new Duration(2, SECONDS);
    private static final String STALLED = "All 1 PostgreSQL connections of this node stayed busy for 2s, none given back, no row read by their holders "
            + "and none of their statements executing in PostgreSQL: raise meterstore.postgresql.max-connections, or run fewer queries at once";
    // how often the holder of the snapshot test's query reads rows: well within the stall limit
    private static final long PROGRESS_MILLIS = 200;
    private static final int BORROWERS = 8;
    private static final long HOLD_MILLIS = 400;
    // bounds a wait for something that happens at once with the feature, and never without it
    private static final long AWAIT_SECONDS = 10;

    @Test
    void testBorrowersQueueBeyondTheStallLimitWhileConnectionsComeBack()
            throws Exception
    {
        // eight borrowers of one connection, each keeping it 0.4 s: the last waits about 2.8 s, beyond the stall limit
        try (PostgresConnectionPool pool = pool("pool_queue", 1, 0);
                ExecutorService borrowers = Executors.newFixedThreadPool(BORROWERS)) {
            AtomicInteger holding = new AtomicInteger();
            AtomicInteger mostHeld = new AtomicInteger();
            List<CompletableFuture<Integer>> borrowed = new ArrayList<>();
            for (int i = 0; i < BORROWERS; i++) {
                borrowed.add(CompletableFuture.supplyAsync(() -> {
                    try (Connection connection = pool.connection()) {
                        mostHeld.accumulateAndGet(holding.incrementAndGet(), Math::max);
                        MILLISECONDS.sleep(HOLD_MILLIS);
                        holding.decrementAndGet();
                        return backend(connection);
                    }
                    catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                }, borrowers));
            }
            // every borrower was served, one at a time on the pool's one connection, though the last one's turn came
            // after the stall limit
            List<Integer> backends = borrowed.stream().map(CompletableFuture::join).toList();
            assertThat(backends).hasSize(BORROWERS).containsOnly(backends.getFirst());
            assertThat(mostHeld.get()).isEqualTo(1);
        }
    }

    @Test
    void testBorrowerFailsWhenNoConnectionComesBack()
            throws Exception
    {
        try (PostgresConnectionPool pool = pool("pool_stalled", 1, 0)) {
            try (Connection _ = pool.connection()) {
                assertThatThrownBy(pool::connection)
                        .isInstanceOf(TrinoException.class)
                        .hasMessage(STALLED);
                // a split waits in the queue, and fails the same way
                assertThatThrownBy(() -> pool.connection("query_stalled"))
                        .isInstanceOf(TrinoException.class)
                        .hasMessage(STALLED);
            }
            // given back: the next borrower has it at once
            try (Connection connection = pool.connection()) {
                assertThat(connection.isValid(1)).isTrue();
            }
        }
    }

    @Test
    void testSnapshotWaitsWhileTheNodesHotReadsProgress()
            throws Exception
    {
        try (PostgresConnectionPool pool = pool("pool_snapshots", 1, 0);
                ExecutorService queries = Executors.newSingleThreadExecutor()) {
            Connection held = pool.snapshotConnection();
            // no snapshot given back, no hot read on the node: the next query's snapshot fails after the stall limit
            assertThatThrownBy(pool::snapshotConnection)
                    .isInstanceOf(TrinoException.class)
                    .hasMessage("All 1 PostgreSQL snapshots of this coordinator stayed held by running queries for 2s (one for each query that reads the hot tier), "
                            + "none given back and no progress of this node's hot reads (no connection given back, no row read, no statement executing): raise meterstore.postgresql.max-connections, or run fewer queries at once; "
                            + "a coordinator that runs no hot splits sees no rows read, so raise meterstore.postgresql.pool-stall-timeout above its longest query");

            // the query holding it reads rows all along: the next one waits beyond the stall limit (it failed after it
            // when only a snapshot given back counted) and has the snapshot's connection once the first gives it back
            Future<Integer> next = queries.submit(() -> {
                try (Connection connection = pool.snapshotConnection()) {
                    return backend(connection);
                }
            });
            long waitingSince = System.nanoTime();
            // a waiter looks every 2 s (the pool's wait): past the second look, a waiter that counts no rows read has
            // failed. The pace drives the test; what it asserts is the outcome below, the connection and not the error
            while (System.nanoTime() - waitingSince < STALL_TIMEOUT.roundTo(NANOSECONDS) * 5 / 2) {
                pool.progressed();
                MILLISECONDS.sleep(PROGRESS_MILLIS);
            }
            int heldBackend = backend(held);
            held.close();
            assertThat(next.get(AWAIT_SECONDS, SECONDS)).isEqualTo(heldBackend);
        }
    }

    @Test
    void testSplitWaitsWhilePostgresExecutesTheHoldersStatement()
            throws Exception
    {
        try (PostgresConnectionPool pool = pool("pool_executing", 1, 0);
                ExecutorService holders = Executors.newSingleThreadExecutor()) {
            // a statement that returns its row only when it ends, after 1.5 times the stall limit, as a month's pushed-down
            // aggregation does: the light query's split waits for it (it failed after the stall limit when only
            // connections given back and rows read counted), and has the connection once it is given back
            Connection held = pool.connectionAsync("heavy").join();
            int heldBackend = backend(held);
            AtomicBoolean statementEnded = new AtomicBoolean();
            Future<?> heavy = holders.submit(() -> {
                try (held) {
                    pool.execute(held, connection -> {
                        try (Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery("SELECT pg_sleep(3)")) {
                            assertThat(result.next()).isTrue();
                        }
                    });
                    statementEnded.set(true);
                }
                return null;
            });
            try (Connection connection = pool.connection("light")) {
                assertThat(statementEnded).isTrue();
                assertThat(backend(connection)).isEqualTo(heldBackend);
            }
            heavy.get();
        }
    }

    @Test
    void testSplitFailsWhileTheHoldersStatementWaitsForALock()
            throws Exception
    {
        TestingDatabase database = TestingPostgresServer.shared().createDatabase("pool_lock_wait");
        try (PostgresConnectionPool pool = pool(database, 1, 0);
                ExecutorService holders = Executors.newSingleThreadExecutor();
                Connection locker = database.connect()) {
            // the holder's statement waits for a lock the test holds, as one waits for something that waits for the pool:
            // PostgreSQL does not execute it, so the light query's split fails after the stall limit
            try (Statement statement = locker.createStatement()) {
                statement.execute("SELECT pg_advisory_lock(33)");
            }
            Connection held = pool.connectionAsync("heavy").join();
            Future<?> heavy = holders.submit(() -> {
                try (held) {
                    pool.execute(held, connection -> {
                        try (Statement statement = connection.createStatement()) {
                            statement.execute("SELECT pg_advisory_xact_lock(33)");
                        }
                    });
                }
                return null;
            });
            assertThatThrownBy(() -> pool.connectionAsync("light").get(AWAIT_SECONDS, SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .hasRootCauseInstanceOf(TrinoException.class)
                    .hasRootCauseMessage(STALLED);
            try (Statement statement = locker.createStatement()) {
                statement.execute("SELECT pg_advisory_unlock(33)");
            }
            heavy.get(AWAIT_SECONDS, SECONDS);
            try (Connection connection = pool.connection("light")) {
                assertThat(connection.isValid(1)).isTrue();
            }
        }
    }

    @Test
    void testSplitsTakeTurnsByQuery()
            throws Exception
    {
        // four connections, one reserved: splits hold three, scans two of them (the third is kept for short reads)
        try (PostgresConnectionPool pool = pool("pool_turns", 4, 1)) {
            assertThat(pool.splitConnections()).isEqualTo(3);
            List<Connection> heavyHeld = new ArrayList<>(List.of(pool.connectionAsync("heavy").join(), pool.connectionAsync("heavy").join()));
            List<CompletableFuture<Connection>> heavyWaiting = new ArrayList<>();
            for (int split = 0; split < 10; split++) {
                heavyWaiting.add(pool.connectionAsync("heavy"));
            }
            CompletableFuture<Connection> light = pool.connectionAsync("light");
            assertThat(pool.splitsWaiting()).isEqualTo(11);
            assertThat(light).isNotDone();
            // a short read takes the kept turn at once, and gives it back
            try (Connection shortRead = pool.connectionAsync("dashboard", true).get(AWAIT_SECONDS, SECONDS)) {
                assertThat(shortRead.isValid(1)).isTrue();
            }
            assertThat(pool.splitsWaiting()).isEqualTo(11);

            // planning takes the reserved connection, behind none of the eleven splits
            try (Connection planning = pool.connection()) {
                assertThat(planning.isValid(1)).isTrue();
            }

            // the heavy query gives one back: the light query's one split has it, not the heavy query's next ten
            heavyHeld.removeFirst().close();
            try (Connection connection = light.get(AWAIT_SECONDS, SECONDS)) {
                assertThat(connection.isValid(1)).isTrue();
                assertThat(heavyWaiting).noneMatch(CompletableFuture::isDone);
            }
            // the light query gave it back: the heavy query's first waiting split has it
            Connection next = heavyWaiting.removeFirst().get(AWAIT_SECONDS, SECONDS);
            assertThat(heavyWaiting).noneMatch(CompletableFuture::isDone);

            // a split closed before its turn leaves the queue: the turn goes to the one behind it
            heavyWaiting.removeFirst().cancel(false);
            next.close();
            heavyWaiting.removeFirst().get(AWAIT_SECONDS, SECONDS).close();
            assertThat(pool.splitsWaiting()).isEqualTo(heavyWaiting.size() - 1);
            for (CompletableFuture<Connection> waiting : heavyWaiting) {
                waiting.get(AWAIT_SECONDS, SECONDS).close();
            }
            heavyHeld.getFirst().close();
            assertThat(pool.splitsWaiting()).isZero();
        }
    }

    @Test
    void testQueriesWaitingAlternate()
            throws Exception
    {
        try (PostgresConnectionPool pool = pool("pool_alternate", 2, 1)) {
            Connection held = pool.connectionAsync("first").join();
            // the first query queues four splits before the second queues its four
            List<CompletableFuture<Connection>> first = new ArrayList<>();
            List<CompletableFuture<Connection>> second = new ArrayList<>();
            for (int split = 0; split < 4; split++) {
                first.add(pool.connectionAsync("first"));
            }
            for (int split = 0; split < 4; split++) {
                second.add(pool.connectionAsync("second"));
            }
            // each connection given back goes to the other query: second, first, second, ...
            List<String> served = new ArrayList<>();
            for (int turn = 0; turn < 8; turn++) {
                held.close();
                held = awaitServed(first, second, served);
            }
            held.close();
            assertThat(served).containsExactly("second", "first", "second", "first", "second", "first", "second", "first");
        }
    }

    private static Connection awaitServed(List<CompletableFuture<Connection>> first, List<CompletableFuture<Connection>> second, List<String> served)
            throws Exception
    {
        List<CompletableFuture<Connection>> waiting = new ArrayList<>(first);
        waiting.addAll(second);
        Connection connection = (Connection) CompletableFuture.anyOf(waiting.toArray(CompletableFuture[]::new)).get(AWAIT_SECONDS, SECONDS);
        if (first.removeIf(future -> future.isDone() && future.join() == connection)) {
            served.add("first");
        }
        if (second.removeIf(future -> future.isDone() && future.join() == connection)) {
            served.add("second");
        }
        return connection;
    }

    private static int backend(Connection connection)
            throws SQLException
    {
        try (Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery("SELECT pg_backend_pid()")) {
            assertThat(result.next()).isTrue();
            return result.getInt(1);
        }
    }

    private static PostgresConnectionPool pool(String name, int maxConnections, int reservedConnections)
    {
        return pool(TestingPostgresServer.shared().createDatabase(name), maxConnections, reservedConnections);
    }

    private static PostgresConnectionPool pool(TestingDatabase database, int maxConnections, int reservedConnections)
    {
        TiersConfig config = new TiersConfig()
                .setPostgresqlUrl(database.jdbcUrl())
                .setPostgresqlUser(database.user());
        MeterstoreConfig connectorConfig = new MeterstoreConfig()
                .setPostgresqlMaxConnections(maxConnections)
                .setPostgresqlReservedConnections(reservedConnections)
                .setPostgresqlPoolStallTimeout(STALL_TIMEOUT);
        return new PostgresConnectionPool(config, connectorConfig);
    }
}
