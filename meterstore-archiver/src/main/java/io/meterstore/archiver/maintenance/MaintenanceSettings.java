package io.meterstore.archiver.maintenance;

import io.meterstore.core.SnapshotRetention;

import java.time.Duration;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * How the archiver keeps a table's cold tier lean: the snapshot retention, how old an unreferenced file must be before
 * it is removed as an orphan (a writer may still be about to commit a younger one), and the reader grace, which a
 * replaced snapshot is kept for, so a query planned on it before the replacing commit still finds its files; and how
 * months are compacted; and how long the readings themselves are kept ({@code dataRetention}, off when empty).
 */
public record MaintenanceSettings(SnapshotRetention retention, Duration orphanSafetyAge, Duration readerGrace, CompactionSettings compaction, Optional<RetentionPeriod> dataRetention)
{
    public static final Duration DEFAULT_ORPHAN_SAFETY_AGE = Duration.ofDays(3);
    public static final MaintenanceSettings DEFAULTS = new MaintenanceSettings(SnapshotRetention.DEFAULT, DEFAULT_ORPHAN_SAFETY_AGE, Duration.ofHours(1), CompactionSettings.DEFAULTS);

    public MaintenanceSettings
    {
        requireNonNull(retention, "retention is null");
        requireNonNull(orphanSafetyAge, "orphanSafetyAge is null");
        requireNonNull(readerGrace, "readerGrace is null");
        checkArgument(!orphanSafetyAge.isNegative(), "Orphan safety age must not be negative");
        checkArgument(!readerGrace.isNegative(), "Reader grace must not be negative");
        requireNonNull(compaction, "compaction is null");
        requireNonNull(dataRetention, "dataRetention is null");
    }

    /** Without a retention of the readings themselves (meterstore.retention off). */
    public MaintenanceSettings(SnapshotRetention retention, Duration orphanSafetyAge, Duration readerGrace, CompactionSettings compaction)
    {
        this(retention, orphanSafetyAge, readerGrace, compaction, Optional.empty());
    }

    /** With the default compaction settings. */
    public MaintenanceSettings(SnapshotRetention retention, Duration orphanSafetyAge, Duration readerGrace)
    {
        this(retention, orphanSafetyAge, readerGrace, CompactionSettings.DEFAULTS);
    }
}
