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
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.YearMonth;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import static io.meterstore.archiver.maintenance.TestMonthCompaction.dataFiles;
import static io.meterstore.archiver.maintenance.TestingMaintenance.READER_GRACE;
import static io.meterstore.archiver.maintenance.TestingMaintenance.afterNewestCommit;
import static io.meterstore.archiver.maintenance.TestingMaintenance.settings;
import static java.util.stream.Collectors.toUnmodifiableSet;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A crash at each step of month compaction: an archiver process runs {@code compact}, stops at a failpoint (its files
 * written; its commit built under the lease; the month committed; every month committed, the manifests not yet
 * rewritten) and is killed with SIGKILL. Right after the kill and after the next {@code compact}, every version is in
 * Iceberg exactly once and every Berlin day equals the oracle, W is unchanged, no live file is gone; the files of the
 * killed run that never committed are orphans, which orphan removal takes, and the files compaction replaced are
 * taken by expiry.
 */
final class TestCompactionCrashRecovery
{
    private static final Duration TIMEOUT = Duration.ofSeconds(120);
    // the UTC partitions of 2024-02-26 to 2024-03-01: February entirely below W
    private static final LocalDate FIRST_DAY = LocalDate.of(2024, 2, 27);
    private static final YearMonth FEBRUARY = YearMonth.of(2024, 2);

    @TempDir
    Path directory;

    @Test
    void testCrashAfterWriting()
            throws Exception
    {
        crashAndRecover(Failpoint.COMPACTION_AFTER_WRITE, false);
    }

    @Test
    void testCrashBeforeCommit()
            throws Exception
    {
        crashAndRecover(Failpoint.COMPACTION_BEFORE_COMMIT, false);
    }

    @Test
    void testCrashAfterCommit()
            throws Exception
    {
        crashAndRecover(Failpoint.COMPACTION_AFTER_COMMIT, true);
    }

    @Test
    void testCrashBeforeCleanup()
            throws Exception
    {
        crashAndRecover(Failpoint.COMPACTION_BEFORE_CLEANUP, true);
    }

    private void crashAndRecover(Failpoint failpoint, boolean committed)
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("crash_" + failpoint.pointName().replace('-', '_'))) {
            ReadingsOracle oracle = TestingMaintenance.archive(tables, FIRST_DAY, 4, true);
            Table table = tables.table();
            TieringWatermark watermark = WatermarkReader.current(table).watermark();
            Set<String> february = locations(dataFiles(table, FEBRUARY));
            assertThat(february).hasSizeGreaterThan(2);
            Instant now = afterNewestCommit(table, READER_GRACE.multipliedBy(2));
            MaintenanceSettings settings = settings(Duration.ofDays(3653), 20, Duration.ofDays(3));

            try (TestingArchiverProcess archiver = TestingArchiverProcess.startMaintenance(failpoint.pointName(), tables, directory, now, MaintenanceCommand.COMPACT, settings, Optional.of(failpoint))) {
                archiver.awaitLine("FAILPOINT " + failpoint.pointName(), TIMEOUT);
                archiver.kill();
            }

            // right after the kill: February is either as archived or compacted, never both, never neither
            Set<String> afterKill = locations(dataFiles(table, FEBRUARY));
            if (committed) {
                assertThat(afterKill).hasSize(2).doesNotContainAnyElementsOf(february);
            }
            else {
                assertThat(afterKill).isEqualTo(february);
            }
            assertThat(TieringAudit.assertConsistent(tables, oracle)).isEqualTo(watermark);
            TieringAudit.assertNoLiveFileLost(tables);

            // the next compact is the ordinary path: it compacts what the killed run did not commit, and only that
            MaintenanceOutcome outcome = compactOnceLeaseIsFree(tables, now, settings);
            assertThat(outcome.compaction().orElseThrow().compacted()).hasSize(committed ? 0 : 1);
            Set<String> compacted = locations(dataFiles(table, FEBRUARY));
            assertThat(compacted).hasSize(2).doesNotContainAnyElementsOf(february);
            if (committed) {
                assertThat(compacted).isEqualTo(afterKill);
            }
            assertThat(TieringAudit.assertConsistent(tables, oracle)).isEqualTo(watermark);
            TieringAudit.assertNoLiveFileLost(tables);

            // expiry and orphan removal take what is left: the replaced files and any file of the killed run
            expireEverythingOld(tables, settings);
            TieringAudit.assertNoLiveFileLost(tables);
            assertThat(Sets.difference(TieringAudit.filesOnDisk(tables), TieringAudit.liveFiles(tables))).isEmpty();
            assertThat(february).noneMatch(location -> Files.exists(LocalFileIo.path(location)));
            assertThat(TieringAudit.assertConsistent(tables, oracle)).isEqualTo(watermark);
        }
    }

    private static MaintenanceOutcome compactOnceLeaseIsFree(TestingArchiverTable tables, Instant now, MaintenanceSettings settings)
            throws Exception
    {
        TableMaintenance maintenance = new TableMaintenance(tables.catalog(), TestingArchiverTable.identifier(), tables.hotTier(), tables::connect, settings, () -> now);
        Instant deadline = Instant.now().plus(TIMEOUT);
        // the killed archiver's lease ends with its session, once PostgreSQL has noticed
        MaintenanceOutcome outcome = maintenance.compact();
        while (outcome.leaseContended()) {
            assertThat(Instant.now()).as("lease released in time").isBefore(deadline);
            Thread.sleep(20);
            outcome = maintenance.compact();
        }
        return outcome;
    }

    /** Expires every snapshot but the newest and removes every unreferenced file, all of them made old enough. */
    private static void expireEverythingOld(TestingArchiverTable tables, MaintenanceSettings kept)
            throws Exception
    {
        Instant later = afterNewestCommit(tables.table(), READER_GRACE.multipliedBy(2));
        MaintenanceSettings settings = settings(Duration.ZERO, 1, kept.orphanSafetyAge());
        for (Path file : Sets.difference(TieringAudit.filesOnDisk(tables), TieringAudit.liveFiles(tables))) {
            Files.setLastModifiedTime(file, FileTime.from(later.minus(settings.orphanSafetyAge()).minusSeconds(60)));
        }
        new TableMaintenance(tables.catalog(), TestingArchiverTable.identifier(), tables.hotTier(), tables::connect, settings, () -> later).expire();
        // expiry's own deletions leave nothing; files that became unreferenced just now are old enough for the next run
        for (Path file : Sets.difference(TieringAudit.filesOnDisk(tables), TieringAudit.liveFiles(tables))) {
            Files.setLastModifiedTime(file, FileTime.from(later.minus(settings.orphanSafetyAge()).minusSeconds(60)));
        }
        new TableMaintenance(tables.catalog(), TestingArchiverTable.identifier(), tables.hotTier(), tables::connect, settings, () -> later).expire();
    }

    private static Set<String> locations(List<DataFile> files)
    {
        return files.stream().map(DataFile::location).collect(toUnmodifiableSet());
    }
}
