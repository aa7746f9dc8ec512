package io.meterstore.archiver.maintenance;

import com.google.common.collect.ImmutableList;
import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.cycle.Failpoints.Failpoint;
import io.meterstore.archiver.cycle.TestingArchiverProcess;
import io.meterstore.archiver.cycle.TestingArchiverTable;
import io.meterstore.archiver.cycle.TieringAudit;
import io.meterstore.core.ErasureLog;
import io.meterstore.core.ErasureLog.Erasure;
import io.meterstore.core.ErasureLog.Trigger;
import io.meterstore.core.HotPartition;
import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.Reading;
import io.meterstore.core.Sparte;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsOracle;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;

import static io.meterstore.archiver.cycle.TestingArchiverTable.SCHEMA;
import static io.meterstore.archiver.cycle.TestingArchiverTable.TABLE;
import static io.meterstore.archiver.maintenance.TestingMaintenance.READER_GRACE;
import static io.meterstore.archiver.maintenance.TestingMaintenance.afterNewestCommit;
import static io.meterstore.core.SnapshotRetention.DEFAULT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The retention sweep over single days spread over five settlement years, the older ones archived, the newer ones still
 * hot: each sweep removes exactly the months entirely past the retention from both tiers (the oracle), never early (a
 * UTC December holding the first hour of the next Berlin year waits for that year), one audit row per month; a rerun
 * changes nothing; once the reader grace has passed, no Parquet file left in the warehouse holds a removed row.
 */
final class TestRetentionSweep
{
    @TempDir
    Path directory;

