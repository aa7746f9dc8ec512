package io.meterstore.trino.write;

import io.airlift.log.Logger;
import io.meterstore.core.CorrectionCommitter;
import io.meterstore.core.CorrectionCommitter.RejectedCorrectionException;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.PartitionMonths;
import io.meterstore.core.Reading;
import io.meterstore.core.WatermarkReader.PinnedWatermark;
import io.meterstore.parquet.MonthFileWriter;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.ConnectorSession;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.util.PropertyUtil;

import java.io.IOException;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Stream;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.base.Preconditions.checkState;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_WRITE_FAILED;
import static java.util.Objects.requireNonNull;

/**
 * The cold half of one INSERT: its new rows below W, received in (month, malo_id, obis_code, "from", version) order,
 * written into sorted Parquet files, one month partition at a time, and committed to Iceberg in one snapshot that
 * republishes W unchanged ({@link CorrectionCommitter}). A month of the resolved layout stays resolved
 * ({@link ResolvedMonthCorrection}: winners and superseded files, and position deletes against the stored winners
 * they supersede, in one row delta validated against the pinned snapshot); any other month takes plain sorted files.
 * Until {@link #commit} nothing is visible; {@link #abort} deletes every file written.
 */
final class ColdInsertCommit
{
    private static final Logger log = Logger.get(ColdInsertCommit.class);
    private static final int PAGE_ROWS = 4096;

    private final MeterstoreInsertTableHandle handle;
    private final ConnectorSession session;
    private final Table table;
    private final PinnedWatermark pinned;
    private final ColdRedeliveryLookup lookup;
    private final CorrectionCommitter committer;
    private final long targetFileSize;
    private final String namePrefix;
    private final List<DataFile> files = new ArrayList<>();
    private final List<DeleteFile> deletes = new ArrayList<>();
    private final List<Reading> page = new ArrayList<>(PAGE_ROWS);
    private Optional<YearMonth> month = Optional.empty();
    // the month being written: plain sorted files, or the resolved layout kept resolved
    private Optional<MonthFileWriter> writer = Optional.empty();
    private Optional<ResolvedMonthCorrection> resolvedMonth = Optional.empty();
    private long rows;
    private boolean committed;

    /** The cold rows of a statement that holds the archival fence and the cold-write lock, {@code pinned} read under them. */
    ColdInsertCommit(MeterstoreInsertTableHandle handle, ConnectorSession session, Table table, PinnedWatermark pinned, ColdRedeliveryLookup lookup, CorrectionCommitter committer)
    {
        this.handle = requireNonNull(handle, "handle is null");
        this.session = requireNonNull(session, "session is null");
        this.table = requireNonNull(table, "table is null");
        this.pinned = requireNonNull(pinned, "pinned is null");
        this.lookup = requireNonNull(lookup, "lookup is null");
        this.committer = requireNonNull(committer, "committer is null");
        this.targetFileSize = PropertyUtil.propertyAsLong(table.properties(), TableProperties.WRITE_TARGET_FILE_SIZE_BYTES, IcebergTableSpec.TARGET_FILE_SIZE_BYTES);
        this.namePrefix = "insert-%s-%s".formatted(session.getQueryId(), UUID.randomUUID());
    }

    /** The rows added so far. */
    long rows()
    {
        return rows;
    }

    /** Adds rows that follow every row added before in (month, malo_id, obis_code, "from", version) order. */
    void add(List<Reading> readings)
    {
        checkState(!committed, "already committed");
        try {
            for (Reading reading : readings) {
                YearMonth readingMonth = PartitionMonths.of(reading.from());
                if (month.isEmpty() || !month.get().equals(readingMonth)) {
                    startMonth(readingMonth);
                }
                rows++;
                if (resolvedMonth.isPresent()) {
                    resolvedMonth.get().add(reading);
                    continue;
                }
                page.add(reading);
                if (page.size() == PAGE_ROWS) {
                    writePage();
                }
            }
        }
        catch (IOException | RuntimeException e) {
            abort();
            throw failure(e);
        }
    }

