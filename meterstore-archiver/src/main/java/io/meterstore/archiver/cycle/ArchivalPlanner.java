package io.meterstore.archiver.cycle;

import io.meterstore.core.HotPartition;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.TieringWatermark;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

import static io.meterstore.archiver.cycle.ArchivalException.Reason.INVARIANT_VIOLATED;
import static io.meterstore.archiver.cycle.ArchivalException.Reason.PARTITION_OVERLAP;
import static io.meterstore.core.TieringWatermark.formatInstant;

/**
 * Chooses the next window to archive from the watermark, the hot partitions with their catalogue bounds and the
 * horizon (now minus the settlement lag). The window starts at the watermark and ends where the first partition
 * reaching above it ends, so it holds that partition's every row at or above W, however wide the partition is; a
 * stretch without partitions (a first run from the epoch, an idle meter park, a holiday) is one commit, not one per step.
 */
public final class ArchivalPlanner
{
    private ArchivalPlanner() {}

    /** The window to archive next, or empty when nothing is closed. */
    public static Optional<ArchivalWindow> plan(String table, TieringWatermark watermark, List<HotPartition> partitions, Instant horizon, PartitionNaming naming)
    {
        Instant lower = watermark.instant();
        for (HotPartition partition : partitions) {
            if (partition.attached() && partition.isBelow(watermark)) {
                // its rows are below W, where no query reads PostgreSQL, and not in Iceberg: refuse rather than bury them
                throw new ArchivalException(INVARIANT_VIOLATED,
                        "Partition '%s' of table '%s' is attached but lies below the watermark %s (it ends at %s): its rows are read by neither tier; move its rows to Iceberg (INSERT them through MeterStore) and drop it, then archive again"
                                .formatted(partition.name(), table, watermark, formatInstant(partition.end())));
            }
        }
        // the partitions reaching above W, in order of their start
        List<HotPartition> above = partitions.stream()
                .filter(partition -> !partition.isBelow(watermark))
                .toList();
        if (!above.isEmpty()) {
            HotPartition next = above.getFirst();
            if (above.size() > 1 && above.get(1).start().isBefore(next.end())) {
                // attached partitions cannot overlap; a detached one can meet one created after it: archiving either would
                // move W over rows of the other
                HotPartition other = above.get(1);
                throw new ArchivalException(PARTITION_OVERLAP,
                        "Partitions '%s' [%s, %s) and '%s' [%s, %s) of table '%s' overlap: archiving either would move the watermark over rows of the other; move the rows of one into the other and drop it"
                                .formatted(next.name(), formatInstant(next.start()), formatInstant(next.end()), other.name(), formatInstant(other.start()), formatInstant(other.end()), table));
            }
            if (!next.end().isAfter(horizon)) {
                return Optional.of(new ArchivalWindow(lower, next.end(), Optional.of(next)));
            }
        }
        // no closed partition: advance over the empty stretch up to the horizon, stopping short of the next partition
        Instant end = naming.alignDown(horizon);
        if (!above.isEmpty() && above.getFirst().start().isBefore(end)) {
            end = above.getFirst().start();
        }
        if (end.isAfter(lower)) {
            return Optional.of(new ArchivalWindow(lower, end, Optional.empty()));
        }
        return Optional.empty();
    }
}
