package io.meterstore.archiver.service;

import com.google.common.collect.ImmutableMap;
import io.meterstore.archiver.cycle.ArchivalWindow;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.cycle.TestingClock;
import io.meterstore.archiver.invariant.InvariantReport;
import io.meterstore.core.HotPartition;
import io.meterstore.core.TieringWatermark;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
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

        assertThat(stats.getArchivedRows().getTotalCount()).isEqualTo(120);
        assertThat(stats.getArchivedBytes().getTotalCount()).isEqualTo(5000);
        assertThat(stats.getCyclesArchived().getTotalCount()).isEqualTo(2);
        assertThat(stats.getCyclesIdle().getTotalCount()).isEqualTo(1);
        assertThat(stats.getCyclesFailed().getTotalCount()).isEqualTo(1);
        assertThat(stats.getCyclesDeferred().getTotalCount()).isZero();
        assertThat(stats.getCyclesSuperseded().getTotalCount()).isZero();
        assertThat(stats.getCyclesLeaseContended().getTotalCount()).isZero();

        TableArchiverStats readings = stats.table("readings");
        assertThat(readings.getArchivedRows().getTotalCount()).isEqualTo(96);
        assertThat(readings.getArchivedFiles().getTotalCount()).isEqualTo(1);
        assertThat(readings.getCyclesArchived().getTotalCount()).isEqualTo(1);
        assertThat(readings.getCyclesIdle().getTotalCount()).isEqualTo(1);
        assertThat(readings.getCyclesFailed().getTotalCount()).isZero();
        assertThat(stats.table("gas_readings").getCyclesFailed().getTotalCount()).isEqualTo(1);

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

    private static ArchiverStats stats(TestingClock clock)
    {
        return new ArchiverStats(ImmutableMap.of(
                "readings", new TableArchiverStats("metering.readings", clock),
                "gas_readings", new TableArchiverStats("metering.gas_readings", clock)));
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
