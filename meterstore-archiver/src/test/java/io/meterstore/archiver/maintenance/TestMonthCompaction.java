package io.meterstore.archiver.maintenance;

import com.google.common.collect.ImmutableList;
import io.meterstore.archiver.cycle.TestingArchiverTable;
import io.meterstore.archiver.cycle.TieringAudit;
import io.meterstore.archiver.maintenance.ColdTierLayout.MonthFiles;
import io.meterstore.archiver.maintenance.MonthCompaction.Compacted;
import io.meterstore.core.ColdFileRole;
import io.meterstore.core.LocalFileIo;
import io.meterstore.core.SnapshotRetention;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsOracle;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.RewriteFiles;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.TreeMap;

import static com.google.common.collect.MoreCollectors.onlyElement;
import static io.meterstore.archiver.maintenance.TestingMaintenance.READER_GRACE;
import static io.meterstore.archiver.maintenance.TestingMaintenance.afterNewestCommit;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Month compaction in the archiver: a month entirely below W and past the compaction delay becomes one winners and one
 * superseded file of the resolved layout holding exactly its rows, under a commit that republishes W; a month of plain
 * files (archived before the layout) becomes resolved; the replaced files are left for expiry; a month inside the
 * delay, or W's month, is left alone, and a compacted month is rewritten again only past the threshold of new files.
 */
final class TestMonthCompaction
{
    // the UTC partitions of 2024-02-25 to 2024-03-03: February five days, entirely below W; March holds W
    private static final LocalDate FIRST_DAY = LocalDate.of(2024, 2, 26);
    private static final YearMonth FEBRUARY = YearMonth.of(2024, 2);
    private static final YearMonth MARCH = YearMonth.of(2024, 3);

