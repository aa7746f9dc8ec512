package io.meterstore.archiver.cycle;

import com.google.common.collect.ImmutableList;
import io.meterstore.core.TieringWatermark;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.meterstore.core.TieringWatermark.ARCHIVAL_STEP_KEY;
import static io.meterstore.core.TieringWatermark.ARCHIVED_AT_KEY;
import static io.meterstore.core.TieringWatermark.ARCHIVED_RANGE_KEY;
import static java.util.Objects.requireNonNull;

/**
 * The archival commits in the ancestry of a table's current snapshot, read from their summaries: the step the table is
 * archived with, and which commit moved a given range below the watermark and when (on the archiver's clock).
 */
public final class ArchivalHistory
{
    private ArchivalHistory() {}

    /** The step recorded by the newest archival commit, if any commit recorded one. */
    public static Optional<Duration> recordedStep(Table table)
    {
        for (Snapshot snapshot : ancestry(table)) {
            String step = summary(snapshot).get(ARCHIVAL_STEP_KEY);
            if (step != null) {
                try {
                    return Optional.of(Duration.ofSeconds(Long.parseLong(step)));
                }
                catch (NumberFormatException e) {
                    throw new ArchivalException(ArchivalException.Reason.SUMMARY_MALFORMED,
                            "Snapshot %s of table '%s' records '%s' = '%s', which is not a number of seconds: repair the snapshot summary"
                                    .formatted(snapshot.snapshotId(), table.name(), ARCHIVAL_STEP_KEY, step));
                }
            }
        }
        return Optional.empty();
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
            int separator = range.indexOf('/');
            if (separator < 0) {
                throw new ArchivalException(ArchivalException.Reason.SUMMARY_MALFORMED,
                        "Snapshot %s of table '%s' records '%s' = '%s', which is not '<from>/<to>': repair the snapshot summary"
                                .formatted(snapshot.snapshotId(), table.name(), ARCHIVED_RANGE_KEY, range));
            }
            Instant from = TieringWatermark.parseInstant(ARCHIVED_RANGE_KEY, range.substring(0, separator));
            Instant to = TieringWatermark.parseInstant(ARCHIVED_RANGE_KEY, range.substring(separator + 1));
            Optional<Instant> archivedAt = Optional.ofNullable(summary.get(ARCHIVED_AT_KEY))
                    .map(value -> TieringWatermark.parseInstant(ARCHIVED_AT_KEY, value));
            commits.add(new ArchivalCommit(snapshot.snapshotId(), from, to, archivedAt));
        }
        return commits.build();
    }

    /** The newest archival commit whose range holds all of [start, end). */
    public static Optional<ArchivalCommit> covering(List<ArchivalCommit> commits, Instant start, Instant end)
    {
        return commits.stream()
                .filter(commit -> !commit.from().isAfter(start) && !commit.to().isBefore(end))
                .findFirst();
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

    public record ArchivalCommit(long snapshotId, Instant from, Instant to, Optional<Instant> archivedAt)
    {
        public ArchivalCommit
        {
            requireNonNull(from, "from is null");
            requireNonNull(to, "to is null");
            requireNonNull(archivedAt, "archivedAt is null");
        }
    }
}
