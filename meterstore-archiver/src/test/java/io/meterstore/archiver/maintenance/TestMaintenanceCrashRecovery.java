package io.meterstore.archiver.maintenance;

import com.google.common.collect.Sets;
import io.meterstore.archiver.cycle.Failpoints.Failpoint;
import io.meterstore.archiver.cycle.TestingArchiverProcess;
import io.meterstore.archiver.cycle.TestingArchiverTable;
import io.meterstore.archiver.cycle.TieringAudit;
import io.meterstore.core.LocalFileIo;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsOracle;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

import static io.meterstore.archiver.maintenance.TestingMaintenance.READER_GRACE;
import static io.meterstore.archiver.maintenance.TestingMaintenance.afterNewestCommit;
import static io.meterstore.archiver.maintenance.TestingMaintenance.settings;
import static io.meterstore.archiver.maintenance.TestingMaintenance.snapshotIds;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A crash at each step of expiry and of orphan removal: an archiver process runs {@code expire}, stops at a failpoint
 * and is killed with SIGKILL. Right after the kill and after the next {@code expire}, every row is where the oracle
 * says, W is unchanged, no file a kept snapshot needs is gone, and in the end nothing unreferenced is left.
 */
final class TestMaintenanceCrashRecovery
{
    private static final Duration TIMEOUT = Duration.ofSeconds(120);

    @TempDir
    Path directory;

    @Test
    void testCrashAfterExpiryCommitted()
            throws Exception
    {
        crashExpiryAndRecover(Failpoint.EXPIRY_AFTER_COMMIT);
    }

    @Test
    void testCrashWhileExpiryDeletes()
            throws Exception
    {
        crashExpiryAndRecover(Failpoint.EXPIRY_MID_DELETE);
    }

