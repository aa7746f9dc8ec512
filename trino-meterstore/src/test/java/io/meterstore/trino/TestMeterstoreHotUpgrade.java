package io.meterstore.trino;

import io.meterstore.core.HotPartition;
import io.meterstore.core.HotTier;
import io.meterstore.core.HotTierSupersession;
import io.meterstore.core.Reading;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.trino.testing.DistributedQueryRunner;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static com.google.common.collect.ImmutableSet.toImmutableSet;
import static io.meterstore.trino.TestingInserts.correction;
import static io.meterstore.trino.TestingInserts.insert;
import static io.meterstore.trino.TestingInserts.timestamp;
import static java.time.ZoneOffset.UTC;
import static java.util.concurrent.TimeUnit.MINUTES;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

/**
 * The supersession marks' upgrade of a table created before them, through Trino while it is written and read: one
 * thread INSERTs corrections (some a lower version after a higher one), another reads {@code readings}' sums per meter
 * and day and, in the same query and so the same PostgreSQL snapshot, the same sums over Trino's own resolution of
 * {@code readings_versions}. The answers are equal before the upgrade (every partition resolved as it is read), while
 * {@code create} adds the marks, and while every partition is marked again in batches of a hundred rows.
 */
@TestInstance(PER_CLASS)
// a guard against a hang: the steps wait for the writer and the reader to do something more, however long that takes
@Timeout(value = 10, unit = MINUTES, threadMode = SEPARATE_THREAD)
final class TestMeterstoreHotUpgrade
{
    private static final int METERS = 6;
    private static final int DAYS = 3;
    private static final LocalDate FIRST_DAY = LocalDate.of(2026, 6, 1);
    // far above the generator's versions (its instants in microseconds), so every correction is the newest but one
    private static final long VERSION_BASE = 10_000_000_000_000_000L;

    private TestingWarehouse warehouse;
    private DistributedQueryRunner queryRunner;

