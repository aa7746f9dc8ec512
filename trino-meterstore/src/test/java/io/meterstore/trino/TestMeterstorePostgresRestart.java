package io.meterstore.trino;

import com.google.common.io.MoreFiles;
import com.google.common.io.RecursiveDeleteOption;
import io.meterstore.core.HotPartition;
import io.meterstore.core.Reading;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.ReadingsOracle;
import io.meterstore.testing.ReadingsOracle.View;
import io.meterstore.testing.TestingLockHolder;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.meterstore.trino.base.PostgresConnectionPool;
import io.trino.jdbc.TrinoStatement;
import io.trino.testing.DistributedQueryRunner;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_HOT_READ_FAILED;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_WRITE_FAILED;
import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;
import static io.meterstore.trino.TestingInserts.correction;
import static io.meterstore.trino.TestingInserts.hotRows;
import static io.meterstore.trino.TestingInserts.insert;
import static io.meterstore.trino.TestingInserts.keyPredicate;
import static io.meterstore.trino.TestingInserts.timestamp;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS;

/**
 * PostgreSQL stopped and started while a statement is in flight, held at the step under test by a lock PostgreSQL
 * itself keeps: a hot scan fails with an error naming its partition (never a short answer), an INSERT fails and its
 * rerun writes each row exactly once. The server is this class's own: the other test classes share theirs.
 */
@TestInstance(PER_CLASS)
final class TestMeterstorePostgresRestart
{
    private static final Duration TIMEOUT = Duration.ofSeconds(90);
    private static final Duration DAY = Duration.ofDays(1);

    private Path directory;
    private TestingPostgresServer server;
    private TestingWarehouse warehouse;
    private ReadingsGenerator generator;
    private List<HotPartition> hot;
    private DistributedQueryRunner queryRunner;

