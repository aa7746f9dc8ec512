package io.meterstore.core;

import com.google.common.collect.ImmutableSet;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.RowDelta;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotUpdate;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.types.Conversions;

import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

import static com.google.common.base.Preconditions.checkArgument;
import static io.meterstore.core.TieringWatermark.ROW_COUNT_KEY;
import static io.meterstore.core.TieringWatermark.WATERMARK_KEY;
import static java.util.Objects.requireNonNull;

/**
 * Appends late corrections to the cold tier: data files whose rows all lie below the tiering watermark, committed
 * without moving it. A correction at or above W belongs to PostgreSQL, and one below W must not go there, where no
 * query looks; so below-W rows come here, and every commit republishes the watermark of the base it lands on.
 * <p>
 * The library's retry is off on readings tables (commit.retry.num-retries = 0): it would re-apply a summary built for
 * an older base, and a correction losing a race to an archival commit would then republish the older watermark over
 * intervals PostgreSQL may already have dropped. This loop owns the retry: every attempt refreshes the table and
 * re-derives the watermark and the summary, and an ancestry validator, run against the base the commit actually lands
 * on, requires that base to stand for exactly the watermark the summary republishes.
 * <p>
 * A correction of a resolved month also deletes the winners it supersedes: Iceberg position deletes against the data
 * files of the snapshot it read them from, committed with its files in one row delta. The commit then requires that
 * since that snapshot no referenced data file was removed and no delete file was added, so a position still names the
 * row it was computed for; otherwise the statement must be run again.
 */
public final class CorrectionCommitter
{
    public static final int DEFAULT_MAX_ATTEMPTS = 5;
    /** In the summary of an erasure's commit: the rows it erased from the cold tier. */
    public static final String ERASURE_KEY = "meterstore.erased_rows";
    /** In the summary of an erasure's commit: the digest of what it erased, by which a rerun finds a commit it did not audit. */
    public static final String ERASURE_SCOPE_KEY = "meterstore.erasure_scope";

    private final int maxAttempts;

    public CorrectionCommitter()
    {
        this(DEFAULT_MAX_ATTEMPTS);
    }

    public CorrectionCommitter(int maxAttempts)
    {
        checkArgument(maxAttempts > 0, "maxAttempts must be positive");
        this.maxAttempts = maxAttempts;
    }

    /** The snapshot that added the correction, the watermark it republished, and how many attempts it took. */
    public record Committed(long snapshotId, TieringWatermark watermark, long rows, int attempts)
    {
        public Committed
        {
            requireNonNull(watermark, "watermark is null");
            checkArgument(rows >= 0, "rows must not be negative");
            checkArgument(attempts > 0, "attempts must be positive");
        }
    }

    /**
     * Appends {@code files} to {@code table} in one snapshot carrying the base's watermark unchanged and the files' row
     * count. Every file must declare an upper bound for "from" below that watermark. The caller owns the files: when
     * this throws they were not committed (except for Iceberg's CommitStateUnknownException, which says it cannot tell).
     */
    public Committed commit(Table table, List<DataFile> files)
    {
        return commit(table, files, List.of(), Optional.empty());
    }

