package io.meterstore.core;

import com.google.common.collect.ImmutableList;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static io.meterstore.core.MeterstoreException.Reason.SUMMARY_MALFORMED;
import static io.meterstore.core.TieringWatermark.ARCHIVAL_STEP_KEY;
import static io.meterstore.core.TieringWatermark.ARCHIVED_AT_KEY;
import static io.meterstore.core.TieringWatermark.ARCHIVED_PARTITION_KEY;
import static io.meterstore.core.TieringWatermark.ARCHIVED_RANGE_KEY;
import static io.meterstore.core.TieringWatermark.ROW_COUNT_KEY;
import static java.util.Objects.requireNonNull;

/**
 * The archival commits in the ancestry of a table's current snapshot, read from their summaries: the step the table is
 * archived with, which commits moved a hot partition's rows below the watermark, how many, and when (on the archiver's
 * clock).
 */
public final class ArchivalHistory
{
    private ArchivalHistory() {}

    /**
     * The step the table is archived with: the one the newest archival commit records, else the one `create` recorded
     * as a table property (same key), else none.
     */
    public static Optional<Duration> recordedStep(Table table)
    {
        for (Snapshot snapshot : ancestry(table)) {
            String step = summary(snapshot).get(ARCHIVAL_STEP_KEY);
            if (step != null) {
                return Optional.of(parseStep(step, "Snapshot %s of table '%s'".formatted(snapshot.snapshotId(), table.name()), "repair the snapshot summary"));
            }
        }
        return Optional.ofNullable(table.properties().get(ARCHIVAL_STEP_KEY))
                .map(step -> parseStep(step, "Table '%s'".formatted(table.name()), "set the table property to the step its partitions are created with"));
    }

    /**
     * Records {@code step} as the table's archival step before its first archival, so that writers create partitions of
     * the step the archiver will archive. A table that records a step already keeps it: the caller compares.
     */
    public static void recordStep(Table table, Duration step)
    {
        checkArgument(recordedStep(table).isEmpty(), "Table '%s' records an archival step already", table.name());
        table.updateProperties().set(ARCHIVAL_STEP_KEY, String.valueOf(step.toSeconds())).commit();
    }

    /**
     * Records the step the newest archival commit carries as the table property too, unless the property says so
     * already: once snapshot expiry has removed every archival commit, the property is where the step is read from.
     */
    public static void keepStepRecorded(Table table)
    {
        Optional<Duration> step = recordedStep(table);
        if (step.isEmpty() || String.valueOf(step.get().toSeconds()).equals(table.properties().get(ARCHIVAL_STEP_KEY))) {
            return;
        }
        table.updateProperties().set(ARCHIVAL_STEP_KEY, String.valueOf(step.get().toSeconds())).commit();
    }

    /** Every archival commit in the current ancestry, newest first. */
    public static List<ArchivalCommit> archivalCommits(Table table)
    {
        ImmutableList.Builder<ArchivalCommit> commits = ImmutableList.builder();
        for (Snapshot snapshot : ancestry(table)) {
            Map<String, String> summary = summary(snapshot);
            String range = summary.get(ARCHIVED_RANGE_KEY);
            if (range == null) {
                continue;
            }
            Instant[] window = window(table, snapshot, range);
            Instant from = window[0];
            Instant to = window[1];
            Optional<Instant> archivedAt = Optional.ofNullable(summary.get(ARCHIVED_AT_KEY))
                    .map(value -> TieringWatermark.parseInstant(ARCHIVED_AT_KEY, value));
            String rowCount = summary.getOrDefault(ROW_COUNT_KEY, "");
            long rows;
            try {
                rows = Long.parseLong(rowCount);
            }
            catch (NumberFormatException e) {
                throw malformed(table, snapshot, ROW_COUNT_KEY, rowCount, "a number of rows");
            }
            commits.add(new ArchivalCommit(snapshot.snapshotId(), from, to, archivedAt, rows, Optional.ofNullable(summary.get(ARCHIVED_PARTITION_KEY))));
        }
        return commits.build();
    }

