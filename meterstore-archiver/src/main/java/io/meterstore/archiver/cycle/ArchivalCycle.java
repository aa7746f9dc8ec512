package io.meterstore.archiver.cycle;

import com.google.common.collect.ImmutableList;
import io.airlift.log.Logger;
import io.meterstore.archiver.cycle.ArchivalCommitter.CommitResult;
import io.meterstore.archiver.cycle.ArchiveOutcome.Kind;
import io.meterstore.archiver.cycle.Failpoints.Failpoint;
import io.meterstore.archiver.cycle.HotPartitionReader.RefusedRowException;
import io.meterstore.archiver.cycle.HotPartitionReader.RowKey;
import io.meterstore.archiver.lease.ArchiverLease;
import io.meterstore.core.ArchivalHistory;
import io.meterstore.core.ArchivalHistory.ArchivalCommit;
import io.meterstore.core.ArchivalWindows;
import io.meterstore.core.CheckedColumns;
import io.meterstore.core.HotPartition;
import io.meterstore.core.HotTier;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.InvariantLog;
import io.meterstore.core.MeterstoreException;
import io.meterstore.core.PartitionMonths;
import io.meterstore.core.ReadingRules;
import io.meterstore.core.TableShape;
import io.meterstore.core.TableColumns;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.parquet.ResolvedMonthWriter;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.util.PropertyUtil;

import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

import static com.google.common.base.Preconditions.checkArgument;
import static io.meterstore.archiver.cycle.ArchivalException.Reason.READING_REFUSED;
import static io.meterstore.archiver.cycle.ArchivalException.Reason.STEP_MISMATCH;
import static io.meterstore.core.MeterstoreException.Reason.TABLE_MISSING;
import static java.util.Objects.requireNonNull;

/**
 * One archival cycle of one table: read W, choose the closed window starting at W and publish it to the table's
 * writers ({@link ArchivalWindows}), DETACH its partition, stream it into Parquet files (one or more per month of "from"), commit them with the new W, leave the partition detached, and
 * DROP the detached partitions whose commit is older than the reader grace.
 * <p>
 * Every row streamed is checked with the write path's own validation ({@link io.meterstore.core.Reading#validate} and
 * {@link ReadingRules}): a window holding a row it refuses is not archived. The stream stops at the row, the files
 * written so far are deleted, the partition is attached again and the refusal is recorded for the invariant check
 * ({@link InvariantLog.Refusal}): W stays, nothing is dropped, and the cycle fails naming the row and what to do.
 * <p>
 * Every step can be interrupted: a detached partition at or above W is simply the next target, and a partition below
 * W is only ever dropped after the commit that moved W, so an interrupted run leaves what a successful one leaves.
 * Exactly one archiver per table runs a cycle: each cycle first takes the table's {@link ArchiverLease} and holds it to
 * the end; without it the cycle reports {@link Kind#LEASE_CONTENDED} and changes nothing.
 */
public final class ArchivalCycle
{
    private static final Logger log = Logger.get(ArchivalCycle.class);
    // rows per Trino page handed to the Parquet writer

    private final Catalog catalog;
    private final TableIdentifier identifier;
    private final HotTier hotTier;
    private final ConnectionFactory connections;
    private final ArchivalSettings settings;
    private final InstantSource clock;
    private final Duration step;
    private final ArchivalCommitter committer;

