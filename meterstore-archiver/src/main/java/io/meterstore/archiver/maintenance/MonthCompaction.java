package io.meterstore.archiver.maintenance;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableSet;
import io.airlift.log.Logger;
import io.meterstore.archiver.cycle.Failpoints;
import io.meterstore.archiver.cycle.Failpoints.Failpoint;
import io.meterstore.archiver.lease.ArchiverLease;
import io.meterstore.archiver.maintenance.ColdTierLayout.MonthFiles;
import io.meterstore.core.ColdFileRole;
import io.meterstore.core.CommitOutcome;
import io.meterstore.core.PartitionMonths;
import io.meterstore.core.TableColumns;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.core.WatermarkRepublished;
import io.meterstore.parquet.LiveRowsMerge;
import io.meterstore.parquet.LiveRowsMerge.LiveFile;
import io.meterstore.parquet.PositionDeleteRows;
import io.meterstore.parquet.ResolvedMonthWriter;
import io.meterstore.parquet.ResolvedMonthWriter.ResolvedFiles;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.RewriteFiles;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.io.CloseableIterable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.YearMonth;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import static com.google.common.base.Preconditions.checkArgument;
import static io.meterstore.core.TieringWatermark.ROW_COUNT_KEY;
import static io.meterstore.core.TieringWatermark.WATERMARK_KEY;
import static java.util.Objects.requireNonNull;

/**
 * Rewrites whole months of "from" below W into few large files of the resolved layout: every live row of the month
 * (its data files minus their position deletes), merged in sort order, is split by {@link ResolvedMonthWriter} (the
 * writer archival uses) into winners and superseded files, and one Iceberg {@code RewriteFiles} replaces the month's
 * data and delete files with them. A month that was not resolved (files from before the layout, or from another tool)
 * is resolved from then on.
 * <p>
 * Reading and writing a month takes long, so it runs without the archiver's lease; the commit takes the lease and the
 * cold-write lock, which a MeterStore writer of Iceberg rows holds from reading the snapshot to its commit, so only a
 * late correction waits for it, for the moment of the commit (an INSERT of hot rows never does). The commit is validated
 * from the snapshot the month was read from: a delete file committed since against one of the replaced data files (a
 * correction that superseded one of its winners) fails it, so the correction is neither lost nor applied twice, and the
 * month is written again from the new base, at most {@value #MAX_ATTEMPTS} times, then left for the next run. Data files
 * a correction added meanwhile are not replaced and stay beside the new files. The commit republishes W as a late
 * correction does ({@link WatermarkRepublished}); an archival commit in between only makes it commit the same files
 * again with the new W. Replaced files stay for snapshot expiry (a query planned before still reads them); the files of
 * an attempt that did not commit are deleted, or, after a crash, left for orphan removal.
 */
public final class MonthCompaction
{
    private static final Logger log = Logger.get(MonthCompaction.class);
    /** The month a compaction commit rewrote, as {@code 2024-03}, in its snapshot summary. */
    public static final String COMPACTED_MONTH_KEY = "meterstore.compacted_month";
    static final int MAX_ATTEMPTS = 3;
    // rows per page handed from the merge to the writer: one page per input file and this one are what is held
    private static final int PAGE_ROWS = 8192;

    /** Takes the table's lease for one commit, waiting a bounded time; empty when another archiver holds it. */
    public interface CommitLease
    {
        Optional<ArchiverLease> acquire()
                throws SQLException;
    }

    private final CompactionSettings settings;
    private final Runnable beforeCommit;

    public MonthCompaction(CompactionSettings settings)
    {
        this(settings, () -> {});
    }

    /** {@code beforeCommit} runs after a month's files are written and before the lease is taken for its commit: a test's race. */
    MonthCompaction(CompactionSettings settings, Runnable beforeCommit)
    {
        this.settings = requireNonNull(settings, "settings is null");
        this.beforeCommit = requireNonNull(beforeCommit, "beforeCommit is null");
    }

