package io.meterstore.trino.hot;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import io.meterstore.core.TierSplit;

import java.util.List;
import java.util.Map;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * The hot splits of one query and what was pruned to get them.
 *
 * @param partitions every partition of the table at planning, attached and detached
 * @param partitionRanges the "from" range each split's partition holds, by partition name: what a dynamic filter prunes with
 */
public record HotSplitPlan(List<HotSplit> splits, long partitions, Map<String, TierSplit.Range> partitionRanges)
{
    public static final HotSplitPlan EMPTY = new HotSplitPlan(ImmutableList.of(), 0, ImmutableMap.of());

    public HotSplitPlan
    {
        splits = ImmutableList.copyOf(requireNonNull(splits, "splits is null"));
        partitionRanges = ImmutableMap.copyOf(requireNonNull(partitionRanges, "partitionRanges is null"));
        checkArgument(partitions >= partitionsRead(splits), "fewer partitions than the splits read");
        checkArgument(splits.stream().flatMap(split -> split.partitions().stream()).allMatch(partitionRanges::containsKey), "a split's partition has no range");
    }

    /** The partitions the splits read: as many as the splits, or more when a split reads several. */
    public long partitionsRead()
    {
        return partitionsRead(splits);
    }

    private static long partitionsRead(List<HotSplit> splits)
    {
        return splits.stream().mapToLong(split -> split.partitions().size()).sum();
    }
}