    @Test
    void testRemovesExactlyTheMonthsPastTheRetention()
            throws Exception
    {
        // relative to today's settlement year, so the retention's cut falls where the test says in every year it runs
        int year = MeteringCalendar.settlementMonth(Sparte.GAS, Instant.now()).getYear();
        List<LocalDate> days = List.of(
                LocalDate.of(year - 5, 3, 10),
                LocalDate.of(year - 4, 12, 31),
                LocalDate.of(year - 3, 1, 1),
                LocalDate.of(year - 3, 6, 15),
                LocalDate.of(year - 2, 2, 1),
                LocalDate.of(year - 1, 5, 5));
        try (TestingArchiverTable tables = TestingArchiverTable.create("retention_sweep")) {
            ImmutableList.Builder<Reading> loaded = ImmutableList.builder();
            for (LocalDate day : days) {
                ReadingsGenerator generator = TestingMaintenance.load(tables, day, 1);
                generator.iterator().forEachRemaining(loaded::add);
            }
            List<Reading> readings = loaded.build();
            // the first four UTC partitions archived (up to the end of the Berlin year year - 4), left detached; the rest hot
            ArchivalCycle cycle = TestingMaintenance.cycle(tables);
            for (int window = 0; window < 4; window++) {
                assertThat(cycle.archiveOnce().kind()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);
            }
            TieringWatermark watermark = WatermarkReader.current(tables.table()).watermark();
            assertThat(watermark.instant()).isEqualTo(utc(YearMonth.of(year - 3, 1)));
            TieringAudit.assertConsistent(tables, ReadingsOracle.of(readings));

            // 3y: the settlement years up to year - 4 are past, from the Berlin new year's midnight, 23:00 UTC: only March
            // goes; December's UTC partition holds an hour of year - 3
            MaintenanceOutcome threeYears = maintenance(tables, "3y", Instant.now()).expire();
            assertThat(threeYears.swept().orElseThrow().cut()).isEqualTo(Instant.parse("%s-12-31T23:00:00Z".formatted(year - 4)));
            assertThat(threeYears.swept().orElseThrow().months()).containsExactly(YearMonth.of(year - 5, 3));
            TieringAudit.assertConsistent(tables, oracleFrom(readings, utc(YearMonth.of(year - 5, 4))));
            assertThat(tables.partitions()).noneMatch(partition -> partition.start().isBefore(utc(YearMonth.of(year - 5, 4))));
            List<Erasure> afterThree = retentionRows(tables);
            assertThat(afterThree).singleElement().satisfies(row -> {
                assertThat(row.recorded().scope().from().lower()).contains(utc(YearMonth.of(year - 5, 3)));
                assertThat(row.recorded().scope().from().upper()).contains(utc(YearMonth.of(year - 5, 4)));
                assertThat(row.recorded().scope().maloScopes()).isEmpty();
                assertThat(row.recorded().rowsRemovedCold()).isEqualTo(count(readings, YearMonth.of(year - 5, 3)));
                // its partitions were archived: their rows are counted once, in the cold tier
                assertThat(row.recorded().rowsRemovedHot()).isZero();
                assertThat(row.recorded().snapshotId()).contains(tables.table().currentSnapshot().snapshotId());
                assertThat(row.recorded().user()).isEqualTo("meterstore-archiver");
            });
            // the commit republished W
            assertThat(WatermarkReader.current(tables.table()).watermark()).isEqualTo(watermark);

            // a rerun changes nothing
            long snapshotsBefore = ImmutableList.copyOf(tables.table().snapshots()).size();
            assertThat(maintenance(tables, "3y", Instant.now()).expire().swept().orElseThrow().months()).isEmpty();
            assertThat(retentionRows(tables)).isEqualTo(afterThree);
            assertThat(ImmutableList.copyOf(tables.table().snapshots())).hasSize((int) snapshotsBefore);

            // 2y: December year - 4 in Iceberg, and January and June year - 3 still in PostgreSQL above W, go
            MaintenanceOutcome twoYears = maintenance(tables, "2y", Instant.now()).expire();
            assertThat(twoYears.swept().orElseThrow().months()).containsExactly(YearMonth.of(year - 4, 12), YearMonth.of(year - 3, 1), YearMonth.of(year - 3, 6));
            ReadingsOracle kept = oracleFrom(readings, utc(YearMonth.of(year - 3, 7)));
            TieringAudit.assertConsistent(tables, kept);
            assertThat(tables.partitions()).extracting(HotPartition::start).allMatch(start -> !start.isBefore(utc(YearMonth.of(year - 2, 1))));
            List<Erasure> afterTwo = retentionRows(tables);
            assertThat(afterTwo).hasSize(4);
            assertThat(afterTwo.get(1).recorded().rowsRemovedCold()).isEqualTo(count(readings, YearMonth.of(year - 4, 12)));
            assertThat(afterTwo.get(2).recorded().rowsRemovedHot()).isEqualTo(count(readings, YearMonth.of(year - 3, 1)));
            assertThat(afterTwo.get(2).recorded().snapshotId()).isEmpty();
            assertThat(afterTwo.get(3).recorded().rowsRemovedHot()).isEqualTo(count(readings, YearMonth.of(year - 3, 6)));
            assertThat(WatermarkReader.current(tables.table()).watermark()).isEqualTo(watermark);

            // past the reader grace the swept files leave storage: no Parquet file holds a removed row
            assertThat(TestErasureCompletion.readAll(tables)).anyMatch(reading -> reading.from().isBefore(utc(YearMonth.of(year - 3, 7))));
            Table table = tables.table();
            MaintenanceOutcome completed = maintenance(tables, "2y", afterNewestCommit(table, READER_GRACE.multipliedBy(2))).expire();
            assertThat(completed.swept().orElseThrow().months()).isEmpty();
            assertThat(completed.erasures().orElseThrow().erasures()).hasSize(4);
            assertThat(TestErasureCompletion.readAll(tables)).noneMatch(reading -> reading.from().isBefore(utc(YearMonth.of(year - 3, 7))));
            TieringAudit.assertConsistent(tables, kept);
            TieringAudit.assertNoLiveFileLost(tables);
            assertThat(retentionRows(tables)).hasSize(4).allMatch(row -> row.physicallyCompletedAt().isPresent());
        }
    }