    @Test
    void testCrashWhileOrphansAreRemoved()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("crash_orphans")) {
            ReadingsOracle oracle = TestingMaintenance.archive(tables, 2, true);
            TieringWatermark watermark = WatermarkReader.current(tables.table()).watermark();
            Path data = dataDirectory(tables);
            List<Path> strays = List.of(stray(data), stray(data), stray(data));
            Instant now = Instant.now();
            for (Path file : TieringAudit.filesOnDisk(tables)) {
                Files.setLastModifiedTime(file, FileTime.from(now.minus(Duration.ofDays(1))));
            }
            MaintenanceSettings settings = settings(Duration.ofDays(3653), 20, Duration.ofHours(1));

            try (TestingArchiverProcess archiver = TestingArchiverProcess.startMaintenance("orphans", tables, directory, now, MaintenanceCommand.EXPIRE, settings, Optional.of(Failpoint.ORPHANS_MID_DELETE))) {
                archiver.awaitLine("FAILPOINT " + Failpoint.ORPHANS_MID_DELETE.pointName(), TIMEOUT);
                archiver.kill();
            }
            // one orphan went before the kill, the others are still there; nothing live was touched
            assertThat(strays.stream().filter(Files::exists)).hasSize(2);
            assertThat(TieringAudit.assertConsistent(tables, oracle)).isEqualTo(watermark);
            TieringAudit.assertNoLiveFileLost(tables);

            recover(tables, now, settings);
            assertThat(strays).noneMatch(Files::exists);
            assertThat(TieringAudit.assertConsistent(tables, oracle)).isEqualTo(watermark);
        }
    }

    private void crashExpiryAndRecover(Failpoint failpoint)
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("crash_" + failpoint.pointName().replace('-', '_'))) {
            ReadingsOracle oracle = TestingMaintenance.archive(tables, 2, true);
            Table table = tables.table();
            // manifests rewritten and a data file rewritten (as compaction does): expiry then deletes manifest lists,
            // manifests and a data file that only the older snapshots read
            new ManifestRewrite().rewrite(table).orElseThrow();
            replaceOneDataFile(table);
            TieringWatermark watermark = WatermarkReader.current(table).watermark();
            long current = table.currentSnapshot().snapshotId();
            Set<Path> unreferencedBefore = Sets.difference(TieringAudit.filesOnDisk(tables), TieringAudit.liveFiles(tables)).immutableCopy();
            Instant now = afterNewestCommit(table, READER_GRACE.multipliedBy(2));
            MaintenanceSettings settings = settings(Duration.ZERO, 1, Duration.ofDays(3));

            try (TestingArchiverProcess archiver = TestingArchiverProcess.startMaintenance(failpoint.pointName(), tables, directory, now, MaintenanceCommand.EXPIRE, settings, Optional.of(failpoint))) {
                archiver.awaitLine("FAILPOINT " + failpoint.pointName(), TIMEOUT);
                archiver.kill();
            }

            // the expiry is committed: only the newest snapshot is left, reading every row with the same W
            table.refresh();
            assertThat(snapshotIds(table)).containsExactly(current);
            assertThat(TieringAudit.assertConsistent(tables, oracle)).isEqualTo(watermark);
            TieringAudit.assertNoLiveFileLost(tables);
            // what the killed run had still to delete is left unreferenced
            Set<Path> left = Sets.difference(TieringAudit.filesOnDisk(tables), TieringAudit.liveFiles(tables));
            assertThat(Sets.difference(left, unreferencedBefore)).isNotEmpty();

            // the next expire finds nothing more to expire; its orphan removal takes what was left once it is old enough
            recover(tables, now.plus(Duration.ofDays(4)), settings);
            assertThat(snapshotIds(tables.table())).containsExactly(current);
            assertThat(TieringAudit.assertConsistent(tables, oracle)).isEqualTo(watermark);
        }
    }

    /** The ordinary path after any crash: {@code expire} again; afterwards no file is left that the table does not reference. */
    private static void recover(TestingArchiverTable tables, Instant now, MaintenanceSettings settings)
            throws Exception
    {
        for (Path file : Sets.difference(TieringAudit.filesOnDisk(tables), TieringAudit.liveFiles(tables))) {
            // as old as the safety age, as they will be one day
            Files.setLastModifiedTime(file, FileTime.from(now.minus(settings.orphanSafetyAge()).minusSeconds(60)));
        }
        TableMaintenance maintenance = new TableMaintenance(tables.catalog(), TestingArchiverTable.identifier(), tables.hotTier(), tables::connect, settings, () -> now);
        Instant deadline = Instant.now().plus(TIMEOUT);
        // the killed archiver's lease ends with its session, once PostgreSQL has noticed
        for (MaintenanceOutcome outcome = maintenance.expire(); outcome.leaseContended(); outcome = maintenance.expire()) {
            assertThat(Instant.now()).as("lease released in time").isBefore(deadline);
            Thread.sleep(20);
        }
        TieringAudit.assertNoLiveFileLost(tables);
        assertThat(Sets.difference(TieringAudit.filesOnDisk(tables), TieringAudit.liveFiles(tables))).isEmpty();
    }

    private static void replaceOneDataFile(Table table)
            throws Exception
    {
        DataFile replaced;
        try (CloseableIterable<FileScanTask> tasks = table.newScan().includeColumnStats().planFiles()) {
            replaced = tasks.iterator().next().file();
        }
        table.newRewrite()
                .deleteFile(replaced)
                .addFile(TestingMaintenance.copy(table, replaced))
                .set(TieringWatermark.WATERMARK_KEY, WatermarkReader.current(table).watermark().toProperty())
                .set(TieringWatermark.ROW_COUNT_KEY, "0")
                .commit();
    }

    private static Path dataDirectory(TestingArchiverTable tables)
    {
        return LocalFileIo.path(tables.dataFiles().getFirst().location()).getParent();
    }

    private static Path stray(Path directory)
            throws Exception
    {
        return Files.writeString(directory.resolve("stray-%s.parquet".formatted(UUID.randomUUID())), "left behind", UTF_8);
    }
}