    /** One month rewritten: what it replaced, what it wrote, the snapshot and the watermark it republished. */
    public record Compacted(YearMonth month, int replacedDataFiles, int replacedDeleteFiles, boolean wasResolved, int winnersFiles, int supersededFiles,
            long rows, long bytesWritten, long snapshotId, TieringWatermark watermark, int attempts)
    {
        public Compacted
        {
            requireNonNull(month, "month is null");
            requireNonNull(watermark, "watermark is null");
            checkArgument(replacedDataFiles >= 0 && replacedDeleteFiles >= 0 && winnersFiles >= 0 && supersededFiles >= 0 && rows >= 0 && bytesWritten >= 0 && attempts > 0,
                    "counts must not be negative");
        }

        public String describe()
        {
            return "%s: %s%s%s into %s and %s (%s rows, %s bytes)".formatted(
                    month,
                    ColdTierLayout.count(replacedDataFiles, "data file"),
                    replacedDeleteFiles == 0 ? "" : " and " + ColdTierLayout.count(replacedDeleteFiles, "delete file"),
                    wasResolved ? "" : " (not resolved before)",
                    ColdTierLayout.count(winnersFiles, "winners file"),
                    ColdTierLayout.count(supersededFiles, "superseded file"),
                    rows,
                    bytesWritten);
        }
    }

    /** A month that needed compaction and was left as it is, and why. */
    public record Skipped(YearMonth month, String reason)
    {
        public Skipped
        {
            requireNonNull(month, "month is null");
            requireNonNull(reason, "reason is null");
        }
    }

    /** What one run did: the months it rewrote, those it left and why, and how many wait for the compaction delay. */
    public record Result(List<Compacted> compacted, List<Skipped> skipped, int waiting)
    {
        public Result
        {
            compacted = ImmutableList.copyOf(compacted);
            skipped = ImmutableList.copyOf(skipped);
            checkArgument(waiting >= 0, "waiting is negative");
        }

        public long bytesWritten()
        {
            return compacted.stream().mapToLong(Compacted::bytesWritten).sum();
        }

        public String describe()
        {
            List<String> parts = new ArrayList<>();
            if (compacted.isEmpty()) {
                parts.add(skipped.isEmpty() && waiting == 0 ? "no month needed compaction" : "no month compacted");
            }
            else {
                parts.add("%s compacted (%s bytes written): %s".formatted(ColdTierLayout.count(compacted.size(), "month"), bytesWritten(),
                        String.join(", ", compacted.stream().map(Compacted::describe).toList())));
            }
            skipped.forEach(skip -> parts.add("%s left as it is: %s".formatted(skip.month(), skip.reason())));
            if (waiting > 0) {
                parts.add("%s to compact once the compaction delay has passed".formatted(ColdTierLayout.count(waiting, "month")));
            }
            return String.join("; ", parts);
        }
    }

    /**
     * Compacts every month that needs it: it lies entirely below W, ended at least the compaction delay ago, and is not
     * resolved, or was never compacted and has more than one file of a role or a delete file, or gained at least the
     * threshold of files from corrections since it was last compacted, or gained fewer and its corrections stopped: the
     * newest of them was committed at least the compaction delay ago on {@code clock}, so the month is rewritten once
     * more and holds its one or two files from then on, until the next correction.
     */
    public Result compact(Table table, MaintenanceClock clock, CommitLease lease)
            throws SQLException, IOException
    {
        table.refresh();
        if (table.currentSnapshot() == null) {
            return new Result(List.of(), List.of(), 0);
        }
        Instant now = clock.instant();
        Instant watermark = WatermarkReader.current(table).watermark().instant();
        // when each commit the table keeps landed, by its sequence number: when a month last gained a file
        NavigableMap<Long, Instant> commits = new TreeMap<>();
        table.snapshots().forEach(snapshot -> commits.put(snapshot.sequenceNumber(), clock.stampTime(Instant.ofEpochMilli(snapshot.timestampMillis()))));
        ImmutableList.Builder<Compacted> compacted = ImmutableList.builder();
        ImmutableList.Builder<Skipped> skipped = ImmutableList.builder();
        int waiting = 0;
        for (Map.Entry<YearMonth, MonthFiles> entry : ColdTierLayout.of(table).months().entrySet()) {
            YearMonth month = entry.getKey();
            MonthFiles files = entry.getValue();
            if (!needsCompaction(files, settings.correctionFilesThreshold()) && !correctionsSettled(files, lastChange(files, commits), settings.delay(), now)) {
                continue;
            }
            Instant end = PartitionMonths.end(month);
            if (end.isAfter(watermark)) {
                // a month W still runs through gains a day with every archival commit
                continue;
            }
            if (end.plus(settings.delay()).isAfter(now)) {
                waiting++;
                continue;
            }
            Outcome outcome = compactMonth(table, month, now, lease);
            outcome.compacted().ifPresent(compacted::add);
            outcome.skipped().ifPresent(skipped::add);
        }
        return new Result(compacted.build(), skipped.build(), waiting);
    }

