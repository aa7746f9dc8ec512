package io.meterstore.trino;

import io.meterstore.core.HotPartition;
import io.meterstore.core.TiersConfig;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.ReadingsOracle;
import io.meterstore.testing.ReadingsOracle.View;
import io.meterstore.testing.TestingDatabase;
import io.meterstore.testing.TestingLockHolder;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.meterstore.trino.base.MeterstoreConfig;
import io.meterstore.trino.base.MeterstoreMetrics;
import io.meterstore.trino.base.PostgresConnectionPool;
import io.meterstore.trino.hot.HotReadFailpoints;
import io.trino.execution.QueryInfo;
import io.trino.operator.OperatorStats;
import io.trino.plugin.base.metrics.TDigestHistogram;
import io.trino.server.BasicQueryInfo;
import io.trino.spi.QueryId;
import io.trino.spi.metrics.Metrics;
import io.trino.testing.DistributedQueryRunner;
import io.trino.testing.MaterializedRow;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static com.google.common.collect.MoreCollectors.onlyElement;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The hot tier's connections come from a bounded pool: a scan of 100 partitions never holds more than the pool's size,
 * a light query gets its turn while heavy ones hold every connection splits may take, and waits for it, without
 * failing, as long as they read rows, a read of a few meters takes the turn kept from scans, a light query runs
 * while heavy ones' statements execute in PostgreSQL on every driver thread the node has, and a read repeats on a fresh connection when PostgreSQL closed the pooled ones.
 */
final class TestMeterstoreConnectionPool
{
    private static final int MAX_CONNECTIONS = 2;
    private static final int PARTITIONS = 100;
    // bounds a wait only for a test that is stuck: each condition follows from the step before it, and a wait ends as
    // soon as its condition holds
    private static final Duration AWAIT = Duration.ofMinutes(3);
    private static final Duration STALL_TIMEOUT = Duration.ofSeconds(2);
    // how long the heavy scan of the stall test takes between two pages: well within the stall timeout
    private static final long PAGE_MILLIS = 400;
    // the engine's driver threads on a node: TestingTrinoServer's task.max-worker-threads
    private static final int DRIVER_THREADS = 4;

