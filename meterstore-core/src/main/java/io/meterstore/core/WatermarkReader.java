package io.meterstore.core;

import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

import java.util.Optional;

import static io.meterstore.core.MeterstoreException.Reason.WATERMARK_CHAIN_BROKEN;
import static io.meterstore.core.MeterstoreException.Reason.WATERMARK_MISSING;
import static java.util.Objects.requireNonNull;

/**
 * Reads the tiering watermark a snapshot stands for. A snapshot written by another tool (compaction) carries none,
 * so the walk goes up the parent chain to the newest one that does; a broken chain is an error, never a guess.
 */
public final class WatermarkReader
{
    private WatermarkReader() {}

    /** The watermark of the table's current snapshot; the epoch for a table without snapshots. */
    public static PinnedWatermark current(Table table)
    {
        Snapshot current = table.currentSnapshot();
        if (current == null) {
            return new PinnedWatermark(Optional.empty(), TieringWatermark.EPOCH);
        }
        return new PinnedWatermark(Optional.of(current.snapshotId()), ofSnapshot(table, current.snapshotId()));
    }

    public static TieringWatermark ofSnapshot(Table table, long snapshotId)
    {
        Long id = snapshotId;
        long walked = 0;
        while (true) {
            Snapshot snapshot = table.snapshot(id);
            if (snapshot == null) {
                if (walked == 0) {
                    throw new MeterstoreException(WATERMARK_CHAIN_BROKEN, "Table '%s' has no snapshot %s".formatted(table.name(), snapshotId));
                }
                throw new MeterstoreException(WATERMARK_CHAIN_BROKEN,
                        "The parent chain of snapshot %s of table '%s' is broken at snapshot %s, before any snapshot carrying '%s': an expired ancestor strands the boundary; reassert the watermark on the current snapshot"
                                .formatted(snapshotId, table.name(), id, TieringWatermark.WATERMARK_KEY));
            }
            Optional<TieringWatermark> watermark = TieringWatermark.fromSummary(snapshot.summary());
            if (watermark.isPresent()) {
                return watermark.get();
            }
            if (snapshot.parentId() == null) {
                throw new MeterstoreException(WATERMARK_MISSING,
                        "No snapshot of table '%s' from %s back to the first carries '%s': the table was not written by MeterStore, or its watermark was lost; reassert the watermark before reading it"
                                .formatted(table.name(), snapshotId, TieringWatermark.WATERMARK_KEY));
            }
            id = snapshot.parentId();
            walked++;
        }
    }

    /** A snapshot (absent for an empty table) and the watermark it stands for: what a query plans with. */
    public record PinnedWatermark(Optional<Long> snapshotId, TieringWatermark watermark)
    {
        public PinnedWatermark
        {
            requireNonNull(snapshotId, "snapshotId is null");
            requireNonNull(watermark, "watermark is null");
        }
    }
}