    /**
     * Every MeterStore commit in the current ancestry, newest first, readable: what kind of commit it was, the window an
     * archival moved, its rows and files, and W before and after it. Snapshots of other tools (no watermark) are left
     * out; the W before the oldest listed commit is the epoch when its ancestry holds no other.
     */
    public static List<MeterstoreCommit> meterstoreCommits(Table table)
    {
        List<Snapshot> ancestry = ImmutableList.copyOf(ancestry(table));
        ImmutableList.Builder<MeterstoreCommit> commits = ImmutableList.builder();
        for (int index = 0; index < ancestry.size(); index++) {
            Snapshot snapshot = ancestry.get(index);
            Map<String, String> summary = summary(snapshot);
            Optional<TieringWatermark> after = TieringWatermark.fromSummary(summary);
            if (after.isEmpty()) {
                continue;
            }
            // the W the commit landed on: the newest older snapshot carrying one
            TieringWatermark before = TieringWatermark.EPOCH;
            for (Snapshot older : ancestry.subList(index + 1, ancestry.size())) {
                Optional<TieringWatermark> carried = TieringWatermark.fromSummary(summary(older));
                if (carried.isPresent()) {
                    before = carried.get();
                    break;
                }
            }
            Optional<String> range = Optional.ofNullable(summary.get(ARCHIVED_RANGE_KEY));
            long filesAdded = count(summary.get("added-data-files"));
            CommitKind kind = range.isPresent() ? CommitKind.ARCHIVAL
                    : summary.containsKey(CorrectionCommitter.ERASURE_KEY) ? CommitKind.ERASURE
                    : "replace".equals(snapshot.operation()) ? CommitKind.COMPACTION
                    : filesAdded > 0 ? CommitKind.CORRECTION
                    : CommitKind.WATERMARK;
            Optional<Instant[]> window = range.map(value -> window(table, snapshot, value));
            commits.add(new MeterstoreCommit(
                    snapshot.snapshotId(),
                    Instant.ofEpochMilli(snapshot.timestampMillis()),
                    kind,
                    window.map(bounds -> bounds[0]),
                    window.map(bounds -> bounds[1]),
                    Optional.ofNullable(summary.get(ROW_COUNT_KEY)).map(ArchivalHistory::count),
                    filesAdded,
                    before,
                    after.get(),
                    Optional.ofNullable(summary.get(ARCHIVED_AT_KEY)).map(value -> TieringWatermark.parseInstant(ARCHIVED_AT_KEY, value)),
                    Optional.ofNullable(summary.get(ARCHIVED_PARTITION_KEY))));
        }
        return commits.build();
    }

    // the two instants of '<from>/<to>'
    private static Instant[] window(Table table, Snapshot snapshot, String range)
    {
        int separator = range.indexOf('/');
        if (separator < 0) {
            throw malformed(table, snapshot, ARCHIVED_RANGE_KEY, range, "'<from>/<to>'");
        }
        return new Instant[] {
                TieringWatermark.parseInstant(ARCHIVED_RANGE_KEY, range.substring(0, separator)),
                TieringWatermark.parseInstant(ARCHIVED_RANGE_KEY, range.substring(separator + 1))};
    }

    private static long count(String value)
    {
        if (value == null) {
            return 0;
        }
        try {
            return Long.parseLong(value);
        }
        catch (NumberFormatException e) {
            return 0;
        }
    }

    /**
     * What the cold tier holds of a hot partition: the rows the archival commits streamed from it and when the newest of
     * them was committed. Commits record the partition they streamed; a commit made before they did is taken to have
     * streamed the partition if its range meets the partition's extent, as every archival window held one partition.
     * Empty when no commit archived from it, or one of them does not record its time.
     */
    public static Optional<Archived> archived(List<ArchivalCommit> commits, HotPartition partition)
    {
        List<ArchivalCommit> streamed = streamedFrom(commits, partition);
        if (streamed.isEmpty() || streamed.stream().anyMatch(commit -> commit.archivedAt().isEmpty())) {
            return Optional.empty();
        }
        long rows = streamed.stream().mapToLong(ArchivalCommit::rows).sum();
        Instant newest = streamed.stream().map(commit -> commit.archivedAt().orElseThrow()).max(Instant::compareTo).orElseThrow();
        return Optional.of(new Archived(rows, newest));
    }

