package io.meterstore.archiver.service;

import com.google.common.collect.ImmutableMap;
import com.google.common.collect.ImmutableSortedMap;
import io.meterstore.archiver.cycle.ArchivalWindow;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.cycle.TestingClock;
import io.meterstore.archiver.maintenance.ColdTierLayout;
import io.meterstore.archiver.maintenance.ColdTierLayout.MonthFiles;
import io.meterstore.archiver.maintenance.MonthCompaction;
import io.meterstore.archiver.maintenance.RetentionSweep;
import io.meterstore.archiver.maintenance.MonthCompaction.Compacted;
import io.meterstore.archiver.maintenance.MaintenanceCommand;
import io.meterstore.archiver.maintenance.ErasureCompletion;
import io.meterstore.archiver.maintenance.MaintenanceOutcome;
import io.meterstore.archiver.maintenance.ManifestRewrite.Rewritten;
import io.meterstore.archiver.maintenance.OrphanFiles.Removed;
import io.meterstore.archiver.maintenance.SnapshotExpiry.Expired;
import io.meterstore.archiver.service.TableInfo.ColdTierInfo;
import io.meterstore.archiver.service.TableInfo.MaintenanceInfo;
import io.meterstore.core.HotPartition;
import io.meterstore.core.InvariantReport;
import io.meterstore.core.SnapshotRetention;
import io.meterstore.core.TieringWatermark;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.time.YearMonth;
import java.util.List;
import java.util.Optional;

import static io.airlift.units.Duration.succinctDuration;
import static java.util.concurrent.TimeUnit.HOURS;
import static org.assertj.core.api.Assertions.assertThat;

final class TestArchiverStats
{
    private static final Instant MARCH_6 = Instant.parse("2024-03-06T00:00:00Z");

    @Test
    void testCountsCyclesByResult()
    {
        TestingClock clock = new TestingClock(MARCH_6.plus(Duration.ofDays(7)));
        ArchiverStats stats = stats(clock);

        stats.cycleFinished("readings", archived("metering.readings", 96, 4000), Duration.ofSeconds(2));
        stats.cycleFinished("readings", idle("metering.readings"), Duration.ofMillis(50));
        stats.cycleFinished("gas_readings", archived("metering.gas_readings", 24, 1000), Duration.ofSeconds(1));
        stats.cycleFailed("gas_readings", "metering.gas_readings: failed: Connection refused", Duration.ofMillis(10));

        assertThat(stats.getCounters().getArchivedRows().getTotalCount()).isEqualTo(120);
        assertThat(stats.getCounters().getArchivedBytes().getTotalCount()).isEqualTo(5000);
        assertThat(stats.getCounters().getArchivedFiles().getTotalCount()).isEqualTo(2);
        assertThat(stats.getCounters().getCyclesArchived().getTotalCount()).isEqualTo(2);
        assertThat(stats.getCounters().getCyclesIdle().getTotalCount()).isEqualTo(1);
        assertThat(stats.getCounters().getCyclesFailed().getTotalCount()).isEqualTo(1);
        assertThat(stats.getCounters().getCyclesDeferred().getTotalCount()).isZero();
        assertThat(stats.getCounters().getCyclesSuperseded().getTotalCount()).isZero();
        assertThat(stats.getCounters().getCyclesLeaseContended().getTotalCount()).isZero();

        TableArchiverStats readings = stats.table("readings");
        assertThat(readings.getCounters().getArchivedRows().getTotalCount()).isEqualTo(96);
        assertThat(readings.getCounters().getArchivedFiles().getTotalCount()).isEqualTo(1);
        assertThat(readings.getCounters().getCyclesArchived().getTotalCount()).isEqualTo(1);
        assertThat(readings.getCounters().getCyclesIdle().getTotalCount()).isEqualTo(1);
        assertThat(readings.getCounters().getCyclesFailed().getTotalCount()).isZero();
        assertThat(stats.table("gas_readings").getCounters().getCyclesFailed().getTotalCount()).isEqualTo(1);

        TableInfo info = stats.table("gas_readings").info();
        assertThat(info.name()).isEqualTo("metering.gas_readings");
        assertThat(info.lastResult()).contains(CycleResult.FAILED);
        assertThat(info.lastCycle()).contains("metering.gas_readings: failed: Connection refused");
        assertThat(info.lastCycleFinished()).contains(clock.instant());
        // the failure did not forget where the watermark stands
        assertThat(info.watermark()).contains(MARCH_6);
    }

