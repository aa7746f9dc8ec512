package io.meterstore.testing;

import io.meterstore.core.HotPartition;
import io.meterstore.core.HotTier;
import io.meterstore.core.HotTierSupersession;
import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.Reading;
import io.meterstore.core.Sparte;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS;

/**
 * The hot tier's marks of supersession against an oracle that resolves the versions written: every key's winner as
 * known at each instant is the row the marks keep, {@code recorded_at <= t AND (superseded_at IS NULL OR superseded_at > t)},
 * whoever wrote the versions (the parent, a partition by name, several versions of a key in one statement, a lower
 * version redelivered after a higher one, a row recorded before the rows it loses to, a deleted winner).
 */
@TestInstance(PER_CLASS)
final class TestHotTierSupersession
{
    private static final Instant AUGUST_20 = Instant.parse("2026-08-20T00:00:00Z");
    private static final Instant AUGUST_21 = Instant.parse("2026-08-21T00:00:00Z");
    private static final Instant FIRST_RECORD = Instant.parse("2026-08-22T00:00:00Z");
    private static final String COLUMNS = "malo_id, obis_code, sparte, \"from\", \"to\", value, unit, quality, resolution, source_kind, version, version_scope, recorded_at, balancing_day";

    private TestingDatabase database;

    @BeforeAll
    void createDatabase()
    {
        database = TestingPostgresServer.shared().createDatabase("test_hot_tier_supersession");
    }

    @AfterAll
    void dropDatabase()
    {
        database.close();
    }

    @Test
    void testMarksAgreeWithResolutionAtEveryInstant()
            throws SQLException
    {
        HotTier hotTier = hotTier("marks");
        try (Connection connection = database.connect()) {
            hotTier.createParent(connection);
            hotTier.ensurePartition(connection, AUGUST_20);
            hotTier.ensurePartition(connection, AUGUST_21);
            assertThat(HotTierSupersession.markedPartitions(connection, "marks")).containsExactlyInAnyOrder("readings_2026_08_20_0000", "readings_2026_08_21_0000");
            Oracle oracle = new Oracle();
            write(connection, hotTier, oracle, new Random(32), 60);
            // a winner deleted: the version it beat wins again
            Row winner = oracle.winners(Instant.MAX).getFirst();
            try (PreparedStatement delete = connection.prepareStatement("DELETE FROM %s WHERE malo_id = ? AND obis_code = ? AND \"from\" = ? AND version = ?".formatted(hotTier.qualifiedParent()))) {
                delete.setString(1, winner.maloId());
                delete.setString(2, winner.obisCode());
                delete.setObject(3, winner.from().atOffset(ZoneOffset.UTC));
                delete.setLong(4, winner.version());
                assertThat(delete.executeUpdate()).isEqualTo(1);
            }
            oracle.rows.remove(winner);
            // a mark written by hand is put right by the trigger
            try (Statement statement = connection.createStatement()) {
                statement.executeUpdate("UPDATE %s SET superseded_at = NULL".formatted(hotTier.qualifiedPartition("readings_2026_08_20_0000")));
            }
            assertMarksAgree(connection, hotTier, oracle);
            assertThat(oracle.rows.size()).isGreaterThan(oracle.winners(Instant.MAX).size() + 40);
        }
    }

