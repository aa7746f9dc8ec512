package io.meterstore.archiver.maintenance;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import com.google.common.collect.ImmutableSortedSet;
import com.google.inject.Injector;
import io.airlift.bootstrap.LifeCycleManager;
import io.meterstore.archiver.ArchiverMain;
import io.meterstore.archiver.ArchiverModule;
import io.meterstore.archiver.cycle.ArchivalException;
import io.meterstore.archiver.cycle.Failpoints.Failpoint;
import io.meterstore.archiver.cycle.ParquetReadings;
import io.meterstore.archiver.cycle.TestingArchiverProcess;
import io.meterstore.archiver.cycle.TestingArchiverTable;
import io.meterstore.archiver.cycle.TieringAudit;
import io.meterstore.core.ArchivalHistory;
import io.meterstore.core.ArchivalHistory.ArchivalCommit;
import io.meterstore.core.ErasedSnapshots;
import io.meterstore.core.ErasureKey;
import io.meterstore.core.ErasureLog;
import io.meterstore.core.ErasureLog.Erasure;
import io.meterstore.core.ErasureLog.NewErasure;
import io.meterstore.core.ErasureLog.Trigger;
import io.meterstore.core.ErasureScope;
import io.meterstore.core.LocalFileIo;
import io.meterstore.core.Reading;
import io.meterstore.core.TierSplit;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.core.WatermarkRepublished;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.BooleanSupplier;

import static io.meterstore.archiver.cycle.TestingArchiverTable.SCHEMA;
import static io.meterstore.archiver.cycle.TestingArchiverTable.TABLE;
import static io.meterstore.archiver.maintenance.TestingMaintenance.READER_GRACE;
import static io.meterstore.archiver.maintenance.TestingMaintenance.afterNewestCommit;
import static io.meterstore.archiver.maintenance.TestingMaintenance.snapshotIds;
import static io.meterstore.core.SnapshotRetention.DEFAULT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * An erasure made physical on a real archived table: after the reader grace every snapshot still referencing a file the
 * erasure's commit removed is expired (the snapshot retention would keep them all for ten years), the files are gone
 * from storage, a plain Parquet reader over every file left finds no erased row, and the log records the completion.
 */
final class TestErasureCompletion
{
    static final ErasureKey KEY = ErasureKey.of("0123456789abcdef0123456789abcdef");

    @TempDir
    Path directory;

