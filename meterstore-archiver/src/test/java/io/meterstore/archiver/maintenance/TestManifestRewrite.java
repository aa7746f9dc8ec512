package io.meterstore.archiver.maintenance;

import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.cycle.TestingArchiverTable;
import io.meterstore.archiver.cycle.TieringAudit;
import io.meterstore.archiver.maintenance.ManifestRewrite.Rewritten;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsOracle;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.metrics.ScanReport;
import org.apache.iceberg.util.DateTimeUtil;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Instant;
import java.time.LocalDate;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static io.meterstore.archiver.maintenance.TestingMaintenance.snapshotIds;
import static org.assertj.core.api.Assertions.assertThat;

/** Manifests rewritten one per month: planning a day reads one manifest, and the rewrite republishes W, never an older one. */
final class TestManifestRewrite
{
    @Test
    void testOneManifestPerMonthSoADayPlansFromOne()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("manifest_rewrite")) {
            // the UTC partitions of 2024-02-27 to 2024-03-01: three commits in February, one in March
            ReadingsOracle oracle = TestingMaintenance.archive(tables, LocalDate.of(2024, 2, 28), 3, true);
            Table table = tables.table();
            TieringWatermark watermark = WatermarkReader.current(table).watermark();
            Instant day = Instant.parse("2024-02-28T00:00:00Z");
            assertThat(table.currentSnapshot().dataManifests(table.io())).hasSize(4);
            assertThat(manifestsPlanned(table, day)).isEqualTo(3);

            Rewritten rewritten = new ManifestRewrite().rewrite(table).orElseThrow();
            // February's three become one; March's one manifest is laid out already and kept
            assertThat(rewritten.replacedManifests()).isEqualTo(3);
            assertThat(rewritten.createdManifests()).isEqualTo(1);
            assertThat(rewritten.createdBytes()).isPositive();
            assertThat(rewritten.watermark()).isEqualTo(watermark);
            table.refresh();
            assertThat(table.currentSnapshot().snapshotId()).isEqualTo(rewritten.snapshotId());
            assertThat(table.currentSnapshot().summary())
                    .containsEntry(TieringWatermark.WATERMARK_KEY, watermark.toProperty())
                    .containsEntry(TieringWatermark.ROW_COUNT_KEY, "0");
            assertThat(table.currentSnapshot().dataManifests(table.io())).hasSize(2);
            assertThat(manifestsPlanned(table, day)).isEqualTo(1);
            assertThat(TieringAudit.assertConsistent(tables, oracle)).isEqualTo(watermark);

            // laid out already: no snapshot
            int snapshots = snapshotIds(table).size();
            assertThat(new ManifestRewrite().rewrite(table)).isEmpty();
            table.refresh();
            assertThat(snapshotIds(table)).hasSize(snapshots);
        }
    }

    @Test
    void testArchivalCommitInBetweenIsRepublishedNotOverwritten()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("manifest_rewrite_race")) {
            ReadingsOracle oracle = ReadingsOracle.of(TestingMaintenance.load(tables, TestingMaintenance.FIRST_DAY, 2).iterator());
            ArchivalCycle cycle = TestingMaintenance.cycle(tables);
            assertThat(cycle.archiveOnce().kind()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);
            assertThat(cycle.archiveOnce().kind()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);
            Table table = tables.table();
            TieringWatermark before = WatermarkReader.current(table).watermark();

            // the next window is committed after the rewrite read W and before it commits
            AtomicBoolean raced = new AtomicBoolean();
            AtomicReference<TieringWatermark> archived = new AtomicReference<>();
            Rewritten rewritten = new ManifestRewrite(() -> {
                if (raced.compareAndSet(false, true)) {
                    try {
                        ArchiveOutcome outcome = cycle.archiveOnce();
                        assertThat(outcome.kind()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);
                        archived.set(outcome.watermark());
                    }
                    catch (Exception e) {
                        throw new AssertionError(e);
                    }
                }
            }).rewrite(table).orElseThrow();

            assertThat(archived.get()).isGreaterThan(before);
            assertThat(rewritten.attempts()).isEqualTo(2);
            assertThat(rewritten.watermark()).isEqualTo(archived.get());
            table.refresh();
            assertThat(WatermarkReader.current(table).watermark()).isEqualTo(archived.get());
            // W only ever moved forward, and every commit without an archived range republished the one before it
            TieringAudit.assertWatermarkHistory(tables);
            TieringAudit.assertConsistent(tables, oracle);
        }
    }

    /** How many data manifests Iceberg reads to plan one UTC day of "from". */
    private static long manifestsPlanned(Table table, Instant day)
            throws IOException
    {
        AtomicReference<ScanReport> report = new AtomicReference<>();
        String from = ReadingsColumn.FROM.columnName();
        try (CloseableIterable<?> tasks = table.newScan()
                .filter(Expressions.and(
                        Expressions.greaterThanOrEqual(from, DateTimeUtil.microsFromInstant(day)),
                        Expressions.lessThan(from, DateTimeUtil.microsFromInstant(day.plusSeconds(86_400)))))
                .metricsReporter(metrics -> report.set((ScanReport) metrics))
                .planFiles()) {
            tasks.forEach(_ -> {});
        }
        return report.get().scanMetrics().scannedDataManifests().value();
    }
}
