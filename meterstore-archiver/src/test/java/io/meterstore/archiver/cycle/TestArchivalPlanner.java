package io.meterstore.archiver.cycle;

import io.meterstore.core.HotPartition;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.TieringWatermark;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class TestArchivalPlanner
{
    private static final PartitionNaming NAMING = new PartitionNaming("readings", Duration.ofDays(1));

    @Test
    void testFirstRunArchivesFromTheEpochToTheFirstPartitionsEnd()
    {
        List<HotPartition> partitions = partitions(attached("2024-03-05"), attached("2024-03-06"));
        assertThat(plan(TieringWatermark.EPOCH, partitions, "2024-03-10T00:00:00Z"))
                .contains(new ArchivalWindow(Instant.EPOCH, instant("2024-03-06"), Optional.of(partitions.getFirst())));
    }

    @Test
    void testWindowEndingAtTheHorizonIsClosed()
    {
        List<HotPartition> partitions = partitions(attached("2024-03-05"));
        assertThat(plan(watermark("2024-03-05"), partitions, "2024-03-06T00:00:00Z"))
                .contains(new ArchivalWindow(instant("2024-03-05"), instant("2024-03-06"), Optional.of(partitions.getFirst())));
        assertThat(plan(watermark("2024-03-05"), partitions, "2024-03-05T23:59:59Z")).isEmpty();
    }

    @Test
    void testGapExtendsToTheNextPartition()
    {
        List<HotPartition> partitions = partitions(detached("2024-03-01"), attached("2024-03-05"));
        assertThat(plan(watermark("2024-03-02"), partitions, "2024-03-10T00:00:00Z"))
                .contains(new ArchivalWindow(instant("2024-03-02"), instant("2024-03-06"), Optional.of(partitions.get(1))));
    }

    @Test
    void testEmptyStretchAdvancesToTheAlignedHorizon()
    {
        assertThat(plan(TieringWatermark.EPOCH, List.of(), "2024-03-05T12:00:00Z"))
                .contains(new ArchivalWindow(Instant.EPOCH, instant("2024-03-05"), Optional.empty()));
    }

    @Test
    void testEmptyStretchStopsAtAnOpenPartition()
    {
        List<HotPartition> partitions = partitions(attached("2024-03-05"));
        assertThat(plan(watermark("2024-03-01"), partitions, "2024-03-05T12:00:00Z"))
                .contains(new ArchivalWindow(instant("2024-03-01"), instant("2024-03-05"), Optional.empty()));
    }

    @Test
    void testNothingClosedIsIdle()
    {
        assertThat(plan(watermark("2024-03-05"), partitions(attached("2024-03-05")), "2024-03-05T12:00:00Z")).isEmpty();
        assertThat(plan(watermark("2024-03-05"), List.of(), "2024-03-05T12:00:00Z")).isEmpty();
    }

    @Test
    void testDetachedPartitionAtTheWatermarkIsTheNextTarget()
    {
        // left detached by an interrupted run: archived next, as if the run had not happened
        List<HotPartition> partitions = partitions(detached("2024-03-04"), detached("2024-03-05"), attached("2024-03-06"));
        assertThat(plan(watermark("2024-03-05"), partitions, "2024-03-10T00:00:00Z"))
                .contains(new ArchivalWindow(instant("2024-03-05"), instant("2024-03-06"), Optional.of(partitions.get(1))));
    }

    @Test
    void testAttachedPartitionBelowTheWatermarkIsRefused()
    {
        List<HotPartition> partitions = partitions(attached("2024-03-04"), attached("2024-03-05"));
        assertThatThrownBy(() -> plan(watermark("2024-03-05"), partitions, "2024-03-10T00:00:00Z"))
                .isInstanceOfSatisfying(ArchivalException.class, exception -> assertThat(exception.reason()).isEqualTo(ArchivalException.Reason.INVARIANT_VIOLATED))
                .hasMessageStartingWith("Partition 'readings_2024_03_04_0000' of table 'metering.readings' is attached but lies below the watermark 2024-03-05T00:00:00Z (it ends at 2024-03-05T00:00:00Z)");
    }

    @Test
    void testPartitionWiderThanTheStepIsArchivedWhole()
    {
        // archived by the hour, but the day's partition was created a day wide: the window ends where the partition ends
        PartitionNaming hourly = new PartitionNaming("readings", Duration.ofHours(1));
        HotPartition day = new HotPartition("readings_2024_03_05_0000", instant("2024-03-05"), instant("2024-03-06"), true);
        assertThat(ArchivalPlanner.plan("metering.readings", watermark("2024-03-05"), List.of(day), Instant.parse("2024-03-06T00:00:00Z"), hourly))
                .contains(new ArchivalWindow(instant("2024-03-05"), instant("2024-03-06"), Optional.of(day)));
        // not closed before its end passes the horizon, however many steps of it have
        assertThat(ArchivalPlanner.plan("metering.readings", watermark("2024-03-05"), List.of(day), Instant.parse("2024-03-05T23:00:00Z"), hourly)).isEmpty();
    }

    @Test
    void testPartitionOffTheStepIsArchivedByItsBounds()
    {
        HotPartition partition = new HotPartition("readings_2024_03_05_1200", Instant.parse("2024-03-05T12:00:00Z"), Instant.parse("2024-03-07T00:00:00Z"), true);
        assertThat(plan(watermark("2024-03-05"), List.of(partition), "2024-03-10T00:00:00Z"))
                .contains(new ArchivalWindow(instant("2024-03-05"), instant("2024-03-07"), Optional.of(partition)));
    }

    @Test
    void testPartitionReachingAcrossTheWatermarkIsArchivedFromIt()
    {
        // a wide partition of which an earlier run archived the first hours only: the rest is the next window
        HotPartition day = new HotPartition("readings_2024_03_05_0000", instant("2024-03-05"), instant("2024-03-06"), false);
        assertThat(plan(TieringWatermark.of(Instant.parse("2024-03-05T01:00:00Z")), List.of(day), "2024-03-10T00:00:00Z"))
                .contains(new ArchivalWindow(Instant.parse("2024-03-05T01:00:00Z"), instant("2024-03-06"), Optional.of(day)));
    }

    @Test
    void testOverlappingPartitionsAreRefused()
    {
        HotPartition detached = new HotPartition("readings_2024_03_05_0000", instant("2024-03-05"), instant("2024-03-06"), false);
        HotPartition attached = new HotPartition("readings_2024_03_05_1200", Instant.parse("2024-03-05T12:00:00Z"), instant("2024-03-06"), true);
        assertThatThrownBy(() -> plan(watermark("2024-03-05"), List.of(detached, attached), "2024-03-10T00:00:00Z"))
                .isInstanceOfSatisfying(ArchivalException.class, exception -> assertThat(exception.reason()).isEqualTo(ArchivalException.Reason.PARTITION_OVERLAP))
                .hasMessageStartingWith("Partitions 'readings_2024_03_05_0000' [2024-03-05T00:00:00Z, 2024-03-06T00:00:00Z) and 'readings_2024_03_05_1200' [2024-03-05T12:00:00Z, 2024-03-06T00:00:00Z) of table 'metering.readings' overlap");
    }

    private static Optional<ArchivalWindow> plan(TieringWatermark watermark, List<HotPartition> partitions, String horizon)
    {
        return ArchivalPlanner.plan("metering.readings", watermark, partitions, Instant.parse(horizon), NAMING);
    }

    private record Found(Instant start, boolean attached) {}

    private static Found attached(String day)
    {
        return new Found(instant(day), true);
    }

    private static Found detached(String day)
    {
        return new Found(instant(day), false);
    }

    /** Partitions as HotTier reports them: ordered by start, each one step of the catalogue. */
    private static List<HotPartition> partitions(Found... found)
    {
        List<HotPartition> partitions = new ArrayList<>();
        for (Found partition : found) {
            partitions.add(new HotPartition(NAMING.partitionName(partition.start()), partition.start(), partition.start().plus(NAMING.step()), partition.attached()));
        }
        return List.copyOf(partitions);
    }

    private static Instant instant(String day)
    {
        return Instant.parse(day + "T00:00:00Z");
    }

    private static TieringWatermark watermark(String day)
    {
        return TieringWatermark.of(instant(day));
    }
}