    @Test
    void testExpiresTheSnapshotsHoldingErasedRowsAndDeletesTheirFiles()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("erasure_completion")) {
            TestingMaintenance.archive(tables, 3, true);
            Table table = tables.table();
            // oldest first
            List<ArchivalCommit> archival = ArchivalHistory.archivalCommits(table).reversed();
            // the erased range: the second archived UTC day, every meter in it; what the DELETE removes whole
            ArchivalCommit day = archival.get(1);
            List<Long> before = snapshotIds(table);
            Erasure erasure = erase(tables, day);
            table.refresh();
            TieringWatermark watermark = WatermarkReader.current(table).watermark();
            Set<Path> erasedFiles = filesOf(table, day.snapshotId());
            assertThat(erasedFiles).isNotEmpty().allMatch(Files::exists);
            assertThat(readAll(tables)).anyMatch(reading -> inDay(reading, day));

            MaintenanceSettings settings = new MaintenanceSettings(DEFAULT, Duration.ofDays(3), READER_GRACE);
            TableMaintenance early = new TableMaintenance(tables.catalog(), TestingArchiverTable.identifier(), tables.hotTier(), tables::connect, settings, () -> afterNewestCommit(table, READER_GRACE.dividedBy(2)));
            // within the reader grace a query may still read the snapshot the erasure replaced: nothing happens yet
            MaintenanceOutcome waiting = early.expire();
            assertThat(early.erasureDue()).isFalse();
            assertThat(waiting.erasures().orElseThrow().erasures()).isEmpty();
            assertThat(waiting.erasures().orElseThrow().awaiting()).extracting(ErasureCompletion.Awaiting::erasureId).containsExactly(erasure.erasureId());
            assertThat(erasedFiles).allMatch(Files::exists);

            Instant now = afterNewestCommit(table, READER_GRACE.multipliedBy(2));
            TableMaintenance maintenance = new TableMaintenance(tables.catalog(), TestingArchiverTable.identifier(), tables.hotTier(), tables::connect, settings, () -> now);
            // the schedule runs 'expire' now, whenever it last ran
            assertThat(maintenance.erasureDue()).isTrue();
            MaintenanceOutcome outcome = maintenance.expire();
            assertThat(maintenance.erasureDue()).isFalse();
            ErasureCompletion.Completed completed = outcome.erasures().orElseThrow();
            assertThat(completed.erasures()).containsExactly(erasure.erasureId());
            assertThat(completed.awaiting()).isEmpty();
            // the day's commit and every later archival commit before the erasure listed its files; the first day's did not
            table.refresh();
            List<Long> expired = before.stream().filter(id -> table.snapshot(id) == null).toList();
            assertThat(expired).hasSize(archival.size() - 1).contains(day.snapshotId()).doesNotContain(archival.getFirst().snapshotId());
            assertThat(completed.snapshots()).isEqualTo(expired.size());
            assertThat(snapshotIds(table)).hasSize(2).contains(archival.getFirst().snapshotId(), erasure.recorded().snapshotId().orElseThrow());
            assertThat(erasedFiles).noneMatch(Files::exists);
            assertThat(readAll(tables)).noneMatch(reading -> inDay(reading, day));
            TieringAudit.assertNoLiveFileLost(tables);
            assertThat(WatermarkReader.current(table).watermark()).isEqualTo(watermark);
            try (Connection connection = tables.connect()) {
                assertThat(ErasureLog.erasures(connection, SCHEMA, TABLE)).singleElement()
                        .satisfies(row -> assertThat(row.physicallyCompletedAt()).contains(now));
                // FOR VERSION AS OF an expired snapshot names the erasure
                assertThat(ErasedSnapshots.erasureOf(connection, SCHEMA, TABLE, day.snapshotId())).contains(erasure.erasureId());
                assertThat(ErasedSnapshots.erasureOf(connection, SCHEMA, TABLE, archival.getFirst().snapshotId())).isEmpty();
            }

            // a rerun finds nothing to do
            MaintenanceOutcome again = maintenance.expire();
            assertThat(again.erasures().orElseThrow().erasures()).isEmpty();
            assertThat(snapshotIds(tables.table())).hasSize(2);
        }
    }

    @Test
    void testATagOnASnapshotHoldingErasedRowsBlocksItsCompletion()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("erasure_tagged")) {
            TestingMaintenance.archive(tables, 2, true);
            Table table = tables.table();
            ArchivalCommit day = ArchivalHistory.archivalCommits(table).reversed().get(1);
            table.manageSnapshots().createTag("audit-2024", day.snapshotId()).commit();
            Erasure erasure = erase(tables, day);
            table.refresh();
            List<Long> snapshots = snapshotIds(table);
            Instant now = afterNewestCommit(table, READER_GRACE.multipliedBy(2));
            TableMaintenance maintenance = new TableMaintenance(tables.catalog(), TestingArchiverTable.identifier(), tables.hotTier(), tables::connect,
                    new MaintenanceSettings(DEFAULT, Duration.ofDays(3), READER_GRACE), () -> now);

            // the tag would keep the erased rows readable: the command fails, saying what to do, and changes nothing
            assertThatThrownBy(maintenance::expire)
                    .isInstanceOf(ArchivalException.class)
                    .hasMessage("Tag 'audit-2024' of table '%s' names snapshot %s, which holds rows erasure %s removed: drop it (ALTER TABLE ... EXECUTE or Iceberg's manageSnapshots) so the erasure can expire it"
                            .formatted(table.name(), day.snapshotId(), erasure.erasureId()));
            table.refresh();
            assertThat(snapshotIds(table)).isEqualTo(snapshots);
            assertThat(readAll(tables)).anyMatch(reading -> inDay(reading, day));
            try (Connection connection = tables.connect()) {
                assertThat(ErasureLog.erasures(connection, SCHEMA, TABLE)).singleElement().satisfies(row -> assertThat(row.physicallyCompletedAt()).isEmpty());
                assertThat(ErasedSnapshots.erasureOf(connection, SCHEMA, TABLE, day.snapshotId())).isEmpty();
            }

            // without the tag it completes
            table.manageSnapshots().removeTag("audit-2024").commit();
            assertThat(maintenance.expire().erasures().orElseThrow().erasures()).containsExactly(erasure.erasureId());
            assertThat(readAll(tables)).noneMatch(reading -> inDay(reading, day));
        }
    }

    @Test
    void testCrashAfterTheExpiryThenTheNextRunCompletes()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("erasure_crash")) {
            TestingMaintenance.archive(tables, 2, true);
            Table table = tables.table();
            ArchivalCommit day = ArchivalHistory.archivalCommits(table).reversed().get(1);
            Erasure erasure = erase(tables, day);
            table.refresh();
            Set<Path> erasedFiles = filesOf(table, day.snapshotId());
            Instant now = afterNewestCommit(table, READER_GRACE.multipliedBy(2));
            MaintenanceSettings settings = new MaintenanceSettings(DEFAULT, Duration.ofDays(3), READER_GRACE);

            try (TestingArchiverProcess archiver = TestingArchiverProcess.startMaintenance("erasure_crash", tables, directory, now, MaintenanceCommand.EXPIRE, settings, Optional.of(Failpoint.ERASURE_AFTER_EXPIRY))) {
                archiver.awaitLine("FAILPOINT " + Failpoint.ERASURE_AFTER_EXPIRY.pointName(), Duration.ofSeconds(120));
                archiver.kill();
            }
            // the snapshots holding the erased rows are expired, their files still there, the erasure not recorded complete
            table.refresh();
            assertThat(table.snapshot(day.snapshotId())).isNull();
            assertThat(erasedFiles).allMatch(Files::exists);
            try (Connection connection = tables.connect()) {
                assertThat(ErasureLog.erasures(connection, SCHEMA, TABLE)).singleElement().satisfies(row -> assertThat(row.physicallyCompletedAt()).isEmpty());
            }

            // the ordinary path: the next expire deletes what is left and records the completion, without waiting for the orphan safety age
            TableMaintenance maintenance = new TableMaintenance(tables.catalog(), TestingArchiverTable.identifier(), tables.hotTier(), tables::connect, settings, () -> now);
            Instant deadline = Instant.now().plus(Duration.ofSeconds(120));
            MaintenanceOutcome outcome = maintenance.expire();
            while (outcome.leaseContended()) {
                // the killed archiver's lease ends with its session, once PostgreSQL has noticed
                assertThat(Instant.now()).as("lease released in time").isBefore(deadline);
                Thread.sleep(20);
                outcome = maintenance.expire();
            }
            assertThat(outcome.erasures().orElseThrow().erasures()).containsExactly(erasure.erasureId());
            assertThat(erasedFiles).noneMatch(Files::exists);
            assertThat(readAll(tables)).noneMatch(reading -> inDay(reading, day));
            TieringAudit.assertNoLiveFileLost(tables);
            try (Connection connection = tables.connect()) {
                assertThat(ErasureLog.erasures(connection, SCHEMA, TABLE)).singleElement().satisfies(row -> assertThat(row.physicallyCompletedAt()).contains(now));
                assertThat(ErasedSnapshots.erasureOf(connection, SCHEMA, TABLE, day.snapshotId())).contains(erasure.erasureId());
            }
        }
    }

    @Test
    void testTheScheduleRunsExpireAsSoonAsAnErasureIsDue()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("erasure_schedule")) {
            TestingMaintenance.archive(tables, 2, true);
            Table table = tables.table();
            ArchivalCommit day = ArchivalHistory.archivalCommits(table).reversed().get(1);
            Erasure erasure = erase(tables, day);
            table.refresh();
            Instant erasedAt = Instant.ofEpochMilli(table.currentSnapshot().timestampMillis());
            // the service's first maintenance runs within the erasure's reader grace: 'expire' runs and leaves it awaiting
            tables.clock().set(erasedAt.plus(READER_GRACE.dividedBy(2)));
            Injector injector = ArchiverMain.bootstrap(Optional.of(ImmutableMap.<String, String>builder()
                            .put("node.environment", "test")
                            .put("http-server.http.port", "0")
                            .put("meterstore.postgresql.url", tables.database().jdbcUrl())
                            .put("meterstore.postgresql.user", tables.database().user())
                            .put("meterstore.iceberg.warehouse", tables.warehouse().location())
                            .put("meterstore.schedule-interval", "1s")
                            .put("meterstore.maintenance-interval", "1d")
                            .put("meterstore.reader-grace", "%sm".formatted(READER_GRACE.toMinutes()))
                            .buildOrThrow()), new ArchiverModule(tables.clock(), () -> {}))
                    .doNotInitializeLogging()
                    .initialize();
            try {
                Instant firstRun = tables.clock().instant();
                await(() -> MaintenanceCommand.EXPIRE.lastRun(tables.table()).equals(Optional.of(firstRun)) && MaintenanceCommand.COMPACT.lastRun(tables.table()).isPresent());
                assertThat(completedAt(tables)).isEmpty();

                // past the grace, a day before the maintenance interval would run 'expire' again: the erasure does not wait for it
                Instant due = erasedAt.plus(READER_GRACE.multipliedBy(2));
                tables.clock().set(due);
                await(() -> completedAt(tables).isPresent());
                assertThat(completedAt(tables)).contains(due);
                assertThat(readAll(tables)).noneMatch(reading -> inDay(reading, day));
                try (Connection connection = tables.connect()) {
                    assertThat(ErasedSnapshots.erasureOf(connection, SCHEMA, TABLE, day.snapshotId())).contains(erasure.erasureId());
                }
            }
            finally {
                injector.getInstance(LifeCycleManager.class).stop();
            }
        }
    }

    private static Optional<Instant> completedAt(TestingArchiverTable tables)
    {
        try (Connection connection = tables.connect()) {
            return ErasureLog.erasures(connection, SCHEMA, TABLE).getFirst().physicallyCompletedAt();
        }
        catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static void await(BooleanSupplier condition)
            throws InterruptedException
    {
        // polls for a state the service reaches on its own; the bound only keeps a broken schedule from hanging the build
        for (int attempt = 0; attempt < 3_000 && !condition.getAsBoolean(); attempt++) {
            Thread.sleep(20);
        }
        assertThat(condition.getAsBoolean()).as("the service reached the awaited state").isTrue();
    }

    /**
     * Erases every reading of the UTC day {@code day} archived, as the DELETE commits it: one row delta removing the files
     * that held them (they hold nothing else), republishing W, then the audit row naming that commit.
     */
    static Erasure erase(TestingArchiverTable tables, ArchivalCommit day)
            throws Exception
    {
        Table table = tables.table();
        List<DataFile> files = ImmutableList.copyOf(table.snapshot(day.snapshotId()).addedDataFiles(table.io()));
        ImmutableSortedSet.Builder<String> maloIds = ImmutableSortedSet.naturalOrder();
        for (DataFile file : files) {
            ParquetReadings.read(file.location()).forEach(reading -> maloIds.add(reading.maloId()));
        }
        long rows = files.stream().mapToLong(DataFile::recordCount).sum();
        TieringWatermark watermark = WatermarkReader.current(table).watermark();
        RowDelta delta = table.newRowDelta();
        files.forEach(delta::removeRows);
        delta.set(TieringWatermark.WATERMARK_KEY, watermark.toProperty())
                .set(TieringWatermark.ROW_COUNT_KEY, String.valueOf(-rows))
                .set("meterstore.erased_rows", String.valueOf(rows))
                .validateWith(new WatermarkRepublished(watermark));
        delta.commit();
        table.refresh();
        Snapshot commit = table.currentSnapshot();
        try (Connection connection = tables.connect()) {
            ErasureLog.create(connection, SCHEMA);
            return ErasureLog.record(connection, SCHEMA, new NewErasure(TABLE, Trigger.REQUEST, "alice", Instant.ofEpochMilli(commit.timestampMillis()), Optional.of(KEY.fingerprint()),
                    new ErasureScope(Optional.of(maloIds.build().stream().map(KEY::scope).collect(ImmutableSortedSet.toImmutableSortedSet(String::compareTo))), Optional.empty(),
                            new TierSplit.Range(Optional.of(day.from()), Optional.of(day.to()))),
                    0, rows, Optional.of(commit.snapshotId())));
        }
    }

    private static Set<Path> filesOf(Table table, long snapshotId)
    {
        ImmutableSortedSet.Builder<Path> files = ImmutableSortedSet.naturalOrder();
        table.snapshot(snapshotId).addedDataFiles(table.io()).forEach(file -> files.add(LocalFileIo.path(file.location())));
        return files.build();
    }

    /** Every reading in every Parquet file in the warehouse, read with a plain Parquet reader, whatever references it. */
    static List<Reading> readAll(TestingArchiverTable tables)
            throws IOException
    {
        ImmutableList.Builder<Reading> readings = ImmutableList.builder();
        for (Path file : TieringAudit.parquetFilesOnDisk(tables)) {
            readings.addAll(ParquetReadings.read(file.toString()));
        }
        return readings.build();
    }

    private static boolean inDay(Reading reading, ArchivalCommit day)
    {
        return !reading.from().isBefore(day.from()) && reading.from().isBefore(day.to());
    }
}