    public ArchivalCycle(Catalog catalog, TableIdentifier identifier, HotTier hotTier, ConnectionFactory connections, ArchivalSettings settings, InstantSource clock)
    {
        this.catalog = requireNonNull(catalog, "catalog is null");
        this.identifier = requireNonNull(identifier, "identifier is null");
        this.hotTier = requireNonNull(hotTier, "hotTier is null");
        this.connections = requireNonNull(connections, "connections is null");
        this.settings = requireNonNull(settings, "settings is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.step = hotTier.naming().step();
        // a lag shorter than the step would archive a window that late data for the current window can still land in
        checkArgument(settings.settlementLag().compareTo(step) >= 0, "Settlement lag %s must be at least the archival step %s", settings.settlementLag(), step);
        this.committer = new ArchivalCommitter(clock, step);
    }

    public String tableName()
    {
        return identifier.toString();
    }

    /**
     * Runs one cycle of the table under its lease, taken on a connection of its own for the whole cycle. Without the
     * lease the outcome is {@link Kind#LEASE_CONTENDED}: another archiver runs this table, and this cycle changed nothing.
     */
    public ArchiveOutcome archiveOnce()
            throws SQLException, IOException
    {
        // the lease first: the detach window is only safe while one process owns it
        Optional<ArchiverLease> lease = ArchiverLease.tryAcquire(connections.open(), hotTier.schema(), hotTier.naming().table(), hotTier.lockTimeout());
        if (lease.isEmpty()) {
            TieringWatermark watermark = WatermarkReader.current(loadTable()).watermark();
            log.debug("Another archiver holds the lease of table '%s'; this cycle changes nothing", tableName());
            return new ArchiveOutcome(tableName(), Kind.LEASE_CONTENDED, Optional.empty(), 0, 0, 0, watermark, Optional.empty(), List.of());
        }
        try (ArchiverLease held = lease.get()) {
            return archiveUnderLease(held);
        }
    }

    private ArchiveOutcome archiveUnderLease(ArchiverLease lease)
            throws SQLException, IOException
    {
        Table table = loadTable();
        requireRecordedStep(table);
        TieringWatermark watermark = WatermarkReader.current(table).watermark();
        Instant horizon = clock.instant().minus(settings.settlementLag());
        try (Connection connection = connections.open()) {
            if (!hotTier.parentExists(connection)) {
                throw new MeterstoreException(TABLE_MISSING, "PostgreSQL table %s does not exist: run the archiver's 'create' command first".formatted(hotTier.qualifiedParent()));
            }
            Optional<ArchivalWindow> window;
            try {
                window = planAndPublish(connection, watermark, horizon);
            }
            catch (HotTier.LockTimeoutException e) {
                log.info("Publishing the next window of table '%s' timed out waiting for the writers in flight; deferred", tableName());
                return new ArchiveOutcome(tableName(), Kind.DEFERRED, Optional.empty(), 0, 0, 0, watermark, Optional.empty(), List.of());
            }
            Archived archived;
            if (window.isEmpty()) {
                archived = new Archived(Kind.IDLE, Optional.empty(), List.of(), watermark, Optional.empty());
            }
            else {
                archived = archive(connection, lease, table, watermark, window.get());
            }
            List<String> dropped = archived.kind() == Kind.SUPERSEDED ? List.of() : dropArchivedPartitions(connection, table, archived.watermark());
            long rows = archived.files().stream().mapToLong(DataFile::recordCount).sum();
            long bytes = archived.files().stream().mapToLong(DataFile::fileSizeInBytes).sum();
            return new ArchiveOutcome(tableName(), archived.kind(), archived.window(), rows, archived.files().size(), bytes, archived.watermark(), archived.snapshotId(), dropped);
        }
    }

    /**
     * Plans the next window and publishes it ({@link ArchivalWindows}) in one transaction under the table's boundary
     * lock in exclusive mode: the writers in flight finish first, so the partitions planned with include every one they
     * created and the partition to detach holds every hot row they wrote; a writer after it reads the window and writes
     * none of its rows hot. W cannot move meanwhile: only a cycle moves it, and this one holds the lease. A cycle with
     * nothing closed to archive takes no lock: it changes nothing, and the next one plans again.
     */
    private Optional<ArchivalWindow> planAndPublish(Connection connection, TieringWatermark watermark, Instant horizon)
            throws SQLException
    {
        if (ArchivalPlanner.plan(tableName(), watermark, hotTier.partitions(connection), horizon, hotTier.naming()).isEmpty()) {
            return Optional.empty();
        }
        ArchivalWindows.create(connection, hotTier.schema());
        connection.setAutoCommit(false);
        try {
            hotTier.holdBoundaryExclusive(connection, hotTier.lockTimeout());
            List<HotPartition> partitions = hotTier.partitions(connection);
            Optional<ArchivalWindow> window = ArchivalPlanner.plan(tableName(), watermark, partitions, horizon, hotTier.naming());
            if (window.isPresent()) {
                ArchivalWindows.publish(connection, hotTier, new ArchivalWindows.Window(window.get().start(), window.get().end()), clock.instant());
            }
            connection.commit();
            return window;
        }
        catch (SQLException | RuntimeException e) {
            connection.rollback();
            throw e;
        }
        finally {
            connection.setAutoCommit(true);
        }
    }

    private record Archived(Kind kind, Optional<ArchivalWindow> window, List<DataFile> files, TieringWatermark watermark, Optional<Long> snapshotId) {}

    private Archived archive(Connection connection, ArchiverLease lease, Table table, TieringWatermark watermark, ArchivalWindow window)
            throws SQLException, IOException
    {
        if (window.partition().isPresent()) {
            String partition = window.partition().get().name();
            try {
                // detach before the scan: from now on no row can be inserted into the partition being archived (a writer
                // that read the published window writes none of its rows hot), while queries still read it by name until
                // the commit below moves W past it
                hotTier.detach(connection, partition);
            }
            catch (HotTier.LockTimeoutException e) {
                log.info("Detaching partition '%s' of table '%s' timed out waiting for its lock; deferred", partition, tableName());
                return new Archived(Kind.DEFERRED, Optional.of(window), List.of(), watermark, Optional.empty());
            }
            // a crash from here to the commit leaves the partition detached at or above W: still read by name, archived next
            Failpoints.hit(Failpoint.AFTER_DETACH);
        }
        List<DataFile> files;
        try {
            files = write(connection, table, window);
        }
        catch (RefusedRowException e) {
            throw refuse(window, e);
        }
        long rows = files.stream().mapToLong(DataFile::recordCount).sum();
        // a crash here leaves complete files no snapshot references: orphans, never data, since W has not moved
        Failpoints.hit(Failpoint.AFTER_WRITE);
        try {
            // a lease lost with its session may have a new owner by now: stop before publishing anything
            lease.verifyHeld();
        }
        catch (RuntimeException e) {
            deleteFiles(table, files);
            throw e;
        }
        CommitResult result;
        try {
            // commit cold before anything hot is dropped: the reverse order loses the window for good
            result = committer.commit(table, window, files, rows);
        }
        catch (ArchivalException e) {
            // Iceberg refused every attempt: nothing of them landed. Any other failure (CommitStateUnknownException, one
            // on the way to or back from the catalogue) may follow a swap that landed, and deleting the files would
            // leave a snapshot without its data: they stay (orphans at worst, which orphan cleanup removes), and the
            // next cycle reads W and finds out
            deleteFiles(table, files);
            throw e;
        }
        return switch (result) {
            case CommitResult.Committed committed -> {
                // a crash here leaves the window committed and its partition detached: dropped by a later cycle after the grace
                Failpoints.hit(Failpoint.AFTER_COMMIT);
                // the cycle's outcome says it, in the service's log and on the command line's console: this is for debugging
                log.debug("Archived window %s of table '%s': %s rows in %s files, watermark %s", window, tableName(), rows, files.size(), committed.watermark());
                yield new Archived(Kind.ARCHIVED, Optional.of(window), files, committed.watermark(), Optional.of(committed.snapshotId()));
            }
            case CommitResult.Superseded superseded -> {
                log.info("Window %s of table '%s' was archived by another archiver (watermark %s); deleting %s written files", window, tableName(), superseded.watermark(), files.size());
                deleteFiles(table, files);
                yield new Archived(Kind.SUPERSEDED, Optional.of(window), List.of(), superseded.watermark(), Optional.empty());
            }
        };
    }

    /**
     * Undoes what the cycle did to a window holding a row the write path refuses: attaches its partition again, which
     * the stream found as the cycle detached it and left unchanged, and records the refusal, which the invariant check
     * reports until the watermark passes the window. The written files are deleted by then.
     */
    private ArchivalException refuse(ArchivalWindow window, RefusedRowException refused)
    {
        String partition = window.partition().orElseThrow().name();
        RowKey row = refused.key();
        String message = "Window %s of table '%s' is not archived: partition '%s' holds the reading (malo_id '%s', obis_code '%s', \"from\" %s, version %s), which the write path refuses: %s. Repair or delete that row in PostgreSQL partition %s; the next cycle archives the window"
                .formatted(window, tableName(), partition, row.maloId(), row.obisCode(), TieringWatermark.formatInstant(row.from()), row.version(), refused.getMessage(),
                        hotTier.qualifiedPartition(partition));
        ArchivalException refusal = new ArchivalException(READING_REFUSED, message, refused);
        // the stream's connection ended with the stream
        try (Connection connection = connections.open()) {
            InvariantLog.recordRefusal(connection, hotTier, new InvariantLog.Refusal(clock.instant(), window.start(), window.end(), message));
            // the window stays hot as it was, read through the parent and written by INSERT, until the row is repaired
            hotTier.reattach(connection, partition);
        }
        catch (SQLException | RuntimeException e) {
            // left detached at or above W, the partition is still read by name, and the next cycle refuses it again
            log.warn("Cannot record the refusal of window %s of table '%s' or attach partition '%s' again: %s", window, tableName(), partition, e.getMessage());
            refusal.addSuppressed(e);
        }
        return refusal;
    }

    /**
     * Streams the window's partition into data files, one query per month of "from": its rows from W (or its start) to
     * its catalogue end, which is the window's end, the winning versions into winners files and the versions they
     * supersede into superseded files (the resolved layout, {@link ResolvedMonthWriter}). The last query reads to the
     * partition's end and fails on a row at or after the window's end, so a window never commits while its partition
     * holds a row W would pass over.
     */
    private List<DataFile> write(Connection connection, Table table, ArchivalWindow window)
            throws SQLException, IOException
    {
        if (window.partition().isEmpty()) {
            return List.of();
        }
        HotPartition partition = window.partition().get();
        // a page of chunk rows is what the stream holds at once, decoded and on its way to the file
        // every column of the table: the readings columns, then the attribute columns its shape declares
        HotPartitionReader reader = new HotPartitionReader(hotTier, TableColumns.of(table), settings.chunkRows());
        long targetFileSize = PropertyUtil.propertyAsLong(table.properties(), TableProperties.WRITE_TARGET_FILE_SIZE_BYTES, IcebergTableSpec.TARGET_FILE_SIZE_BYTES);
        String namePrefix = partition.name() + "-" + UUID.randomUUID();
        Instant to = window.end();
        List<DataFile> files = new ArrayList<>();
        Instant monthStart = max(window.start(), partition.start());
        ArchivalProgress progress = ArchivalProgress.start(tableName(), window);
        // the write path's validation of every row, and of each row against the version before it in the sort order
        // (per channel: a tenant's readings are checked against the tenant's, as the hot tier's trigger checks them)
        ReadingRules.Checker rules = new ReadingRules.Checker(TableColumns.of(table));
        // and of its kind against the table's time model: a register reading in an interval table, or the reverse, is refused
        TableShape shape = TableShape.ofProperties(table.properties()).orElse(TableShape.DEFAULT);
        // and its checked columns: a writer straight into PostgreSQL passes their CHECKs with a wrong check character
        CheckedColumns checks = CheckedColumns.of(shape);
        HotPartitionReader.ReadingCheck check = reading -> rules.accept(checks.requireCanonical(reading.validate().requireTimeModel(shape.timeModel(), tableName())));
        try {
            while (monthStart.isBefore(to)) {
                YearMonth month = PartitionMonths.of(monthStart);
                Instant monthEnd = min(to, PartitionMonths.end(month));
                Optional<Instant> readTo = monthEnd.isBefore(to) ? Optional.of(monthEnd) : Optional.empty();
                ResolvedMonthWriter writer = new ResolvedMonthWriter(table, month, namePrefix + "-" + month, targetFileSize);
                try {
                    reader.read(connection, partition.name(), monthStart, readTo, to, check, page -> {
                        writer.write(page);
                        progress.rowsWritten(page.getPositionCount());
                        // a crash mid-stream leaves an incomplete file nobody references, and the partition detached at or above W
                        Failpoints.hit(Failpoint.MID_STREAM);
                    });
                    files.addAll(writer.finish().all());
                }
                catch (SQLException | IOException | RuntimeException e) {
                    try {
                        writer.abort();
                    }
                    catch (RuntimeException abortFailure) {
                        // the storage that failed the write may fail the cleanup too: its files become orphans for
                        // `expire` to remove, and the write's own failure is the one to report
                        e.addSuppressed(abortFailure);
                    }
                    throw e;
                }
                monthStart = monthEnd;
            }
        }
        catch (SQLException | IOException | RuntimeException e) {
            deleteFiles(table, files);
            throw e;
        }
        return ImmutableList.copyOf(files);
    }

    /**
     * Drops every detached partition entirely below W whose archival commits hold all its rows and are older than the
     * reader grace: a query planned before the newest of them still reads the partition by name. Detached partitions
     * reaching above W are orphans of an interrupted run, archived by a coming cycle, and never dropped here.
     */
    private List<String> dropArchivedPartitions(Connection connection, Table table, TieringWatermark watermark)
            throws SQLException
    {
        Instant now = clock.instant();
        Optional<List<ArchivalCommit>> commits = Optional.empty();
        ImmutableList.Builder<String> dropped = ImmutableList.builder();
        for (HotPartition partition : hotTier.partitions(connection)) {
            if (partition.attached() || !partition.isBelow(watermark)) {
                continue;
            }
            if (commits.isEmpty()) {
                commits = Optional.of(ArchivalHistory.archivalCommits(table));
            }
            Optional<ArchivalHistory.Archived> archived = ArchivalHistory.archived(commits.get(), partition);
            if (archived.isEmpty()) {
                // without the commit's time there is no telling whether a query still needs the partition
                log.warn("Detached partition '%s' of table '%s' lies below the watermark %s, but no archival commit in the snapshot history records archiving it and when: left in place; drop it by hand once no query can need it and its rows are in Iceberg",
                        partition.name(), tableName(), watermark);
                continue;
            }
            if (archived.get().newestArchivedAt().plus(settings.readerGrace()).isAfter(now)) {
                continue;
            }
            // a cheap count against the commits: a partition wider than the windows streamed from it keeps rows no tier reads
            long rows = hotTier.rowCount(connection, partition.name());
            if (rows != archived.get().rows()) {
                log.error("Detached partition '%s' of table '%s' holds %s rows, but the archival commits that streamed it hold %s: its rows below the watermark %s are not all in Iceberg; left in place. INSERT its rows through MeterStore (rows below the watermark go to Iceberg), then drop it by hand",
                        partition.name(), tableName(), rows, archived.get().rows(), watermark);
                continue;
            }
            try {
                // only below W, covered and past the grace: a crash before or after the drop loses nothing, the rows are committed cold
                Failpoints.hit(Failpoint.BEFORE_DROP);
                hotTier.drop(connection, partition.name());
                dropped.add(partition.name());
                log.debug("Dropped partition '%s' of table '%s', archived at %s", partition.name(), tableName(), archived.get().newestArchivedAt());
            }
            catch (HotTier.LockTimeoutException e) {
                log.info("Dropping partition '%s' of table '%s' timed out waiting for its lock; a later cycle drops it", partition.name(), tableName());
            }
        }
        return dropped.build();
    }

    private Table loadTable()
    {
        Table table;
        try {
            table = catalog.loadTable(identifier);
        }
        catch (NoSuchTableException e) {
            throw new MeterstoreException(TABLE_MISSING, "Iceberg table '%s' does not exist: run the archiver's 'create' command first".formatted(identifier), e);
        }
        IcebergTableSpec.verify(table);
        return table;
    }

    private void requireRecordedStep(Table table)
    {
        Optional<Duration> recorded = ArchivalHistory.recordedStep(table);
        if (recorded.isPresent() && !recorded.get().equals(step)) {
            // windows, partition names and the drop rule all assume the step the table was archived with
            throw new ArchivalException(STEP_MISMATCH,
                    "Table '%s' is archived with a step of %s seconds, but the archiver is configured with %s seconds: set meterstore.archival-step to %ss"
                            .formatted(tableName(), recorded.get().toSeconds(), step.toSeconds(), recorded.get().toSeconds()));
        }
    }

    private static void deleteFiles(Table table, List<DataFile> files)
    {
        for (DataFile file : files) {
            try {
                table.io().deleteFile(file.location());
            }
            catch (RuntimeException e) {
                log.warn(e, "Cannot delete uncommitted data file '%s'; it is an orphan now", file.location());
            }
        }
    }

    private static Instant min(Instant left, Instant right)
    {
        return left.isBefore(right) ? left : right;
    }

    private static Instant max(Instant left, Instant right)
    {
        return left.isAfter(right) ? left : right;
    }
}