    @Test
    void testWriterCannotLeaveTheMarksStale()
            throws SQLException
    {
        HotTier hotTier = hotTier("tamper");
        try (Connection connection = database.connect(); Statement statement = connection.createStatement()) {
            hotTier.createParent(connection);
            hotTier.ensurePartition(connection, AUGUST_20);
            hotTier.ensurePartition(connection, AUGUST_21);
            Oracle oracle = new Oracle();
            write(connection, hotTier, oracle, new Random(5), 30);
            assertThat(oracle.rows.size()).isGreaterThan(oracle.winners(Instant.MAX).size() + 20);
            // a table of the release whose marks' UPDATE trigger kept still for a writer that set meterstore.marking:
            // create, run again, replaces it
            for (String table : List.of("readings", "readings_2026_08_20_0000", "readings_2026_08_21_0000")) {
                statement.execute("""
                        CREATE OR REPLACE TRIGGER meterstore_supersession_update AFTER UPDATE ON tamper.%s REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
                        FOR EACH STATEMENT WHEN (current_setting('meterstore.marking', true) IS DISTINCT FROM 'on') EXECUTE FUNCTION tamper.meterstore_supersession('tamper.readings')"""
                        .formatted(table));
            }
            hotTier.createParent(connection);
            // a writer that sets what the marks' own UPDATEs once set: its UPDATEs are marked all the same
            statement.execute("SET meterstore.marking = 'on'");
            statement.executeUpdate("UPDATE tamper.readings_2026_08_20_0000 SET superseded_at = NULL");
            Row loser = oracle.rows.stream().filter(row -> !oracle.winners(Instant.MAX).contains(row)).findFirst().orElseThrow();
            assertThat(statement.executeUpdate("UPDATE tamper.readings SET version = 100 WHERE malo_id = '%s' AND \"from\" = '%s' AND version = %d"
                    .formatted(loser.maloId(), loser.from(), loser.version()))).isEqualTo(1);
            oracle.rows.remove(loser);
            oracle.rows.add(new Row(loser.maloId(), loser.obisCode(), loser.from(), 100, loser.recordedAt()));
            assertMarksAgree(connection, hotTier, oracle);
            // and one whose UPDATE runs in a trigger of its own, where pg_trigger_depth() is 1 as in the marks' own
            statement.execute("CREATE TEMPORARY TABLE nudge (n int)");
            statement.execute("CREATE FUNCTION pg_temp.nudge() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN UPDATE tamper.readings SET superseded_at = NULL; RETURN NULL; END $$");
            statement.execute("CREATE TRIGGER nudge AFTER INSERT ON pg_temp.nudge FOR EACH STATEMENT EXECUTE FUNCTION pg_temp.nudge()");
            statement.executeUpdate("INSERT INTO pg_temp.nudge VALUES (1)");
            assertMarksAgree(connection, hotTier, oracle);
        }
    }

    @Test
    void testRedeliveryOfLowerVersionIsStoredSuperseded()
            throws SQLException
    {
        HotTier hotTier = hotTier("redelivery");
        try (Connection connection = database.connect()) {
            hotTier.createParent(connection);
            hotTier.ensurePartition(connection, AUGUST_20);
            Instant from = AUGUST_20.plus(Duration.ofHours(10));
            Row second = new Row(ReadingsGenerator.maloId(1), "1-1:1.29.0", from, 2, FIRST_RECORD);
            Row first = new Row(ReadingsGenerator.maloId(1), "1-1:1.29.0", from, 1, FIRST_RECORD.plus(Duration.ofHours(1)));
            insert(connection, hotTier.qualifiedParent(), List.of(second));
            insert(connection, hotTier.qualifiedParent(), List.of(first));
            // never a winner, at no instant: stored superseded as of its own recorded_at
            assertThat(marks(connection, hotTier)).containsExactly(
                    Map.entry(1L, OffsetDateTime.ofInstant(first.recordedAt(), ZoneOffset.UTC).toString()),
                    Map.entry(2L, "winning"));
        }
    }

    @Test
    void testDayOfIngestHoldingTwoVersionsOfAKey()
            throws SQLException
    {
        HotTier hotTier = hotTier("dense");
        try (Connection connection = database.connect()) {
            hotTier.createParent(connection);
            hotTier.ensurePartition(connection, AUGUST_20);
            // a day of two meters in one statement, as a day's MSCONS batch and its corrections arrive: the one-pass path
            Oracle oracle = new Oracle();
            List<Row> rows = day(oracle, 1, 2);
            Row correction = new Row(ReadingsGenerator.maloId(2), "1-1:1.29.0", AUGUST_20.plus(Duration.ofHours(5)), 2, FIRST_RECORD.plus(Duration.ofDays(1)));
            rows.add(correction);
            oracle.rows.add(correction);
            insert(connection, hotTier.qualifiedPartition("readings_2026_08_20_0000"), rows);
            assertMarksAgree(connection, hotTier, oracle);
            assertThat(winners(connection, hotTier, Instant.MAX)).hasSize(192).contains(correction);
        }
    }