    @BeforeAll
    void setUp()
            throws Exception
    {
        warehouse = TestingDeployment.SINGLE_NODE.warehouse(TestingPostgresServer.shared().createDatabase("hot_upgrade"));
        TestingMeterstoreTables.createTables(warehouse);
        ReadingsGenerator generator = ReadingsGenerator.builder().seed(32).meters(METERS).startDay(FIRST_DAY).days(DAYS).build();
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, generator);
        }
        queryRunner = TestingDeployment.SINGLE_NODE.queryRunner(warehouse).build();
    }

    @AfterAll
    void tearDown()
    {
        if (queryRunner != null) {
            queryRunner.close();
        }
    }

    @Test
    void testAnswersEqualThroughoutTheUpgrade()
            throws Exception
    {
        HotTier hotTier = TestingMeterstoreTables.hotTier();
        List<String> tables = new ArrayList<>(List.of(hotTier.qualifiedParent()));
        Set<String> partitions;
        try (Connection connection = warehouse.database().connect()) {
            partitions = hotTier.partitions(connection).stream().map(HotPartition::name).collect(toImmutableSet());
            partitions.stream().sorted().map(hotTier::qualifiedPartition).forEach(tables::add);
            // as created before the marks: no column, no triggers, no comment
            try (Statement statement = connection.createStatement()) {
                for (String table : tables) {
                    for (String operation : List.of("insert", "update", "delete")) {
                        statement.execute("DROP TRIGGER meterstore_supersession_%s ON %s".formatted(operation, table));
                    }
                    statement.execute("COMMENT ON TABLE %s IS NULL".formatted(table));
                }
                statement.execute("ALTER TABLE %s DROP COLUMN superseded_at".formatted(hotTier.qualifiedParent()));
            }
            assertThat(HotTierSupersession.markedPartitions(connection, hotTier.schema())).isEmpty();
        }

        AtomicBoolean running = new AtomicBoolean(true);
        AtomicInteger written = new AtomicInteger();
        AtomicInteger read = new AtomicInteger();
        List<String> differences = new ArrayList<>();
        // a thread each: the common pool may have one
        ExecutorService executor = Executors.newFixedThreadPool(2);
        CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
            Random random = new Random(7);
            try (Connection trino = connect("writer"); Statement statement = trino.createStatement()) {
                for (int number = 1; running.get(); number++) {
                    Instant from = FIRST_DAY.atStartOfDay().toInstant(UTC)
                            .plus(Duration.ofDays(random.nextInt(DAYS))).plus(Duration.ofMinutes(15L * random.nextInt(8)));
                    // every third statement a lower version than the one before it, delivered after it: stored superseded
                    long version = VERSION_BASE + (number % 3 == 0 ? 2L * number - 3 : 2L * number);
                    Reading reading = correction(random.nextInt(METERS), from, version, number + ".000000");
                    statement.executeUpdate(insert(List.of(reading)));
                    written.incrementAndGet();
                }
            }
            catch (SQLException e) {
                throw new RuntimeException(e);
            }
        }, executor);
        CompletableFuture<Void> reader = CompletableFuture.runAsync(() -> {
            try (Connection trino = connect("reader")) {
                while (running.get()) {
                    Map<String, Map<String, String>> answers = sums(trino);
                    if (!answers.get("readings").equals(answers.get("resolved"))) {
                        synchronized (differences) {
                            differences.add("read %s: readings %s, resolved %s".formatted(read.get(), answers.get("readings"), answers.get("resolved")));
                        }
                    }
                    read.incrementAndGet();
                }
            }
            catch (SQLException e) {
                throw new RuntimeException(e);
            }
        }, executor);
        try (Connection connection = warehouse.database().connect()) {
            // read and written before the upgrade
            awaitBeside(written, read, writer, reader);
            // create again: the column, the triggers, every partition marked in its batches
            hotTier.createParent(connection);
            assertThat(HotTierSupersession.markedPartitions(connection, hotTier.schema())).isEqualTo(partitions);
            awaitBeside(written, read, writer, reader);
            // every partition unmarked at once and marked again a hundred rows a transaction, while read and written
            connection.setAutoCommit(false);
            try (Statement statement = connection.createStatement()) {
                for (String table : tables.subList(1, tables.size())) {
                    statement.execute("COMMENT ON TABLE %s IS NULL".formatted(table));
                    statement.execute("ALTER TABLE %s DISABLE TRIGGER meterstore_supersession_update".formatted(table));
                    statement.execute("UPDATE %s SET superseded_at = NULL".formatted(table));
                    statement.execute("ALTER TABLE %s ENABLE TRIGGER meterstore_supersession_update".formatted(table));
                }
            }
            connection.commit();
            connection.setAutoCommit(true);
            awaitBeside(written, read, writer, reader);
            assertThat(hotTier.markPartitions(connection, 100)).containsExactlyInAnyOrderElementsOf(partitions);
            awaitBeside(written, read, writer, reader);
            assertThat(HotTierSupersession.markedPartitions(connection, hotTier.schema())).isEqualTo(partitions);
        }
        finally {
            running.set(false);
            executor.shutdown();
        }
        writer.get();
        reader.get();
        System.out.println("%s statements written, %s reads beside the upgrade".formatted(written.get(), read.get()));
        assertThat(differences).as("reads of readings that differ from the resolution of readings_versions").isEmpty();
        // after the upgrade, and each of its steps had writes and reads beside it
        try (Connection trino = connect("check")) {
            Map<String, Map<String, String>> answers = sums(trino);
            assertThat(answers.get("readings")).isNotEmpty().isEqualTo(answers.get("resolved"));
            assertThat(written.get()).isGreaterThanOrEqualTo(4);
            assertThat(read.get()).isGreaterThanOrEqualTo(4);
        }
    }

    /** Waits until the writer and the reader each did something more, or one failed. */
    private static void awaitBeside(AtomicInteger written, AtomicInteger read, CompletableFuture<Void> writer, CompletableFuture<Void> reader)
            throws InterruptedException
    {
        int writes = written.get();
        int reads = read.get();
        while ((written.get() < writes + 1 || read.get() < reads + 1) && !writer.isDone() && !reader.isDone()) {
            Thread.sleep(10);
        }
        assertThat(writer).as("the writer").isNotCompletedExceptionally();
        assertThat(reader).as("the reader").isNotCompletedExceptionally();
    }

    /** The sum and count per meter and day of readings and of Trino's resolution of readings_versions, in one query. */
    private static Map<String, Map<String, String>> sums(Connection trino)
            throws SQLException
    {
        String range = "\"from\" >= %s AND \"from\" < %s".formatted(
                timestamp(FIRST_DAY.atStartOfDay().toInstant(UTC)), timestamp(FIRST_DAY.plusDays(DAYS).atStartOfDay().toInstant(UTC)));
        String query = """
                SELECT 'readings', malo_id, balancing_day, sum(value), count(*) FROM readings WHERE %1$s GROUP BY malo_id, balancing_day
                UNION ALL
                SELECT 'resolved', malo_id, balancing_day, sum(value), count(*) FROM (
                    SELECT *, row_number() OVER (PARTITION BY malo_id, obis_code, "from", version_scope ORDER BY version DESC, recorded_at DESC) AS rank
                    FROM readings_versions WHERE %1$s) WHERE rank = 1 GROUP BY malo_id, balancing_day""".formatted(range);
        Map<String, Map<String, String>> answers = new HashMap<>(Map.of("readings", new HashMap<>(), "resolved", new HashMap<>()));
        try (Statement statement = trino.createStatement(); ResultSet result = statement.executeQuery(query)) {
            while (result.next()) {
                answers.get(result.getString(1)).put(result.getString(2) + " " + result.getString(3), result.getBigDecimal(4).toPlainString() + " (" + result.getLong(5) + ")");
            }
        }
        return answers;
    }

    private Connection connect(String user)
            throws SQLException
    {
        return DriverManager.getConnection("jdbc:trino://%s/meterstore/metering".formatted(queryRunner.getCoordinator().getAddress()), user, null);
    }
}
