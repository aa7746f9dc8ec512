package io.meterstore.archiver.cycle;

import com.google.common.collect.ImmutableMap;
import io.airlift.log.Logger;
import io.meterstore.core.CommitOutcome;
import io.meterstore.core.HotPartition;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotAncestryValidator;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.ValidationException;

import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static io.meterstore.archiver.cycle.ArchivalException.Reason.COMMIT_FAILED;
import static io.meterstore.core.TieringWatermark.ARCHIVAL_STEP_KEY;
import static io.meterstore.core.TieringWatermark.ARCHIVED_AT_KEY;
import static io.meterstore.core.TieringWatermark.ARCHIVED_PARTITION_KEY;
import static io.meterstore.core.TieringWatermark.ARCHIVED_RANGE_KEY;
import static io.meterstore.core.TieringWatermark.ROW_COUNT_KEY;
import static io.meterstore.core.TieringWatermark.WATERMARK_KEY;
import static java.util.Objects.requireNonNull;

/**
 * Commits an archived window: its data files and the new watermark in one snapshot, a single compare-and-swap.
 * The library's retry is off (commit.retry.num-retries = 0) because it would re-apply a summary built for an older
 * base; this loop owns the retry instead. Every attempt re-derives the summary and, through an ancestry validator that
 * runs on the base the commit actually lands on, requires that base to still stand for the watermark the window
 * starts at, so the new watermark strictly advances it. A base whose watermark moved means another archiver won.
 */
public final class ArchivalCommitter
{
    private static final Logger log = Logger.get(ArchivalCommitter.class);
    private static final int MAX_ATTEMPTS = 5;

    private final InstantSource clock;
    private final Duration step;

    public ArchivalCommitter(InstantSource clock, Duration step)
    {
        this.clock = requireNonNull(clock, "clock is null");
        this.step = requireNonNull(step, "step is null");
    }

    public sealed interface CommitResult
    {
        /** The window is below the watermark now. */
        record Committed(long snapshotId, TieringWatermark watermark)
                implements CommitResult
        {
            public Committed
            {
                requireNonNull(watermark, "watermark is null");
            }
        }

        /** Another commit moved the watermark away from the window's start; nothing was committed. */
        record Superseded(TieringWatermark watermark)
                implements CommitResult
        {
            public Superseded
            {
                requireNonNull(watermark, "watermark is null");
            }
        }
    }

    /**
     * Appends {@code files} with the summary of {@code window}, which must start at the watermark of {@code table}'s base.
     * The caller owns the files: on {@link CommitResult.Superseded} or an exception they were not committed.
     */
    public CommitResult commit(Table table, ArchivalWindow window, List<DataFile> files, long rows)
    {
        TieringWatermark expected = TieringWatermark.of(window.start());
        TieringWatermark next = TieringWatermark.of(window.end());
        checkArgument(next.isAfter(expected), "Window %s does not advance the watermark", window);
        for (int attempt = 1; ; attempt++) {
            AppendFiles append = table.newAppend();
            files.forEach(append::appendFile);
            summary(window, rows).forEach(append::set);
            append.validateWith(new WatermarkUnchanged(expected, next));
            try {
                CommitOutcome.commit(append);
                Snapshot snapshot = table.currentSnapshot();
                return new CommitResult.Committed(snapshot.snapshotId(), next);
            }
            catch (CommitFailedException | ValidationException e) {
                table.refresh();
                TieringWatermark current = WatermarkReader.current(table).watermark();
                if (!current.equals(expected)) {
                    return new CommitResult.Superseded(current);
                }
                // a commit that republished the same watermark (a late correction) landed first: try again on top of it
                if (attempt >= MAX_ATTEMPTS) {
                    throw new ArchivalException(COMMIT_FAILED,
                            "Commit of window %s to table '%s' failed %s times although its watermark stayed at %s: check the catalogue, then run the archiver again"
                                    .formatted(window, table.name(), attempt, current), e);
                }
                log.info("Commit of window %s to table '%s' lost a race to a commit at the same watermark; attempt %s of %s", window, table.name(), attempt + 1, MAX_ATTEMPTS);
            }
        }
    }

    private Map<String, String> summary(ArchivalWindow window, long rows)
    {
        return ImmutableMap.<String, String>builder()
                .put(WATERMARK_KEY, TieringWatermark.formatInstant(window.end()))
                .put(ROW_COUNT_KEY, String.valueOf(rows))
                .put(ARCHIVED_RANGE_KEY, window.toProperty())
                .put(ARCHIVAL_STEP_KEY, String.valueOf(step.toSeconds()))
                .put(ARCHIVED_AT_KEY, TieringWatermark.formatInstant(clock.instant()))
                // empty for a stretch without partitions; the drop sums the rows of the commits naming a partition
                .put(ARCHIVED_PARTITION_KEY, window.partition().map(HotPartition::name).orElse(""))
                .buildOrThrow();
    }

    /** The base a commit lands on must stand for the watermark the window starts at, and the window must move past it. */
    private record WatermarkUnchanged(TieringWatermark expected, TieringWatermark next)
            implements SnapshotAncestryValidator
    {
        @Override
        public boolean validate(Iterable<Snapshot> baseSnapshots)
        {
            Optional<TieringWatermark> base = watermark(baseSnapshots);
            return base.isPresent() && base.get().equals(expected) && next.isAfter(base.get());
        }

        @Override
        public String errorMessage()
        {
            return "the base no longer stands for watermark %s".formatted(expected);
        }

        // the newest watermark in the ancestry; the epoch for a table without snapshots; empty when none carries one
        private static Optional<TieringWatermark> watermark(Iterable<Snapshot> ancestry)
        {
            boolean any = false;
            for (Snapshot snapshot : ancestry) {
                any = true;
                Optional<TieringWatermark> watermark = TieringWatermark.fromSummary(snapshot.summary());
                if (watermark.isPresent()) {
                    return watermark;
                }
            }
            return any ? Optional.empty() : Optional.of(TieringWatermark.EPOCH);
        }
    }
}