    /**
     * As {@link #commit(Table, List)}, with position {@code deletes} computed against snapshot {@code base}, in one row
     * delta. The summary's row count is the rows the commit adds to the table: its files' rows less the deleted ones.
     */
    public Committed commit(Table table, List<DataFile> files, List<DeleteFile> deletes, Optional<Long> base)
    {
        requireNonNull(table, "table is null");
        requireNonNull(files, "files is null");
        requireNonNull(deletes, "deletes is null");
        requireNonNull(base, "base is null");
        checkArgument(!files.isEmpty(), "A correction needs at least one data file");
        checkArgument(deletes.isEmpty() || base.isPresent(), "Position deletes need the snapshot they were computed against");
        long rows = files.stream().mapToLong(DataFile::recordCount).sum() - deletes.stream().mapToLong(DeleteFile::recordCount).sum();
        Set<String> referenced = deletes.stream()
                .map(delete -> requireNonNull(delete.referencedDataFile(), "a position delete names its data file"))
                .collect(ImmutableSet.toImmutableSet());
        Instant maxFrom = maxFrom(table, files);
        Optional<String> conflict = deletes.isEmpty()
                ? Optional.empty()
                : Optional.of("Correction of table '%s' supersedes rows of data files that another writer changed since they were read (%s): run the statement again");
        return commitRepublishing(table, conflict, rows, watermark -> {
            if (watermark.isHot(maxFrom)) {
                throw new RejectedCorrectionException(RejectedCorrectionException.Reason.NOT_BELOW_WATERMARK,
                        "Correction of table '%s' holds rows from %s, at or above the tiering watermark %s: rows at or above the watermark belong to PostgreSQL; write them there"
                                .formatted(table.name(), TieringWatermark.formatInstant(maxFrom), watermark));
            }
            SnapshotUpdate<?> update;
            if (deletes.isEmpty()) {
                AppendFiles append = table.newAppend();
                files.forEach(append::appendFile);
                update = append;
            }
            else {
                RowDelta delta = table.newRowDelta();
                files.forEach(delta::addRows);
                deletes.forEach(delta::addDeletes);
                // the positions were read from the base: its files must still be there, and nobody else deleted rows of them since
                update = delta.validateFromSnapshot(base.get())
                        .validateDataFilesExist(referenced)
                        .validateDeletedFiles()
                        .validateNoConflictingDeleteFiles();
            }
            update.set(ROW_COUNT_KEY, String.valueOf(rows));
            return update;
        });
    }

    /**
     * Commits an erasure's rewrite of the cold tier in one row delta that republishes the base's watermark: the data
     * files that held erased rows ({@code removedData}) out, their rewrites without those rows ({@code addedData}) in, and
     * the position delete files that applied to the removed files alone ({@code removedDeletes}, their positions are
     * applied in the rewrites) out. Validated from snapshot {@code base}, the one the files were read from: the removed
     * files must still be live and no delete file may have been added against them since. The summary's row count is
     * the rows the commit adds, negative: less the {@code erasedRows}; {@link #ERASURE_KEY} marks it as an erasure, and
     * {@link #ERASURE_SCOPE_KEY} carries {@code scopeDigest}, which names what was erased without naming a malo_id.
     */
    public Committed commitErasure(Table table, List<DataFile> removedData, List<DeleteFile> removedDeletes, List<DataFile> addedData, long base, long erasedRows, String scopeDigest)
    {
        requireNonNull(scopeDigest, "scopeDigest is null");
        requireNonNull(table, "table is null");
        checkArgument(!removedData.isEmpty(), "An erasure commit removes at least one data file");
        checkArgument(erasedRows > 0, "An erasure commit erases rows");
        String conflict = "Erasure in table '%s' rewrites data files that another writer changed since they were read (%s): run the statement again";
        return commitRepublishing(table, Optional.of(conflict), 0, _ -> {
            RowDelta delta = table.newRowDelta();
            removedData.forEach(delta::removeRows);
            addedData.forEach(delta::addRows);
            removedDeletes.forEach(delta::removeDeletes);
            // removing a file that is gone fails the commit (validateDeletedFiles), and so does a delete file added since against one
            return delta.validateFromSnapshot(base)
                    .validateDeletedFiles()
                    .validateNoConflictingDeleteFiles()
                    .set(ROW_COUNT_KEY, String.valueOf(-erasedRows))
                    .set(ERASURE_KEY, String.valueOf(erasedRows))
                    .set(ERASURE_SCOPE_KEY, scopeDigest);
        });
    }

