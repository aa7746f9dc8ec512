package io.meterstore.trino.hot;

import io.meterstore.core.PartitionNaming;
import io.meterstore.core.TierSplit;
import io.meterstore.trino.base.FromRange;

import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * The rows of the hot tier in a "from" range, estimated from PostgreSQL's statistics of the partitions that meet it
 * (attached or detached: the split planner reads them all by name). A partition that only partly meets the range
 * counts in proportion to the time it covers; the newest, which has no upper bound, counts as one archival step.
 *
 * @param rows the estimated rows in the range
 * @param lowestFrom the start of the oldest partition counted; empty without rows
 * @param highestFrom the exclusive end of the newest partition counted; empty without rows
 */
public record HotRowEstimate(long rows, Optional<Instant> lowestFrom, Optional<Instant> highestFrom)
{
    public static final HotRowEstimate EMPTY = new HotRowEstimate(0, Optional.empty(), Optional.empty());

    public HotRowEstimate
    {
        checkArgument(rows >= 0, "rows is negative: %s", rows);
        requireNonNull(lowestFrom, "lowestFrom is null");
        requireNonNull(highestFrom, "highestFrom is null");
    }

    /**
     * @param hotRange the hot part of a query's "from" range; its lower bound is the watermark or above
     */
    public static HotRowEstimate of(HotPartitionSizes sizes, PartitionNaming naming, TierSplit.Range hotRange)
    {
        requireNonNull(sizes, "sizes is null");
        requireNonNull(naming, "naming is null");
        requireNonNull(hotRange, "hotRange is null");
        record Partition(Instant start, HotPartitionSizes.Size size) {}
        List<Partition> partitions = sizes.sizes().entrySet().stream()
                .flatMap(entry -> naming.partitionStart(entry.getKey()).map(start -> new Partition(start, entry.getValue())).stream())
                .sorted(Comparator.comparing(Partition::start))
                .toList();
        double rows = 0;
        Optional<Instant> lowest = Optional.empty();
        Optional<Instant> highest = Optional.empty();
        for (int index = 0; index < partitions.size(); index++) {
            Partition partition = partitions.get(index);
            // a partition ends where the next begins, as the split planner reads it
            Instant end = index + 1 < partitions.size() ? partitions.get(index + 1).start() : partition.start().plus(naming.step());
            double fraction = FromRange.share(partition.start(), end, hotRange);
            long partitionRows = partition.size().estimatedRows();
            if (fraction > 0 && partitionRows > 0) {
                rows += partitionRows * fraction;
                lowest = lowest.or(() -> Optional.of(partition.start()));
                highest = Optional.of(end);
            }
        }
        long estimated = Math.round(rows);
        return estimated == 0 ? EMPTY : new HotRowEstimate(estimated, lowest, highest);
    }
}