    /**
     * The commits that streamed {@code partition}: those naming it, and those made before commits named their partition
     * whose range meets its extent. Its drop needs them all, so snapshot expiry keeps them while the partition exists.
     */
    public static List<ArchivalCommit> streamedFrom(List<ArchivalCommit> commits, HotPartition partition)
    {
        return commits.stream()
                .filter(commit -> commit.partition()
                        .map(partition.name()::equals)
                        .orElseGet(() -> commit.from().isBefore(partition.end()) && commit.to().isAfter(partition.start())))
                .toList();
    }

    private static Duration parseStep(String value, String where, String remedy)
    {
        try {
            long seconds = Long.parseLong(value);
            if (seconds > 0) {
                return Duration.ofSeconds(seconds);
            }
        }
        catch (NumberFormatException ignored) {
            // reported below
        }
        throw new MeterstoreException(SUMMARY_MALFORMED, "%s records '%s' = '%s', which is not a positive number of seconds: %s".formatted(where, ARCHIVAL_STEP_KEY, value, remedy));
    }

    private static MeterstoreException malformed(Table table, Snapshot snapshot, String key, String value, String expected)
    {
        return new MeterstoreException(SUMMARY_MALFORMED, "Snapshot %s of table '%s' records '%s' = '%s', which is not %s: repair the snapshot summary"
                .formatted(snapshot.snapshotId(), table.name(), key, value, expected));
    }

    private static Iterable<Snapshot> ancestry(Table table)
    {
        Snapshot current = table.currentSnapshot();
        if (current == null) {
            return List.of();
        }
        return SnapshotUtil.ancestorsOf(current.snapshotId(), table::snapshot);
    }

    private static Map<String, String> summary(Snapshot snapshot)
    {
        return snapshot.summary() == null ? Map.of() : snapshot.summary();
    }

    /**
     * @param partition the hot partition the window streamed; empty for a commit made before commits recorded it
     */
    public record ArchivalCommit(long snapshotId, Instant from, Instant to, Optional<Instant> archivedAt, long rows, Optional<String> partition)
    {
        public ArchivalCommit
        {
            requireNonNull(from, "from is null");
            requireNonNull(to, "to is null");
            requireNonNull(archivedAt, "archivedAt is null");
            requireNonNull(partition, "partition is null");
            checkArgument(rows >= 0, "rows is negative");
        }
    }

    /** What a MeterStore commit did. */
    public enum CommitKind
    {
        /** Moved a window of hot rows below W. */
        ARCHIVAL,
        /** Appended late corrections below W, republishing W. */
        CORRECTION,
        /** Rewrote data files below W (compaction), republishing W. */
        COMPACTION,
        /** Added no data: restated W on the current snapshot. */
        WATERMARK,
        /** Rewrote the data files that held the rows a DELETE erased, republishing W. */
        ERASURE,
    }

    /**
     * A MeterStore commit as {@code "<table>$archival"} lists it.
     *
     * @param rows the rows the commit wrote ({@code meterstore.row_count}), absent when it does not record them
     * @param archivedAt the archiver's clock at an archival commit, which the reader grace counts from
     */
    public record MeterstoreCommit(
            long snapshotId,
            Instant committedAt,
            CommitKind kind,
            Optional<Instant> windowStart,
            Optional<Instant> windowEnd,
            Optional<Long> rows,
            long filesAdded,
            TieringWatermark watermarkBefore,
            TieringWatermark watermarkAfter,
            Optional<Instant> archivedAt,
            Optional<String> partition)
    {
        public MeterstoreCommit
        {
            requireNonNull(committedAt, "committedAt is null");
            requireNonNull(kind, "kind is null");
            requireNonNull(windowStart, "windowStart is null");
            requireNonNull(windowEnd, "windowEnd is null");
            requireNonNull(rows, "rows is null");
            requireNonNull(watermarkBefore, "watermarkBefore is null");
            requireNonNull(watermarkAfter, "watermarkAfter is null");
            requireNonNull(archivedAt, "archivedAt is null");
            requireNonNull(partition, "partition is null");
        }
    }

    /** The rows archival commits streamed from one partition, and when the newest of those commits was made. */
    public record Archived(long rows, Instant newestArchivedAt)
    {
        public Archived
        {
            requireNonNull(newestArchivedAt, "newestArchivedAt is null");
        }
    }
}