    @Test
    void testDayOfIngestBesideOtherMetersStoredBefore()
            throws SQLException
    {
        HotTier hotTier = hotTier("beside");
        try (Connection connection = database.connect()) {
            hotTier.createParent(connection);
            hotTier.ensurePartition(connection, AUGUST_20);
            String partition = hotTier.qualifiedPartition("readings_2026_08_20_0000");
            Oracle oracle = new Oracle();
            // the day's statements of a delivery one after another, each of other meters: the day's partition already holds
            // rows in the range of each, and the one-pass test looks at the statement's keys alone
            insert(connection, partition, day(oracle, 1, 2));
            List<Row> second = day(oracle, 3, 4);
            // and one new version of a key an earlier statement stored: that key has two versions, the statement marks it
            Row correction = new Row(ReadingsGenerator.maloId(1), "1-1:1.29.0", AUGUST_20.plus(Duration.ofHours(5)), 2, FIRST_RECORD.plus(Duration.ofDays(1)));
            second.add(correction);
            oracle.rows.add(correction);
            insert(connection, partition, second);
            insert(connection, partition, day(oracle, 5, 6));
            assertMarksAgree(connection, hotTier, oracle);
            assertThat(winners(connection, hotTier, Instant.MAX)).hasSize(6 * 96).contains(correction)
                    .doesNotContain(new Row(ReadingsGenerator.maloId(1), "1-1:1.29.0", AUGUST_20.plus(Duration.ofHours(5)), 1, FIRST_RECORD));
        }
    }

    /** A day of the meters {@code first} to {@code last}, version 1, recorded in {@code oracle}. */
    private static List<Row> day(Oracle oracle, int first, int last)
    {
        List<Row> rows = new ArrayList<>();
        for (int meter = first; meter <= last; meter++) {
            for (int quarter = 0; quarter < 96; quarter++) {
                rows.add(new Row(ReadingsGenerator.maloId(meter), "1-1:1.29.0", AUGUST_20.plus(Duration.ofMinutes(15L * quarter)), 1, FIRST_RECORD));
            }
        }
        oracle.rows.addAll(rows);
        return rows;
    }