    @BeforeAll
    void setUp()
            throws Exception
    {
        directory = Files.createTempDirectory("meterstore-restart-");
        server = TestingPostgresServer.restartable(Files.createDirectory(directory.resolve("pgdata")));
        warehouse = new TestingWarehouse(server.createDatabase("restart"), Files.createDirectory(directory.resolve("warehouse")), TestingWarehouse.CATALOG_NAME);
        Table table = TestingMeterstoreTables.createTables(warehouse);
        generator = ReadingsGenerator.builder().seed(41).meters(4).startDay(LocalDate.of(2026, 2, 2)).days(3).correctionsFraction(0.02).build();
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, generator);
        }
        TestingArchival.archiveWindows(warehouse, 1);
        table.refresh();
        TieringWatermark watermark = WatermarkReader.current(table).watermark();
        try (Connection connection = warehouse.database().connect()) {
            hot = TestingMeterstoreTables.hotTier().partitions(connection).stream().filter(partition -> !partition.start().isBefore(watermark.instant())).toList();
        }
        queryRunner = MeterstoreQueryRunner.builder(warehouse).withoutIceberg().build();
    }

    @AfterAll
    void tearDown()
            throws Exception
    {
        queryRunner.close();
        server.close();
        MoreFiles.deleteRecursively(directory, RecursiveDeleteOption.ALLOW_INSECURE);
    }

    @Test
    void testPostgresRestartDuringHotScan()
            throws Exception
    {
        // two hot partitions: the first is read whole before the restart, the second waits for a lock until then
        HotPartition first = hot.get(0);
        HotPartition second = hot.get(1);
        Instant end = second.start().plus(DAY);
        String sql = "SELECT value FROM readings_versions WHERE \"from\" >= %s AND \"from\" < %s".formatted(timestamp(first.start()), timestamp(end));
        ReadingsOracle oracle = ReadingsOracle.of(generator);
        long firstRows = oracle.summary(View.VERSIONS, ReadingsOracle.fromRange(first.start(), second.start())).count();
        ReadingsOracle.Summary expected = oracle.summary(View.VERSIONS, ReadingsOracle.fromRange(first.start(), end));

        AtomicLong processed = new AtomicLong();
        CompletableFuture<Long> scan;
        try (TestingLockHolder lock = TestingLockHolder.lockIndexesOf(warehouse.database(), SCHEMA, second.name())) {
            scan = CompletableFuture.supplyAsync(() -> {
                try (Connection connection = connect(); Statement statement = connection.createStatement()) {
                    statement.unwrap(TrinoStatement.class).setProgressMonitor(stats -> processed.set(stats.getProcessedRows()));
                    long rows = 0;
                    try (ResultSet result = statement.executeQuery(sql)) {
                        while (result.next()) {
                            rows++;
                        }
                    }
                    return rows;
                }
                catch (SQLException e) {
                    throw new RuntimeException(e);
                }
            });
            lock.awaitWaiter("COPY (SELECT", TIMEOUT);
            await(() -> processed.get() >= firstRows, "the first partition's %s rows read".formatted(firstRows));
            server.stop();
            server.start();
        }
        SQLException failure = failure(scan);
        assertThat(failure.getErrorCode()).as(failure.getMessage()).isEqualTo(METERSTORE_HOT_READ_FAILED.toErrorCode().getCode());
        assertThat(failure.getMessage()).contains("Cannot read hot partition '%s.%s'".formatted(SCHEMA, second.name()));

        // with PostgreSQL back, the same query answers in full
        try (Connection connection = connect(); Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SELECT count(*), sum(value) FROM (%s)".formatted(sql))) {
            assertThat(result.next()).isTrue();
            assertThat(result.getLong(1)).isEqualTo(expected.count());
            assertThat(result.getBigDecimal(2)).isEqualByComparingTo(expected.sum());
        }
    }

    @Test
    void testPostgresRestartDuringInsert()
            throws Exception
    {
        // new versions in both hot days and in the archived one
        Instant coldDay = hot.getFirst().start().minus(DAY);
        List<Reading> readings = new ArrayList<>();
        for (int meter = 0; meter < 3; meter++) {
            readings.add(correction(meter, coldDay.plus(Duration.ofMinutes(15L * (10 + meter))), 7, "1.5"));
            readings.add(correction(meter, hot.get(0).start().plus(Duration.ofMinutes(15L * (10 + meter))), 7, "2.5"));
            readings.add(correction(meter, hot.get(1).start().plus(Duration.ofMinutes(15L * (10 + meter))), 7, "3.5"));
        }
        String sql = insert(readings);
        long rowsBefore = versionsRows();

        // the statement's hot rows are in its open transaction and its cold files written; its catalogue swap waits
        CompletableFuture<Long> write;
        try (TestingLockHolder pointer = TestingLockHolder.lockCatalogPointer(warehouse.database(), SCHEMA, TestingMeterstoreTables.TABLE)) {
            write = CompletableFuture.supplyAsync(() -> {
                try (Connection connection = connect(); Statement statement = connection.createStatement()) {
                    return statement.executeLargeUpdate(sql);
                }
                catch (SQLException e) {
                    throw new RuntimeException(e);
                }
            });
            pointer.awaitWaiter("UPDATE iceberg_tables", TIMEOUT);
            server.stop();
            server.start();
        }
        SQLException failure = failure(write);
        assertThat(failure.getErrorCode()).as(failure.getMessage()).isEqualTo(METERSTORE_WRITE_FAILED.toErrorCode().getCode());
        // whether the swap was cut off (nothing committed) or its outcome is unknown, the statement says to run it again
        assertThat(failure.getMessage()).containsAnyOf("run it again", "run the statement again");
        // the PostgreSQL transaction died with the server; the cold rows landed or not, never in part
        try (Connection connection = warehouse.database().connect()) {
            for (Reading reading : readings) {
                assertThat(hotRows(connection, reading)).isZero();
            }
        }

        // the rerun writes each row exactly once, in its tier
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            assertThat(statement.executeLargeUpdate(sql)).isEqualTo(readings.size());
        }
        try (Connection connection = warehouse.database().connect()) {
            for (Reading reading : readings) {
                assertThat(hotRows(connection, reading)).as("hot copies of %s", reading).isEqualTo(reading.from().isBefore(hot.getFirst().start()) ? 0 : 1);
                assertThat(count("SELECT count(*) FROM readings_versions WHERE " + keyPredicate(reading))).as("copies of %s", reading).isEqualTo(1);
            }
        }
        assertThat(versionsRows()).isEqualTo(rowsBefore + readings.size());
        BigDecimal written = readings.stream().map(Reading::value).reduce(BigDecimal.ZERO, BigDecimal::add);
        try (Connection connection = connect(); Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SELECT sum(value) FROM readings_versions WHERE version = 7")) {
            assertThat(result.next()).isTrue();
            assertThat(result.getBigDecimal(1)).isEqualByComparingTo(written);
        }
    }

    @Test
    void testInsertRightAfterPostgresClosedThePooledConnections()
            throws Exception
    {
        // PostgreSQL closes the connector's connections a moment after an INSERT gave them back, as a restart between two
        // statements does: the pool tests a connection only when it was idle for more than half a second, so the next
        // INSERT must not be handed a dead one (it would fail creating its staging table)
        Instant day = hot.get(1).start();
        List<Reading> first = List.of(correction(0, day.plus(Duration.ofMinutes(15L * 40)), 8, "4.5"));
        List<Reading> second = List.of(correction(1, day.plus(Duration.ofMinutes(15L * 41)), 8, "5.5"));
        long rowsBefore = versionsRows();
        try (Connection connection = connect(); Statement statement = connection.createStatement();
                Connection postgres = warehouse.database().connect(); Statement terminate = postgres.createStatement()) {
            statement.executeUpdate(insert(first));
            try (ResultSet terminated = terminate.executeQuery("SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '%s'"
                    .formatted(PostgresConnectionPool.APPLICATION_NAME))) {
                assertThat(terminated.next()).isTrue();
                assertThat(terminated.getLong(1)).isPositive();
            }
            statement.executeUpdate(insert(second));
        }
        assertThat(versionsRows()).isEqualTo(rowsBefore + 2);
    }

    /** The JDBC driver's error of a statement that must have failed. */
    private static SQLException failure(CompletableFuture<Long> statement)
    {
        Throwable failure = catchThrowable(statement::join);
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof SQLException sqlException) {
                return sqlException;
            }
        }
        throw new AssertionError("The statement did not fail with an SQLException", failure);
    }

    private long versionsRows()
            throws SQLException
    {
        return count("SELECT count(*) FROM readings_versions");
    }

    private long count(String sql)
            throws SQLException
    {
        try (Connection connection = connect(); Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            assertThat(result.next()).isTrue();
            return result.getLong(1);
        }
    }

    private Connection connect()
            throws SQLException
    {
        return DriverManager.getConnection("jdbc:trino://%s/meterstore/%s".formatted(queryRunner.getCoordinator().getAddress(), SCHEMA), "restart", null);
    }

    private interface Condition
    {
        boolean holds();
    }

    private static void await(Condition condition, String what)
            throws InterruptedException
    {
        Instant deadline = Instant.now().plus(TIMEOUT);
        while (!condition.holds()) {
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("Not within %s: %s".formatted(TIMEOUT, what));
            }
            Thread.sleep(20);
        }
    }
}
