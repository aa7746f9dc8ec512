package io.meterstore.trino;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import com.google.common.collect.ImmutableSet;
import com.google.inject.Inject;
import io.airlift.log.Logger;
import io.airlift.slice.Slice;
import io.meterstore.core.ErasedSnapshots;
import io.meterstore.core.ErasureLog;
import io.meterstore.core.ErasureLog.Erasure;
import io.meterstore.core.TableColumns;
import io.meterstore.core.TableShape;
import io.meterstore.core.TiersConfig;
import io.meterstore.core.MeterstoreException;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.SnapshotRetention;
import io.meterstore.core.WatermarkReader;
import io.meterstore.core.WatermarkReader.PinnedWatermark;
import io.meterstore.core.Tier;
import io.meterstore.core.TierSplit;
import io.meterstore.core.TieringWatermark;
import io.meterstore.trino.base.FromRange;
import io.meterstore.trino.base.HiddenColumn;
import io.meterstore.trino.base.HiddenColumnHandle;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.meterstore.trino.base.MeterstoreConfig;
import io.meterstore.trino.base.MeterstoreErrorCode;
import io.meterstore.trino.base.MeterstoreMetrics;
import io.meterstore.trino.base.MeterstoreTables;
import io.meterstore.trino.base.MeterstoreTypes;
import io.meterstore.trino.handle.MeterstoreTableHandle;
import io.meterstore.trino.hot.HotAggregateColumn;
import io.meterstore.trino.hot.HotAggregation;
import io.meterstore.trino.hot.HotAggregations;
import io.meterstore.trino.hot.HotSqlPredicate;
import io.meterstore.trino.hot.QuerySnapshots;
import io.meterstore.trino.completeness.CompletenessColumnHandle;
import io.meterstore.trino.completeness.CompletenessFunctionHandle;
import io.meterstore.trino.completeness.CompletenessTableHandle;
import io.meterstore.trino.system.MeterstoreFunctions;
import io.meterstore.trino.system.MeterstoreSystemTables;
import io.trino.spi.connector.SystemTable;
import io.trino.spi.connector.TableFunctionApplicationResult;
import io.trino.spi.function.table.ConnectorTableFunctionHandle;
import io.trino.spi.function.BoundSignature;
import io.trino.spi.function.FunctionDependencyDeclaration;
import io.trino.spi.function.FunctionId;
import io.trino.spi.function.FunctionMetadata;
import io.trino.spi.function.SchemaFunctionName;
import io.trino.spi.connector.AggregateFunction;
import io.trino.spi.connector.AggregationApplicationResult;
import io.trino.spi.connector.Assignment;
import io.trino.spi.connector.LimitApplicationResult;
import io.trino.spi.expression.ConnectorExpression;
import io.trino.spi.expression.Variable;
import io.trino.spi.predicate.Domain;
import io.meterstore.trino.write.ErasureRequest;
import io.meterstore.trino.write.ErasureWriter;
import io.meterstore.trino.write.ErasureWriter.Erased;
import io.meterstore.trino.write.InsertWriter;
import io.meterstore.trino.write.InsertWriter.Written;
import io.meterstore.trino.write.MergeRowIdHandle;
import io.meterstore.trino.write.MeterstoreInsertTableHandle;
import io.meterstore.trino.versions.ErasedScope;
import io.trino.spi.TrinoException;
import io.trino.spi.catalog.CatalogName;
import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.connector.ColumnMetadata;
import io.trino.spi.connector.ConnectorInsertTableHandle;
import io.trino.spi.connector.ConnectorMergeTableHandle;
import io.trino.spi.connector.RowChangeParadigm;
import io.trino.spi.connector.ConnectorMetadata;
import io.trino.spi.connector.ConnectorOutputMetadata;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.ConnectorTableHandle;
import io.trino.spi.connector.ColumnSchema;
import io.trino.spi.connector.ConnectorTableMetadata;
import io.trino.spi.connector.ConnectorTableSchema;
import io.trino.spi.connector.SaveMode;
import io.trino.spi.connector.ConnectorTableVersion;
import io.trino.spi.connector.PointerType;
import io.trino.spi.connector.Constraint;
import io.trino.spi.connector.ConstraintApplicationResult;
import io.trino.spi.connector.RelationColumnsMetadata;
import io.trino.spi.connector.RetryMode;
import io.trino.spi.connector.SchemaTableName;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.metrics.Metrics;
import io.trino.spi.statistics.ComputedStatistics;
import io.trino.spi.statistics.TableStatistics;
import io.trino.spi.type.LongTimestamp;
import io.trino.spi.type.LongTimestampWithTimeZone;
import io.trino.spi.type.TimestampType;
import io.trino.spi.type.TimestampWithTimeZoneType;
import org.apache.iceberg.Table;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;

import static com.google.common.collect.ImmutableMap.toImmutableMap;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_DELETE_NOT_SUPPORTED;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_DROP_TABLE_REFUSED;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_TABLE_NOT_FOUND;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_TABLE_SHAPE_MISMATCH;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_ERASURE_KEY_MISSING;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_POSTGRES_UNAVAILABLE;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_SNAPSHOT_NOT_FOUND;
import static io.trino.spi.StandardErrorCode.INVALID_TABLE_PROPERTY;
import static io.trino.spi.StandardErrorCode.NOT_SUPPORTED;
import static io.trino.spi.type.DateTimeEncoding.unpackMillisUtc;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static io.trino.spi.type.Timestamps.MICROSECONDS_PER_MILLISECOND;
import static io.trino.spi.type.Timestamps.MICROSECONDS_PER_SECOND;
import static io.trino.spi.type.Timestamps.NANOSECONDS_PER_MICROSECOND;
import static java.lang.Math.floorDiv;
import static java.lang.Math.floorMod;
import static java.util.Objects.requireNonNull;
import static java.util.stream.Collectors.joining;