    @Test
    void testUpgradeMarksPartitionsWrittenBeforeTheMarks()
            throws Exception
    {
        HotTier hotTier = hotTier("upgrade");
        Oracle oracle = new Oracle();
        try (Connection connection = database.connect()) {
            hotTier.createParent(connection);
            hotTier.ensurePartition(connection, AUGUST_20);
            hotTier.ensurePartition(connection, AUGUST_21);
            // a table created before the marks: no column, no triggers, no comment
            try (Statement statement = connection.createStatement()) {
                for (String table : List.of("readings", "readings_2026_08_20_0000", "readings_2026_08_21_0000")) {
                    for (String operation : List.of("insert", "update", "delete")) {
                        statement.execute("DROP TRIGGER meterstore_supersession_%s ON upgrade.%s".formatted(operation, table));
                    }
                    statement.execute("COMMENT ON TABLE upgrade.%s IS NULL".formatted(table));
                }
                statement.execute("ALTER TABLE upgrade.readings DROP COLUMN superseded_at");
            }
            write(connection, hotTier, oracle, new Random(7), 40);
            assertThat(HotTierSupersession.markedPartitions(connection, "upgrade")).isEmpty();

            // create again, with a writer of new versions beside it; the marking takes a few rows a transaction
            AtomicBoolean upgraded = new AtomicBoolean();
            AtomicInteger written = new AtomicInteger();
            CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
                try (Connection writerConnection = database.connect()) {
                    Random random = new Random(11);
                    while (!upgraded.get() || written.get() < 5) {
                        write(writerConnection, hotTier, oracle, random, 1);
                        written.incrementAndGet();
                    }
                }
                catch (SQLException e) {
                    throw new RuntimeException(e);
                }
            });
            hotTier.createParent(connection);
            // the first create gave the column and the triggers; a second marks in small batches beside the writer
            try (Statement statement = connection.createStatement()) {
                statement.execute("COMMENT ON TABLE upgrade.readings_2026_08_20_0000 IS NULL");
                statement.execute("ALTER TABLE upgrade.readings_2026_08_20_0000 DISABLE TRIGGER meterstore_supersession_update");
                statement.execute("UPDATE upgrade.readings_2026_08_20_0000 SET superseded_at = NULL");
                statement.execute("ALTER TABLE upgrade.readings_2026_08_20_0000 ENABLE TRIGGER meterstore_supersession_update");
            }
            assertThat(hotTier.markPartitions(connection, 7)).containsExactly("readings_2026_08_20_0000");
            upgraded.set(true);
            writer.join();
            assertThat(HotTierSupersession.markedPartitions(connection, "upgrade")).containsExactlyInAnyOrder("readings_2026_08_20_0000", "readings_2026_08_21_0000");
            synchronized (oracle) {
                assertMarksAgree(connection, hotTier, oracle);
            }
        }
    }

    private void assertMarksAgree(Connection connection, HotTier hotTier, Oracle oracle)
            throws SQLException
    {
        Set<Instant> instants = new TreeSet<>();
        oracle.rows.forEach(row -> {
            instants.add(row.recordedAt());
            instants.add(row.recordedAt().minusNanos(1000));
        });
        instants.add(Instant.MAX);
        for (Instant instant : instants) {
            assertThat(winners(connection, hotTier, instant))
                    .as("winners as known at %s", instant)
                    .containsExactlyElementsOf(oracle.winners(instant));
        }
    }

    private static List<Row> winners(Connection connection, HotTier hotTier, Instant knownAt)
            throws SQLException
    {
        String condition = knownAt.equals(Instant.MAX) ? "superseded_at IS NULL" : "recorded_at <= ? AND (superseded_at IS NULL OR superseded_at > ?)";
        List<Row> winners = new ArrayList<>();
        try (PreparedStatement select = connection.prepareStatement("SELECT malo_id, obis_code, \"from\", version, recorded_at FROM %s WHERE %s ORDER BY malo_id, obis_code, \"from\""
                .formatted(hotTier.qualifiedParent(), condition))) {
            if (!knownAt.equals(Instant.MAX)) {
                select.setObject(1, knownAt.atOffset(ZoneOffset.UTC));
                select.setObject(2, knownAt.atOffset(ZoneOffset.UTC));
            }
            try (ResultSet result = select.executeQuery()) {
                while (result.next()) {
                    winners.add(new Row(result.getString(1), result.getString(2), result.getObject(3, OffsetDateTime.class).toInstant(), result.getLong(4),
                            result.getObject(5, OffsetDateTime.class).toInstant()));
                }
            }
        }
        return winners;
    }

    private static List<Map.Entry<Long, String>> marks(Connection connection, HotTier hotTier)
            throws SQLException
    {
        List<Map.Entry<Long, String>> marks = new ArrayList<>();
        try (Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SELECT version, superseded_at FROM %s ORDER BY version".formatted(hotTier.qualifiedParent()))) {
            while (result.next()) {
                OffsetDateTime superseded = result.getObject(2, OffsetDateTime.class);
                marks.add(Map.entry(result.getLong(1), superseded == null ? "winning" : superseded.withOffsetSameInstant(ZoneOffset.UTC).toString()));
            }
        }
        return marks;
    }

    /**
     * Writes {@code statements} statements of random versions of 3 meters' first 4 quarter-hours of two days, each by the
     * parent or by its partition's name, some holding two versions of a key, versions out of order, a lower one
     * redelivered after a higher one, recorded_at sometimes before the rows already stored.
     */
    private static void write(Connection connection, HotTier hotTier, Oracle oracle, Random random, int statements)
            throws SQLException
    {
        for (int statement = 0; statement < statements; statement++) {
            Instant day = random.nextBoolean() ? AUGUST_20 : AUGUST_21;
            List<Row> rows = new ArrayList<>();
            synchronized (oracle) {
                int count = 1 + random.nextInt(4);
                for (int index = 0; index < count; index++) {
                    String maloId = ReadingsGenerator.maloId(1 + random.nextInt(3));
                    Instant from = day.plus(Duration.ofMinutes(15L * random.nextInt(4)));
                    long version = random.nextInt(6);
                    Instant recordedAt = FIRST_RECORD.plus(Duration.ofMinutes(random.nextInt(10) < 8 ? oracle.clock.incrementAndGet() : random.nextInt(oracle.clock.get() + 1)));
                    Row row = new Row(maloId, "1-1:1.29.0", from, version, recordedAt);
                    if (oracle.rows.stream().noneMatch(stored -> stored.sameVersion(row)) && rows.stream().noneMatch(written -> written.sameVersion(row))) {
                        rows.add(row);
                    }
                }
                if (rows.isEmpty()) {
                    continue;
                }
                String table = random.nextBoolean() ? hotTier.qualifiedParent() : hotTier.qualifiedPartition(hotTier.naming().partitionName(day));
                insert(connection, table, rows);
                oracle.rows.addAll(rows);
            }
        }
    }

    private static void insert(Connection connection, String table, List<Row> rows)
            throws SQLException
    {
        String values = String.join(", ", Collections.nCopies(rows.size(), "(?, ?, 'STROM', ?, ?, 1.5, 'KWH', 'MEASURED', 'PT15M', 'MSCONS', ?, ?, ?, ?)"));
        try (PreparedStatement insert = connection.prepareStatement("INSERT INTO %s (%s) VALUES %s".formatted(table, COLUMNS, values))) {
            int parameter = 1;
            for (Row row : rows) {
                insert.setString(parameter++, row.maloId());
                insert.setString(parameter++, row.obisCode());
                insert.setObject(parameter++, row.from().atOffset(ZoneOffset.UTC));
                insert.setObject(parameter++, row.from().plus(Duration.ofMinutes(15)).atOffset(ZoneOffset.UTC));
                insert.setLong(parameter++, row.version());
                insert.setString(parameter++, Reading.versionScope(ReadingsGenerator.DEFAULT_OPERATOR_ID, Sparte.STROM, row.from()));
                insert.setObject(parameter++, row.recordedAt().atOffset(ZoneOffset.UTC));
                insert.setObject(parameter++, MeteringCalendar.balancingDay(Sparte.STROM, row.from()));
            }
            insert.executeUpdate();
        }
    }

    private static HotTier hotTier(String schema)
    {
        return new HotTier(schema, new PartitionNaming("readings", Duration.ofDays(1)), Duration.ofSeconds(10));
    }

    private record Row(String maloId, String obisCode, Instant from, long version, Instant recordedAt)
    {
        boolean sameVersion(Row other)
        {
            return maloId.equals(other.maloId) && obisCode.equals(other.obisCode) && from.equals(other.from) && version == other.version;
        }
    }

    /** Every version written; the winners as known at an instant, resolved here by the rule's plain words. */
    private static final class Oracle
    {
        private final List<Row> rows = Collections.synchronizedList(new ArrayList<>());
        private final AtomicInteger clock = new AtomicInteger();

        synchronized List<Row> winners(Instant knownAt)
        {
            Map<String, Row> winners = new HashMap<>();
            for (Row row : rows) {
                if (row.recordedAt().isAfter(knownAt)) {
                    continue;
                }
                winners.merge(row.maloId() + "|" + row.obisCode() + "|" + row.from(), row, (stored, candidate) ->
                        candidate.version() > stored.version() || (candidate.version() == stored.version() && candidate.recordedAt().isAfter(stored.recordedAt())) ? candidate : stored);
            }
            return winners.values().stream()
                    .sorted(Comparator.comparing(Row::maloId).thenComparing(Row::obisCode).thenComparing(Row::from))
                    .toList();
        }
    }
}