    // sorted rows, one writer per month partition: each file is sorted by (malo_id, obis_code, "from", version) and says so
    private void startMonth(YearMonth next)
            throws IOException
    {
        checkArgument(month.isEmpty() || month.get().isBefore(next), "Rows of month %s arrived after those of month %s", next, month.orElse(null));
        finishMonth();
        month = Optional.of(next);
        if (ResolvedMonthCorrection.resolved(table, pinned, next)) {
            resolvedMonth = Optional.of(new ResolvedMonthCorrection(lookup, session, table, pinned, next, namePrefix + "-" + next, targetFileSize));
            return;
        }
        writer = Optional.of(new MonthFileWriter(table, next, namePrefix + "-" + next, targetFileSize));
    }

    private void writePage()
            throws IOException
    {
        writer.orElseThrow().write(ReadingsPages.toPage(handle.tableColumns(), page));
        page.clear();
    }

    private void finishMonth()
            throws IOException
    {
        if (resolvedMonth.isPresent()) {
            // kept until it finished: a failure while it closes its files leaves them to abort()
            files.addAll(resolvedMonth.get().finish(deletes));
            resolvedMonth = Optional.empty();
            return;
        }
        if (writer.isEmpty()) {
            return;
        }
        if (!page.isEmpty()) {
            writePage();
        }
        MonthFileWriter finished = writer.get();
        writer = Optional.empty();
        files.addAll(finished.finish());
    }

    /**
     * Commits every file written to Iceberg in one snapshot that republishes W, with the position deletes computed
     * against the pinned snapshot; the statement's cold rows are visible from then on.
     */
    void commit()
    {
        checkState(!committed, "already committed");
        try {
            finishMonth();
        }
        catch (IOException | RuntimeException e) {
            abort();
            throw failure(e);
        }
        try {
            committer.commit(table, files, deletes, pinned.snapshotId());
            committed = true;
        }
        catch (RejectedCorrectionException e) {
            abort();
            throw new TrinoException(METERSTORE_WRITE_FAILED, e.getMessage() + "; nothing of this statement was committed", e);
        }
        catch (CommitFailedException | ValidationException e) {
            // Iceberg refused the commit: nothing of it landed
            abort();
            throw failure(e);
        }
        catch (RuntimeException e) {
            // CommitStateUnknownException, or any failure on the way to or back from the catalogue (a connection lost
            // while the pointer swap was in flight, a refresh failing after it): the swap may have landed, and deleting
            // the files would leave a snapshot without its data. Keep them (orphans at worst, which the archiver's
            // orphan cleanup removes); running the statement again finds out and skips what landed
            committed = true;
            throw new TrinoException(METERSTORE_WRITE_FAILED, "The Iceberg commit of the INSERT into '%s' has an unknown outcome: %s; run the statement again, it skips every row that landed"
                    .formatted(handle.schemaTableName(), e.getMessage()), e);
        }
    }

    /** Deletes every file written; nothing of them was committed. After a commit (or one of unknown outcome) it does nothing. */
    void abort()
    {
        if (committed) {
            return;
        }
        writer.ifPresent(MonthFileWriter::abort);
        writer = Optional.empty();
        resolvedMonth.ifPresent(ResolvedMonthCorrection::abort);
        resolvedMonth = Optional.empty();
        page.clear();
        for (String location : Stream.concat(files.stream().map(DataFile::location), deletes.stream().map(DeleteFile::location)).toList()) {
            try {
                table.io().deleteFile(location);
            }
            catch (RuntimeException e) {
                log.warn(e, "Cannot delete uncommitted file '%s'; it is an orphan now", location);
            }
        }
        files.clear();
        deletes.clear();
    }

    private TrinoException failure(Exception e)
    {
        if (e instanceof TrinoException trinoException) {
            return trinoException;
        }
        return new TrinoException(METERSTORE_WRITE_FAILED, "Writing the Iceberg rows of the INSERT into '%s' failed: %s; nothing of this statement was committed, run it again"
                .formatted(handle.schemaTableName(), e.getMessage()), e);
    }
}