    @Test
    void testMonthBelowWatermarkBecomesOneWinnersAndOneSupersededFile()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("compaction_month")) {
            ReadingsOracle oracle = TestingMaintenance.archive(tables, FIRST_DAY, 7, true);
            Table table = tables.table();
            TieringWatermark watermark = WatermarkReader.current(table).watermark();
            MonthFiles february = ColdTierLayout.of(table).months().get(FEBRUARY);
            MonthFiles march = ColdTierLayout.of(table).months().get(MARCH);
            assertThat(february.files()).isGreaterThan(4);
            List<DataFile> replaced = dataFiles(table, FEBRUARY);

            Instant now = afterNewestCommit(table, READER_GRACE);
            MaintenanceOutcome outcome = maintenance(tables, now, CompactionSettings.DEFAULTS).compact();

            Compacted compacted = outcome.compaction().orElseThrow().compacted().stream().collect(onlyElement());
            assertThat(compacted.month()).isEqualTo(FEBRUARY);
            assertThat(compacted.wasResolved()).isTrue();
            assertThat(compacted.replacedDataFiles()).isEqualTo(february.files());
            assertThat(compacted.winnersFiles()).isEqualTo(1);
            assertThat(compacted.supersededFiles()).isEqualTo(1);
            assertThat(compacted.rows()).isEqualTo(february.rows());
            assertThat(compacted.watermark()).isEqualTo(watermark);
            assertThat(outcome.rewrittenBytes()).isGreaterThanOrEqualTo(compacted.bytesWritten()).isPositive();
            assertThat(outcome.describe()).contains("1 month compacted", "2024-02: %s into 1 winners file and 1 superseded file".formatted(ColdTierLayout.count(february.files(), "data file")));

            table.refresh();
            ColdTierLayout layout = ColdTierLayout.of(table);
            assertThat(layout.months().get(FEBRUARY).files()).isEqualTo(2);
            assertThat(layout.months().get(FEBRUARY).compactedFiles()).isEqualTo(2);
            assertThat(layout.lastCompactions()).containsOnlyKeys(FEBRUARY);
            assertThat(layout.lastCompactions().get(FEBRUARY)).isBetween(now.minusSeconds(1), now);
            // the month W runs through is not touched
            assertThat(layout.months().get(MARCH).files()).isEqualTo(march.files());
            assertThat(dataFiles(table, FEBRUARY)).allSatisfy(file -> assertThat(ColdFileRole.of(file.location())).isPresent());
            assertThat(table.snapshot(compacted.snapshotId()).summary())
                    .containsEntry(TieringWatermark.WATERMARK_KEY, watermark.toProperty())
                    .containsEntry(TieringWatermark.ROW_COUNT_KEY, "0")
                    .containsEntry(MonthCompaction.COMPACTED_MONTH_KEY, "2024-02");
            // every version exactly once, every Berlin day's totals as the oracle has them, W unchanged
            assertThat(TieringAudit.assertConsistent(tables, oracle)).isEqualTo(watermark);
            // the replaced files stay for expiry: a query planned before the commit still reads them
            assertThat(replaced).allSatisfy(file -> assertThat(Files.exists(LocalFileIo.path(file.location()))).isTrue());

            // nothing more to do: no month is rewritten again
            long current = table.currentSnapshot().snapshotId();
            MaintenanceOutcome again = maintenance(tables, now, CompactionSettings.DEFAULTS).compact();
            assertThat(again.compaction().orElseThrow().compacted()).isEmpty();
            assertThat(again.describe()).contains("no month needed compaction");
            table.refresh();
            assertThat(table.currentSnapshot().snapshotId()).isEqualTo(current);
        }
    }

    @Test
    void testMonthOfPlainFilesBecomesResolved()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("compaction_plain")) {
            ReadingsOracle oracle = TestingMaintenance.archive(tables, FIRST_DAY, 7, true);
            Table table = tables.table();
            TieringWatermark watermark = WatermarkReader.current(table).watermark();
            rewriteAsPlainFiles(table, FEBRUARY);
            assertThat(ColdTierLayout.of(table).unresolvedMonths()).isEqualTo(1);

            MaintenanceOutcome outcome = maintenance(tables, afterNewestCommit(table, READER_GRACE), CompactionSettings.DEFAULTS).compact();

            Compacted compacted = outcome.compaction().orElseThrow().compacted().stream().collect(onlyElement());
            assertThat(compacted.wasResolved()).isFalse();
            assertThat(outcome.describe()).contains("(not resolved before)");
            table.refresh();
            assertThat(ColdTierLayout.of(table).unresolvedMonths()).isZero();
            assertThat(dataFiles(table, FEBRUARY)).extracting(file -> ColdFileRole.of(file.location()).orElseThrow())
                    .containsExactlyInAnyOrder(ColdFileRole.WINNERS, ColdFileRole.SUPERSEDED);
            assertThat(TieringAudit.assertConsistent(tables, oracle)).isEqualTo(watermark);
        }
    }

    @Test
    void testMonthInsideTheDelayWaits()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("compaction_delay")) {
            TestingMaintenance.archive(tables, FIRST_DAY, 7, true);
            Table table = tables.table();
            long current = table.currentSnapshot().snapshotId();
            // February ended on 2024-03-01: with a delay of 30 days it waits until 2024-03-31
            CompactionSettings settings = new CompactionSettings(Duration.ofDays(30), CompactionSettings.DEFAULT_TARGET_FILE_SIZE_BYTES, 12);
            MonthCompaction.Result result = maintenance(tables, Instant.parse("2024-03-30T00:00:00Z"), settings).compact().compaction().orElseThrow();
            assertThat(result.compacted()).isEmpty();
            assertThat(result.waiting()).isEqualTo(1);
            assertThat(result.describe()).contains("1 month to compact once the compaction delay has passed");
            table.refresh();
            assertThat(ColdTierLayout.of(table).lastCompactions()).isEmpty();

            assertThat(maintenance(tables, Instant.parse("2024-04-01T00:00:00Z"), settings).compact().compaction().orElseThrow().compacted()).hasSize(1);
            table.refresh();
            assertThat(table.currentSnapshot().snapshotId()).isNotEqualTo(current);
        }
    }

    @Test
    void testChoosingMonths()
    {
        // never compacted: merged once that merges anything
        assertThat(MonthCompaction.needsCompaction(new MonthFiles(2, 10, 100), 12)).isFalse();
        assertThat(MonthCompaction.needsCompaction(new MonthFiles(3, 10, 100), 12)).isTrue();
        assertThat(MonthCompaction.needsCompaction(new MonthFiles(2, 10, 100, 1, 0, 0, Optional.empty(), 0), 12)).isTrue();
        // files of no role: always, to resolve the month
        assertThat(MonthCompaction.needsCompaction(new MonthFiles(1, 10, 100, 0, 0, 1, Optional.empty(), 0), 12)).isTrue();
        // compacted: again once corrections added the threshold of files, not before
        Optional<Instant> compacted = Optional.of(Instant.parse("2024-04-01T00:00:00Z"));
        assertThat(MonthCompaction.needsCompaction(new MonthFiles(2, 10, 100, 0, 2, 0, compacted, 0), 12)).isFalse();
        assertThat(MonthCompaction.needsCompaction(new MonthFiles(10, 10, 100, 3, 2, 0, compacted, 0), 12)).isFalse();
        assertThat(MonthCompaction.needsCompaction(new MonthFiles(10, 10, 100, 4, 2, 0, compacted, 0), 12)).isTrue();
        // compacted, with fewer files from corrections: once more when the newest is the delay old, its corrections stopped
        MonthFiles corrected = new MonthFiles(3, 10, 100, 1, 2, 0, compacted, 7);
        Instant lastCorrection = Instant.parse("2024-04-20T00:00:00Z");
        assertThat(MonthCompaction.correctionsSettled(corrected, lastCorrection, Duration.ofDays(14), lastCorrection.plus(Duration.ofDays(14)).minusSeconds(1))).isFalse();
        assertThat(MonthCompaction.correctionsSettled(corrected, lastCorrection, Duration.ofDays(14), lastCorrection.plus(Duration.ofDays(14)))).isTrue();
        // the newest file's commit: its own snapshot's time; once expiry removed that snapshot, the kept one before it
        // (never the one after, which an erasure's completion would keep moving later), or none kept before it
        NavigableMap<Long, Instant> commits = new TreeMap<>(Map.of(5L, Instant.parse("2024-04-05T00:00:00Z"), 9L, Instant.parse("2024-04-09T00:00:00Z")));
        assertThat(MonthCompaction.lastChange(new MonthFiles(3, 10, 100, 1, 2, 0, compacted, 9), commits)).isEqualTo(Instant.parse("2024-04-09T00:00:00Z"));
        assertThat(MonthCompaction.lastChange(new MonthFiles(3, 10, 100, 1, 2, 0, compacted, 7), commits)).isEqualTo(Instant.parse("2024-04-05T00:00:00Z"));
        assertThat(MonthCompaction.lastChange(new MonthFiles(3, 10, 100, 1, 2, 0, compacted, 3), commits)).isEqualTo(Instant.EPOCH);
        // nothing gained since its compaction, or never compacted: nothing to settle
        assertThat(MonthCompaction.correctionsSettled(new MonthFiles(2, 10, 100, 0, 2, 0, compacted, 0), lastCorrection, Duration.ofDays(14), lastCorrection.plus(Duration.ofDays(30)))).isFalse();
        assertThat(MonthCompaction.correctionsSettled(new MonthFiles(2, 10, 100), lastCorrection, Duration.ofDays(14), lastCorrection.plus(Duration.ofDays(30)))).isFalse();
    }

    static TableMaintenance maintenance(TestingArchiverTable tables, Instant now, CompactionSettings compaction)
    {
        MaintenanceSettings settings = new MaintenanceSettings(SnapshotRetention.DEFAULT, MaintenanceSettings.DEFAULT_ORPHAN_SAFETY_AGE, READER_GRACE, compaction);
        return new TableMaintenance(tables.catalog(), TestingArchiverTable.identifier(), tables.hotTier(), tables::connect, settings, () -> now);
    }

    static List<DataFile> dataFiles(Table table, YearMonth month)
            throws IOException
    {
        table.refresh();
        List<DataFile> files = new ArrayList<>();
        try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
            for (FileScanTask task : tasks) {
                if (ColdTierLayout.month(task.file()).equals(month)) {
                    files.add(task.file().copy());
                }
            }
        }
        return ImmutableList.copyOf(files);
    }

    /** Replaces every file of {@code month} by a copy under a plain name, as a table archived before the resolved layout holds it. */
    static void rewriteAsPlainFiles(Table table, YearMonth month)
            throws IOException
    {
        RewriteFiles rewrite = table.newRewrite();
        for (DataFile original : dataFiles(table, month)) {
            Path source = LocalFileIo.path(original.location());
            Path target = source.resolveSibling(source.getFileName().toString().replaceAll("\\.(winners|superseded)\\.parquet$", "-$1-plain.parquet"));
            Files.copy(source, target);
            rewrite.deleteFile(original);
            rewrite.addFile(DataFiles.builder(table.spec()).copy(original).withPath(target.toUri().toString()).build());
        }
        rewrite.set(TieringWatermark.WATERMARK_KEY, WatermarkReader.current(table).watermark().toProperty())
                .set(TieringWatermark.ROW_COUNT_KEY, "0")
                .commit();
    }
}
