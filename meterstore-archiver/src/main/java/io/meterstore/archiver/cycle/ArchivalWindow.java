package io.meterstore.archiver.cycle;

import io.meterstore.core.HotPartition;
import io.meterstore.core.TieringWatermark;

import java.time.Instant;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * The range [start, end) one archival commit moves below the watermark, and the one hot partition holding its rows,
 * which ends where the window ends; none for a stretch without partitions, which is committed with no data.
 */
public record ArchivalWindow(Instant start, Instant end, Optional<HotPartition> partition)
{
    public ArchivalWindow
    {
        requireNonNull(start, "start is null");
        requireNonNull(end, "end is null");
        requireNonNull(partition, "partition is null");
        checkArgument(end.isAfter(start), "Window end %s is not after its start %s", end, start);
        partition.ifPresent(hot -> checkArgument(hot.end().equals(end) && hot.start().isBefore(end),
                "Partition '%s' [%s, %s) does not end with the window [%s, %s)", hot.name(), hot.start(), hot.end(), start, end));
    }

    /** {@code <from>/<to>}, both RFC 3339, as the snapshot summary records it. */
    public String toProperty()
    {
        return TieringWatermark.formatInstant(start) + "/" + TieringWatermark.formatInstant(end);
    }

    @Override
    public String toString()
    {
        return "[%s, %s)".formatted(TieringWatermark.formatInstant(start), TieringWatermark.formatInstant(end));
    }
}
