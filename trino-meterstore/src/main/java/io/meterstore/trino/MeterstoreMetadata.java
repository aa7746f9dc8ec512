package io.meterstore.trino;

import com.google.common.collect.ImmutableList;
import com.google.inject.Inject;
import io.airlift.slice.Slice;
import io.meterstore.core.MeterstoreException;
import io.meterstore.core.WatermarkReader;
import io.meterstore.core.WatermarkReader.PinnedWatermark;
import io.meterstore.trino.write.InsertWriter;
import io.meterstore.trino.write.MeterstoreInsertTableHandle;
import io.trino.spi.TrinoException;
import io.trino.spi.catalog.CatalogName;
import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.connector.ColumnMetadata;
import io.trino.spi.connector.ConnectorInsertTableHandle;
import io.trino.spi.connector.ConnectorMetadata;
import io.trino.spi.connector.ConnectorOutputMetadata;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.ConnectorTableHandle;
import io.trino.spi.connector.ConnectorTableMetadata;
import io.trino.spi.connector.ConnectorTableVersion;
import io.trino.spi.connector.PointerType;
import io.trino.spi.connector.Constraint;
import io.trino.spi.connector.ConstraintApplicationResult;
import io.trino.spi.connector.RetryMode;
import io.trino.spi.connector.SchemaTableName;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.statistics.ComputedStatistics;
import io.trino.spi.type.LongTimestamp;
import io.trino.spi.type.LongTimestampWithTimeZone;
import io.trino.spi.type.TimestampType;
import io.trino.spi.type.TimestampWithTimeZoneType;
import org.apache.iceberg.Table;

import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static com.google.common.collect.ImmutableMap.toImmutableMap;
import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_SNAPSHOT_NOT_FOUND;
import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_TABLE_NOT_FOUND;
import static io.trino.spi.StandardErrorCode.NOT_SUPPORTED;
import static io.trino.spi.type.DateTimeEncoding.unpackMillisUtc;
import static io.trino.spi.type.Timestamps.MICROSECONDS_PER_MILLISECOND;
import static io.trino.spi.type.Timestamps.MICROSECONDS_PER_SECOND;
import static io.trino.spi.type.Timestamps.NANOSECONDS_PER_MICROSECOND;
import static java.lang.Math.floorDiv;
import static java.lang.Math.floorMod;
import static java.util.Objects.requireNonNull;

/**
 * Exposes each configured table twice: {@code <table>_versions}, every version of every reading from both tiers, and
 * {@code <table>}, the winning version per merge key, resolved by the connector as it reads each split.
 */
