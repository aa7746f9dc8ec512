package io.meterstore.archiver.maintenance;

import java.time.Duration;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * How the archiver compacts the months of a table's cold tier: how long after its end a month waits before it is first
 * rewritten (late corrections keep arriving for a while, and each rewrite reads the whole month), and how long after
 * its latest correction a compacted month waits before it is rewritten once more; the size at which a compacted file is
 * cut; and how many files a compacted month may gain from later corrections (their winners, superseded and position
 * delete files) before it is rewritten again without waiting for them to stop.
 */
public record CompactionSettings(Duration delay, long targetFileSizeBytes, int correctionFilesThreshold)
{
    public static final Duration DEFAULT_DELAY = Duration.ofDays(14);
    // about one winners file per month at 10,000 meters: 10,000 x 96 intervals x 31 days (~30 M rows, plus ~2 % versions
    // in the superseded file) at the 3.2 bytes per row the archiver's files measure (docs/benchmarks.md, S1) is ~95 MiB
    public static final long DEFAULT_TARGET_FILE_SIZE_BYTES = 128L * 1024 * 1024;
    // a correction INSERT adds about three files to a resolved month (winners, superseded, a position delete file)
    public static final int DEFAULT_CORRECTION_FILES_THRESHOLD = 12;
    public static final CompactionSettings DEFAULTS = new CompactionSettings(DEFAULT_DELAY, DEFAULT_TARGET_FILE_SIZE_BYTES, DEFAULT_CORRECTION_FILES_THRESHOLD);

    public CompactionSettings
    {
        requireNonNull(delay, "delay is null");
        checkArgument(!delay.isNegative(), "Compaction delay must not be negative");
        checkArgument(targetFileSizeBytes > 0, "Compaction target file size must be positive");
        checkArgument(correctionFilesThreshold > 0, "Compaction correction files threshold must be positive");
    }
}
