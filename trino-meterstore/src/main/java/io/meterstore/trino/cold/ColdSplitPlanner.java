package io.meterstore.trino.cold;

import com.google.common.collect.ImmutableList;
import io.airlift.units.DataSize;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.MeterstoreException;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.TieringWatermark;
import io.meterstore.trino.MeterstoreColumnHandle;
import io.trino.spi.connector.ConnectorSplit;
import io.trino.spi.predicate.TupleDomain;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableScan;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.metrics.CounterResult;
import org.apache.iceberg.metrics.InMemoryMetricsReporter;
import org.apache.iceberg.metrics.ScanMetricsResult;
import org.apache.iceberg.metrics.ScanReport;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.types.Types.NestedField;
import org.apache.iceberg.util.TableScanUtil;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
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

    /**
     * Plans the cold splits of a read that resolves versions. The versions of a merge key lie in the files whose "from"
     * ranges hold its "from": data files whose ranges overlap (an archived day and a late correction to it) become one
     * {@link ColdFileGroupSplit}, read whole. A file that overlaps no other and whose version bounds are equal holds
     * one version per key (a key's versions differ in version), so it needs no resolution and is split at its row
     * groups like any other read.
     */
    public List<ConnectorSplit> planResolved(Table table, Optional<Long> snapshotId, TieringWatermark watermark, TupleDomain<MeterstoreColumnHandle> constraint)
    {
        requireNonNull(table, "table is null");
        requireNonNull(snapshotId, "snapshotId is null");
        requireNonNull(watermark, "watermark is null");
        requireNonNull(constraint, "constraint is null");
        if (snapshotId.isEmpty() || constraint.isNone()) {
            return ImmutableList.of();
        }
        TableScan scan = table.newScan()
                .useSnapshot(snapshotId.get())
                .filter(and(belowWatermark(watermark), toIcebergExpression(constraint)))
                .includeColumnStats(ImmutableList.of(ReadingsColumn.FROM.columnName(), ReadingsColumn.VERSION.columnName()));
        int fromField = table.schema().findField(ReadingsColumn.FROM.columnName()).fieldId();
        NestedField versionField = table.schema().findField(ReadingsColumn.VERSION.columnName());

        List<FileScanTask> tasks = new ArrayList<>();
        try (CloseableIterable<FileScanTask> planned = scan.planFiles()) {
            for (FileScanTask task : planned) {
                verifyReadable(table, task);
                tasks.add(task);
            }
        }
        catch (IOException e) {
            throw new UncheckedIOException("Failed to plan the files of Iceberg table '%s'".formatted(table.name()), e);
        }
        // a file without bounds could hold any "from": it joins every file
        tasks.sort(Comparator.comparingLong(task -> bound(task.file().lowerBounds(), fromField, Long.MIN_VALUE)));

        ImmutableList.Builder<ConnectorSplit> splits = ImmutableList.builder();
        List<FileScanTask> group = new ArrayList<>();
        long groupUpper = Long.MIN_VALUE;
        for (FileScanTask task : tasks) {
            long lower = bound(task.file().lowerBounds(), fromField, Long.MIN_VALUE);
            if (!group.isEmpty() && lower > groupUpper) {
                addGroup(table, group, versionField, splits);
                group = new ArrayList<>();
                groupUpper = Long.MIN_VALUE;
            }
            group.add(task);
            groupUpper = Math.max(groupUpper, bound(task.file().upperBounds(), fromField, Long.MAX_VALUE));
        }
        if (!group.isEmpty()) {
            addGroup(table, group, versionField, splits);
        }
        return splits.build();
    }

    private void addGroup(Table table, List<FileScanTask> group, NestedField versionField, ImmutableList.Builder<ConnectorSplit> splits)
    {
        if (group.size() == 1 && oneVersion(group.getFirst().file(), versionField)) {
            for (FileScanTask task : group.getFirst().split(targetSplitSizeBytes)) {
                DataFile file = task.file();
                splits.add(new ColdSplit(file.location(), task.start(), task.length(), file.fileSizeInBytes(), file.recordCount()));
            }
            return;
        }
        // resolution reads each file once, in order: a file that is not sorted by the merge key would let two versions of a key both win
        for (FileScanTask task : group) {
            SortOrder sortOrder = table.sortOrders().get(task.file().sortOrderId());
            if (sortOrder == null || !sortOrder.sameOrder(IcebergTableSpec.sortOrder(table.schema()))) {
                throw new MeterstoreException(TABLE_LAYOUT_UNSUPPORTED,
                        "Data file '%s' of Iceberg table '%s' is not declared sorted by (malo_id, obis_code, \"from\", version), so the versions of its keys cannot be resolved in one pass; read %s_versions, or rewrite the file sorted (rewrite_data_files with the table's sort order)"
                                .formatted(task.file().location(), table.name(), table.name()));
            }
        }
        splits.add(new ColdFileGroupSplit(group.stream()
                .map(FileScanTask::file)
                .map(file -> new ColdSplit(file.location(), 0, file.fileSizeInBytes(), file.fileSizeInBytes(), file.recordCount()))
                .toList()));
    }

    private static boolean oneVersion(DataFile file, NestedField versionField)
    {
        ByteBuffer lower = file.lowerBounds() == null ? null : file.lowerBounds().get(versionField.fieldId());
        ByteBuffer upper = file.upperBounds() == null ? null : file.upperBounds().get(versionField.fieldId());
        if (lower == null || upper == null) {
            return false;
        }
        BigDecimal lowest = Conversions.fromByteBuffer(versionField.type(), lower);
        BigDecimal highest = Conversions.fromByteBuffer(versionField.type(), upper);
        return lowest.compareTo(highest) == 0;
    }

    private static long bound(Map<Integer, ByteBuffer> bounds, int fieldId, long missing)
    {
        if (bounds == null || !bounds.containsKey(fieldId)) {
            return missing;
        }
        // timestamptz bounds are microseconds since the epoch
        return Conversions.<Long>fromByteBuffer(Types.TimestampType.withZone(), bounds.get(fieldId));
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
