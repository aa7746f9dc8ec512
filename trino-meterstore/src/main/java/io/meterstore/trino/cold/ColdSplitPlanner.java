package io.meterstore.trino.cold;

import com.google.common.collect.ImmutableList;
import io.airlift.units.DataSize;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.TieringWatermark;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.meterstore.trino.base.MeterstoreMetrics;
import io.trino.filesystem.TrinoFileSystem;
import io.trino.filesystem.TrinoFileSystemFactory;
import io.trino.parquet.ParquetReaderOptions;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.security.ConnectorIdentity;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableScan;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.metrics.InMemoryMetricsReporter;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.collect.ImmutableList.toImmutableList;
import static io.airlift.units.DataSize.Unit.MEGABYTE;
import static io.meterstore.trino.cold.IcebergExpressions.belowWatermark;
import static io.meterstore.trino.cold.IcebergExpressions.toIcebergExpression;
import static java.util.Objects.requireNonNull;
import static org.apache.iceberg.expressions.Expressions.and;

/**
 * Plans the cold splits of a query: the data files of the pinned snapshot below the pinned watermark that the
 * pushed predicate cannot exclude, split at their row-group offsets, or grouped for resolution ({@link ColdRead}).
 */
public final class ColdSplitPlanner
{
    /** As Iceberg's {@code read.split.target-size}. */
    public static final DataSize DEFAULT_TARGET_SPLIT_SIZE = DataSize.of(128, MEGABYTE);
    /** The size a split of weight 1 stands for (Trino's standard split weight). */
    public static final long TARGET_SPLIT_SIZE_BYTES = DEFAULT_TARGET_SPLIT_SIZE.toBytes();
    /** The rows a resolution split aims at: four of the archiver's row groups, about a day of 10,000 meters. */
    public static final long DEFAULT_RESOLUTION_SPLIT_ROWS = 4L * IcebergTableSpec.ROW_GROUP_ROWS;

    private final long targetSplitSizeBytes;
    private final TrinoFileSystemFactory fileSystemFactory;
    private final RowGroupKeys rowGroupKeys;

    public ColdSplitPlanner(DataSize targetSplitSize, TrinoFileSystemFactory fileSystemFactory, ParquetReaderOptions options)
    {
        this.targetSplitSizeBytes = requireNonNull(targetSplitSize, "targetSplitSize is null").toBytes();
        checkArgument(targetSplitSizeBytes > 0, "targetSplitSize must be positive");
        this.fileSystemFactory = requireNonNull(fileSystemFactory, "fileSystemFactory is null");
        this.rowGroupKeys = new RowGroupKeys(requireNonNull(options, "options is null"));
    }

    /**
     * Every split of a read of every version, at once: for callers that need the whole plan, such as INSERT's lookup
     * of stored rows.
     *
     * @param snapshotId the snapshot pinned at planning; empty for a table without snapshots, which has no cold rows
     * @param watermark the watermark pinned with the snapshot; the only source of the tier boundary
     * @param constraint the pushed predicate; parts Iceberg cannot express are left out, which only widens the scan
     */
    public ColdSplitPlan plan(Table table, Optional<Long> snapshotId, TieringWatermark watermark, TupleDomain<MeterstoreColumnHandle> constraint)
    {
        requireNonNull(snapshotId, "snapshotId is null");
        if (snapshotId.isEmpty()) {
            return ColdSplitPlan.EMPTY;
        }
        try (ColdSplitStream stream = splits(ConnectorIdentity.ofUser("meterstore"), table, snapshotId.get(), watermark, constraint, ColdRead.VERSIONS, DEFAULT_RESOLUTION_SPLIT_ROWS)) {
            List<ColdSplit> splits = stream.all().stream().map(ColdSplit.class::cast).collect(toImmutableList());
            Map<String, Long> metrics = stream.metrics();
            return new ColdSplitPlan(
                    splits,
                    stream.dataFileCount(),
                    stream.dataFileBytes(),
                    metrics.getOrDefault(MeterstoreMetrics.COLD_DATA_MANIFESTS, 0L),
                    metrics.getOrDefault(MeterstoreMetrics.COLD_DATA_MANIFESTS_SKIPPED, 0L),
                    metrics.getOrDefault(MeterstoreMetrics.COLD_DATA_FILES_SKIPPED, 0L));
        }
    }

    /**
     * The cold splits of a query, produced in batches as the engine asks for them.
     *
     * @param identity whose file system reads the footers that resolution splits are cut with
     * @param resolutionSplitRows the rows a resolution split aims at
     */
    public ColdSplitStream splits(
            ConnectorIdentity identity,
            Table table,
            long snapshotId,
            TieringWatermark watermark,
            TupleDomain<MeterstoreColumnHandle> constraint,
            ColdRead read,
            long resolutionSplitRows)
    {
        requireNonNull(identity, "identity is null");
        requireNonNull(table, "table is null");
        requireNonNull(watermark, "watermark is null");
        requireNonNull(constraint, "constraint is null");
        requireNonNull(read, "read is null");
        if (constraint.isNone()) {
            return ColdSplitStream.empty(table);
        }
        // the boundary is the pinned W, never whatever the surviving files happen to cover
        Expression filter = and(belowWatermark(watermark), toIcebergExpression(constraint));
        InMemoryMetricsReporter metricsReporter = new InMemoryMetricsReporter();
        TableScan scan = table.newScan()
                .useSnapshot(snapshotId)
                .filter(filter)
                .metricsReporter(metricsReporter);
        // the bounds a join's dynamic filter prunes files with, and those that group a month's files and prove a file
        // holds one version per key
        scan = scan.includeColumnStats(read == ColdRead.VERSIONS
                ? ImmutableList.of(ReadingsColumn.FROM.columnName(), ReadingsColumn.MALO_ID.columnName())
                : ImmutableList.of(ReadingsColumn.FROM.columnName(), ReadingsColumn.MALO_ID.columnName(), ReadingsColumn.VERSION.columnName()));
        TrinoFileSystem fileSystem = fileSystemFactory.create(identity);
        return new ColdSplitStream(table, scan, metricsReporter, read, targetSplitSizeBytes, resolutionSplitRows,
                task -> rowGroupKeys.rowGroups(fileSystem, task.file().location(), task.file().fileSizeInBytes()));
    }
}
