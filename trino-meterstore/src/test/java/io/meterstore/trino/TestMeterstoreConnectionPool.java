package io.meterstore.trino;

import io.meterstore.core.TiersConfig;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.ReadingsOracle;
import io.meterstore.testing.ReadingsOracle.View;
import io.meterstore.testing.TestingDatabase;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.meterstore.trino.base.MeterstoreConfig;
import io.meterstore.trino.base.PostgresConnectionPool;
import io.trino.testing.DistributedQueryRunner;
import io.trino.testing.MaterializedRow;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The hot tier's connections come from a bounded pool: a scan of 100 partitions never holds more than the pool's size,
 * and a read repeats on a fresh connection when PostgreSQL closed the pooled ones.
 */
final class TestMeterstoreConnectionPool
{
    private static final int MAX_CONNECTIONS = 2;
    private static final int PARTITIONS = 100;

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
    void testReadRepeatsOnceWhenPostgresClosedThePooledConnections()
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
            AtomicInteger attempts = new AtomicInteger();
            int backend = pool.read(connection -> {
                attempts.incrementAndGet();
                return backend(connection);
            });
            assertThat(backend).isPositive();
            assertThat(attempts.get()).isEqualTo(2);
            // every dead connection was evicted with the first: the next read answers at once
            attempts.set(0);
            pool.read(connection -> attempts.incrementAndGet());
            assertThat(attempts.get()).isEqualTo(1);
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