    @Test
    void testWatermarkLagFollowsTheClock()
    {
        TestingClock clock = new TestingClock(MARCH_6.plus(Duration.ofDays(7)));
        ArchiverStats stats = stats(clock);
        assertThat(stats.table("readings").getWatermarkLagSeconds()).isNaN();
        assertThat(stats.getMaxWatermarkLagSeconds()).isNaN();

        stats.cycleFinished("readings", archived("metering.readings", 96, 4000), Duration.ofSeconds(2));
        assertThat(stats.table("readings").getWatermarkLagSeconds()).isEqualTo(7 * 86400.0);
        assertThat(stats.table("readings").watermarkLag()).contains(Duration.ofDays(7));
        clock.advance(Duration.ofHours(1));
        assertThat(stats.table("readings").getWatermarkLagSeconds()).isEqualTo(7 * 86400.0 + 3600);
        // the table without a watermark yet does not count
        assertThat(stats.getMaxWatermarkLagSeconds()).isEqualTo(7 * 86400.0 + 3600);
        assertThat(stats.table("readings").info().watermarkLag()).contains(succinctDuration(7 * 24 + 1, HOURS));
    }

    @Test
    void testInvariantGauges()
    {
        TestingClock clock = new TestingClock(MARCH_6.plus(Duration.ofDays(7)));
        ArchiverStats stats = stats(clock);
        List<HotPartition> partitions = List.of(
                new HotPartition("readings_2024_03_04_0000", Instant.parse("2024-03-04T00:00:00Z"), Instant.parse("2024-03-05T00:00:00Z"), true),
                new HotPartition("readings_2024_03_05_0000", Instant.parse("2024-03-05T00:00:00Z"), MARCH_6, false),
                new HotPartition("readings_2024_03_06_0000", MARCH_6, MARCH_6.plus(Duration.ofDays(1)), true));
        stats.invariantChecked("readings", new InvariantReport("metering.readings", TieringWatermark.of(MARCH_6), Optional.of(1L), partitions, List.of("Partition 'readings_2024_03_04_0000' is attached below the watermark")));

        TableArchiverStats readings = stats.table("readings");
        assertThat(readings.getInvariantViolations()).isEqualTo(1);
        assertThat(readings.getAttachedPartitions()).isEqualTo(2);
        assertThat(readings.getPartitionsAwaitingDrop()).isEqualTo(1);
        assertThat(readings.getWatermarkLagSeconds()).isEqualTo(7 * 86400.0);
        assertThat(readings.info().invariantViolations()).containsExactly("Partition 'readings_2024_03_04_0000' is attached below the watermark");
        assertThat(stats.getInvariantViolations()).isEqualTo(1);

        stats.invariantChecked("readings", new InvariantReport("metering.readings", TieringWatermark.of(MARCH_6), Optional.of(1L), partitions.subList(1, 3), List.of()));
        assertThat(stats.getInvariantViolations()).isZero();
    }

