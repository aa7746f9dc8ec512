package io.meterstore.core;


import java.util.List;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * What {@link InvariantCheck} found for one table: the watermark of the snapshot it checked, the hot partitions as the
 * catalogue listed them afterwards, and the violations, each a sentence naming the partition or the file.
 */
public record InvariantReport(String table, TieringWatermark watermark, Optional<Long> snapshotId, List<HotPartition> partitions, List<String> violations)
{
    public InvariantReport
    {
        requireNonNull(table, "table is null");
        requireNonNull(watermark, "watermark is null");
        requireNonNull(snapshotId, "snapshotId is null");
        partitions = List.copyOf(requireNonNull(partitions, "partitions is null"));
        violations = List.copyOf(requireNonNull(violations, "violations is null"));
    }

    /** PostgreSQL holds no row below W and Iceberg none at or above it, as far as bounds and statistics tell. */
    public boolean holds()
    {
        return violations.isEmpty();
    }

    /** The partitions queries read: attached to the parent. */
    public List<HotPartition> attachedPartitions()
    {
        return partitions.stream().filter(HotPartition::attached).toList();
    }

    /** Detached partitions below W: archived, kept for queries planned before the commit, dropped after the reader grace. */
    public List<HotPartition> partitionsAwaitingDrop()
    {
        return partitions.stream()
                .filter(partition -> !partition.attached() && partition.isBelow(watermark))
                .toList();
    }

    /** Detached partitions at or above W: left by an interrupted cycle, archived by the next one. */
    public List<HotPartition> partitionsAwaitingArchival()
    {
        return partitions.stream()
                .filter(partition -> !partition.attached() && !partition.isBelow(watermark))
                .toList();
    }
}
