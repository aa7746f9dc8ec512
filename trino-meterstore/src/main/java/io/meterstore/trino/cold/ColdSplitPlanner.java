package io.meterstore.trino.cold;

import com.google.common.collect.ImmutableList;
import io.airlift.units.DataSize;
import io.meterstore.core.MeterstoreException;
import io.meterstore.core.TieringWatermark;
import io.meterstore.trino.MeterstoreColumnHandle;
import io.trino.spi.predicate.TupleDomain;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableScan;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.metrics.CounterResult;
import org.apache.iceberg.metrics.InMemoryMetricsReporter;
import org.apache.iceberg.metrics.ScanMetricsResult;
import org.apache.iceberg.metrics.ScanReport;
import org.apache.iceberg.util.TableScanUtil;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;

import static com.google.common.base.Preconditions.checkArgument;
import static io.airlift.units.DataSize.Unit.MEGABYTE;
import static io.meterstore.core.MeterstoreException.Reason.TABLE_LAYOUT_UNSUPPORTED;
import static io.meterstore.trino.cold.IcebergExpressions.belowWatermark;
import static io.meterstore.trino.cold.IcebergExpressions.toIcebergExpression;
import static java.util.Objects.requireNonNull;
import static org.apache.iceberg.expressions.Expressions.and;

/**
 * Plans the cold splits of a query: the data files of the pinned snapshot below the pinned watermark that the
 * pushed predicate cannot exclude, split at their row-group offsets.
 */
public final class ColdSplitPlanner
{
    /** As Iceberg's {@code read.split.target-size}. */
    public static final DataSize DEFAULT_TARGET_SPLIT_SIZE = DataSize.of(128, MEGABYTE);
    /** The size a split of weight 1 stands for (Trino's standard split weight). */
    public static final long TARGET_SPLIT_SIZE_BYTES = DEFAULT_TARGET_SPLIT_SIZE.toBytes();

    private final long targetSplitSizeBytes;

    public ColdSplitPlanner(DataSize targetSplitSize)
    {
        this.targetSplitSizeBytes = requireNonNull(targetSplitSize, "targetSplitSize is null").toBytes();
        checkArgument(targetSplitSizeBytes > 0, "targetSplitSize must be positive");
    }

    /**
     * @param snapshotId the snapshot pinned at planning; empty for a table without snapshots, which has no cold rows
     * @param watermark the watermark pinned with the snapshot; the only source of the tier boundary
     * @param constraint the pushed predicate; parts Iceberg cannot express are left out, which only widens the scan
     */
    public ColdSplitPlan plan(Table table, Optional<Long> snapshotId, TieringWatermark watermark, TupleDomain<MeterstoreColumnHandle> constraint)
    {
        requireNonNull(table, "table is null");
        requireNonNull(snapshotId, "snapshotId is null");
        requireNonNull(watermark, "watermark is null");
        requireNonNull(constraint, "constraint is null");
        if (snapshotId.isEmpty() || constraint.isNone()) {
            return ColdSplitPlan.EMPTY;
        }

        // the boundary is the pinned W, never whatever the surviving files happen to cover
        Expression filter = and(belowWatermark(watermark), toIcebergExpression(constraint));
        InMemoryMetricsReporter metricsReporter = new InMemoryMetricsReporter();
        TableScan scan = table.newScan()
                .useSnapshot(snapshotId.get())
                .filter(filter)
                .metricsReporter(metricsReporter);

        ImmutableList.Builder<ColdSplit> splits = ImmutableList.builder();
        Set<String> files = new HashSet<>();
        long dataFileBytes = 0;
        // Iceberg cuts a file at every split offset; adjacent row groups of one file are joined again up to the target size
        Optional<ColdSplit> pending = Optional.empty();
        // closing the split tasks closes the scan, which then reports its metrics
        try (CloseableIterable<FileScanTask> splitTasks = TableScanUtil.splitFiles(scan.planFiles(), targetSplitSizeBytes)) {
            for (FileScanTask task : splitTasks) {
                DataFile file = task.file();
                verifyReadable(table, task);
                if (files.add(file.location())) {
                    dataFileBytes += file.fileSizeInBytes();
                }
                ColdSplit split = new ColdSplit(file.location(), task.start(), task.length(), file.fileSizeInBytes(), file.recordCount());
                Optional<ColdSplit> joined = pending.flatMap(previous -> join(previous, split));
                if (joined.isPresent()) {
                    pending = joined;
                    continue;
                }
                pending.ifPresent(splits::add);
                pending = Optional.of(split);
            }
        }
        catch (IOException e) {
            throw new UncheckedIOException("Failed to plan the files of Iceberg table '%s'".formatted(table.name()), e);
        }
        pending.ifPresent(splits::add);

        Optional<ScanMetricsResult> metrics = Optional.ofNullable(metricsReporter.scanReport()).map(ScanReport::scanMetrics);
        return new ColdSplitPlan(
                splits.build(),
                files.size(),
                dataFileBytes,
                count(metrics.map(ScanMetricsResult::totalDataManifests)),
                count(metrics.map(ScanMetricsResult::skippedDataManifests)),
                count(metrics.map(ScanMetricsResult::skippedDataFiles)));
    }

    private Optional<ColdSplit> join(ColdSplit previous, ColdSplit next)
    {
        boolean adjacent = previous.path().equals(next.path()) && previous.start() + previous.length() == next.start();
        if (!adjacent || previous.length() + next.length() > targetSplitSizeBytes) {
            return Optional.empty();
        }
        return Optional.of(new ColdSplit(previous.path(), previous.start(), previous.length() + next.length(), previous.fileSize(), previous.fileRecordCount()));
    }

    private static void verifyReadable(Table table, FileScanTask task)
    {
        // MeterStore writes neither delete files nor other formats: another tool changed the table, and skipping deletes would return deleted rows
        if (!task.deletes().isEmpty()) {
            throw new MeterstoreException(TABLE_LAYOUT_UNSUPPORTED,
                    "Iceberg table '%s' has delete files for data file '%s': MeterStore reads tables without row-level deletes; rewrite the affected files (rewrite_data_files) to apply them"
                            .formatted(table.name(), task.file().location()));
        }
        if (task.file().format() != FileFormat.PARQUET) {
            throw new MeterstoreException(TABLE_LAYOUT_UNSUPPORTED,
                    "Data file '%s' of Iceberg table '%s' is %s: MeterStore reads Parquet data files only; rewrite the file as Parquet"
                            .formatted(task.file().location(), table.name(), task.file().format()));
        }
    }

    private static long count(Optional<CounterResult> counter)
    {
        // Iceberg leaves a counter out when it never counted anything
        return counter.map(CounterResult::value).orElse(0L);
    }
}