public class MeterstoreMetadata
        implements ConnectorMetadata
{
    private final MeterstoreTables tables;
    private final String catalogName;
    private final InsertWriter insertWriter;

    @Inject
    public MeterstoreMetadata(MeterstoreTables tables, CatalogName catalogName, InsertWriter insertWriter)
    {
        this.tables = requireNonNull(tables, "tables is null");
        this.catalogName = requireNonNull(catalogName, "catalogName is null").toString();
        this.insertWriter = requireNonNull(insertWriter, "insertWriter is null");
    }

    @Override
    public List<String> listSchemaNames(ConnectorSession session)
    {
        return ImmutableList.of(tables.schema());
    }

    @Override
    public ConnectorTableHandle getTableHandle(ConnectorSession session, SchemaTableName tableName, Optional<ConnectorTableVersion> startVersion, Optional<ConnectorTableVersion> endVersion)
    {
        if (!tableName.getSchemaName().equals(tables.schema())) {
            return null;
        }
        // Trino passes FOR ... AS OF as the end version; a start version would be a range of versions
        if (startVersion.isPresent()) {
            throw new TrinoException(NOT_SUPPORTED, "MeterStore does not support reading a range of versions");
        }
        String storageTable = tables.storageTableOf(tableName)
                .orElseThrow(() -> new TrinoException(METERSTORE_TABLE_NOT_FOUND, "Table '%s' does not exist: MeterStore serves %s (configured by meterstore.tables)"
                        .formatted(tableName, ImmutableList.builder().addAll(tables.resolvedTables()).addAll(tables.versionsTables()).build())));
        boolean resolved = tables.isResolvedTable(tableName);
        Table icebergTable = tables.loadIcebergTable(storageTable);
        try {
            if (endVersion.isPresent() && endVersion.get().getPointerType() == PointerType.TARGET_ID) {
                long snapshotId = snapshotId(tableName, endVersion.get());
                if (icebergTable.snapshot(snapshotId) == null) {
                    throw new TrinoException(METERSTORE_SNAPSHOT_NOT_FOUND, "Table '%s' has no snapshot %s: use a snapshot id from iceberg.%s.\"%s$snapshots\""
                            .formatted(tableName, snapshotId, tables.schema(), storageTable));
                }
                // the cold tier exactly as that snapshot had it, split at the watermark it carried
                PinnedWatermark pinned = new PinnedWatermark(Optional.of(snapshotId), WatermarkReader.ofSnapshot(icebergTable, snapshotId));
                return new MeterstoreTableHandle(tableName, storageTable, pinned.snapshotId(), MeterstoreTypes.toEpochMicros(pinned.watermark().instant()), TupleDomain.all(), true, resolved, Optional.empty());
            }
            // FOR TIMESTAMP AS OF t is "as known at t": the current snapshot and W, both tiers, versions recorded up to t
            Optional<Long> knownAt = endVersion.map(version -> knownAtEpochMicros(session, tableName, version));
            // the query pins this snapshot and the watermark it carries; both tiers are split at exactly this W
            PinnedWatermark pinned = WatermarkReader.current(icebergTable);
            return new MeterstoreTableHandle(tableName, storageTable, pinned.snapshotId(), MeterstoreTypes.toEpochMicros(pinned.watermark().instant()), TupleDomain.all(), false, resolved, knownAt);
        }
        catch (MeterstoreException e) {
            throw MeterstoreErrorCode.toTrinoException(e);
        }
    }

    private static long snapshotId(SchemaTableName tableName, ConnectorTableVersion version)
    {
        if (!(version.getVersion() instanceof Long snapshotId)) {
            throw new TrinoException(NOT_SUPPORTED, "FOR VERSION AS OF on table '%s' takes an Iceberg snapshot id (bigint), not %s".formatted(tableName, version.getVersionType()));
        }
        return snapshotId;
    }

    private static long knownAtEpochMicros(ConnectorSession session, SchemaTableName tableName, ConnectorTableVersion version)
    {
        Object value = version.getVersion();
        return switch (version.getVersionType()) {
            case TimestampWithTimeZoneType type when type.isShort() -> unpackMillisUtc((long) value) * MICROSECONDS_PER_MILLISECOND;
            case TimestampWithTimeZoneType _ -> MeterstoreTypes.toEpochMicros((LongTimestampWithTimeZone) value);
            case TimestampType type -> {
                // a timestamp without a zone is read in the session's zone, as Trino's Iceberg connector does
                long localEpochMicros = type.isShort() ? (long) value : ((LongTimestamp) value).getEpochMicros();
                LocalDateTime local = LocalDateTime.ofEpochSecond(floorDiv(localEpochMicros, MICROSECONDS_PER_SECOND), 0, ZoneOffset.UTC)
                        .plusNanos(floorMod(localEpochMicros, MICROSECONDS_PER_SECOND) * NANOSECONDS_PER_MICROSECOND);
                yield MeterstoreTypes.toEpochMicros(local.atZone(session.getTimeZoneKey().getZoneId()).toInstant());
            }
            default -> throw new TrinoException(NOT_SUPPORTED, "FOR TIMESTAMP AS OF on table '%s' takes a timestamp, not %s".formatted(tableName, version.getVersionType()));
        };
    }

    @Override
    public ConnectorTableMetadata getTableMetadata(ConnectorSession session, ConnectorTableHandle table)
    {
        MeterstoreTableHandle handle = (MeterstoreTableHandle) table;
        return new ConnectorTableMetadata(handle.schemaTableName(), columnsMetadata());
    }

    @Override
    public List<SchemaTableName> listTables(ConnectorSession session, Optional<String> schemaName)
    {
        if (schemaName.isPresent() && !schemaName.get().equals(tables.schema())) {
            return ImmutableList.of();
        }
        return ImmutableList.<SchemaTableName>builder()
                .addAll(tables.resolvedTables())
                .addAll(tables.versionsTables())
                .build();
    }

    @Override
    public Map<String, ColumnHandle> getColumnHandles(ConnectorSession session, ConnectorTableHandle tableHandle)
    {
        return MeterstoreTypes.columnHandles().stream().collect(toImmutableMap(MeterstoreColumnHandle::name, column -> column));
    }

    @Override
    public ColumnMetadata getColumnMetadata(ConnectorSession session, ConnectorTableHandle tableHandle, ColumnHandle columnHandle)
    {
        return ((MeterstoreColumnHandle) columnHandle).toColumnMetadata();
    }

    @Override
    public Optional<ConstraintApplicationResult<ConnectorTableHandle>> applyFilter(ConnectorSession session, ConnectorTableHandle table, Constraint constraint)
    {
        MeterstoreTableHandle handle = (MeterstoreTableHandle) table;
        // a resolving read takes only predicates that select whole merge keys; the rest is applied after resolution
        TupleDomain<MeterstoreColumnHandle> pushed = handle.resolution().pushable(constraint.getSummary().transformKeys(MeterstoreColumnHandle.class::cast));
        TupleDomain<MeterstoreColumnHandle> combined = handle.constraint().intersect(pushed);
        if (combined.equals(handle.constraint())) {
            return Optional.empty();
        }
        // pushed into partition and file pruning and the SQL and Parquet predicates, but every row is still filtered by Trino
        return Optional.of(new ConstraintApplicationResult<>(handle.withConstraint(combined), constraint.getSummary(), constraint.getExpression(), false));
    }

    private static List<ColumnMetadata> columnsMetadata()
    {
        return MeterstoreTypes.columnHandles().stream().map(MeterstoreColumnHandle::toColumnMetadata).toList();
    }

    @Override
    public ConnectorInsertTableHandle beginInsert(ConnectorSession session, ConnectorTableHandle tableHandle, List<ColumnHandle> columns, RetryMode retryMode)
    {
        MeterstoreTableHandle table = (MeterstoreTableHandle) tableHandle;
        if (tables.isResolvedTable(table.schemaTableName())) {
            throw new TrinoException(NOT_SUPPORTED, "Table '%s' shows only the winning version of each reading and cannot be written: INSERT into '%s%s', which keeps every version"
                    .formatted(table.schemaTableName(), table.schemaTableName().getTableName(), MeterstoreTables.VERSIONS_SUFFIX));
        }
        if (retryMode != RetryMode.NO_RETRIES) {
            throw new TrinoException(NOT_SUPPORTED, "MeterStore writes do not support retry-policy %s: run INSERT with retry_policy NONE; a failed INSERT can simply be run again".formatted(retryMode));
        }
        PinnedWatermark pinned;
        try {
            // the current W, not the one a read of the same table pinned; the write re-reads it under the archival fence
            pinned = WatermarkReader.current(tables.loadIcebergTable(table.storageTable()));
        }
        catch (MeterstoreException e) {
            throw MeterstoreErrorCode.toTrinoException(e);
        }
        return new MeterstoreInsertTableHandle(
                table.schemaTableName(),
                table.storageTable(),
                pinned.snapshotId(),
                MeterstoreTypes.toEpochMicros(pinned.watermark().instant()),
                MeterstoreTypes.toEpochMicros(session.getStart()),
                columns.stream().map(MeterstoreColumnHandle.class::cast).toList());
    }

    @Override
    public Optional<ConnectorOutputMetadata> finishInsert(ConnectorSession session, ConnectorInsertTableHandle insertHandle, List<ConnectorTableHandle> sourceTableHandles, Collection<Slice> fragments, Collection<ComputedStatistics> computedStatistics)
    {
        // runs once per statement, on the coordinator: every writer's validated rows are written here, exactly once
        insertWriter.write(session, (MeterstoreInsertTableHandle) insertHandle, fragments);
        return Optional.empty();
    }
}
