package io.meterstore.trino.cold;

import com.google.common.collect.ImmutableList;

import java.util.List;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * The cold splits of one query and what planning them cost.
 *
 * @param splits the row-group aligned ranges of the data files that survived pruning
 * @param dataFiles the data files that survived pruning
 * @param dataFileBytes their total size
 * @param dataManifests the data manifests of the snapshot
 * @param skippedDataManifests the data manifests pruned by their partition summaries
 * @param skippedDataFiles the data files pruned by partition values or column bounds
 */
public record ColdSplitPlan(
        List<ColdSplit> splits,
        long dataFiles,
        long dataFileBytes,
        long dataManifests,
        long skippedDataManifests,
        long skippedDataFiles)
{
    public static final ColdSplitPlan EMPTY = new ColdSplitPlan(ImmutableList.of(), 0, 0, 0, 0, 0);

    public ColdSplitPlan
    {
        splits = ImmutableList.copyOf(requireNonNull(splits, "splits is null"));
        checkArgument(dataFiles >= 0 && dataFileBytes >= 0 && dataManifests >= 0 && skippedDataManifests >= 0 && skippedDataFiles >= 0, "counts must not be negative");
    }
}
