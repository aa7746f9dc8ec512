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
        checkArgument(partitions >= splits.size(), "fewer partitions than splits");
        checkArgument(splits.stream().map(HotSplit::partition).allMatch(partitionRanges::containsKey), "a split's partition has no range");
    }
}
