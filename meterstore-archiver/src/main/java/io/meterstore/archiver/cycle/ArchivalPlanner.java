package io.meterstore.archiver.cycle;

import io.meterstore.core.HotPartition;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.TieringWatermark;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

import static io.meterstore.archiver.cycle.ArchivalException.Reason.INVARIANT_VIOLATED;
import static io.meterstore.archiver.cycle.ArchivalException.Reason.PARTITION_MISALIGNED;

/**
 * Chooses the next window to archive from the watermark, the hot partitions and the horizon (now minus the settlement
 * lag). The window starts at the watermark and ends with the first partition at or above it, so a stretch without
 * partitions (a first run from the epoch, an idle meter park, a holiday) is one commit, not one per step.
 */
public final class ArchivalPlanner
{
    private ArchivalPlanner() {}

    /** The window to archive next, or empty when nothing is closed. */
    public static Optional<ArchivalWindow> plan(String table, TieringWatermark watermark, List<HotPartition> partitions, Instant horizon, PartitionNaming naming)
    {
        Instant lower = watermark.instant();
        for (HotPartition partition : partitions) {
            if (partition.attached() && partition.start().isBefore(lower)) {
                // its rows are below W, where no query reads PostgreSQL, and not in Iceberg: refuse rather than bury them
                throw new ArchivalException(INVARIANT_VIOLATED,
                        "Partition '%s' of table '%s' is attached but starts at %s, below the watermark %s: its rows are read by neither tier; move its rows to Iceberg (INSERT them through MeterStore) and drop it, then archive again"
                                .formatted(partition.name(), table, TieringWatermark.formatInstant(partition.start()), watermark));
            }
        }
        Optional<HotPartition> next = partitions.stream()
                .filter(partition -> !partition.start().isBefore(lower))
                .findFirst();
        if (next.isPresent()) {
            HotPartition partition = next.get();
            if (!naming.isAligned(partition.start())) {
                throw new ArchivalException(PARTITION_MISALIGNED,
                        "Partition '%s' of table '%s' does not start on the archival step %s: configure the step the partitions were created with"
                                .formatted(partition.name(), table, naming.step()));
            }
            Instant end = partition.start().plus(naming.step());
            if (!end.isAfter(horizon)) {
                return Optional.of(new ArchivalWindow(lower, end, Optional.of(partition)));
            }
        }
        // no closed partition: advance over the empty stretch up to the horizon, stopping short of the next partition
        Instant end = naming.alignDown(horizon);
        if (next.isPresent() && next.get().start().isBefore(end)) {
            end = next.get().start();
        }
        if (end.isAfter(lower)) {
            return Optional.of(new ArchivalWindow(lower, end, Optional.empty()));
        }
        return Optional.empty();
    }
}