    /**
     * The rule for choosing a month, from its files alone: a month of files of no role is resolved by compaction; one
     * that was never compacted is once that merges anything; a compacted one again once later corrections have added
     * {@code correctionFilesThreshold} files (each correction INSERT adds a few: the reader pays a file open for each).
     */
    static boolean needsCompaction(MonthFiles files, int correctionFilesThreshold)
    {
        if (files.unresolvedFiles() > 0) {
            return true;
        }
        if (files.compactedFiles() == 0) {
            // one winners and one superseded file is what compaction would write again
            return files.files() > 2 || files.deleteFiles() > 0;
        }
        return files.filesSinceCompaction() >= correctionFilesThreshold;
    }

    /**
     * Whether a compacted month gained files from corrections since, fewer than the threshold, and the newest of them
     * {@code lastChange} lies at least {@code delay} before {@code now}: its corrections have stopped, and one more rewrite
     * leaves it one winners and one superseded file for every later read.
     */
    static boolean correctionsSettled(MonthFiles files, Instant lastChange, Duration delay, Instant now)
    {
        return files.compactedFiles() > 0 && files.filesSinceCompaction() > 0 && !lastChange.plus(delay).isAfter(now);
    }

    /**
     * When the month's newest file since its compaction was committed: its commit's time; when expiry has removed that
     * snapshot, the time of the newest one the table keeps from before it, or none when it keeps none. Earlier than the
     * commit, so such a month may be rewritten once a little early, never held back: erasure completion expires every
     * snapshot that held an erased file, the newest months' commits among them, and the next kept snapshot would be the
     * latest erasure's, so periodic erasures would keep a month from ever settling.
     */
    static Instant lastChange(MonthFiles files, NavigableMap<Long, Instant> commits)
    {
        return Optional.ofNullable(commits.floorEntry(files.newestFileSequence())).map(Map.Entry::getValue).orElse(Instant.EPOCH);
    }

    private record Outcome(Optional<Compacted> compacted, Optional<Skipped> skipped) {}