    @Test
    void testCrashBetweenTheCommitAndTheAuditRow()
            throws Exception
    {
        int year = MeteringCalendar.settlementMonth(Sparte.GAS, Instant.now()).getYear();
        try (TestingArchiverTable tables = TestingArchiverTable.create("retention_crash")) {
            ImmutableList.Builder<Reading> loaded = ImmutableList.builder();
            for (LocalDate day : List.of(LocalDate.of(year - 5, 3, 10), LocalDate.of(year - 5, 4, 10))) {
                TestingMaintenance.load(tables, day, 1).iterator().forEachRemaining(loaded::add);
            }
            List<Reading> readings = loaded.build();
            ArchivalCycle cycle = TestingMaintenance.cycle(tables);
            while (cycle.archiveOnce().kind() == ArchiveOutcome.Kind.ARCHIVED) {
                // every window
            }
            Instant now = Instant.now();
            MaintenanceSettings settings = new MaintenanceSettings(DEFAULT, Duration.ofDays(3), READER_GRACE, CompactionSettings.DEFAULTS, Optional.of(RetentionPeriod.parse("3y")));
            try (TestingArchiverProcess archiver = TestingArchiverProcess.startMaintenance("retention_crash", tables, directory, now, MaintenanceCommand.EXPIRE, settings, Optional.of(Failpoint.RETENTION_AFTER_COMMIT))) {
                archiver.awaitLine("FAILPOINT " + Failpoint.RETENTION_AFTER_COMMIT.pointName(), Duration.ofSeconds(120));
                archiver.kill();
            }
            // March's files are out of the table; its audit row is missing
            long march = tables.table().currentSnapshot().snapshotId();
            assertThat(tables.table().currentSnapshot().summary()).containsEntry(RetentionSweep.MONTH_KEY, YearMonth.of(year - 5, 3).toString());
            assertThat(retentionRows(tables)).isEmpty();

            // the next run records March from its commit, once, then removes April
            TableMaintenance maintenance = maintenance(tables, "3y", now);
            Instant deadline = Instant.now().plus(Duration.ofSeconds(120));
            MaintenanceOutcome outcome = maintenance.expire();
            while (outcome.leaseContended()) {
                assertThat(Instant.now()).as("lease released in time").isBefore(deadline);
                Thread.sleep(20);
                outcome = maintenance.expire();
            }
            assertThat(outcome.swept().orElseThrow().months()).containsExactly(YearMonth.of(year - 5, 3), YearMonth.of(year - 5, 4));
            List<Erasure> rows = retentionRows(tables);
            assertThat(rows).hasSize(2);
            assertThat(rows.getFirst().recorded().snapshotId()).contains(march);
            assertThat(rows.getFirst().recorded().rowsRemovedCold()).isEqualTo(count(readings, YearMonth.of(year - 5, 3)));
            assertThat(rows.get(1).recorded().rowsRemovedCold()).isEqualTo(count(readings, YearMonth.of(year - 5, 4)));
            TieringAudit.assertConsistent(tables, ReadingsOracle.of(List.of()));
            assertThat(maintenance.expire().swept().orElseThrow().months()).isEmpty();
            assertThat(retentionRows(tables)).isEqualTo(rows);
        }
    }

    private static TableMaintenance maintenance(TestingArchiverTable tables, String retention, Instant now)
    {
        MaintenanceSettings settings = new MaintenanceSettings(DEFAULT, Duration.ofDays(3), READER_GRACE, CompactionSettings.DEFAULTS, Optional.of(RetentionPeriod.parse(retention)));
        return new TableMaintenance(tables.catalog(), TestingArchiverTable.identifier(), tables.hotTier(), tables::connect, settings, () -> now);
    }

    private static List<Erasure> retentionRows(TestingArchiverTable tables)
            throws Exception
    {
        try (Connection connection = tables.connect()) {
            List<Erasure> rows = ErasureLog.erasures(connection, SCHEMA, TABLE);
            assertThat(rows).allMatch(row -> row.recorded().trigger() == Trigger.RETENTION);
            return rows;
        }
    }

    private static ReadingsOracle oracleFrom(List<Reading> readings, Instant from)
    {
        return ReadingsOracle.of(readings.stream().filter(reading -> !reading.from().isBefore(from)).toList());
    }

    private static long count(List<Reading> readings, YearMonth month)
    {
        return readings.stream().filter(reading -> YearMonth.from(reading.from().atOffset(ZoneOffset.UTC)).equals(month)).count();
    }

    private static Instant utc(YearMonth month)
    {
        return month.atDay(1).atStartOfDay(ZoneOffset.UTC).toInstant();
    }
}