    @Test
    void testScanOfManyPartitionsHoldsAtMostThePool()
            throws Exception
    {
        TestingWarehouse warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("pool"));
        TestingMeterstoreTables.createTables(warehouse);
        ReadingsGenerator generator = ReadingsGenerator.builder().seed(11).meters(4).startDay(LocalDate.of(2026, 1, 1)).days(PARTITIONS).build();
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, generator);
        }
        try (Connection connection = warehouse.database().connect()) {
            assertThat(TestingMeterstoreTables.hotTier().partitions(connection)).hasSizeGreaterThanOrEqualTo(PARTITIONS);
        }
        ReadingsOracle.Summary expected = ReadingsOracle.of(generator.iterator()).summary(View.VERSIONS, ReadingsOracle.all());

        // one node, so every connection seen is this catalog's one pool
        try (DistributedQueryRunner queryRunner = MeterstoreQueryRunner.builder(warehouse)
                .withoutIceberg()
                .setWorkerCount(0)
                .withCatalogOverrides(Map.of("meterstore.postgresql.max-connections", String.valueOf(MAX_CONNECTIONS)))
                .build();
                Connection monitor = warehouse.database().connect()) {
            AtomicBoolean running = new AtomicBoolean(true);
            AtomicInteger mostAtOnce = new AtomicInteger();
            Set<Integer> backends = new HashSet<>();
            Thread sampler = Thread.ofPlatform().start(() -> {
                try (PreparedStatement statement = monitor.prepareStatement("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = ?")) {
                    statement.setString(1, PostgresConnectionPool.APPLICATION_NAME);
                    while (running.get()) {
                        int count = 0;
                        try (ResultSet result = statement.executeQuery()) {
                            while (result.next()) {
                                count++;
                                backends.add(result.getInt(1));
                            }
                        }
                        mostAtOnce.accumulateAndGet(count, Math::max);
                        Thread.sleep(1);
                    }
                }
                catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            MaterializedRow row;
            try {
                row = queryRunner.execute("SELECT count(*), sum(value) FROM readings_versions").getMaterializedRows().getFirst();
                // again: the pool's connections are reused, never one per split
                assertThat(queryRunner.execute("SELECT count(*), sum(value) FROM readings_versions").getMaterializedRows().getFirst()).isEqualTo(row);
            }
            finally {
                running.set(false);
                sampler.join();
            }

            assertThat(row.getField(0)).isEqualTo(expected.count());
            assertThat((BigDecimal) row.getField(1)).isEqualByComparingTo(expected.sum());
            assertThat(mostAtOnce.get()).isBetween(1, MAX_CONNECTIONS);
            // opened once and reused for planning and each of the 100 splits of both queries
            assertThat(backends).hasSizeBetween(1, MAX_CONNECTIONS);
        }
    }

    @Test
    void testLightQueryWaitsBeyondTheStallTimeoutWhileAHeavyScanReads()
            throws Exception
    {
        TestingWarehouse warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("pool_progress"));
        TestingMeterstoreTables.createTables(warehouse);
        // one Berlin day of 1,000 meters: its first hour in one partition, the other 23 hours in the next, which the heavy
        // scan reads in about twelve pages of 8,192 rows
        ReadingsGenerator generator = ReadingsGenerator.builder().seed(13).meters(1_000).startDay(LocalDate.of(2026, 1, 1)).days(1).build();
        List<HotPartition> partitions = load(warehouse, generator);
        assertThat(partitions).hasSize(2);
        ReadingsOracle oracle = ReadingsOracle.of(generator.iterator());
        // the light query: one meter in the first partition; the heavy one: every version in the second, one split that
        // holds its connection until it read the partition to its end
        HotPartition lightPartition = partitions.getFirst();
        String meter = generator.iterator().next().maloId();
        String light = "SELECT count(*) FROM readings_versions WHERE malo_id = '%s' AND \"from\" < from_iso8601_timestamp('%s')".formatted(meter, lightPartition.end());
        long lightCount = oracle.count(View.VERSIONS, ReadingsOracle.maloId(meter).and(ReadingsOracle.fromBefore(lightPartition.end())));
        assertThat(lightCount).isPositive();
        String heavy = "SELECT malo_id, \"from\", value FROM readings_versions WHERE \"from\" >= from_iso8601_timestamp('%s')".formatted(lightPartition.end());
        long heavyCount = oracle.count(View.VERSIONS, ReadingsOracle.fromAtOrAfter(lightPartition.end()));

        // the heavy scan reads a page each time the test lets it
        Semaphore pages = new Semaphore(0);
        AtomicInteger pagesRead = new AtomicInteger();
        // two connections on the one node, one reserved for planning: splits hold one; a waiter fails after 2 s of no progress
        try (DistributedQueryRunner queryRunner = MeterstoreQueryRunner.builder(warehouse)
                .withoutIceberg()
                .setWorkerCount(0)
                .withCatalogOverrides(Map.of(
                        "meterstore.postgresql.max-connections", "2",
                        "meterstore.postgresql.reserved-connections", "1",
                        "meterstore.postgresql.pool-stall-timeout", STALL_TIMEOUT.toSeconds() + "s"))
                .build();
                ExecutorService clients = Executors.newFixedThreadPool(2);
                // before the clients are waited for: the heavy scan finishes only once its pages are let go
                AutoCloseable _ = () -> {
                    HotReadFailpoints.setAfterPage(_ -> {});
                    pages.release(Integer.MAX_VALUE / 2);
                }) {
            PostgresConnectionPool pool = ((MeterstoreConnector) queryRunner.getCoordinator().getConnector(MeterstoreQueryRunner.CATALOG)).getInjector().getInstance(PostgresConnectionPool.class);
            HotReadFailpoints.setAfterPage(_ -> {
                pagesRead.incrementAndGet();
                pages.acquireUninterruptibly();
            });
            Future<Long> heavyQuery = clients.submit(() -> count(queryRunner, heavy));
            await(() -> pagesRead.get() == 1, "the heavy scan holds the splits' connection and read a page", heavyQuery);
            Future<Long> lightQuery = clients.submit(() -> count(queryRunner, light));
            String lightQueryId = awaitQueryId(queryRunner, light, heavyQuery, lightQuery);
            await(() -> pool.splitsWaiting(lightQueryId) == 1, "the light query's split waits for a connection", heavyQuery, lightQuery);

            // the heavy scan keeps the connection and reads a page every 0.4 s, for 1.5 times the stall timeout (the
            // scan's pace drives the test; nothing below asserts a time): the light query, which failed with the stall
            // error when only a connection given back counted, keeps waiting
            long waitingSince = System.nanoTime();
            while (System.nanoTime() - waitingSince < STALL_TIMEOUT.toNanos() * 3 / 2) {
                int read = pagesRead.get();
                pages.release();
                await(() -> pagesRead.get() > read, "the heavy scan read another page", heavyQuery, lightQuery);
                Thread.sleep(PAGE_MILLIS);
            }

            // the heavy scan reads to its end and gives the connection back: the light query has it and answers, where
            // it would have failed
            HotReadFailpoints.setAfterPage(_ -> {});
            pages.release(Integer.MAX_VALUE / 2);
            assertThat(heavyQuery.get(AWAIT.toSeconds(), SECONDS)).isEqualTo(heavyCount);
            assertThat(lightQuery.get(AWAIT.toSeconds(), SECONDS)).isEqualTo(lightCount);
        }
    }

    @Test
    void testLightQueryGetsItsTurnWhileHeavyQueriesHoldTheSplitConnections()
            throws Exception
    {
        TestingWarehouse warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("pool_turns"));
        TestingMeterstoreTables.createTables(warehouse);
        ReadingsGenerator generator = ReadingsGenerator.builder().seed(12).meters(2).startDay(LocalDate.of(2026, 1, 1)).days(8).build();
        List<HotPartition> partitions = load(warehouse, generator);
        ReadingsOracle oracle = ReadingsOracle.of(generator.iterator());
        // the light query: one meter in the first day's partition, which no heavy query reads
        HotPartition lightPartition = partitions.getFirst();
        String meter = generator.iterator().next().maloId();
        String light = "SELECT count(*) FROM readings_versions WHERE malo_id = '%s' AND \"from\" >= from_iso8601_timestamp('%s') AND \"from\" < from_iso8601_timestamp('%s')"
                .formatted(meter, lightPartition.start(), lightPartition.end());
        long lightCount = oracle.count(View.VERSIONS, ReadingsOracle.maloId(meter).and(ReadingsOracle.fromRange(lightPartition.start(), lightPartition.end())));
        assertThat(lightCount).isPositive();
        // a heavy query: every version after that day, a split for each of the other partitions
        String heavy = "SELECT malo_id, \"from\", value FROM readings_versions WHERE \"from\" >= from_iso8601_timestamp('%s')".formatted(lightPartition.end());
        long heavyCount = oracle.count(View.VERSIONS, ReadingsOracle.fromAtOrAfter(lightPartition.end()));

        // four connections on the one node, one reserved for planning: splits hold three, scans two of them (the third
        // is kept for a few meters' reads, which the light query's pushed-down count is not)
        Map<String, TestingLockHolder> locks = new HashMap<>();
        try (DistributedQueryRunner queryRunner = MeterstoreQueryRunner.builder(warehouse)
                .withoutIceberg()
                .setWorkerCount(0)
                .withCatalogOverrides(Map.of("meterstore.postgresql.max-connections", "4", "meterstore.postgresql.reserved-connections", "1"))
                .build();
                ExecutorService clients = Executors.newFixedThreadPool(3);
                ScheduledExecutorService planning = Executors.newSingleThreadScheduledExecutor();
                // before the clients are waited for: a query finishes only once its partitions are let go
                AutoCloseable _ = () -> locks.values().forEach(TestingLockHolder::close)) {
            PostgresConnectionPool pool = ((MeterstoreConnector) queryRunner.getCoordinator().getConnector(MeterstoreQueryRunner.CATALOG)).getInjector().getInstance(PostgresConnectionPool.class);
            // every partition's statements wait in PostgreSQL until the test lets them go, the light query's too: a split
            // holding a connection is then a statement waiting for a lock, so the test sees which query holds each
            for (HotPartition partition : partitions) {
                locks.put(partition.name(), TestingLockHolder.lockIndexesOf(warehouse.database(), MeterstoreQueryRunner.SCHEMA, partition.name()));
            }
            // a waiter fails once for 30 s no connection came back and no holder read a row, and while the splits wait on
            // the test's locks neither would happen: the test takes one and gives it back every second, as planning does
            // on a busy node (a query's planning on a loaded machine can take longer than 30 s, so not a query)
            Future<?> givingBack = givingBackEverySecond(planning, pool);
            Future<Long> firstHeavy = clients.submit(() -> count(queryRunner, heavy));
            Future<Long> secondHeavy = clients.submit(() -> count(queryRunner, heavy));
            // both connections splits may hold are held by heavy splits waiting in PostgreSQL; the heavy queries' other
            // splits wait for the pool
            await(() -> partitionsWaitedFor(warehouse).size() == 2, "two heavy splits wait for a lock", givingBack, firstHeavy, secondHeavy);

            // planned while the splits held both: planning took the reserved connection
            Future<Long> lightQuery = clients.submit(() -> count(queryRunner, light));
            String lightQueryId = awaitQueryId(queryRunner, light, givingBack, lightQuery);
            await(() -> pool.splitsWaiting(lightQueryId) == 1, "the light query's split waits for a connection", givingBack, firstHeavy, secondHeavy, lightQuery);

            // heavy splits end one partition at a time, each giving its connection back, and whoever takes it waits on
            // its partition's lock: the light query's turn comes within a connection for each heavy query served less
            // than it, never after the heavy queries' dozen queued before it (first come, first served needs more)
            int partitionsLetGo = 0;
            while (!partitionsWaitedFor(warehouse).contains(lightPartition.name())) {
                assertThat(partitionsLetGo).as("heavy partitions let go before the light query's turn").isLessThan(2);
                locks.remove(partitionsWaitedFor(warehouse).getFirst()).close();
                partitionsLetGo++;
                await(() -> partitionsWaitedFor(warehouse).size() == 2, "the connection given back is taken", givingBack, firstHeavy, secondHeavy, lightQuery);
            }
            // planning does not wait behind the splits holding theirs: a metadata query answers meanwhile
            assertThat(queryRunner.execute("SELECT count(*) FROM \"readings$partitions\"").getOnlyValue()).isEqualTo((long) partitions.size());
            locks.remove(lightPartition.name()).close();
            assertThat(lightQuery.get(AWAIT.toSeconds(), SECONDS)).isEqualTo(lightCount);
            // the heavy queries are still running, their splits still waiting in PostgreSQL
            assertThat(firstHeavy).isNotDone();
            assertThat(secondHeavy).isNotDone();
            assertThat(partitionsWaitedFor(warehouse)).isNotEmpty();
            assertThat(locks).hasSizeGreaterThan(2);

            // the light query's split reports its wait and the pool's size
            QueryInfo lightInfo = queryInfo(queryRunner, light);
            Metrics metrics = lightInfo.getQueryStats().getOperatorSummaries().stream()
                    .map(OperatorStats::getConnectorMetrics)
                    .reduce(Metrics.EMPTY, Metrics::mergeWith);
            TDigestHistogram poolSize = (TDigestHistogram) metrics.getMetrics().get(MeterstoreMetrics.POSTGRESQL_CONNECTIONS);
            assertThat(poolSize.getTotal()).isEqualTo(1);
            assertThat(poolSize.getMax()).isEqualTo(4);
            TDigestHistogram wait = (TDigestHistogram) metrics.getMetrics().get(MeterstoreMetrics.POSTGRESQL_CONNECTION_WAIT_MILLIS);
            assertThat(wait.getTotal()).isEqualTo(1);
            assertThat(wait.getMax()).isPositive();

            locks.values().forEach(TestingLockHolder::close);
            locks.clear();
            assertThat(firstHeavy.get(AWAIT.toSeconds(), SECONDS)).isEqualTo(heavyCount);
            assertThat(secondHeavy.get(AWAIT.toSeconds(), SECONDS)).isEqualTo(heavyCount);

            // and the statistics a user reads show them
            assertThat((String) queryRunner.execute("EXPLAIN ANALYZE VERBOSE " + light).getOnlyValue())
                    .contains(MeterstoreMetrics.POSTGRESQL_CONNECTIONS)
                    .contains(MeterstoreMetrics.POSTGRESQL_CONNECTION_WAIT_MILLIS);
        }
    }

    @Test
    void testFewMetersReadTakesTheTurnKeptFromScans()
            throws Exception
    {
        TestingWarehouse warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("pool_few_meters"));
        TestingMeterstoreTables.createTables(warehouse);
        ReadingsGenerator generator = ReadingsGenerator.builder().seed(14).meters(2).startDay(LocalDate.of(2026, 1, 1)).days(6).build();
        List<HotPartition> partitions = load(warehouse, generator);
        ReadingsOracle oracle = ReadingsOracle.of(generator.iterator());
        // a dashboard's read: one meter's rows of the first two days, one statement, which no scan reads
        Instant lightStart = partitions.get(0).start();
        Instant lightEnd = partitions.get(1).end();
        String meter = generator.iterator().next().maloId();
        String light = "SELECT malo_id, \"from\", value FROM readings_versions WHERE malo_id = '%s' AND \"from\" >= from_iso8601_timestamp('%s') AND \"from\" < from_iso8601_timestamp('%s')"
                .formatted(meter, lightStart, lightEnd);
        long lightCount = oracle.count(View.VERSIONS, ReadingsOracle.maloId(meter).and(ReadingsOracle.fromRange(lightStart, lightEnd)));
        assertThat(lightCount).isPositive();
        // a scan: every version of the later days, a split per partition
        String heavy = "SELECT malo_id, \"from\", value FROM readings_versions WHERE \"from\" >= from_iso8601_timestamp('%s')".formatted(lightEnd);
        long heavyCount = oracle.count(View.VERSIONS, ReadingsOracle.fromAtOrAfter(lightEnd));

        // four connections on the one node, one reserved: splits hold three, of which scans two
        Map<String, TestingLockHolder> locks = new HashMap<>();
        try (DistributedQueryRunner queryRunner = MeterstoreQueryRunner.builder(warehouse)
                .withoutIceberg()
                .setWorkerCount(0)
                .withCatalogOverrides(Map.of("meterstore.postgresql.max-connections", "4", "meterstore.postgresql.reserved-connections", "1"))
                .build();
                ExecutorService clients = Executors.newFixedThreadPool(3);
                ScheduledExecutorService planning = Executors.newSingleThreadScheduledExecutor();
                AutoCloseable _ = () -> locks.values().forEach(TestingLockHolder::close)) {
            PostgresConnectionPool pool = ((MeterstoreConnector) queryRunner.getCoordinator().getConnector(MeterstoreQueryRunner.CATALOG)).getInjector().getInstance(PostgresConnectionPool.class);
            for (HotPartition partition : partitions.subList(2, partitions.size())) {
                locks.put(partition.name(), TestingLockHolder.lockIndexesOf(warehouse.database(), MeterstoreQueryRunner.SCHEMA, partition.name()));
            }
            // the scans' other splits wait for a turn, and fail once for 30 s nothing came back: planning gives one back every second
            Future<?> givingBack = givingBackEverySecond(planning, pool);
            Future<Long> firstHeavy = clients.submit(() -> count(queryRunner, heavy));
            Future<Long> secondHeavy = clients.submit(() -> count(queryRunner, heavy));
            // the scans hold the two turns they may and queue their other splits: the third turn stays free
            await(() -> partitionsWaitedFor(warehouse).size() == 2 && splitsWaiting(queryRunner, pool, heavy) > 0,
                    "the scans hold their turns, their splits waiting in PostgreSQL and in the queue", givingBack, firstHeavy, secondHeavy);

            // no turn comes back while the scans' statements wait, and the dashboard's read answers all the same
            Future<Long> lightQuery = clients.submit(() -> count(queryRunner, light));
            assertThat(lightQuery.get(AWAIT.toSeconds(), SECONDS)).isEqualTo(lightCount);
            assertThat(firstHeavy).isNotDone();
            assertThat(secondHeavy).isNotDone();
            assertThat(partitionsWaitedFor(warehouse)).hasSize(2);
            assertThat(splitsWaiting(queryRunner, pool, heavy)).isPositive();

            locks.values().forEach(TestingLockHolder::close);
            locks.clear();
            assertThat(firstHeavy.get(AWAIT.toSeconds(), SECONDS)).isEqualTo(heavyCount);
            assertThat(secondHeavy.get(AWAIT.toSeconds(), SECONDS)).isEqualTo(heavyCount);
        }
    }

    @Test
    void testLightQueryRunsWhileAggregationsExecuteInPostgresqlOnEveryDriverThread()
            throws Exception
    {
        TestingWarehouse warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("pool_starts"));
        TestingMeterstoreTables.createTables(warehouse);
        ReadingsGenerator generator = ReadingsGenerator.builder().seed(13).meters(2).startDay(LocalDate.of(2026, 1, 1)).days(4).build();
        List<HotPartition> partitions = load(warehouse, generator);
        ReadingsOracle oracle = ReadingsOracle.of(generator.iterator());
        // the light query: one meter's rows of the first day, a partition no heavy query reads
        HotPartition lightPartition = partitions.getFirst();
        String meter = generator.iterator().next().maloId();
        String light = "SELECT malo_id, \"from\", value FROM readings_versions WHERE malo_id = '%s' AND \"from\" >= from_iso8601_timestamp('%s') AND \"from\" < from_iso8601_timestamp('%s')"
                .formatted(meter, lightPartition.start(), lightPartition.end());
        long lightCount = oracle.count(View.VERSIONS, ReadingsOracle.maloId(meter).and(ReadingsOracle.fromRange(lightPartition.start(), lightPartition.end())));
        assertThat(lightCount).isPositive();
        // a heavy query: an aggregation over the other days, pushed into PostgreSQL as one statement that returns its
        // rows only when it ends
        String heavy = "SELECT count(*) FROM readings_versions WHERE \"from\" >= from_iso8601_timestamp('%s')".formatted(lightPartition.end());
        long heavyCount = oracle.count(View.VERSIONS, ReadingsOracle.fromAtOrAfter(lightPartition.end()));

        // a connection for each heavy query's statement and for the light query's split, besides planning's
        Map<String, TestingLockHolder> locks = new HashMap<>();
        try (DistributedQueryRunner queryRunner = MeterstoreQueryRunner.builder(warehouse)
                .withoutIceberg()
                .setWorkerCount(0)
                .withCatalogOverrides(Map.of("meterstore.postgresql.max-connections", String.valueOf(DRIVER_THREADS + 2), "meterstore.postgresql.reserved-connections", "1"))
                .build();
                ExecutorService clients = Executors.newFixedThreadPool(DRIVER_THREADS + 1);
                // before the clients are waited for: a heavy query finishes only once its partitions are let go
                AutoCloseable _ = () -> locks.values().forEach(TestingLockHolder::close)) {
            // the heavy queries' statements wait in PostgreSQL, as a month's aggregation computes there for seconds
            for (HotPartition partition : partitions.subList(1, partitions.size())) {
                locks.put(partition.name(), TestingLockHolder.lockIndexesOf(warehouse.database(), MeterstoreQueryRunner.SCHEMA, partition.name()));
            }
            List<Future<Long>> heavyQueries = new ArrayList<>();
            for (int query = 0; query < DRIVER_THREADS; query++) {
                heavyQueries.add(clients.submit(() -> count(queryRunner, heavy)));
            }
            Future<?>[] running = heavyQueries.toArray(Future<?>[]::new);
            await(() -> partitionsWaitedFor(warehouse).size() == DRIVER_THREADS, "every heavy statement executes in PostgreSQL", running);

            // as many statements executing as the node has driver threads: the light query's split still runs, because a
            // statement runs on the pool's threads while the driver that waits for it gives its thread back
            Future<Long> lightQuery = clients.submit(() -> count(queryRunner, light));
            assertThat(lightQuery.get(AWAIT.toSeconds(), SECONDS)).isEqualTo(lightCount);
            assertThat(heavyQueries).noneMatch(Future::isDone);
            assertThat(partitionsWaitedFor(warehouse)).hasSize(DRIVER_THREADS);

            locks.values().forEach(TestingLockHolder::close);
            locks.clear();
            for (Future<Long> heavyQuery : heavyQueries) {
                assertThat(heavyQuery.get(AWAIT.toSeconds(), SECONDS)).isEqualTo(heavyCount);
            }
        }
    }

    // the generator's readings in the hot tier, and its partitions from the oldest
    private static List<HotPartition> load(TestingWarehouse warehouse, ReadingsGenerator generator)
            throws SQLException
    {
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, generator);
            return TestingMeterstoreTables.hotTier().partitions(connection).stream()
                    .sorted(Comparator.comparing(HotPartition::start))
                    .toList();
        }
    }

    // a connection taken and given back every second, as planning does on a busy node: a waiter's progress
    private static Future<?> givingBackEverySecond(ScheduledExecutorService planning, PostgresConnectionPool pool)
    {
        return planning.scheduleWithFixedDelay(() -> {
            try (Connection _ = pool.connection()) {
                // given back at once
            }
            catch (SQLException e) {
                throw new RuntimeException(e);
            }
        }, 0, 1, SECONDS);
    }

    // rows the query returns, read through the Trino JDBC driver as a dashboard would
    private static long count(DistributedQueryRunner queryRunner, String sql)
            throws SQLException
    {
        try (Connection connection = DriverManager.getConnection("jdbc:trino://%s/%s/%s".formatted(queryRunner.getCoordinator().getAddress(), MeterstoreQueryRunner.CATALOG, MeterstoreQueryRunner.SCHEMA), "dashboard", null);
                Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery(sql)) {
            if (sql.startsWith("SELECT count(*)")) {
                assertThat(result.next()).isTrue();
                return result.getLong(1);
            }
            long rows = 0;
            while (result.next()) {
                rows++;
            }
            return rows;
        }
    }

    // the hot partition each of the pool's connections waits for in PostgreSQL, a lock on its indexes
    private static List<String> partitionsWaitedFor(TestingWarehouse warehouse)
            throws SQLException
    {
        try (Connection connection = warehouse.database().connect();
                PreparedStatement statement = connection.prepareStatement("""
                        SELECT DISTINCT ON (l.pid) c.relname FROM pg_locks l
                        JOIN pg_stat_activity a ON a.pid = l.pid
                        JOIN pg_index i ON i.indexrelid = l.relation
                        JOIN pg_class c ON c.oid = i.indrelid
                        WHERE NOT l.granted AND a.datname = current_database() AND a.application_name = ?""")) {
            statement.setString(1, PostgresConnectionPool.APPLICATION_NAME);
            List<String> partitions = new ArrayList<>();
            try (ResultSet result = statement.executeQuery()) {
                while (result.next()) {
                    partitions.add(result.getString(1));
                }
            }
            return partitions;
        }
    }

    // the splits of the queries running sql that wait for a turn
    private static int splitsWaiting(DistributedQueryRunner queryRunner, PostgresConnectionPool pool, String sql)
    {
        return queryRunner.getCoordinator().getQueryManager().getQueries().stream()
                .filter(query -> query.getQuery().equals(sql))
                .mapToInt(query -> pool.splitsWaiting(query.getQueryId().toString()))
                .sum();
    }

    // the id the engine gave the query running sql, once it has one
    private static String awaitQueryId(DistributedQueryRunner queryRunner, String sql, Future<?>... running)
            throws Exception
    {
        AtomicReference<String> queryId = new AtomicReference<>();
        await(() -> {
            queryRunner.getCoordinator().getQueryManager().getQueries().stream()
                    .filter(query -> query.getQuery().equals(sql))
                    .findFirst()
                    .ifPresent(query -> queryId.set(query.getQueryId().toString()));
            return queryId.get() != null;
        }, "the query is known to the engine", running);
        return queryId.get();
    }

    private static QueryInfo queryInfo(DistributedQueryRunner queryRunner, String sql)
    {
        QueryId queryId = queryRunner.getCoordinator().getQueryManager().getQueries().stream()
                .filter(query -> query.getQuery().equals(sql))
                .map(BasicQueryInfo::getQueryId)
                .collect(onlyElement());
        return queryRunner.getCoordinator().getQueryManager().getFullQueryInfo(queryId);
    }

    private interface Condition
    {
        boolean holds()
                throws Exception;
    }

    /**
     * Waits until the condition holds. What it waits for happens once the test's last step did, so the bound is only for
     * a test that is stuck; work the condition depends on that ends meanwhile (a query failing, the connections given
     * back stopping) fails the test at once with its own error.
     */
    private static void await(Condition condition, String what, Future<?>... running)
            throws Exception
    {
        Instant deadline = Instant.now().plus(AWAIT);
        while (!condition.holds()) {
            for (Future<?> future : running) {
                if (future.isDone()) {
                    future.get();
                    throw new AssertionError("Ended before %s".formatted(what));
                }
            }
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("Not within %s: %s".formatted(AWAIT, what));
            }
            Thread.sleep(20);
        }
    }

    @Test
    void testConnectionsPostgresClosedAreNeverLent()
            throws Exception
    {
        TestingDatabase database = TestingPostgresServer.shared().createDatabase("pool_restart");
        TiersConfig config = new TiersConfig()
                .setPostgresqlUrl(database.jdbcUrl())
                .setPostgresqlUser(database.user())
                .setSchema(MeterstoreQueryRunner.SCHEMA)
                .setTables(List.of(TestingMeterstoreTables.TABLE));
        try (PostgresConnectionPool pool = new PostgresConnectionPool(config, new MeterstoreConfig().setPostgresqlMaxConnections(MAX_CONNECTIONS));
                Connection admin = database.connect()) {
            // both connections opened and given back, as planning and a split leave them
            try (Connection first = pool.connection(); Connection second = pool.connection()) {
                assertThat(backend(first)).isNotEqualTo(backend(second));
            }
            // what a restart does to them; the pool tests a connection on loan only after half a second of idleness
            try (PreparedStatement statement = admin.prepareStatement("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() AND application_name = ?")) {
                statement.setString(1, PostgresConnectionPool.APPLICATION_NAME);
                try (ResultSet result = statement.executeQuery()) {
                    assertThat(result.next()).isTrue();
                    assertThat(result.getLong(1)).isEqualTo(MAX_CONNECTIONS);
                }
            }
            // the pool's connection() tests what it lends: the dead ones are evicted and the read answers at its first attempt
            AtomicInteger attempts = new AtomicInteger();
            int backend = pool.read(connection -> {
                attempts.incrementAndGet();
                return backend(connection);
            });
            assertThat(backend).isPositive();
            assertThat(attempts.get()).isEqualTo(1);

            // closed after the test, in the middle of the read: the read is repeated once, on a fresh connection
            attempts.set(0);
            int repeated = pool.read(connection -> {
                if (attempts.incrementAndGet() == 1) {
                    try (PreparedStatement statement = admin.prepareStatement("SELECT pg_terminate_backend(?, 5000)")) {
                        statement.setInt(1, backend(connection));
                        statement.execute();
                    }
                }
                return backend(connection);
            });
            assertThat(attempts.get()).isEqualTo(2);
            assertThat(repeated).isPositive();
        }
    }

    private static int backend(Connection connection)
            throws SQLException
    {
        try (Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery("SELECT pg_backend_pid()")) {
            assertThat(result.next()).isTrue();
            return result.getInt(1);
        }
    }
}
