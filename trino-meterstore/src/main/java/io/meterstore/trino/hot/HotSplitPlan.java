package io.meterstore.trino.hot;

import com.google.common.collect.ImmutableList;

import java.util.List;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * The hot splits of one query and what was pruned to get them.
 *
 * @param partitions every partition of the table at planning, attached and detached
 */
public record HotSplitPlan(List<HotSplit> splits, long partitions)
{
    public HotSplitPlan
    {
        splits = ImmutableList.copyOf(requireNonNull(splits, "splits is null"));
        checkArgument(partitions >= splits.size(), "fewer partitions than splits");
    }
}
