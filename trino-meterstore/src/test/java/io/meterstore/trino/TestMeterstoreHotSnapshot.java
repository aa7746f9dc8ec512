package io.meterstore.trino;

import io.meterstore.core.Reading;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.meterstore.trino.base.PostgresConnectionPool;
import io.meterstore.trino.hot.HotReadFailpoints;
import io.trino.testing.DistributedQueryRunner;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

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
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static io.meterstore.trino.TestingInserts.correction;
import static io.meterstore.trino.TestingInserts.insert;
import static io.meterstore.trino.TestingInserts.timestamp;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS;

/**
 * One query, one PostgreSQL snapshot: a writer's statements each correct one meter at 10:00 on two hot days (two
 * partitions) to the same value, while a reader reads both days in one query through the Trino JDBC driver. Every
 * round, the reader's second hot read starts only after the writer committed again since its first began, so a query
 * whose hot splits each took their own snapshot sees one day's correction and not the other's; reading the query's
 * one snapshot, it never sees part of a statement.
 */
@TestInstance(PER_CLASS)
class TestMeterstoreHotSnapshot
{
    private static final int ROUNDS = 12;
    // far above the generator's versions (its instants in microseconds), so every correction wins
    private static final long VERSION_BASE = 10_000_000_000_000_000L;

    private TestingWarehouse warehouse;
    private DistributedQueryRunner queryRunner;
    private Instant first;
    private Instant second;

