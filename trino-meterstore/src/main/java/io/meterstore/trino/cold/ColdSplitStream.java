package io.meterstore.trino.cold;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import io.meterstore.core.ColdFileRole;
import io.meterstore.core.ColdPartitions;
import io.meterstore.core.MeterstoreException;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.meterstore.trino.base.MeterstoreMetrics;
import io.meterstore.trino.cold.RowGroupKeys.RowGroup;
import io.trino.spi.connector.ConnectorSplit;
import io.trino.spi.predicate.TupleDomain;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableScan;
import org.apache.iceberg.expressions.InclusiveMetricsEvaluator;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.CloseableIterator;
import org.apache.iceberg.metrics.CounterResult;
import org.apache.iceberg.metrics.InMemoryMetricsReporter;
import org.apache.iceberg.metrics.ScanMetricsResult;
import org.apache.iceberg.metrics.ScanReport;
import org.apache.iceberg.util.TableScanUtil;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;

import static com.google.common.base.Preconditions.checkArgument;
import static io.meterstore.core.MeterstoreException.Reason.TABLE_LAYOUT_UNSUPPORTED;
import static io.meterstore.trino.cold.IcebergExpressions.toIcebergExpression;
import static java.util.Objects.requireNonNull;

/**
 * The cold splits of one query, produced as they are asked for rather than all at once. A read of every version walks
 * the pinned snapshot's file scan tasks and splits each file at its row groups as it goes. A read of winners, or AS OF,
 * first lists the files' metadata by month (one pass over the manifests, no data file opened), since which files a
 * month is read from depends on all of them, and then plans one month at a time: a resolved month from its winners
 * files, any other month in resolution splits ({@link ResolutionGroups}), whose row-group statistics are only read when
 * the month's turn comes.
 */