    /**
     * The retry both commits own: every attempt refreshes the table, reads its watermark, has {@code build} make the
     * update for it (with the summary's row count), and commits it republishing that watermark, guarded by
     * {@link WatermarkRepublished} against the base it actually lands on; {@code rows} is what the result reports. A
     * commit that lost the race (another commit landed first, or one that moved W failed the validation) is built again
     * on the new base; a validation that failed while W stayed the same was about the files, and with a
     * {@code conflict} message (formatted with the table and the cause) the commit is rejected instead.
     */
    private Committed commitRepublishing(Table table, Optional<String> conflict, long rows, Function<TieringWatermark, SnapshotUpdate<?>> build)
    {
        for (int attempt = 1; ; attempt++) {
            // re-derived from a fresh base on every attempt: W only moves forward, so a later base never refuses what an earlier one accepted
            table.refresh();
            TieringWatermark watermark = WatermarkReader.current(table).watermark();
            SnapshotUpdate<?> update = build.apply(watermark);
            update.set(WATERMARK_KEY, watermark.toProperty());
            update.validateWith(new WatermarkRepublished(watermark));
            try {
                CommitOutcome.commit(update);
                return new Committed(table.currentSnapshot().snapshotId(), watermark, rows, attempt);
            }
            catch (ValidationException e) {
                if (conflict.isPresent() && watermarkUnchanged(table, watermark)) {
                    throw new RejectedCorrectionException(RejectedCorrectionException.Reason.CONFLICTING_CHANGE, conflict.get().formatted(table.name(), e.getMessage()), e);
                }
                if (attempt >= maxAttempts) {
                    throw contended(table, attempt, e);
                }
            }
            catch (CommitFailedException e) {
                // another commit landed first; if it moved W the next attempt republishes the new one
                if (attempt >= maxAttempts) {
                    throw contended(table, attempt, e);
                }
            }
        }
    }

    private static RejectedCorrectionException contended(Table table, int attempts, RuntimeException cause)
    {
        return new RejectedCorrectionException(RejectedCorrectionException.Reason.COMMIT_CONTENDED,
                "Correction of table '%s' lost the commit race %s times: other writers keep committing; retry the correction later"
                        .formatted(table.name(), attempts), cause);
    }

    /** Whether the table still stands for {@code watermark}: then a failed validation was about the files, not about W. */
    private static boolean watermarkUnchanged(Table table, TieringWatermark watermark)
    {
        table.refresh();
        return WatermarkReader.current(table).watermark().equals(watermark);
    }

    /** The largest "from" of all files, from their column metrics; a file without that bound cannot be shown below W. */
    private static Instant maxFrom(Table table, List<DataFile> files)
    {
        int fieldId = ReadingsColumn.FROM.fieldId();
        Optional<Instant> max = Optional.empty();
        for (DataFile file : files) {
            ByteBuffer bound = file.upperBounds() == null ? null : file.upperBounds().get(fieldId);
            if (bound == null) {
                throw new RejectedCorrectionException(RejectedCorrectionException.Reason.FROM_BOUND_MISSING,
                        "Correction file '%s' for table '%s' declares no upper bound of \"from\": write it with column metrics for \"from\", so its rows can be shown to lie below the tiering watermark"
                                .formatted(file.location(), table.name()));
            }
            long micros = Conversions.fromByteBuffer(ReadingsColumn.FROM.icebergType(), bound);
            Instant upper = Instant.EPOCH.plusSeconds(Math.floorDiv(micros, 1_000_000)).plusNanos(Math.floorMod(micros, 1_000_000) * 1_000L);
            if (max.isEmpty() || upper.isAfter(max.get())) {
                max = Optional.of(upper);
            }
        }
        return max.orElseThrow();
    }

    /** A correction that was not committed; the message says why and what to do. */
    public static final class RejectedCorrectionException
            extends RuntimeException
    {
        private final Reason reason;

        public RejectedCorrectionException(Reason reason, String message)
        {
            super(message);
            this.reason = requireNonNull(reason, "reason is null");
        }

        public RejectedCorrectionException(Reason reason, String message, Throwable cause)
        {
            super(message, cause);
            this.reason = requireNonNull(reason, "reason is null");
        }

        public Reason reason()
        {
            return reason;
        }

        public enum Reason
        {
            /** A row at or above the watermark: it belongs to the hot tier. */
            NOT_BELOW_WATERMARK,
            /** A file whose metrics do not bound "from", so it cannot be shown to lie below the watermark. */
            FROM_BOUND_MISSING,
            /** Every attempt lost the commit race to another writer. */
            COMMIT_CONTENDED,
            /** Another writer removed or deleted rows of the data files whose rows the correction supersedes. */
            CONFLICTING_CHANGE,
        }
    }
}