/**
 * Exposes each configured table twice: {@code <table>_versions}, every version of every reading from both tiers, and
 * {@code <table>}, the winning version per merge key, resolved by the connector as it reads each split.
 */
public class MeterstoreMetadata
        implements ConnectorMetadata
{
    private static final Logger LOG = Logger.get(MeterstoreMetadata.class);

    private final MeterstoreTables tables;
    private final String catalogName;
    private final InsertWriter insertWriter;
    private final MeterstoreTableStatistics tableStatistics;
    private final Duration maxClockSkew;
    private final boolean allowDropTable;
    // what each INSERT of this transaction wrote, by query: reported as the query's metadata metrics
    private final Map<String, Written> written = new ConcurrentHashMap<>();
    private final MeterstoreFunctions functions;
    private final MeterstoreSystemTables systemTables;
    private final ErasureWriter erasureWriter;
    private final QuerySnapshots querySnapshots;
    // the tables a DELETE of this transaction targets, by query: their scans are never read (see applyFilter)
    private final Set<DeleteTarget> deleteTargets = ConcurrentHashMap.newKeySet();
    // what each DELETE of this transaction erased, by query: reported as the query's metadata metrics
    private final Map<String, Erased> erased = new ConcurrentHashMap<>();

    private record DeleteTarget(String queryId, SchemaTableName table) {}

    @Inject
    public MeterstoreMetadata(MeterstoreTables tables, CatalogName catalogName, InsertWriter insertWriter, MeterstoreTableStatistics tableStatistics, MeterstoreConfig config, MeterstoreFunctions functions, MeterstoreSystemTables systemTables, ErasureWriter erasureWriter, QuerySnapshots querySnapshots)
    {
        this.querySnapshots = requireNonNull(querySnapshots, "querySnapshots is null");
        this.erasureWriter = requireNonNull(erasureWriter, "erasureWriter is null");
        this.tables = requireNonNull(tables, "tables is null");
        this.catalogName = requireNonNull(catalogName, "catalogName is null").toString();
        this.insertWriter = requireNonNull(insertWriter, "insertWriter is null");
        this.tableStatistics = requireNonNull(tableStatistics, "tableStatistics is null");
        this.maxClockSkew = requireNonNull(config, "config is null").getMaxClockSkew().toJavaTime();
        this.allowDropTable = config.isAllowDropTable();
        this.functions = requireNonNull(functions, "functions is null");
        this.systemTables = requireNonNull(systemTables, "systemTables is null");
    }

    @Override
    public List<String> listSchemaNames(ConnectorSession session)
    {
        return ImmutableList.of(tables.schema());
    }

    @Override
    public ConnectorTableHandle getTableHandle(ConnectorSession session, SchemaTableName tableName, Optional<ConnectorTableVersion> startVersion, Optional<ConnectorTableVersion> endVersion)
    {
        Optional<String> served = tables.storageTableOf(tableName);
        // "T$watermark" and its kind are served by getSystemTable, as Trino's Iceberg connector serves "T$snapshots";
        // like it, an unknown "T$x" is a table that does not exist
        if (served.isEmpty() || systemTables.isSystemTableName(tableName)) {
            // a name this catalog does not serve: Trino reports it as missing, and IF EXISTS, information_schema and
            // the JDBC driver's metadata treat it as on every other catalog
            return null;
        }
        String storageTable = served.get();
        // Trino passes FOR ... AS OF as the end version; a start version would be a range of versions
        if (startVersion.isPresent()) {
            throw new TrinoException(NOT_SUPPORTED, "MeterStore does not support reading a range of versions");
        }
        boolean resolved = tables.isResolvedTable(tableName);
        Table icebergTable;
        try {
            icebergTable = tables.pinIcebergTable(storageTable);
        }
        catch (TrinoException e) {
            // a configured table nobody created yet does not exist, as on any catalog: CREATE TABLE creates it. One that
            // exists in PostgreSQL alone is half created, and says so
            if (e.getErrorCode().equals(METERSTORE_TABLE_NOT_FOUND.toErrorCode()) && tables.existsInNeitherTier(storageTable)) {
                return null;
            }
            throw e;
        }
        // the columns the table stores after the readings columns, as its shape declares them: every handle carries them
        TableShape shape = tables.pinnedShape(storageTable, icebergTable);
        try {
            if (endVersion.isPresent() && endVersion.get().getPointerType() == PointerType.TARGET_ID) {
                long snapshotId = snapshotId(tableName, endVersion.get());
                if (icebergTable.snapshot(snapshotId) == null) {
                    // the id may never have existed, or the archiver expired it: by an erasure, or as the retention says
                    Optional<Long> erasure = expiringErasure(tableName, storageTable, snapshotId);
                    if (erasure.isPresent()) {
                        throw new TrinoException(METERSTORE_SNAPSHOT_NOT_FOUND, "Snapshot %s of table '%s' was expired by erasure %s, which removed rows it held (see \"%s$erasures\"): use a snapshot id from iceberg.%s.\"%s$snapshots\""
                                .formatted(snapshotId, tableName, erasure.get(), tableName.getTableName(), tables.schema(), storageTable));
                    }
                    String retention = SnapshotRetention.of(icebergTable.properties())
                            .map(kept -> "the archiver expires %s".formatted(kept.describe()))
                            .orElse("it does not exist or was expired");
                    throw new TrinoException(METERSTORE_SNAPSHOT_NOT_FOUND, "Table '%s' has no snapshot %s (%s): use a snapshot id from iceberg.%s.\"%s$snapshots\""
                            .formatted(tableName, snapshotId, retention, tables.schema(), storageTable));
                }
                // the cold tier exactly as that snapshot had it, split at the watermark it carried
                PinnedWatermark pinned = new PinnedWatermark(Optional.of(snapshotId), WatermarkReader.ofSnapshot(icebergTable, snapshotId));
                return new MeterstoreTableHandle(tableName, storageTable, pinned.snapshotId(), MeterstoreTypes.toEpochMicros(pinned.watermark().instant()), TupleDomain.all(), true, resolved, Optional.empty())
                        .withShape(shape)
                        .withErased(erasedScopes(tableName, storageTable, Instant.ofEpochMilli(icebergTable.snapshot(snapshotId).timestampMillis())));
            }
            // FOR TIMESTAMP AS OF t is "as known at t": the current snapshot and W, both tiers, versions recorded up to t
            Optional<Long> knownAt = endVersion.map(version -> knownAtEpochMicros(session, tableName, version));
            // the query pins this snapshot and the watermark it carries; both tiers are split at exactly this W
            PinnedWatermark pinned = WatermarkReader.current(icebergTable);
            MeterstoreTableHandle handle = new MeterstoreTableHandle(tableName, storageTable, pinned.snapshotId(), MeterstoreTypes.toEpochMicros(pinned.watermark().instant()), TupleDomain.all(), false, resolved, knownAt)
                    .withShape(shape);
            if (knownAt.isEmpty()) {
                return handle;
            }
            Instant committedAt = pinned.snapshotId().map(id -> Instant.ofEpochMilli(icebergTable.snapshot(id).timestampMillis())).orElse(Instant.EPOCH);
            return handle.withErased(erasedScopes(tableName, storageTable, committedAt));
        }
        catch (MeterstoreException e) {
            throw MeterstoreErrorCode.toTrinoException(e);
        }
    }

    /**
     * The erasures a time-travel read of a snapshot committed at {@code committedAt} must hide: until the archiver
     * expires the snapshots from before an erasure, their files still hold its rows. Read from PostgreSQL only for
     * time travel; none for a table that was never erased.
     */
    /** The erasure whose physical completion expired snapshot {@code snapshotId}, as the archiver recorded it. */
    private Optional<Long> expiringErasure(SchemaTableName tableName, String storageTable, long snapshotId)
    {
        try (Connection connection = tables.connectPostgres()) {
            return ErasedSnapshots.erasureOf(connection, tables.schema(), storageTable, snapshotId);
        }
        catch (SQLException e) {
            throw new TrinoException(METERSTORE_POSTGRES_UNAVAILABLE, "Cannot read which erasure expired snapshot %s of table '%s': %s".formatted(snapshotId, tableName, e.getMessage()), e);
        }
    }

    private List<ErasedScope> erasedScopes(SchemaTableName tableName, String storageTable, Instant committedAt)
    {
        List<Erasure> erasures;
        try (Connection connection = tables.connectPostgres()) {
            erasures = ErasureLog.erasures(connection, tables.schema(), storageTable);
        }
        catch (SQLException e) {
            throw new TrinoException(METERSTORE_POSTGRES_UNAVAILABLE, "Cannot read the erasures of table '%s', which a read AS OF must hide: %s".formatted(tableName, e.getMessage()), e);
        }
        List<ErasedScope> hidden = erasures.stream()
                .filter(erasure -> erasure.hidesSnapshotAt(committedAt))
                .map(erasure -> ErasedScope.of(erasure.recorded().scope()))
                .toList();
        if (hidden.stream().anyMatch(scope -> !scope.maloScopes().isEmpty()) && tables.erasureKey().isEmpty()) {
            throw new TrinoException(METERSTORE_ERASURE_KEY_MISSING, "Table '%s' has erasures that a read AS OF must hide, which needs %s: set it as it was set when they were made"
                    .formatted(tableName, TiersConfig.ERASURE_HMAC_KEY_PROPERTY));
        }
        return hidden;
    }

    @Override
    public Optional<SystemTable> getSystemTable(ConnectorSession session, SchemaTableName tableName)
    {
        return systemTables.systemTable(tableName);
    }

    @Override
    public Optional<TableFunctionApplicationResult<ConnectorTableHandle>> applyTableFunction(ConnectorSession session, ConnectorTableFunctionHandle handle)
    {
        if (!(handle instanceof CompletenessFunctionHandle completeness)) {
            return Optional.empty();
        }
        List<ColumnHandle> columns = ImmutableList.copyOf(completeness.table().columns());
        return Optional.of(new TableFunctionApplicationResult<>(completeness.table(), columns));
    }

    @Override
    public Collection<FunctionMetadata> listFunctions(ConnectorSession session, String schemaName)
    {
        return functions.listFunctions(schemaName);
    }

    @Override
    public Collection<FunctionMetadata> getFunctions(ConnectorSession session, SchemaFunctionName name)
    {
        return functions.getFunctions(name);
    }

    @Override
    public FunctionMetadata getFunctionMetadata(ConnectorSession session, FunctionId functionId)
    {
        return functions.getFunctionMetadata(functionId);
    }

    @Override
    public FunctionDependencyDeclaration getFunctionDependencies(ConnectorSession session, FunctionId functionId, BoundSignature boundSignature)
    {
        return functions.getFunctionDependencies(functionId, boundSignature);
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
        if (table instanceof CompletenessTableHandle completeness) {
            return new ConnectorTableMetadata(completeness.readings().schemaTableName(), completeness.columns().stream().map(CompletenessColumnHandle::toColumnMetadata).toList());
        }
        MeterstoreTableHandle handle = (MeterstoreTableHandle) table;
        TableShape shape = tables.shape(handle.storageTable(), tables.pinIcebergTable(handle.storageTable()));
        // hidden columns are listed as Trino's Iceberg connector lists "$path": SELECT * and DESCRIBE leave them out
        return new ConnectorTableMetadata(handle.schemaTableName(), ImmutableList.<ColumnMetadata>builder()
                .addAll(columnsMetadata(handle.columns()))
                .addAll(Arrays.stream(HiddenColumn.values()).map(HiddenColumn::toColumnMetadata).toList())
                .build(), MeterstoreTableProperties.properties(shape));
    }

    /** The columns alone, which every query's analysis asks for: no read of the shape the table properties show. */
    @Override
    public ConnectorTableSchema getTableSchema(ConnectorSession session, ConnectorTableHandle table)
    {
        if (table instanceof CompletenessTableHandle completeness) {
            return new ConnectorTableSchema(completeness.readings().schemaTableName(), completeness.columns().stream().map(column -> column.toColumnMetadata().getColumnSchema()).toList());
        }
        MeterstoreTableHandle handle = (MeterstoreTableHandle) table;
        return new ConnectorTableSchema(handle.schemaTableName(), ImmutableList.<ColumnSchema>builder()
                .addAll(columnsMetadata(handle.columns()).stream().map(ColumnMetadata::getColumnSchema).toList())
                .addAll(Arrays.stream(HiddenColumn.values()).map(column -> column.toColumnMetadata().getColumnSchema()).toList())
                .build());
    }

    /**
     * CREATE TABLE of a readings table: both tiers, by the creation the archiver's {@code create} runs, with the shape the
     * WITH clause declares, stored with the table. A name {@code meterstore.tables} does not list is served from then on
     * (and archived: the archiver finds it as this catalog does, by its stored shape). The columns must be the readings
     * columns; a shape this release cannot store, or one the table's {@code meterstore.tables} entry does not declare, is
     * refused before anything is created.
     */
    @Override
    public void createTable(ConnectorSession session, ConnectorTableMetadata tableMetadata, SaveMode saveMode)
    {
        SchemaTableName name = tableMetadata.getTable();
        if (saveMode == SaveMode.REPLACE) {
            throw new TrinoException(NOT_SUPPORTED, "CREATE OR REPLACE TABLE '%s' is not supported: a readings table holds metering data that is never replaced; use CREATE TABLE".formatted(name));
        }
        if (!name.getSchemaName().equals(tables.schema())) {
            throw new TrinoException(NOT_SUPPORTED, "Schema '%s' of catalog '%s' does not exist: MeterStore creates readings tables in schema '%s' (meterstore.schema)".formatted(name.getSchemaName(), catalogName, tables.schema()));
        }
        // a name meterstore.tables does not list becomes a readings table too: the catalog and the archiver find it by
        // the shape its Iceberg table stores
        tables.requireCreatableName(name);
        tableMetadata.getComment().ifPresent(_ -> {
            throw new TrinoException(NOT_SUPPORTED, "CREATE TABLE '%s' has a COMMENT, which MeterStore does not store: its PostgreSQL table's comment holds the table's shape; remove the COMMENT".formatted(name));
        });
        // the varchar columns after the readings columns are the table's identity columns (first, as identity_columns names
        // them) and its attribute columns, which attribute_columns may restate
        List<String> extraColumns = requireReadingsColumns(name, tableMetadata.getColumns());
        TableShape shape = MeterstoreTableProperties.shape(name, tableMetadata.getProperties(), extraColumns);
        List<String> identityFirst = ImmutableList.<String>builder().addAll(shape.identityColumns()).addAll(shape.attributeColumns()).build();
        if (!extraColumns.equals(identityFirst)) {
            throw new TrinoException(INVALID_TABLE_PROPERTY, "CREATE TABLE '%s' declares identity_columns %s, but its column list has %s after the readings columns: declare each identity column as '<name> varchar' right after the readings columns, in the order identity_columns names them, then the attribute columns"
                    .formatted(name, shape.identityColumns(), extraColumns.isEmpty() ? "no columns" : extraColumns));
        }
        requireNoEndOfPoints(name, tableMetadata.getColumns(), shape.timeModel());
        Optional<TableShape> configured = tables.declaredShape(name.getTableName());
        List<TableShape.Difference> differences = configured.map(entry -> entry.differences(shape)).orElse(List.of());
        if (!differences.isEmpty()) {
            throw new TrinoException(METERSTORE_TABLE_SHAPE_MISMATCH, "CREATE TABLE '%s' declares %s, but its entry in meterstore.tables declares %s: declare the same shape in both, or only in one of them"
                    .formatted(name, TableShape.Difference.declaredValues(differences), TableShape.Difference.storedValues(differences)));
        }
        tables.createTable(name.getTableName(), shape);
    }

    /**
     * Refuses a column list that does not start with the readings columns, in their order and types (NOT NULL only where a
     * readings column shows it), or whose further columns are not attribute columns: varchar, nullable, without a comment.
     * Returns the names of those further columns, in their order: the attribute columns the table stores.
     */
    private static List<String> requireReadingsColumns(SchemaTableName name, List<ColumnMetadata> declared)
    {
        List<ColumnMetadata> expected = columnsMetadata(TableColumns.READINGS);
        String columns = expected.stream().map(column -> "%s %s%s".formatted(column.getName(), column.getType().getDisplayName(), column.isNullable() ? "" : " NOT NULL")).collect(joining(", "));
        List<ColumnMetadata> visible = declared.stream().filter(column -> !column.isHidden()).toList();
        ImmutableList.Builder<String> attributeColumns = ImmutableList.builder();
        for (int index = 0; index < Math.max(visible.size(), expected.size()); index++) {
            Optional<String> difference;
            if (index >= visible.size()) {
                difference = Optional.of("column '%s' is missing".formatted(expected.get(index).getName()));
            }
            else if (index >= expected.size()) {
                ColumnMetadata column = visible.get(index);
                Optional<String> attribute = attributeColumnDifference(column);
                if (attribute.isPresent()) {
                    throw new TrinoException(NOT_SUPPORTED, "CREATE TABLE '%s' declares an attribute column MeterStore cannot store: %s".formatted(name, attribute.get()));
                }
                attributeColumns.add(column.getName());
                difference = Optional.empty();
            }
            else {
                ColumnMetadata column = visible.get(index);
                ColumnMetadata readings = expected.get(index);
                if (!column.getName().equals(readings.getName())) {
                    difference = Optional.of("column %s is '%s', a readings table's is '%s'".formatted(index + 1, column.getName(), readings.getName()));
                }
                else if (!column.getType().equals(readings.getType())) {
                    difference = Optional.of("column '%s' is %s, a readings table's is %s".formatted(column.getName(), column.getType().getDisplayName(), readings.getType().getDisplayName()));
                }
                else if (!column.isNullable() && column.getName().equals(ReadingsColumn.TO.columnName())) {
                    // every interval has an end; a register reading has none (requireNoEndOfPoints)
                    difference = Optional.empty();
                }
                else if (!column.isNullable() && readings.isNullable()) {
                    difference = Optional.of("column '%s' is declared NOT NULL, which MeterStore does not enforce for it".formatted(column.getName()));
                }
                else if (column.getComment() != null && !column.getComment().isEmpty()) {
                    difference = Optional.of("column '%s' has a comment, which MeterStore does not store".formatted(column.getName()));
                }
                else {
                    difference = Optional.empty();
                }
            }
            if (difference.isPresent()) {
                throw new TrinoException(NOT_SUPPORTED, "CREATE TABLE '%s' does not declare the readings columns: %s; declare exactly (%s), then any attribute columns, each '<name> varchar', or write (LIKE <an existing readings table>)"
                        .formatted(name, difference.get(), columns));
            }
        }
        return attributeColumns.build();
    }

    /** Refuses "to" declared NOT NULL in a point table, whose readings have none. */
    private static void requireNoEndOfPoints(SchemaTableName name, List<ColumnMetadata> declared, TableShape.TimeModel timeModel)
    {
        boolean endRequired = declared.stream().anyMatch(column -> column.getName().equals(ReadingsColumn.TO.columnName()) && !column.isNullable());
        if (timeModel == TableShape.TimeModel.POINT && endRequired) {
            throw new TrinoException(NOT_SUPPORTED, "CREATE TABLE '%s' does not declare the readings columns: column 'to' is declared NOT NULL, but a point table's readings have no \"to\": leave NOT NULL out"
                    .formatted(name));
        }
    }

    /** How a column after the readings columns differs from an attribute column: varchar without a length, nullable, no comment. */
    private static Optional<String> attributeColumnDifference(ColumnMetadata column)
    {
        if (!column.getType().equals(VARCHAR)) {
            return Optional.of("column '%s' is %s, but a column after the readings columns is an attribute column, which is varchar (without a length: TEXT in PostgreSQL, a string in Iceberg): declare it '%s varchar'"
                    .formatted(column.getName(), column.getType().getDisplayName(), column.getName()));
        }
        if (!column.isNullable()) {
            return Optional.of("attribute column '%s' is declared NOT NULL, but attribute columns are nullable: a reading need not carry them".formatted(column.getName()));
        }
        if (column.getComment() != null && !column.getComment().isEmpty()) {
            return Optional.of("column '%s' has a comment, which MeterStore does not store".formatted(column.getName()));
        }
        return Optional.empty();
    }

    /**
     * DROP TABLE of a readings table, refused unless {@code meterstore.allow-drop-table} is set: metering data is kept
     * for years by law. Allowed, it drops both tiers for good ({@link MeterstoreTables#dropTable}).
     */
    @Override
    public void dropTable(ConnectorSession session, ConnectorTableHandle tableHandle)
    {
        MeterstoreTableHandle table = (MeterstoreTableHandle) tableHandle;
        if (!allowDropTable) {
            throw new TrinoException(METERSTORE_DROP_TABLE_REFUSED, "DROP TABLE '%s' is refused: a readings table holds metering data that is kept for years by law, and dropping it removes both tiers and every file for good; set %s=true in the catalogue's properties (and restart) to allow it"
                    .formatted(table.schemaTableName(), MeterstoreConfig.ALLOW_DROP_TABLE_PROPERTY));
        }
        if (!tables.isResolvedTable(table.schemaTableName())) {
            throw new TrinoException(NOT_SUPPORTED, "Table '%s' is the versions of '%s': DROP TABLE '%s', which drops both names".formatted(table.schemaTableName(), table.storageTable(), table.storageTable()));
        }
        List<String> dropped = tables.dropTable(table.storageTable());
        LOG.info("DROP TABLE %s by %s dropped: %s", table.schemaTableName(), session.getUser(), String.join("; ", dropped));
    }

    @Override
    public List<SchemaTableName> listTables(ConnectorSession session, Optional<String> schemaName)
    {
        if (schemaName.isPresent() && !schemaName.get().equals(tables.schema())) {
            return ImmutableList.of();
        }
        List<String> served = tables.storageTables();
        return ImmutableList.<SchemaTableName>builder()
                .addAll(served.stream().map(table -> new SchemaTableName(tables.schema(), table)).toList())
                .addAll(served.stream().map(table -> new SchemaTableName(tables.schema(), table + MeterstoreTables.VERSIONS_SUFFIX)).toList())
                .build();
    }

    /**
     * Every served table has the readings columns, then the attribute columns its shape declares: read from the table's
     * Iceberg properties (the catalogue's pointer, the metadata file only when a commit moved it), once per table for both
     * its names, never from PostgreSQL; a table not created yet, or one that cannot be read, lists those its
     * {@code meterstore.tables} entry declares ({@link MeterstoreTables#listedColumns}). The hidden ones are not listed.
     */
    @Override
    public Iterator<RelationColumnsMetadata> streamRelationColumns(ConnectorSession session, Optional<String> schemaName, UnaryOperator<Set<SchemaTableName>> relationFilter)
    {
        Set<SchemaTableName> listed = ImmutableSet.copyOf(listTables(session, schemaName));
        Map<String, List<ColumnMetadata>> columns = new HashMap<>();
        return relationFilter.apply(listed).stream()
                .map(table -> RelationColumnsMetadata.forTable(table, columns.computeIfAbsent(tables.storageTableOf(table).orElseThrow(),
                        storageTable -> columnsMetadata(tables.listedColumns(storageTable)))))
                .iterator();
    }

    @Override
    public Map<String, ColumnHandle> getColumnHandles(ConnectorSession session, ConnectorTableHandle tableHandle)
    {
        if (tableHandle instanceof CompletenessTableHandle completeness) {
            return completeness.columns().stream().collect(toImmutableMap(CompletenessColumnHandle::name, column -> column));
        }
        return ImmutableMap.<String, ColumnHandle>builder()
                .putAll(MeterstoreTypes.columnHandles(((MeterstoreTableHandle) tableHandle).columns()).stream().collect(toImmutableMap(MeterstoreColumnHandle::name, column -> column)))
                .putAll(Arrays.stream(HiddenColumn.values()).collect(toImmutableMap(HiddenColumn::columnName, HiddenColumnHandle::new)))
                .buildOrThrow();
    }

    @Override
    public ColumnMetadata getColumnMetadata(ConnectorSession session, ConnectorTableHandle tableHandle, ColumnHandle columnHandle)
    {
        if (columnHandle instanceof HotAggregateColumn aggregate) {
            return aggregate.toColumnMetadata();
        }
        if (columnHandle instanceof CompletenessColumnHandle completeness) {
            return completeness.toColumnMetadata();
        }
        if (columnHandle instanceof MergeRowIdHandle rowId) {
            return rowId.toColumnMetadata();
        }
        if (columnHandle instanceof HiddenColumnHandle hidden) {
            return hidden.column().toColumnMetadata();
        }
        return ((MeterstoreColumnHandle) columnHandle).toColumnMetadata();
    }

    @Override
    public TableStatistics getTableStatistics(ConnectorSession session, ConnectorTableHandle tableHandle)
    {
        if (!(tableHandle instanceof MeterstoreTableHandle handle)) {
            return TableStatistics.empty();
        }
        return tableStatistics.statistics(handle);
    }

    @Override
    public Optional<ConstraintApplicationResult<ConnectorTableHandle>> applyFilter(ConnectorSession session, ConnectorTableHandle table, Constraint constraint)
    {
        // a completeness report is filtered by the engine: its rows are computed, not read
        if (!(table instanceof MeterstoreTableHandle handle)) {
            return Optional.empty();
        }
        if (handle.limit().isPresent() || handle.aggregation().isPresent()) {
            // a filter above a pushed limit or aggregation is not a filter below it
            return Optional.empty();
        }
        if (deleteTargets.contains(new DeleteTarget(session.getQueryId(), handle.schemaTableName()))) {
            return applyDeleteFilter(handle, constraint);
        }
        // a resolving read takes only predicates that select whole merge keys; the rest is applied after resolution
        // a predicate on "$tier" or "$watermark" becomes the "from" range of the tiers it leaves: the other is not read
        TupleDomain<MeterstoreColumnHandle> pushed = handle.resolution().pushable(storedColumns(constraint.getSummary())
                .intersect(HiddenColumn.pruning(constraint.getSummary(), handle.watermarkEpochMicros())));
        TupleDomain<MeterstoreColumnHandle> combined = handle.constraint().intersect(pushed);
        if (combined.equals(handle.constraint())) {
            return Optional.empty();
        }
        // pushed into partition and file pruning and the SQL and Parquet predicates; Trino still filters every row the statements do not enforce
        MeterstoreTableHandle filtered = handle.withConstraint(combined);
        return Optional.of(new ConstraintApplicationResult<>(filtered, remainingFilter(filtered, constraint.getSummary()), constraint.getExpression(), false));
    }

    /**
     * The WHERE clause of a DELETE: the predicates an erasure honours exactly ({@link ErasureRequest}) are taken whole,
     * nothing of them is left for Trino, so that the statement becomes one {@link #executeDelete} on the coordinator;
     * that is the only way a DELETE's scan is used, so claiming them enforced never makes a read return a row outside
     * them. Any other predicate stays with Trino, which then plans a row-by-row MERGE that {@link #beginMerge} refuses.
     */
    private Optional<ConstraintApplicationResult<ConnectorTableHandle>> applyDeleteFilter(MeterstoreTableHandle handle, Constraint constraint)
    {
        TupleDomain<MeterstoreColumnHandle> summary = storedColumns(constraint.getSummary());
        TupleDomain<MeterstoreColumnHandle> combined = handle.constraint().intersect(ErasureRequest.supported(summary));
        // a predicate on a hidden column is never an erasure's: it stays, and beginMerge refuses the statement
        TupleDomain<ColumnHandle> remaining = constraint.getSummary().filter((column, domain) ->
                !(column instanceof MeterstoreColumnHandle meterstoreColumn && ErasureRequest.isSupported(meterstoreColumn, domain)));
        if (combined.equals(handle.constraint()) && remaining.equals(constraint.getSummary())) {
            return Optional.empty();
        }
        return Optional.of(new ConstraintApplicationResult<>(handle.withConstraint(combined), remaining, constraint.getExpression(), false));
    }

    /**
     * Called while Trino analyses a DELETE: marks the table as the statement's target. {@code <table>} is refused
     * here, as INSERT refuses it. The handle returned is never read: an erasure is executed whole by
     * {@link #executeDelete}, and any DELETE that would need row ids is refused by {@link #beginMerge}.
     */
    @Override
    public ColumnHandle getMergeRowIdColumnHandle(ConnectorSession session, ConnectorTableHandle tableHandle)
    {
        MeterstoreTableHandle table = (MeterstoreTableHandle) tableHandle;
        if (tables.isResolvedTable(table.schemaTableName())) {
            // called for DELETE, UPDATE and MERGE alike, before Trino says which: the message answers each
            String versions = table.schemaTableName().getTableName() + MeterstoreTables.VERSIONS_SUFFIX;
            throw new TrinoException(METERSTORE_DELETE_NOT_SUPPORTED, "Table '%s' shows only the winning version of each reading and cannot be changed: a reading is corrected by INSERT into '%s' with a higher version, and erased by DELETE from '%s', which erases every version"
                    .formatted(table.schemaTableName(), versions, versions));
        }
        if (table.historical() || table.knownAtEpochMicros().isPresent()) {
            throw new TrinoException(METERSTORE_DELETE_NOT_SUPPORTED, "DELETE from '%s' erases from the table as it is now: drop FOR ... AS OF".formatted(table.schemaTableName()));
        }
        deleteTargets.add(new DeleteTarget(session.getQueryId(), table.schemaTableName()));
        return new MergeRowIdHandle();
    }

    @Override
    public RowChangeParadigm getRowChangeParadigm(ConnectorSession session, ConnectorTableHandle tableHandle)
    {
        return RowChangeParadigm.DELETE_ROW_AND_INSERT_ROW;
    }

    /**
     * An UPDATE or MERGE that updates (a reading is corrected by a new version, never in place), or a DELETE whose WHERE
     * clause Trino must still apply row by row: MeterStore never approximates an erasure.
     */
    @Override
    public ConnectorMergeTableHandle beginMerge(ConnectorSession session, ConnectorTableHandle tableHandle, Map<Integer, Collection<ColumnHandle>> updateCaseColumns, RetryMode retryMode)
    {
        MeterstoreTableHandle table = (MeterstoreTableHandle) tableHandle;
        if (!updateCaseColumns.isEmpty()) {
            throw new TrinoException(NOT_SUPPORTED, "UPDATE of '%s' is not supported: a reading is corrected by INSERTing it again with a higher version, which keeps the old version for FOR ... AS OF and readings_versions"
                    .formatted(table.schemaTableName()));
        }
        throw new TrinoException(METERSTORE_DELETE_NOT_SUPPORTED, "DELETE from '%s' is refused because its WHERE clause has a condition MeterStore cannot apply exactly (a predicate on another column, OR across columns, a function or a subquery); UPDATE and MERGE are not supported: MeterStore erases exactly by %s"
                .formatted(table.schemaTableName(), ErasureRequest.SUPPORTED));
    }

    @Override
    public Optional<ConnectorTableHandle> applyDelete(ConnectorSession session, ConnectorTableHandle tableHandle)
    {
        MeterstoreTableHandle table = (MeterstoreTableHandle) tableHandle;
        // refused while planning, before anything is locked or read
        erasureWriter.requireKey(table);
        ErasureRequest.of(table.schemaTableName(), table.constraint());
        return Optional.of(table);
    }

    @Override
    public OptionalLong executeDelete(ConnectorSession session, ConnectorTableHandle tableHandle)
    {
        Erased result = erasureWriter.erase(session, (MeterstoreTableHandle) tableHandle);
        erased.put(session.getQueryId(), result);
        return OptionalLong.of(result.rows());
    }

    /**
     * The domains of {@code predicate} on readings columns and the key's identity columns: those the tiers can push into
     * their reads (a tenant's predicate prunes the other tenants' Iceberg partitions). A predicate on an attribute column
     * stays with Trino, which applies it to every row the tiers return.
     */
    private static TupleDomain<MeterstoreColumnHandle> storedColumns(TupleDomain<ColumnHandle> predicate)
    {
        return predicate.filter((column, _) -> column instanceof MeterstoreColumnHandle stored && (!stored.attributeColumn() || stored.column().keyColumn()))
                .transformKeys(MeterstoreColumnHandle.class::cast);
    }

    /** The stored columns of a table of {@code columns}: the readings columns, then its attribute columns. */
    private static List<ColumnMetadata> columnsMetadata(TableColumns columns)
    {
        return MeterstoreTypes.columnHandles(columns).stream().map(MeterstoreColumnHandle::toColumnMetadata).toList();
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
        return insertWriter.begin(session, table.schemaTableName(), table.storageTable(), columns.stream().map(MeterstoreColumnHandle.class::cast).toList(), maxClockSkew);
    }

    @Override
    public Optional<ConnectorOutputMetadata> finishInsert(ConnectorSession session, ConnectorInsertTableHandle insertHandle, List<ConnectorTableHandle> sourceTableHandles, Collection<Slice> fragments, Collection<ComputedStatistics> computedStatistics)
    {
        // runs once per statement, on the coordinator: every writer's staged rows are written here, exactly once
        written.put(session.getQueryId(), insertWriter.finish(session, (MeterstoreInsertTableHandle) insertHandle, fragments));
        return Optional.empty();
    }

    @Override
    public void cleanupQuery(ConnectorSession session)
    {
        // after a failed INSERT: its staging table, if this coordinator created one; nothing for any other query
        insertWriter.cleanup(session);
        // the query's splits have all started, or will never run: its hot snapshot may end
        querySnapshots.release(session.getQueryId());
        deleteTargets.removeIf(target -> target.queryId().equals(session.getQueryId()));
    }

    /**
     * What the query's INSERT wrote to each tier and what it skipped as already stored. Trino's update count is every
     * row the statement carried, redeliveries included; these say which of them changed anything.
     */
    @Override
    public Metrics getMetrics(ConnectorSession session)
    {
        Erased erasure = erased.get(session.getQueryId());
        if (erasure != null) {
            return MeterstoreMetrics.counts(ImmutableMap.of(
                    MeterstoreMetrics.HOT_ROWS_ERASED, erasure.hotRows(),
                    MeterstoreMetrics.COLD_ROWS_ERASED, erasure.coldRows()));
        }
        Written insert = written.get(session.getQueryId());
        if (insert == null) {
            return Metrics.EMPTY;
        }
        return MeterstoreMetrics.counts(ImmutableMap.of(
                MeterstoreMetrics.HOT_ROWS_WRITTEN, insert.hotRows(),
                MeterstoreMetrics.COLD_ROWS_WRITTEN, insert.coldRows(),
                MeterstoreMetrics.REDELIVERED_ROWS_SKIPPED, insert.unchanged()));
    }

    /**
     * The part of a filter Trino must still apply. The cold reader prunes row groups but returns their every row, so a
     * domain is dropped only where both tiers are known to return no row outside it: for a read that is hot alone, the
     * domains {@link HotSqlPredicate} enforces exactly; for any read, a "from" range the hot statements enforce that is
     * open below and reaches W, because every cold row lies below W (the tiering invariant) and so inside it.
     */
    private TupleDomain<ColumnHandle> remainingFilter(MeterstoreTableHandle handle, TupleDomain<ColumnHandle> filter)
    {
        if (filter.isNone() || handle.constraint().isNone()) {
            return filter;
        }
        boolean hotOnly = isHotOnlyRead(handle);
        Map<MeterstoreColumnHandle, Domain> enforced = handle.constraint().getDomains().orElseThrow();
        return filter.filter((column, domain) -> {
            if (!(column instanceof MeterstoreColumnHandle meterstoreColumn)) {
                // a hidden column's predicate pruned a tier through "from"; Trino still checks it against the constants
                return true;
            }
            Domain pushed = enforced.get(meterstoreColumn);
            if (pushed == null) {
                return true;
            }
            if (hotOnly && HotSqlPredicate.isEnforced(meterstoreColumn, pushed)) {
                return false;
            }
            return !(HotSqlPredicate.isEnforcedFromRange(meterstoreColumn, pushed) && holdsForEveryColdRow(pushed, handle.watermarkEpochMicros()));
        });
    }

    /** Whether every instant below W lies in the single range of {@code domain}. */
    private static boolean holdsForEveryColdRow(Domain domain, long watermarkEpochMicros)
    {
        // the span as a half-open range is exact for microseconds: an inclusive upper bound h is [.., h + 1)
        return FromRange.of(domain).encloses(Tier.COLD.range(MeterstoreTypes.fromEpochMicros(watermarkEpochMicros)));
    }

    /**
     * A read whose "from" range lies at or above the pinned watermark: PostgreSQL alone answers it, for
     * {@code <table>_versions} and for {@code <table>} (its winners by the partitions' supersession marks, or resolved in
     * the statement where a partition is not marked yet), as known now or AS OF an instant.
     */
    private boolean isHotOnlyRead(MeterstoreTableHandle handle)
    {
        if (handle.historical() || handle.constraint().isNone()) {
            return false;
        }
        TieringWatermark watermark = TieringWatermark.of(MeterstoreTypes.fromEpochMicros(handle.watermarkEpochMicros()));
        return TierSplit.of(FromRange.of(handle.constraint()), watermark).cold().isEmpty();
    }

    @Override
    public Optional<LimitApplicationResult<ConnectorTableHandle>> applyLimit(ConnectorSession session, ConnectorTableHandle table, long limit)
    {
        if (!(table instanceof MeterstoreTableHandle handle)) {
            return Optional.empty();
        }
        if (handle.aggregation().isPresent() || (handle.limit().isPresent() && handle.limit().getAsLong() <= limit)) {
            return Optional.empty();
        }
        // every split may stop after the limit; there are several splits, so Trino still applies it
        return Optional.of(new LimitApplicationResult<>(handle.withLimit(limit), false, false));
    }

    /**
     * Pushes count(*), count(x), sum(x), min(x) and max(x) grouped by plain columns into one PostgreSQL statement,
     * for a read of {@code <table>_versions} or {@code <table>} that is hot alone and fully filtered by that statement.
     */
    @Override
    public Optional<AggregationApplicationResult<ConnectorTableHandle>> applyAggregation(
            ConnectorSession session,
            ConnectorTableHandle table,
            List<AggregateFunction> aggregates,
            Map<String, ColumnHandle> assignments,
            List<List<ColumnHandle>> groupingSets)
    {
        if (!(table instanceof MeterstoreTableHandle handle)) {
            return Optional.empty();
        }
        if (!MeterstoreSessionProperties.isAggregationPushdownEnabled(session)
                || handle.aggregation().isPresent()
                || handle.limit().isPresent()
                || groupingSets.size() != 1
                || !isHotOnlyRead(handle)) {
            return Optional.empty();
        }
        // every pushed domain must be enforced by the statement: no row filter remains between the scan and the aggregation
        if (!handle.constraint().getDomains().orElseThrow().entrySet().stream().allMatch(entry -> HotSqlPredicate.isEnforced(entry.getKey(), entry.getValue()))) {
            return Optional.empty();
        }
        // grouped by a hidden column: Trino aggregates the rows, whose "$tier" and "$watermark" the page source puts in
        if (!groupingSets.getFirst().stream().allMatch(MeterstoreColumnHandle.class::isInstance)) {
            return Optional.empty();
        }
        Optional<List<HotAggregateColumn>> pushed = HotAggregations.toAggregateColumns(aggregates, assignments);
        if (pushed.isEmpty()) {
            return Optional.empty();
        }
        List<MeterstoreColumnHandle> groupingColumns = groupingSets.getFirst().stream().map(MeterstoreColumnHandle.class::cast).toList();
        ImmutableList.Builder<ConnectorExpression> projections = ImmutableList.builder();
        ImmutableList.Builder<Assignment> resultAssignments = ImmutableList.builder();
        for (HotAggregateColumn aggregate : pushed.get()) {
            projections.add(new Variable(aggregate.name(), aggregate.type()));
            resultAssignments.add(new Assignment(aggregate.name(), aggregate, aggregate.type()));
        }
        Map<ColumnHandle, ColumnHandle> groupingColumnMapping = groupingColumns.stream().collect(toImmutableMap(column -> column, column -> column));
        return Optional.of(new AggregationApplicationResult<>(
                handle.withAggregation(new HotAggregation(groupingColumns, pushed.get())),
                projections.build(),
                resultAssignments.build(),
                groupingColumnMapping,
                false));
    }
}
