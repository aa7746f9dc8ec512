package io.meterstore.trino;

import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.lease.ArchiverLease;
import io.meterstore.core.HotTier;
import io.meterstore.core.Reading;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.ReadingsOracle;
import io.meterstore.testing.ReadingsOracle.View;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.trino.testing.AbstractTestQueryFramework;
import io.trino.testing.MaterializedRow;
import io.trino.testing.QueryRunner;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;
import static io.meterstore.trino.TestingInserts.correction;
import static io.meterstore.trino.TestingInserts.insert;
import static io.meterstore.trino.TestingInserts.keyPredicate;
import static io.meterstore.trino.TestingInserts.timestamp;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real crash between the tiers: the Trino engine running a DELETE (or an INSERT) is a process of its own, killed with
 * SIGKILL after the statement's Iceberg commit and before its PostgreSQL commit. A fresh engine over the same database
 * and warehouse sees the cold part done and the hot part not, a state only the rerun changes (what a reader sees meanwhile
 * is asserted, and a redelivery into the range is accepted), finds the killed engine's locks gone with its session, and a
 * rerun of the statement completes it: the erasure with one audit row counting both runs, the INSERT with each row once;
 * the archiver goes on archiving.
 */
final class TestMeterstoreCrashBetweenTiers
        extends AbstractTestQueryFramework
{
    private static final Duration TIMEOUT = Duration.ofMinutes(2);
    // a thread of its own for each statement or step that blocks: the common pool has one thread on a two-core machine
    private static final Executor OWN_THREAD = task -> Thread.ofPlatform().daemon().start(task);
    private static final String KEY = TestMeterstoreErasure.HMAC_KEY;

    private TestingWarehouse warehouse;
    private Table table;
    private final List<Reading> delivered = new ArrayList<>();

    @TempDir
    Path directory;

    @Override
    protected QueryRunner createQueryRunner()
            throws Exception
    {
        warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("erasure_crash"));
        table = TestingMeterstoreTables.createTables(warehouse);
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(1616)
                .meters(3)
                .startDay(LocalDate.of(2026, 2, 10))
                .days(5)
                .correctionsFraction(0.03)
                .build();
        generator.forEach(delivered::add);
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, generator);
        }
        TestingArchival.archiveWindows(warehouse, 2);
        return MeterstoreQueryRunner.builder(warehouse)
                .withCatalogOverrides(Map.of("meterstore.erasure.hmac-key", KEY))
                .build();
    }

    @Test
    void testDeleteKilledBetweenTheTiersIsCompletedByARerun()
            throws Exception
    {
        TieringWatermark watermark = watermark();
        String malo = ReadingsGenerator.maloId(1);
        Instant lower = watermark.instant().minus(Duration.ofDays(1));
        Instant upper = watermark.instant().plus(Duration.ofDays(1));
        String erased = "malo_id = '%s' AND \"from\" >= %s AND \"from\" < %s".formatted(malo, timestamp(lower), timestamp(upper));
        String hotPart = erased + " AND \"from\" >= " + timestamp(watermark.instant());
        String coldPart = erased + " AND \"from\" < " + timestamp(watermark.instant());
        long hot = count("readings_versions WHERE " + hotPart);
        long cold = count("readings_versions WHERE " + coldPart);
        assertThat(hot).isPositive();
        assertThat(cold).isPositive();
        long snapshotBefore = table.currentSnapshot().snapshotId();
        String delete = "DELETE FROM readings_versions WHERE " + erased;

        long crashedSnapshot;
        try (TestingEngineProcess engine = TestingEngineProcess.start("erasure", warehouse, Map.of("meterstore.erasure.hmac-key", KEY),
                Map.of("meterstore.failpoint", "delete-between-tiers", "meterstore.failpoint.block", "true"), directory)) {
            CompletableFuture<Long> killed = executeAsync(engine, delete);
            engine.awaitLine("FAILPOINT delete-between-tiers", TIMEOUT);
            // today's ingestion goes on beside it: another meter's rows two days above W (the DELETE holds the boundary
            // lock only for its hot rows and audit row, which it has not reached). Under the erasure's old exclusive
            // fence this INSERT waited for the DELETE, here until the timeout
            Reading today = correction(2, watermark.instant().plus(Duration.ofDays(2)).plus(Duration.ofHours(3)), 9, "3.250");
            CompletableFuture<Long> ingest = CompletableFuture.supplyAsync(() -> getQueryRunner().execute(insert(today)).getUpdateCount().orElseThrow(), OWN_THREAD);
            assertThat(ingest.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)).isEqualTo(1L);
            delivered.add(today);
            assertThat(count("readings_versions WHERE " + keyPredicate(today))).isEqualTo(1);
            // stopped after its Iceberg commit with its PostgreSQL transaction open, it holds the archiver's lease in
            // shared mode (no cycle runs), not exclusively as an archiver does
            try (Connection connection = warehouse.database().connect()) {
                assertThat(leaseModes(connection)).containsExactly("ShareLock");
                assertThat(ArchiverLease.holder(connection, SCHEMA, TestingMeterstoreTables.TABLE)).isEmpty();
            }
            table.refresh();
            crashedSnapshot = table.currentSnapshot().snapshotId();
            assertThat(crashedSnapshot).isNotEqualTo(snapshotBefore);
            assertInBetween(erased, hotPart, coldPart, hot, cold, snapshotBefore);

            engine.kill();
            // its client keeps retrying against the dead coordinator for a while; all that matters is it never saw success
            assertThat(killed.isDone() && !killed.isCompletedExceptionally()).as("the killed DELETE reported success").isFalse();
            killed.cancel(true);
        }

        // the fence and the cold-write lock were transaction locks of the killed engine's session: PostgreSQL ends
        // that session when its socket closes, and with it every lock it held
        awaitNoAdvisoryLocks();
        // what the crash left: the same in-between state, which nothing but the rerun changes
        assertInBetween(erased, hotPart, coldPart, hot, cold, snapshotBefore);

        // no audit row refuses a redelivery yet: one of the erased cold versions comes back, below W
        Reading redelivered = delivered.stream()
                .filter(reading -> reading.maloId().equals(malo) && !reading.from().isBefore(lower) && reading.from().isBefore(watermark.instant()))
                .findFirst()
                .orElseThrow();
        assertUpdate(insert(redelivered), 1);
        assertThat(count("readings_versions WHERE " + coldPart)).isEqualTo(1);

        // the rerun erases the hot rows and the redelivered one; its audit row, the only one, takes them, the killed
        // run's cold rows too, and names the rerun's commit, so a read AS OF any snapshot before it hides the range
        assertUpdate(delete, hot + 1);
        table.refresh();
        long rerunSnapshot = table.currentSnapshot().snapshotId();
        assertThat(rerunSnapshot).isNotEqualTo(crashedSnapshot);
        assertThat(computeActual("SELECT rows_removed_hot, rows_removed_cold, snapshot_id FROM \"readings$erasures\"").getMaterializedRows())
                .extracting(MaterializedRow::getFields)
                .containsExactly(List.of(hot, cold + 1, rerunSnapshot));
        assertThat(count("readings_versions FOR VERSION AS OF %s WHERE %s".formatted(rerunSnapshot, erased))).isZero();
        assertThat(count("readings_versions FOR VERSION AS OF %s WHERE %s".formatted(table.snapshot(rerunSnapshot).parentId(), erased))).isZero();
        Predicate<Reading> kept = reading -> !(reading.maloId().equals(malo) && !reading.from().isBefore(lower) && reading.from().isBefore(upper));
        assertErased(erased, snapshotBefore, kept);
        // idempotent: a third run removes nothing
        assertUpdate(delete, 0);

        // the archiver is not locked out: it archives the next window, and the answers stay
        ArchiveOutcome outcome = TestingArchival.cycle(warehouse, InstantSource.fixed(TestingArchival.LATER)).archiveOnce();
        assertThat(outcome.kind()).as(outcome.describe()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);
        assertThat(outcome.watermark().instant()).isAfter(watermark.instant());
        assertErased(erased, snapshotBefore, kept);
    }

    @Test
    void testInsertKilledBetweenTheTiersIsCompletedByARerun()
            throws Exception
    {
        TieringWatermark watermark = watermark();
        // one correction of meter 2 below W (Iceberg) and one at or above it (PostgreSQL)
        Reading cold = correction(2, watermark.instant().minus(Duration.ofHours(3)), 2_000_000, "4.5");
        Reading hot = correction(2, watermark.instant().plus(Duration.ofHours(3)), 2_000_000, "5.5");
        String insert = insert(cold, hot);

        try (TestingEngineProcess engine = TestingEngineProcess.start("insert", warehouse, Map.of("meterstore.erasure.hmac-key", KEY),
                Map.of("meterstore.failpoint", "insert-between-tiers", "meterstore.failpoint.block", "true"), directory)) {
            CompletableFuture<Long> killed = executeAsync(engine, insert);
            engine.awaitLine("FAILPOINT insert-between-tiers", TIMEOUT);
            // Iceberg first: the cold row is committed, the hot row is in a transaction that never commits
            assertThat(count("readings_versions WHERE " + keyPredicate(cold))).isEqualTo(1);
            assertThat(count("readings_versions WHERE " + keyPredicate(hot))).isZero();
            engine.kill();
            assertThat(killed.isDone() && !killed.isCompletedExceptionally()).as("the killed INSERT reported success").isFalse();
            killed.cancel(true);
        }
        awaitNoAdvisoryLocks();
        assertThat(count("readings_versions WHERE " + keyPredicate(cold))).isEqualTo(1);
        assertThat(count("readings_versions WHERE " + keyPredicate(hot))).isZero();
        // the killed statement's staging table outlives it, as documented: it holds nothing a reader sees
        assertThat(stagingTables()).hasSize(1);

        // the rerun writes the hot row and finds the cold one stored: each exactly once
        assertUpdate(insert, 2);
        assertThat(count("readings_versions WHERE " + keyPredicate(cold))).isEqualTo(1);
        assertThat(count("readings_versions WHERE " + keyPredicate(hot))).isEqualTo(1);
        delivered.add(cold);
        delivered.add(hot);
        ReadingsOracle oracle = ReadingsOracle.of(delivered);
        String meter = " WHERE malo_id = '%s'".formatted(hot.maloId());
        assertThat(TestingTotals.totalsByMeterDay(getQueryRunner(), "readings_versions" + meter)).isEqualTo(oracle.totalsByMeterDay(View.VERSIONS, ReadingsOracle.maloId(hot.maloId())));
        assertThat(TestingTotals.totalsByMeterDay(getQueryRunner(), "readings" + meter)).isEqualTo(oracle.totalsByMeterDay(View.RESOLVED, ReadingsOracle.maloId(hot.maloId())));

        // the archiver is not locked out
        ArchiveOutcome outcome = TestingArchival.cycle(warehouse, InstantSource.fixed(TestingArchival.LATER)).archiveOnce();
        assertThat(outcome.kind()).as(outcome.describe()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);
        assertThat(count("readings_versions WHERE " + keyPredicate(hot))).isEqualTo(1);
    }

    private static CompletableFuture<Long> executeAsync(TestingEngineProcess engine, String sql)
    {
        return CompletableFuture.supplyAsync(() -> {
            try (Connection connection = DriverManager.getConnection(engine.jdbcUrl(), "crashing", null);
                    Statement statement = connection.createStatement()) {
                return statement.executeLargeUpdate(sql);
            }
            catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, OWN_THREAD);
    }

    private List<String> stagingTables()
            throws Exception
    {
        List<String> tables = new ArrayList<>();
        try (Connection connection = warehouse.database().connect();
                Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SELECT relname FROM pg_class WHERE relname LIKE 'meterstore\\_insert\\_%'")) {
            while (result.next()) {
                tables.add(result.getString(1));
            }
        }
        return tables;
    }

    /** The cold part is erased and the hot part not; nothing is audited yet, so a read of an older snapshot still shows the cold part. */
    private void assertInBetween(String erased, String hotPart, String coldPart, long hot, long cold, long snapshotBefore)
    {
        assertThat(count("readings_versions WHERE " + hotPart)).isEqualTo(hot);
        assertThat(count("readings_versions WHERE " + coldPart)).isZero();
        assertThat(count("readings_versions WHERE " + erased)).isEqualTo(hot);
        assertThat(count("iceberg.metering.readings WHERE " + erased)).isZero();
        assertThat(count("\"readings$erasures\"")).isZero();
        assertThat(count("readings_versions FOR VERSION AS OF %s WHERE %s".formatted(snapshotBefore, coldPart))).isEqualTo(cold);
    }

    /** The range is gone from both tiers, both tables and AS OF; every other row equals the oracle. */
    private void assertErased(String erased, long snapshotBefore, Predicate<Reading> kept)
    {
        assertThat(count("readings_versions WHERE " + erased)).isZero();
        assertThat(count("readings WHERE " + erased)).isZero();
        assertThat(count("iceberg.metering.readings WHERE " + erased)).isZero();
        assertThat(count("readings_versions FOR VERSION AS OF %s WHERE %s".formatted(snapshotBefore, erased))).isZero();
        assertThat(count("readings FOR TIMESTAMP AS OF %s WHERE %s".formatted(timestamp(Instant.now().minusSeconds(1)), erased))).isZero();
        ReadingsOracle oracle = ReadingsOracle.of(delivered);
        assertThat(TestingTotals.totalsByMeterDay(getQueryRunner(), "readings_versions")).isEqualTo(oracle.totalsByMeterDay(View.VERSIONS, kept));
        assertThat(TestingTotals.totalsByMeterDay(getQueryRunner(), "readings")).isEqualTo(oracle.totalsByMeterDay(View.RESOLVED, kept));
    }

    /** The modes in which sessions hold the table's lease now. */
    private static List<String> leaseModes(Connection connection)
            throws Exception
    {
        String lease = HotTier.archiverLeaseName(SCHEMA, TestingMeterstoreTables.TABLE);
        try (PreparedStatement statement = connection.prepareStatement("""
                SELECT mode FROM pg_locks
                WHERE locktype = 'advisory' AND granted
                AND classid = ((hashtextextended(?, 0) >> 32) & 4294967295)::oid AND objid = (hashtextextended(?, 0) & 4294967295)::oid""")) {
            statement.setString(1, lease);
            statement.setString(2, lease);
            List<String> modes = new ArrayList<>();
            try (ResultSet result = statement.executeQuery()) {
                while (result.next()) {
                    modes.add(result.getString(1));
                }
            }
            return modes;
        }
    }

    private void awaitNoAdvisoryLocks()
            throws Exception
    {
        Instant deadline = Instant.now().plus(TIMEOUT);
        try (Connection connection = warehouse.database().connect();
                Statement statement = connection.createStatement()) {
            while (true) {
                try (ResultSet result = statement.executeQuery("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())")) {
                    result.next();
                    if (result.getLong(1) == 0) {
                        return;
                    }
                }
                assertThat(Instant.now()).as("the killed engine's advisory locks are released").isBefore(deadline);
                Thread.sleep(50);
            }
        }
    }

    private TieringWatermark watermark()
    {
        table.refresh();
        return WatermarkReader.current(table).watermark();
    }

    private long count(String from)
    {
        return (long) computeActual("SELECT count(*) FROM " + from).getOnlyValue();
    }
}
