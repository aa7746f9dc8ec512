package io.meterstore.archiver.cycle;

import io.meterstore.core.HotPartition;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.TieringWatermark;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
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
                .hasMessageStartingWith("Partition 'readings_2024_03_04_0000' of table 'metering.readings' is attached but starts at 2024-03-04T00:00:00Z, below the watermark 2024-03-05T00:00:00Z");
    }

    @Test
    void testPartitionOffTheStepIsRefused()
    {
        HotPartition partition = new HotPartition("readings_2024_03_05_1200", Instant.parse("2024-03-05T12:00:00Z"), Optional.empty(), true);
        assertThatThrownBy(() -> plan(watermark("2024-03-05"), List.of(partition), "2024-03-10T00:00:00Z"))
                .isInstanceOfSatisfying(ArchivalException.class, exception -> assertThat(exception.reason()).isEqualTo(ArchivalException.Reason.PARTITION_MISALIGNED))
                .hasMessage("Partition 'readings_2024_03_05_1200' of table 'metering.readings' does not start on the archival step PT24H: configure the step the partitions were created with");
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

    /** Partitions as HotTier reports them: ordered by start, each bounded by the next one's start. */
    private static List<HotPartition> partitions(Found... found)
    {
        List<Found> ordered = Arrays.asList(found);
        List<HotPartition> partitions = new ArrayList<>();
        for (int index = 0; index < ordered.size(); index++) {
            Optional<Instant> upper = index + 1 < ordered.size() ? Optional.of(ordered.get(index + 1).start()) : Optional.empty();
            Found partition = ordered.get(index);
            partitions.add(new HotPartition(NAMING.partitionName(partition.start()), partition.start(), upper, partition.attached()));
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