public final class ColdSplitStream
        implements Closeable
{
    private final Table table;
    private final ColdRead read;
    private final long targetSplitSizeBytes;
    private final long resolutionSplitRows;
    private final Function<FileScanTask, List<RowGroup>> footers;
    private final InMemoryMetricsReporter metricsReporter;
    private final CloseableIterable<FileScanTask> tasks;
    private final Queue<ConnectorSplit> ready = new ArrayDeque<>();
    private final Set<String> dataFiles = new HashSet<>();
    private final Set<String> deleteFiles = new HashSet<>();
    private final Set<String> dynamicallyPrunedFiles = new HashSet<>();

    private Optional<CloseableIterator<FileScanTask>> taskIterator = Optional.empty();
    private Optional<Iterator<List<FileScanTask>>> months = Optional.empty();
    // adjacent row groups of one file are joined again into one split up to the target size
    private Optional<ColdSplit> pending = Optional.empty();
    private long dataFileBytes;
    private long splits;
    private long resolutionSplits;
    private long monthsResolved;
    private long monthsResolving;
    private boolean exhausted;
    private boolean closed;
    private Optional<ScanMetricsResult> scanMetrics = Optional.empty();
    private TupleDomain<MeterstoreColumnHandle> dynamicFilter = TupleDomain.all();
    private Optional<InclusiveMetricsEvaluator> dynamicFilterEvaluator = Optional.empty();

    ColdSplitStream(
            Table table,
            TableScan scan,
            InMemoryMetricsReporter metricsReporter,
            ColdRead read,
            long targetSplitSizeBytes,
            long resolutionSplitRows,
            Function<FileScanTask, List<RowGroup>> footers)
    {
        this.table = requireNonNull(table, "table is null");
        this.metricsReporter = requireNonNull(metricsReporter, "metricsReporter is null");
        this.read = requireNonNull(read, "read is null");
        checkArgument(targetSplitSizeBytes > 0, "targetSplitSizeBytes must be positive");
        checkArgument(resolutionSplitRows > 0, "resolutionSplitRows must be positive");
        this.targetSplitSizeBytes = targetSplitSizeBytes;
        this.resolutionSplitRows = resolutionSplitRows;
        this.footers = requireNonNull(footers, "footers is null");
        // Iceberg cuts a file at every split offset (its row groups); a read of every version needs nothing else
        this.tasks = read == ColdRead.VERSIONS ? TableScanUtil.splitFiles(scan.planFiles(), targetSplitSizeBytes) : scan.planFiles();
    }

    /** A stream with no splits: a table without snapshots, or a predicate no row can match. */
    static ColdSplitStream empty(Table table)
    {
        return new ColdSplitStream(table);
    }

    private ColdSplitStream(Table table)
    {
        this.table = requireNonNull(table, "table is null");
        this.read = ColdRead.VERSIONS;
        this.targetSplitSizeBytes = 1;
        this.resolutionSplitRows = 1;
        this.footers = task -> ImmutableList.of();
        this.metricsReporter = new InMemoryMetricsReporter();
        this.tasks = CloseableIterable.empty();
        this.exhausted = true;
    }

    /** Up to {@code maxSize} more splits; fewer only at the end. */
    public List<ConnectorSplit> next(int maxSize)
    {
        return next(maxSize, TupleDomain.all());
    }

    /**
     * Up to {@code maxSize} more splits of the files a join's dynamic filter, as far as it is known, cannot exclude by
     * their "from" and malo_id bounds; fewer only at the end. Only key columns may be in it when the read resolves
     * versions: a file is then left out only if none of its rows has a key the filter admits, so no key loses a version.
     */
    public List<ConnectorSplit> next(int maxSize, TupleDomain<MeterstoreColumnHandle> dynamicFilter)
    {
        checkArgument(maxSize > 0, "maxSize must be positive");
        requireNonNull(dynamicFilter, "dynamicFilter is null");
        if (!dynamicFilter.equals(this.dynamicFilter)) {
            this.dynamicFilter = dynamicFilter;
            this.dynamicFilterEvaluator = dynamicFilter.isAll()
                    ? Optional.empty()
                    : Optional.of(new InclusiveMetricsEvaluator(table.schema(), toIcebergExpression(dynamicFilter)));
        }
        while (ready.size() < maxSize && !exhausted) {
            advance();
        }
        ImmutableList.Builder<ConnectorSplit> batch = ImmutableList.builder();
        for (int count = 0; count < maxSize && !ready.isEmpty(); count++) {
            batch.add(ready.poll());
        }
        return batch.build();
    }

    public boolean isFinished()
    {
        return exhausted && ready.isEmpty();
    }

    /** Plans nothing more: a dynamic filter no row can match (an empty build side) leaves no split to read. */
    public void skipRemaining()
    {
        ready.clear();
        pending = Optional.empty();
        close();
    }

    /** Every remaining split: for callers that need the whole plan, such as INSERT's lookup of stored rows. */
    public List<ConnectorSplit> all()
    {
        ImmutableList.Builder<ConnectorSplit> all = ImmutableList.builder();
        while (!isFinished()) {
            all.addAll(next(1024));
        }
        return all.build();
    }

    /** What planning did so far, as {@link MeterstoreMetrics} counts; the manifest counts are known once planning is done. */
    public Map<String, Long> metrics()
    {
        ImmutableMap.Builder<String, Long> metrics = ImmutableMap.<String, Long>builder()
                .put(MeterstoreMetrics.COLD_SPLITS, splits)
                .put(MeterstoreMetrics.COLD_RESOLUTION_SPLITS, resolutionSplits)
                .put(MeterstoreMetrics.COLD_DATA_FILES, (long) dataFiles.size())
                .put(MeterstoreMetrics.COLD_DELETE_FILES, (long) deleteFiles.size());
        if (read != ColdRead.VERSIONS) {
            metrics.put(MeterstoreMetrics.COLD_MONTHS_RESOLVED, monthsResolved)
                    .put(MeterstoreMetrics.COLD_MONTHS_RESOLVING, monthsResolving);
        }
        // a file a batch read in part before the filter narrowed was not pruned
        metrics.put(MeterstoreMetrics.COLD_DATA_FILES_DYNAMIC_FILTER_SKIPPED, dynamicallyPrunedFiles.stream().filter(file -> !dataFiles.contains(file)).count());
        scanMetrics.ifPresent(scan -> metrics
                .put(MeterstoreMetrics.COLD_DATA_FILES_SKIPPED, count(scan.skippedDataFiles()))
                .put(MeterstoreMetrics.COLD_DATA_MANIFESTS, count(scan.totalDataManifests()))
                .put(MeterstoreMetrics.COLD_DATA_MANIFESTS_SKIPPED, count(scan.skippedDataManifests())));
        return metrics.buildOrThrow();
    }

    long dataFileCount()
    {
        return dataFiles.size();
    }

    long dataFileBytes()
    {
        return dataFileBytes;
    }

    @Override
    public void close()
    {
        if (closed) {
            return;
        }
        closed = true;
        exhausted = true;
        try {
            if (taskIterator.isPresent()) {
                taskIterator.get().close();
            }
            // closing the tasks closes the scan, which then reports its metrics
            tasks.close();
        }
        catch (IOException e) {
            throw new UncheckedIOException("Failed to plan the files of Iceberg table '%s'".formatted(table.name()), e);
        }
        scanMetrics = Optional.ofNullable(metricsReporter.scanReport()).map(ScanReport::scanMetrics);
    }

    private void advance()
    {
        if (read == ColdRead.VERSIONS) {
            advanceVersions();
            return;
        }
        if (months.isEmpty()) {
            months = Optional.of(listByMonth().values().iterator());
        }
        if (!months.get().hasNext()) {
            finish();
            return;
        }
        planMonth(months.get().next());
    }

    private void advanceVersions()
    {
        CloseableIterator<FileScanTask> iterator = taskIterator.orElseGet(() -> {
            CloseableIterator<FileScanTask> opened = tasks.iterator();
            taskIterator = Optional.of(opened);
            return opened;
        });
        if (!iterator.hasNext()) {
            finish();
            return;
        }
        FileScanTask task = iterator.next();
        verifyReadable(task);
        if (admittedByDynamicFilter(task)) {
            addRowGroupSplit(task);
        }
    }

    private void finish()
    {
        pending.ifPresent(this::emit);
        pending = Optional.empty();
        close();
    }

    /** The file scan tasks of the pinned snapshot by month of "from", in month order. */
    private Map<YearMonth, List<FileScanTask>> listByMonth()
    {
        Map<YearMonth, List<FileScanTask>> byMonth = new TreeMap<>();
        try (CloseableIterator<FileScanTask> iterator = tasks.iterator()) {
            while (iterator.hasNext()) {
                FileScanTask task = iterator.next();
                verifyReadable(task);
                // a month's files are those of every partition of it: the resolution of a key spans them
                byMonth.computeIfAbsent(ColdPartitions.month(task.file()), _ -> new ArrayList<>()).add(task);
            }
        }
        catch (IOException e) {
            throw new UncheckedIOException("Failed to plan the files of Iceberg table '%s'".formatted(table.name()), e);
        }
        return byMonth;
    }

    private void planMonth(List<FileScanTask> month)
    {
        if (read == ColdRead.WINNERS && ColdFileRole.resolved(month)) {
            // every key of the month has exactly one live row in its winners files: read them as they are
            monthsResolved++;
            for (FileScanTask task : month) {
                if (ColdFileRole.of(task.file().location()).equals(Optional.of(ColdFileRole.WINNERS)) && admittedByDynamicFilter(task)) {
                    for (FileScanTask rowGroups : task.split(targetSplitSizeBytes)) {
                        addRowGroupSplit(rowGroups);
                    }
                }
            }
            pending.ifPresent(this::emit);
            pending = Optional.empty();
            return;
        }
        // whether the month is resolved was decided on all its files; a file without a key the filter admits holds no
        // version of a key the query can join, so the groups are cut from the others alone
        List<FileScanTask> admitted = month.stream().filter(this::admittedByDynamicFilter).toList();
        if (admitted.isEmpty()) {
            return;
        }
        monthsResolving++;
        new ResolutionGroups(table, resolutionSplitRows, footers, this::wholeFile, this::addRowGroupSplits, this::emitResolution).plan(admitted);
        pending.ifPresent(this::emit);
        pending = Optional.empty();
    }

    /** Whether the file's column bounds leave a row the dynamic filter, as known now, admits; counts the file if not. */
    private boolean admittedByDynamicFilter(FileScanTask task)
    {
        if (dynamicFilterEvaluator.isEmpty() || dynamicFilterEvaluator.get().eval(task.file())) {
            return true;
        }
        dynamicallyPrunedFiles.add(task.file().location());
        return false;
    }

    private void addRowGroupSplits(FileScanTask task)
    {
        for (FileScanTask rowGroups : task.split(targetSplitSizeBytes)) {
            addRowGroupSplit(rowGroups);
        }
        pending.ifPresent(this::emit);
        pending = Optional.empty();
    }

    private void addRowGroupSplit(FileScanTask task)
    {
        DataFile file = task.file();
        ColdSplit split = new ColdSplit(file.location(), task.start(), task.length(), file.fileSizeInBytes(), file.recordCount(), deletes(task));
        countFile(task);
        Optional<ColdSplit> joined = pending.flatMap(previous -> join(previous, split));
        if (joined.isPresent()) {
            pending = joined;
            return;
        }
        pending.ifPresent(this::emit);
        pending = Optional.of(split);
    }

    private ColdSplit wholeFile(FileScanTask task)
    {
        countFile(task);
        DataFile file = task.file();
        return new ColdSplit(file.location(), 0, file.fileSizeInBytes(), file.fileSizeInBytes(), file.recordCount(), deletes(task));
    }

    private void countFile(FileScanTask task)
    {
        if (dataFiles.add(task.file().location())) {
            dataFileBytes += task.file().fileSizeInBytes();
        }
        task.deletes().forEach(delete -> deleteFiles.add(delete.location()));
    }

    private void emit(ConnectorSplit split)
    {
        ready.add(split);
        splits++;
    }

    private void emitResolution(ConnectorSplit split)
    {
        emit(split);
        resolutionSplits++;
    }

    private Optional<ColdSplit> join(ColdSplit previous, ColdSplit next)
    {
        boolean adjacent = previous.path().equals(next.path()) && previous.start() + previous.length() == next.start();
        if (!adjacent || previous.length() + next.length() > targetSplitSizeBytes) {
            return Optional.empty();
        }
        return Optional.of(new ColdSplit(previous.path(), previous.start(), previous.length() + next.length(), previous.fileSize(), previous.fileRecordCount(), previous.deletes()));
    }

    private static List<ColdDeleteFile> deletes(FileScanTask task)
    {
        return task.deletes().stream()
                .map(delete -> new ColdDeleteFile(delete.location(), delete.fileSizeInBytes(), delete.recordCount()))
                .collect(ImmutableList.toImmutableList());
    }

    private void verifyReadable(FileScanTask task)
    {
        for (DeleteFile delete : task.deletes()) {
            // the reader applies position deletes; equality deletes would need every row's key compared against them
            if (delete.content() != FileContent.POSITION_DELETES || delete.format() != FileFormat.PARQUET) {
                throw new MeterstoreException(TABLE_LAYOUT_UNSUPPORTED,
                        "Iceberg table '%s' has %s delete file '%s' for data file '%s': MeterStore applies Parquet position deletes only; rewrite the affected files (rewrite_data_files) to apply it"
                                .formatted(table.name(), delete.content() == FileContent.POSITION_DELETES ? delete.format() + " position" : "an equality", delete.location(), task.file().location()));
            }
        }
        if (task.file().format() != FileFormat.PARQUET) {
            throw new MeterstoreException(TABLE_LAYOUT_UNSUPPORTED,
                    "Data file '%s' of Iceberg table '%s' is %s: MeterStore reads Parquet data files only; rewrite the file as Parquet"
                            .formatted(task.file().location(), table.name(), task.file().format()));
        }
    }

    private static long count(CounterResult counter)
    {
        // Iceberg leaves a counter out when it never counted anything
        return counter == null ? 0 : counter.value();
    }
}