    @Test
    void testMaintenanceMetrics()
    {
        TestingClock clock = new TestingClock(MARCH_6.plus(Duration.ofDays(7)));
        ArchiverStats stats = stats(clock);
        TableArchiverStats readings = stats.table("readings");
        assertThat(readings.getSnapshots()).isNaN();
        assertThat(readings.getSecondsSinceExpire()).isNaN();
        assertThat(stats.getMaxSecondsSinceMaintenance()).isNaN();

        ColdTierLayout layout = new ColdTierLayout(21, Optional.of(MARCH_6), 3, ImmutableSortedMap.of(
                YearMonth.of(2024, 1), new MonthFiles(2, 2976, 80_000, 0, 2, 0, Optional.of(MARCH_6.minus(Duration.ofDays(1))), 0),
                YearMonth.of(2024, 2), new MonthFiles(29, 2784, 90_000, 0, 0, 1, Optional.empty(), 0),
                YearMonth.of(2024, 3), new MonthFiles(31, 2976, 95_000)));
        assertThat(readings.getErasuresAwaiting()).isNaN();
        assertThat(readings.getErasureOverdueSeconds()).isNaN();
        // two erasures made physical, one awaiting, due two hours ago; two months past the retention removed
        MaintenanceOutcome expire = new MaintenanceOutcome("metering.readings", MaintenanceCommand.EXPIRE, false,
                Optional.of(new Expired(3, 5, 21, Optional.of(MARCH_6))), Optional.of(new Removed(2, 100, 40)), Optional.empty(), Optional.empty(),
                layout, SnapshotRetention.DEFAULT, Duration.ofDays(3),
                Optional.of(new RetentionSweep.Swept(MARCH_6, List.of(YearMonth.of(2020, 1), YearMonth.of(2020, 2)), 5000, 0)),
                Optional.of(new ErasureCompletion.Completed(List.of(7L, 8L), 4, 6, List.of(new ErasureCompletion.Awaiting(9, clock.instant().minus(Duration.ofHours(2)))))));
        stats.maintenanceFinished("readings", expire, clock.instant());
        assertThat(readings.getCounters().getErasuresCompleted().getTotalCount()).isEqualTo(2);
        assertThat(readings.getCounters().getRetainedMonths().getTotalCount()).isEqualTo(2);
        assertThat(readings.getErasuresAwaiting()).isEqualTo(1);
        assertThat(readings.getErasureOverdueSeconds()).isEqualTo(7200);
        assertThat(stats.getCounters().getErasuresCompleted().getTotalCount()).isEqualTo(2);
        assertThat(stats.getCounters().getRetainedMonths().getTotalCount()).isEqualTo(2);
        assertThat(readings.getCounters().getExpiredSnapshots().getTotalCount()).isEqualTo(3);
        assertThat(readings.getCounters().getExpiredFiles().getTotalCount()).isEqualTo(5);
        assertThat(readings.getCounters().getOrphanFilesRemoved().getTotalCount()).isEqualTo(2);
        assertThat(readings.getCounters().getOrphanBytesRemoved().getTotalCount()).isEqualTo(100);
        assertThat(readings.getSnapshots()).isEqualTo(21);
        assertThat(readings.getManifests()).isEqualTo(3);
        assertThat(readings.getDataFiles()).isEqualTo(62);
        assertThat(readings.getUnresolvedMonths()).isEqualTo(1);
        assertThat(readings.getSecondsSinceOldestMonthCompaction()).isEqualTo(Duration.ofDays(8).toSeconds());
        assertThat(readings.getMaxDataFilesPerMonth()).isEqualTo(31);
        assertThat(stats.getCounters().getExpiredSnapshots().getTotalCount()).isEqualTo(3);
        assertThat(stats.getCounters().getOrphanFilesRemoved().getTotalCount()).isEqualTo(2);
        // the totals count what each table counts, every counter of it
        assertThat(stats.getCounters().getExpiredFiles().getTotalCount()).isEqualTo(5);
        assertThat(stats.getCounters().getOrphanBytesRemoved().getTotalCount()).isEqualTo(100);

        clock.advance(Duration.ofHours(1));
        assertThat(readings.getSecondsSinceExpire()).isEqualTo(3600);
        assertThat(readings.getSecondsSinceCompact()).isNaN();
        assertThat(stats.getMaxSecondsSinceMaintenance()).isEqualTo(3600);

        MaintenanceOutcome compact = new MaintenanceOutcome("metering.readings", MaintenanceCommand.COMPACT, false, Optional.empty(), Optional.empty(),
                Optional.of(new Rewritten(3, 1, 500, 42, TieringWatermark.of(MARCH_6), 1)),
                Optional.of(new MonthCompaction.Result(List.of(new Compacted(YearMonth.of(2024, 1), 31, 2, true, 1, 1, 2976, 80_000, 43, TieringWatermark.of(MARCH_6), 1)), List.of(), 0)),
                layout, SnapshotRetention.DEFAULT, Duration.ofDays(3));
        stats.maintenanceFinished("readings", compact, clock.instant());
        assertThat(readings.getCounters().getRewrittenManifests().getTotalCount()).isEqualTo(3);
        // the manifests' bytes and the compacted month's
        assertThat(readings.getCounters().getRewrittenBytes().getTotalCount()).isEqualTo(80_500);
        assertThat(stats.getCounters().getRewrittenBytes().getTotalCount()).isEqualTo(80_500);
        assertThat(readings.getCounters().getCompactedMonths().getTotalCount()).isEqualTo(1);
        assertThat(stats.getCounters().getRewrittenManifests().getTotalCount()).isEqualTo(3);
        assertThat(stats.getCounters().getCompactedMonths().getTotalCount()).isEqualTo(1);
        assertThat(readings.getSecondsSinceCompact()).isZero();

        // without the lease nothing ran: nothing counted, the last run stays
        stats.maintenanceFinished("readings", new MaintenanceOutcome("metering.readings", MaintenanceCommand.EXPIRE, true, Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
                ColdTierLayout.EMPTY, SnapshotRetention.DEFAULT, Duration.ofDays(3)), clock.instant());
        assertThat(readings.getCounters().getExpiredSnapshots().getTotalCount()).isEqualTo(3);
        assertThat(readings.getSecondsSinceExpire()).isEqualTo(3600);
        assertThat(readings.getSnapshots()).isEqualTo(21);

        // a failure keeps when it last finished, and says what went wrong
        stats.maintenanceFailed("readings", MaintenanceCommand.EXPIRE, "metering.readings: expire failed: Connection refused");
        assertThat(readings.getCounters().getMaintenanceFailures().getTotalCount()).isEqualTo(1);
        assertThat(stats.getCounters().getMaintenanceFailures().getTotalCount()).isEqualTo(1);
        TableInfo info = readings.info();
        assertThat(info.maintenance()).containsExactly(
                new MaintenanceInfo("expire", Optional.of(MARCH_6.plus(Duration.ofDays(7))), "metering.readings: expire failed: Connection refused"),
                new MaintenanceInfo("compact", Optional.of(clock.instant()), compact.describe()));
        assertThat(info.coldTier()).contains(new ColdTierInfo(21, 3, 62, 31, ImmutableMap.of("2024-01", 2, "2024-02", 29, "2024-03", 31),
                ImmutableMap.of("2024-01", MARCH_6.minus(Duration.ofDays(1))), 1));

        // another replica ran it since, as the table records it
        clock.advance(Duration.ofHours(1));
        readings.maintenanceRecorded(MaintenanceCommand.EXPIRE, Optional.of(clock.instant().minus(Duration.ofMinutes(10))));
        assertThat(readings.getSecondsSinceExpire()).isEqualTo(600);
    }

    private static ArchiverStats stats(TestingClock clock)
    {
        return new ArchiverStats(ImmutableMap.of(
                "readings", new TableArchiverStats("metering.readings", clock),
                "gas_readings", new TableArchiverStats("metering.gas_readings", clock)), "metering", clock, Optional.empty());
    }

    private static ArchiveOutcome archived(String table, long rows, long bytes)
    {
        ArchivalWindow window = new ArchivalWindow(MARCH_6.minus(Duration.ofDays(1)), MARCH_6, Optional.empty());
        return new ArchiveOutcome(table, ArchiveOutcome.Kind.ARCHIVED, Optional.of(window), rows, 1, bytes, TieringWatermark.of(MARCH_6), Optional.of(1L), List.of());
    }

    private static ArchiveOutcome idle(String table)
    {
        return new ArchiveOutcome(table, ArchiveOutcome.Kind.IDLE, Optional.empty(), 0, 0, 0, TieringWatermark.of(MARCH_6), Optional.empty(), List.of());
    }
}
