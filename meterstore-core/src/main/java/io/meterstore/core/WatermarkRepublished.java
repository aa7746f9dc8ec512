package io.meterstore.core;

import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotAncestryValidator;

import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * The rule of every MeterStore commit that moves no row across the boundary (a late correction, a manifest rewrite, a
 * compaction): the base it lands on must stand for exactly the watermark its summary republishes, never an older one.
 * Iceberg runs it against the base the commit actually lands on, so an archival commit that moved W in between makes
 * the commit fail instead of publishing the old W over intervals PostgreSQL may already have dropped.
 */
public record WatermarkRepublished(TieringWatermark published)
        implements SnapshotAncestryValidator
{
    public WatermarkRepublished
    {
        requireNonNull(published, "published is null");
    }

    @Override
    public boolean validate(Iterable<Snapshot> baseSnapshots)
    {
        // the newest watermark in the ancestry; the epoch for a table without snapshots
        boolean any = false;
        for (Snapshot snapshot : baseSnapshots) {
            any = true;
            Optional<TieringWatermark> watermark = TieringWatermark.fromSummary(snapshot.summary());
            if (watermark.isPresent()) {
                return watermark.get().equals(published);
            }
        }
        return !any && published.equals(TieringWatermark.EPOCH);
    }

    @Override
    public String errorMessage()
    {
        return "the base no longer stands for watermark %s".formatted(published);
    }
}
