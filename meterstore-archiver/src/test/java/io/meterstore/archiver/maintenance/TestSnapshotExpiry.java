package io.meterstore.archiver.maintenance;

import io.meterstore.archiver.cycle.ArchivalSettings;
import io.meterstore.archiver.cycle.TestingArchiverTable;
import io.meterstore.archiver.cycle.TieringAudit;
import io.meterstore.archiver.maintenance.SnapshotExpiry.Expired;
import io.meterstore.core.HotPartition;
import io.meterstore.core.LocalFileIo;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsOracle;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static io.meterstore.archiver.maintenance.TestingMaintenance.READER_GRACE;
import static io.meterstore.archiver.maintenance.TestingMaintenance.afterNewestCommit;
import static io.meterstore.archiver.maintenance.TestingMaintenance.history;
import static io.meterstore.archiver.maintenance.TestingMaintenance.settings;
import static io.meterstore.archiver.maintenance.TestingMaintenance.snapshotIds;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Snapshot expiry on real archived tables: what is past the retention goes with the files only it referenced, and what
 * a watermark, a running query or a partition awaiting its drop still needs stays.
 */
final class TestSnapshotExpiry
{
    private static final Duration NO_RETENTION = Duration.ZERO;

    @Test
    void testExpiresPastTheRetentionOnceTheReaderGraceHasPassed()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("expiry_retention")) {
            ReadingsOracle oracle = TestingMaintenance.archive(tables, 4, true);
            Table table = tables.table();
            List<Long> history = history(table);
            int commits = history.size();
            TieringWatermark watermark = WatermarkReader.current(table).watermark();
            MaintenanceSettings settings = settings(NO_RETENTION, 2, Duration.ZERO);

            // every commit was replaced seconds after it was made: within the reader grace a query may still read any of them
            Expired early = SnapshotExpiry.expire(table, afterNewestCommit(table, READER_GRACE.dividedBy(2)), settings, List.of());
            assertThat(early.snapshots()).isZero();
            assertThat(snapshotIds(table)).hasSize(commits);

            List<String> manifestLists = history.subList(2, commits).stream().map(id -> table.snapshot(id).manifestListLocation()).toList();
            Expired expired = SnapshotExpiry.expire(table, afterNewestCommit(table, READER_GRACE.multipliedBy(2)), settings, List.of());
            // the newest two stay; the older snapshots go, with their manifest lists (their manifests and data files are still live)
            assertThat(expired.snapshots()).isEqualTo(commits - 2);
            assertThat(expired.kept()).isEqualTo(2);
            table.refresh();
            assertThat(snapshotIds(table)).containsExactlyInAnyOrderElementsOf(history.subList(0, 2));
            assertThat(expired.deletedFiles()).isEqualTo(commits - 2);
            assertThat(manifestLists).allSatisfy(location -> assertThat(Files.exists(LocalFileIo.path(location))).as(location).isFalse());

            assertThat(TieringAudit.assertConsistent(tables, oracle)).isEqualTo(watermark);
            TieringAudit.assertNoLiveFileLost(tables);
        }
    }

    @Test
    void testJudgesAgesOnTheMaintenanceClock()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("expiry_clock")) {
            TestingMaintenance.archive(tables, 4, true);
            Table table = tables.table();
            List<Long> history = history(table);
            MaintenanceSettings settings = settings(Duration.ofDays(30), 2, Duration.ZERO);
            // a clock a year behind the wall clock, as the soak's: it is now a year ago, and every commit happened after it
            Duration behind = Duration.ofDays(365);
            Instant now = afterNewestCommit(table, Duration.ofDays(31)).minus(behind);
            assertThat(SnapshotExpiry.expire(table, now, settings, List.of()).snapshots()).isZero();

            // read on that clock, each commit's stamp lies 31 days before its now: past the retention of 30
            MaintenanceClock behindWallClock = new MaintenanceClock()
            {
                @Override
                public Instant instant()
                {
                    return now;
                }

                @Override
                public Instant stampTime(Instant wallClockStamp)
                {
                    return wallClockStamp.minus(behind);
                }
            };
            Expired expired = SnapshotExpiry.expire(table, behindWallClock, settings, List.of());
            assertThat(expired.snapshots()).isEqualTo(history.size() - 2);
            assertThat(expired.oldestKept()).contains(Instant.ofEpochMilli(table.snapshot(history.get(1)).timestampMillis()).minus(behind));
            table.refresh();
            assertThat(snapshotIds(table)).containsExactlyInAnyOrderElementsOf(history.subList(0, 2));
            TieringAudit.assertNoLiveFileLost(tables);
        }
    }

    @Test
    void testKeepsTheAncestorsABranchReadsItsWatermarkFrom()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("expiry_watermark_chain")) {
            ReadingsOracle oracle = TestingMaintenance.archive(tables, 2, true);
            Table table = tables.table();
            List<Long> archived = history(table);
            long first = archived.getLast();
            TieringWatermark firstWatermark = WatermarkReader.ofSnapshot(table, first);
            TieringWatermark watermark = WatermarkReader.current(table).watermark();
            // another engine branches off the first archival commit and appends a copy of a file there: its commit
            // carries no watermark, so the branch's is read from the first archival commit
            table.manageSnapshots().createBranch("audit", first).commit();
            table.newFastAppend().appendFile(TestingMaintenance.copy(table, tables.dataFiles().getFirst())).toBranch("audit").commit();
            table.refresh();
            long foreign = table.refs().get("audit").snapshotId();
            assertThat(TieringWatermark.fromSummary(table.snapshot(foreign).summary())).isEmpty();

            Expired expired = SnapshotExpiry.expire(table, afterNewestCommit(table, READER_GRACE.multipliedBy(2)), settings(NO_RETENTION, 1, Duration.ZERO), List.of());
            table.refresh();
            // main keeps its newest archival commit; the branch keeps its head and the ancestor its watermark is read from
            assertThat(expired.snapshots()).isEqualTo(archived.size() - 2);
            assertThat(snapshotIds(table)).containsExactlyInAnyOrder(archived.getFirst(), foreign, first);
            assertThat(WatermarkReader.ofSnapshot(table, foreign)).isEqualTo(firstWatermark);
            assertThat(TieringAudit.assertConsistent(tables, oracle)).isEqualTo(watermark);
            TieringAudit.assertNoLiveFileLost(tables);
        }
    }

    @Test
    void testKeepsTheArchivalCommitsOfPartitionsAwaitingTheirDrop()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("expiry_awaiting_drop")) {
            ReadingsOracle oracle = TestingMaintenance.archive(tables, 2, false);
            Table table = tables.table();
            List<HotPartition> awaitingDrop = tables.partitions();
            int commits = history(table).size();
            assertThat(awaitingDrop).hasSize(commits).noneMatch(HotPartition::attached);
            MaintenanceSettings settings = settings(NO_RETENTION, 1, Duration.ZERO);

            // the drop counts each partition's rows against the commits that streamed it: they all stay
            Expired kept = SnapshotExpiry.expire(table, afterNewestCommit(table, READER_GRACE.multipliedBy(2)), settings, awaitingDrop);
            assertThat(kept.snapshots()).isZero();

            tables.clock().advance(READER_GRACE.plusMinutes(1));
            ArchivalSettings archival = new ArchivalSettings(ArchivalSettings.DEFAULT_SETTLEMENT_LAG, READER_GRACE, ArchivalSettings.DEFAULT_CHUNK_ROWS);
            assertThat(tables.cycle(archival).archiveOnce().droppedPartitions()).hasSize(commits);
            assertThat(tables.partitions()).isEmpty();

            // dropped: their commits go, all but the newest
            int snapshots = history(tables.table()).size();
            Expired expired = SnapshotExpiry.expire(table, afterNewestCommit(table, READER_GRACE.multipliedBy(2)), settings, tables.partitions());
            assertThat(expired.snapshots()).isEqualTo(snapshots - 1);
            TieringAudit.assertConsistent(tables, oracle);
            TieringAudit.assertNoLiveFileLost(tables);
        }
    }
}
