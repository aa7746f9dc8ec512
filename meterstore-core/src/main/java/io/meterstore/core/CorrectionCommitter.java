package io.meterstore.core;

import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.types.Conversions;

import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

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
 */
public final class CorrectionCommitter
{
    public static final int DEFAULT_MAX_ATTEMPTS = 5;

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
        requireNonNull(table, "table is null");
        requireNonNull(files, "files is null");
        checkArgument(!files.isEmpty(), "A correction needs at least one data file");
        long rows = files.stream().mapToLong(DataFile::recordCount).sum();
        Instant maxFrom = maxFrom(table, files);
        for (int attempt = 1; ; attempt++) {
            // re-derived from a fresh base on every attempt: W only moves forward, so a later base never refuses what an earlier one accepted
            table.refresh();
            TieringWatermark watermark = WatermarkReader.current(table).watermark();
            if (watermark.isHot(maxFrom)) {
                throw new RejectedCorrectionException(RejectedCorrectionException.Reason.NOT_BELOW_WATERMARK,
                        "Correction of table '%s' holds rows from %s, at or above the tiering watermark %s: rows at or above the watermark belong to PostgreSQL; write them there"
                                .formatted(table.name(), TieringWatermark.formatInstant(maxFrom), watermark));
            }
            AppendFiles append = table.newAppend();
            files.forEach(append::appendFile);
            append.set(WATERMARK_KEY, watermark.toProperty());
            append.set(ROW_COUNT_KEY, String.valueOf(rows));
            append.validateWith(new WatermarkRepublished(watermark));
            try {
                CommitOutcome.commit(append);
                Snapshot snapshot = table.currentSnapshot();
                return new Committed(snapshot.snapshotId(), watermark, rows, attempt);
            }
            catch (CommitFailedException | ValidationException e) {
                // another commit landed first; if it moved W the next attempt republishes the new one
                if (attempt >= maxAttempts) {
                    throw new RejectedCorrectionException(RejectedCorrectionException.Reason.COMMIT_CONTENDED,
                            "Correction of table '%s' lost the commit race %s times: other writers keep committing; retry the correction later"
                                    .formatted(table.name(), attempt), e);
                }
            }
        }
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
        }
    }
}