    @BeforeAll
    void setUp()
            throws Exception
    {
        warehouse = deployment().warehouse(TestingPostgresServer.shared().createDatabase("hot_snapshot"));
        TestingMeterstoreTables.createTables(warehouse);
        ReadingsGenerator generator = ReadingsGenerator.builder().seed(32).meters(2).startDay(LocalDate.of(2026, 6, 1)).days(3).build();
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, generator);
        }
        // 10:00 UTC on two days: two partitions, nothing archived
        first = Instant.parse("2026-06-01T10:00:00Z");
        second = Instant.parse("2026-06-02T10:00:00Z");
        queryRunner = deployment().queryRunner(warehouse).build();
    }

    protected TestingDeployment deployment()
    {
        return TestingDeployment.SINGLE_NODE;
    }

    @AfterAll
    void tearDown()
    {
        HotReadFailpoints.setBeforeTransaction(() -> {});
        if (queryRunner != null) {
            queryRunner.close();
        }
    }

    @Test
    void testNoReadSeesPartOfAStatement()
            throws Exception
    {
        AtomicLong committed = new AtomicLong();
        AtomicBoolean writing = new AtomicBoolean(true);
        try (Connection writer = connect("writer");
                Connection reader = connect("reader")) {
            // the first statement before any read: both days hold a correction from then on
            correct(writer, committed.incrementAndGet());
            CompletableFuture<Void> writes = CompletableFuture.runAsync(() -> {
                try {
                    while (writing.get()) {
                        // the statement's number is its value on both days
                        correct(writer, committed.get() + 1);
                        committed.incrementAndGet();
                    }
                }
                catch (SQLException e) {
                    throw new RuntimeException(e);
                }
            });
            List<String> reads = new ArrayList<>();
            List<String> torn = new ArrayList<>();
            try {
                for (int round = 0; round < ROUNDS; round++) {
                    Round turn = new Round(committed);
                    HotReadFailpoints.setBeforeTransaction(turn::beforeTransaction);
                    String query = switch (round % 3) {
                        // the winners of both days, resolved split by split
                        case 0 -> "SELECT value FROM readings WHERE %s";
                        // every version, read unresolved: both days' newest versions
                        case 1 -> "SELECT max(value) FROM readings_versions WHERE %s GROUP BY \"from\"";
                        // as known now: the statements committed after this instant are not known at it either way
                        default -> "SELECT value FROM readings FOR TIMESTAMP AS OF " + timestamp(Instant.now()) + " WHERE %s";
                    };
                    List<BigDecimal> values = values(reader, query.formatted(bothDays()));
                    HotReadFailpoints.setBeforeTransaction(() -> {});
                    assertThat(values).as("one value per day").hasSize(2);
                    BigDecimal sum = values.get(0).add(values.get(1));
                    reads.add("%s (hot reads: %s)".formatted(values, turn.reads()));
                    // both days carry statement k's value k: their sum is even, and odd for a read of two statements
                    if (values.get(0).compareTo(values.get(1)) != 0 || sum.remainder(BigDecimal.TWO).signum() != 0) {
                        torn.add("round %s: %s and %s".formatted(round, values.get(0), values.get(1)));
                    }
                }
            }
            finally {
                HotReadFailpoints.setBeforeTransaction(() -> {});
                writing.set(false);
            }
            writes.get(60, SECONDS);
            System.out.println("%s statements written; reads of both days: %s".formatted(committed.get(), reads));
            assertThat(committed.get()).isGreaterThan(ROUNDS);
            assertThat(torn).as("reads of two partitions that saw part of a statement, of %s", reads).isEmpty();
        }
        // every query's snapshot ended with it: none of its transactions is left open in PostgreSQL
        assertThat(openSnapshots()).isZero();
    }

    @Test
    void testAFailedQueryEndsItsSnapshot()
            throws Exception
    {
        AtomicLong heldWhileReading = new AtomicLong(-1);
        HotReadFailpoints.setBeforeTransaction(() -> {
            try {
                // the most any split saw: one split's failure may end the snapshot before another split begins
                heldWhileReading.accumulateAndGet(snapshotsHeld(), Math::max);
            }
            catch (SQLException e) {
                throw new RuntimeException(e);
            }
        });
        try (Connection reader = connect("failing")) {
            // fails in its hot splits' pages, after they began: a division by zero
            assertThatThrownBy(() -> values(reader, "SELECT value / (value - value) FROM readings WHERE " + bothDays()))
                    .hasMessageContaining("Division by zero");
        }
        finally {
            HotReadFailpoints.setBeforeTransaction(() -> {});
        }
        // the query held its snapshot while its splits read, and it ended with the failed query
        assertThat(heldWhileReading.get()).isEqualTo(1);
        assertThat(openSnapshots()).isZero();
    }

    // the meter through a function, which the connector is not handed: a read of a meter named outright is one statement
    // over both days, where this test needs two hot reads, one per day's partition, to commit a statement between
    private String bothDays()
    {
        return "substr(malo_id, 1) = '%s' AND obis_code = '%s' AND \"from\" IN (%s, %s)".formatted(ReadingsGenerator.maloId(0), ReadingsGenerator.OBIS_CODE, timestamp(first), timestamp(second));
    }

    /** One statement: version and value {@code statement} at 10:00 on both days. */
    private void correct(Connection writer, long statement)
            throws SQLException
    {
        List<Reading> rows = List.of(
                correction(0, first, VERSION_BASE + statement, statement + ".000000"),
                correction(0, second, VERSION_BASE + statement, statement + ".000000"));
        try (Statement sql = writer.createStatement()) {
            sql.executeUpdate(insert(rows));
        }
    }

    private static List<BigDecimal> values(Connection reader, String query)
            throws SQLException
    {
        List<BigDecimal> values = new ArrayList<>();
        try (Statement statement = reader.createStatement();
                ResultSet result = statement.executeQuery(query)) {
            while (result.next()) {
                values.add(result.getBigDecimal(1));
            }
        }
        return values;
    }

    private Connection connect(String user)
            throws SQLException
    {
        return DriverManager.getConnection("jdbc:trino://%s/meterstore/metering".formatted(queryRunner.getCoordinator().getAddress()), user, null);
    }

    /** Transactions holding a query's snapshot, once none is left; Trino cleans a query up just after its client has its end. */
    private long openSnapshots()
            throws Exception
    {
        long deadline = System.nanoTime() + SECONDS.toNanos(30);
        while (true) {
            long open = snapshotsHeld();
            if (open == 0 || System.nanoTime() > deadline) {
                return open;
            }
            Thread.sleep(50);
        }
    }

    private long snapshotsHeld()
            throws SQLException
    {
        try (Connection connection = warehouse.database().connect();
                PreparedStatement statement = connection.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE application_name = ? AND state = 'idle in transaction' AND datname = current_database()")) {
            statement.setString(1, PostgresConnectionPool.SNAPSHOT_APPLICATION_NAME);
            try (ResultSet result = statement.executeQuery()) {
                result.next();
                return result.getLong(1);
            }
        }
    }

    /**
     * One read's turn: its first hot read begins at once, every later one only once the writer has committed two more
     * statements, so that one of them committed after the first read began (a statement takes far longer than a read
     * takes to begin).
     */
    private static final class Round
    {
        private final AtomicLong committed;
        private long committedAtFirst = -1;
        private int reads;

        Round(AtomicLong committed)
        {
            this.committed = committed;
        }

        void beforeTransaction()
        {
            long awaited;
            synchronized (this) {
                reads++;
                if (committedAtFirst < 0) {
                    committedAtFirst = committed.get();
                    return;
                }
                awaited = committedAtFirst + 2;
            }
            long deadline = System.nanoTime() + SECONDS.toNanos(30);
            while (committed.get() < awaited && System.nanoTime() < deadline) {
                try {
                    Thread.sleep(5);
                }
                catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }

        synchronized int reads()
        {
            return reads;
        }
    }
}