    private Outcome compactMonth(Table table, YearMonth month, Instant now, CommitLease lease)
            throws SQLException, IOException
    {
        Optional<Written> written = Optional.empty();
        boolean keepFiles = false;
        try {
            for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
                table.refresh();
                MonthInput input = MonthInput.read(table, table.currentSnapshot(), month);
                Optional<String> refused = input.refusal();
                if (refused.isPresent()) {
                    return new Outcome(Optional.empty(), Optional.of(new Skipped(month, refused.get())));
                }
                if (written.isPresent() && !written.get().input().sameFiles(input)) {
                    // a commit changed the month's files since they were read: write it again from the new base
                    log.info("Month %s of table '%s' changed while it was compacted; compacting it again from the new base", month, table.name());
                    written.get().delete(table);
                    written = Optional.empty();
                }
                if (written.isEmpty()) {
                    written = Optional.of(write(table, input, month, now));
                    Failpoints.hit(Failpoint.COMPACTION_AFTER_WRITE);
                    beforeCommit.run();
                }
                Written files = written.get();
                Optional<ArchiverLease> held = lease.acquire();
                if (held.isEmpty()) {
                    return new Outcome(Optional.empty(), Optional.of(new Skipped(month, "another archiver held the lease at the commit; compacted at the next run")));
                }
                TieringWatermark watermark;
                try (ArchiverLease commitLease = held.get()) {
                    // a late correction holds this lock from reading the winners it supersedes to its commit: its position
                    // deletes are never against files this commit replaces, nor does it fail for them
                    if (!commitLease.holdColdWrites()) {
                        return new Outcome(Optional.empty(), Optional.of(new Skipped(month, "a MeterStore writer held the cold tier at the commit; compacted at the next run")));
                    }
                    table.refresh();
                    // re-derived under the lease: an archival commit since moves W, and this commit follows it
                    watermark = WatermarkReader.current(table).watermark();
                    RewriteFiles rewrite = table.newRewrite()
                            .validateFromSnapshot(files.input().snapshotId())
                            // as Trino's optimize: delete files committed meanwhile still apply to the rewritten rows
                            .dataSequenceNumber(files.input().sequenceNumber())
                            .set(WATERMARK_KEY, watermark.toProperty())
                            .set(ROW_COUNT_KEY, "0")
                            .set(COMPACTED_MONTH_KEY, month.toString())
                            .validateWith(new WatermarkRepublished(watermark));
                    files.input().dataFiles().forEach(rewrite::deleteFile);
                    files.input().deleteFiles().forEach(rewrite::deleteFile);
                    files.files().all().forEach(rewrite::addFile);
                    Failpoints.hit(Failpoint.COMPACTION_BEFORE_COMMIT);
                    commitLease.verifyHeld();
                    keepFiles = true;
                    CommitOutcome.commit(rewrite);
                }
                catch (ValidationException | CommitFailedException e) {
                    // a correction deleted from a replaced file, or another commit landed first: the next attempt reads the new base
                    keepFiles = false;
                    log.info("Compacting month %s of table '%s' lost to a concurrent commit (%s); attempt %s of %s", month, table.name(), e.getMessage(), attempt + 1, MAX_ATTEMPTS);
                    continue;
                }
                Failpoints.hit(Failpoint.COMPACTION_AFTER_COMMIT);
                Compacted done = new Compacted(month, files.input().dataFiles().size(), files.input().deleteFiles().size(), files.input().resolved(),
                        files.files().winners().size(), files.files().superseded().size(), files.rows(), files.bytes(), table.currentSnapshot().snapshotId(), watermark, attempt);
                written = Optional.empty();
                log.info("Compacted table '%s' %s", table.name(), done.describe());
                return new Outcome(Optional.of(done), Optional.empty());
            }
            return new Outcome(Optional.empty(), Optional.of(new Skipped(month, "other commits changed it %s times while it was compacted; compacted at the next run".formatted(MAX_ATTEMPTS))));
        }
        catch (CommitStateUnknownException e) {
            // the commit may have landed: its files are kept (orphans at worst), and the next run reads the table
            written = Optional.empty();
            throw e;
        }
        finally {
            if (written.isPresent() && !keepFiles) {
                written.get().delete(table);
            }
        }
    }

    /** Streams the month's live rows, merged in sort order, through the resolved writer into new files. */
    private Written write(Table table, MonthInput input, YearMonth month, Instant now)
            throws IOException
    {
        Map<String, List<Long>> deleted = new HashMap<>();
        for (DeleteFile deleteFile : input.deleteFiles()) {
            PositionDeleteRows.read(table.io(), deleteFile.location(), deleteFile.fileSizeInBytes(), deleted);
        }
        List<LiveFile> live = new ArrayList<>();
        long expectedRows = 0;
        for (DataFile dataFile : input.dataFiles()) {
            long[] positions = new TreeSet<>(deleted.getOrDefault(dataFile.location(), List.of())).stream()
                    .mapToLong(Long::longValue)
                    .filter(position -> position >= 0 && position < dataFile.recordCount())
                    .toArray();
            live.add(new LiveFile(dataFile.location(), dataFile.fileSizeInBytes(), positions));
            expectedRows += dataFile.recordCount() - positions.length;
        }
        ResolvedMonthWriter writer = new ResolvedMonthWriter(table, month, CompactedFiles.namePrefix(now.truncatedTo(ChronoUnit.SECONDS), month), settings.targetFileSizeBytes());
        ResolvedFiles files;
        long rows;
        try {
            // every column of the table, its attribute columns too: compaction moves rows whole
            rows = LiveRowsMerge.merge(TableColumns.of(table), table.io(), live, PAGE_ROWS, writer::write);
            files = writer.finish();
        }
        catch (IOException | RuntimeException e) {
            writer.abort();
            throw e;
        }
        Written written = new Written(input, files, rows);
        long writtenRows = files.all().stream().mapToLong(DataFile::recordCount).sum();
        if (rows != expectedRows || writtenRows != expectedRows) {
            // never replace a month by files that do not hold exactly its live rows
            written.delete(table);
            throw new IllegalStateException("Compacting month %s of table '%s' read %s rows and wrote %s, but its files hold %s live rows: nothing was committed"
                    .formatted(month, table.name(), rows, writtenRows, expectedRows));
        }
        return written;
    }

    /** A month's new files, and the files of the base they replace. */
    private record Written(MonthInput input, ResolvedFiles files, long rows)
    {
        long bytes()
        {
            return files.all().stream().mapToLong(DataFile::fileSizeInBytes).sum();
        }

        void delete(Table table)
        {
            // none of them is committed: no snapshot references them
            files.all().forEach(file -> table.io().deleteFile(file.location()));
        }
    }

    /** The live data files of one month in one snapshot, and the delete files that apply to them. */
    private record MonthInput(long snapshotId, long sequenceNumber, List<DataFile> dataFiles, List<DeleteFile> deleteFiles)
    {
        static MonthInput read(Table table, Snapshot snapshot, YearMonth month)
        {
            Map<String, DataFile> dataFiles = new LinkedHashMap<>();
            Map<String, DeleteFile> deleteFiles = new LinkedHashMap<>();
            try (CloseableIterable<FileScanTask> tasks = table.newScan()
                    .useSnapshot(snapshot.snapshotId())
                    .filter(PartitionMonths.iceberg(month))
                    .planFiles()) {
                for (FileScanTask task : tasks) {
                    if (!ColdTierLayout.month(task.file()).equals(month)) {
                        continue;
                    }
                    // copies: the scan reuses its file objects
                    dataFiles.putIfAbsent(task.file().location(), task.file().copyWithoutStats());
                    task.deletes().forEach(deleteFile -> deleteFiles.putIfAbsent(deleteFile.location(), deleteFile.copyWithoutStats()));
                }
            }
            catch (IOException e) {
                throw new UncheckedIOException("Cannot list the files of month %s of table '%s'".formatted(month, table.name()), e);
            }
            // a delete file whose data files are gone applies to nothing, and leaves with the month's other files
            for (ManifestFile manifest : snapshot.deleteManifests(table.io())) {
                try (ManifestReader<DeleteFile> reader = ManifestFiles.readDeleteManifest(manifest, table.io(), table.specs())) {
                    for (DeleteFile deleteFile : reader) {
                        if (ColdTierLayout.month(deleteFile).equals(month)) {
                            deleteFiles.putIfAbsent(deleteFile.location(), deleteFile.copyWithoutStats());
                        }
                    }
                }
                catch (IOException e) {
                    throw new UncheckedIOException("Cannot read delete manifest '%s' of table '%s'".formatted(manifest.path(), table.name()), e);
                }
            }
            return new MonthInput(snapshot.snapshotId(), snapshot.sequenceNumber(), ImmutableList.copyOf(dataFiles.values()), ImmutableList.copyOf(deleteFiles.values()));
        }

        boolean sameFiles(MonthInput other)
        {
            return locations(dataFiles).equals(locations(other.dataFiles)) && locations(deleteFiles).equals(locations(other.deleteFiles));
        }

        /** Whether every file was of the resolved layout before. */
        boolean resolved()
        {
            return dataFiles.stream().allMatch(file -> ColdFileRole.of(file.location()).filter(role -> role != ColdFileRole.POSITION_DELETES).isPresent())
                    && deleteFiles.stream().allMatch(file -> ColdFileRole.of(file.location()).equals(Optional.of(ColdFileRole.POSITION_DELETES)));
        }

        /** Why the month cannot be compacted, if it cannot: only position deletes are applied here. */
        Optional<String> refusal()
        {
            return deleteFiles.stream()
                    .filter(file -> file.content() != FileContent.POSITION_DELETES)
                    .findFirst()
                    .map(file -> "delete file '%s' holds equality deletes, which compaction does not apply; rewrite the month with the engine that wrote it".formatted(file.location()));
        }

        private static Set<String> locations(List<? extends ContentFile<?>> files)
        {
            return files.stream().map(ContentFile::location).collect(ImmutableSet.toImmutableSet());
        }
    }
}
