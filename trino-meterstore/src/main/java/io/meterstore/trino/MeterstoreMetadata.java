package io.meterstore.trino;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import com.google.inject.Inject;
import io.meterstore.core.MeterstoreException;
import io.meterstore.core.Sql;
import io.meterstore.core.WatermarkReader;
import io.meterstore.core.WatermarkReader.PinnedWatermark;
import io.meterstore.core.TierSplit;
import io.meterstore.core.TieringWatermark;
import io.meterstore.trino.hot.HotAggregateColumn;
import io.meterstore.trino.hot.HotAggregation;
import io.meterstore.trino.hot.HotAggregations;
import io.meterstore.trino.hot.HotSqlPredicate;
import io.trino.spi.connector.AggregateFunction;
import io.trino.spi.connector.AggregationApplicationResult;
import io.trino.spi.connector.Assignment;
import io.trino.spi.connector.LimitApplicationResult;
import io.trino.spi.expression.ConnectorExpression;
import io.trino.spi.expression.Variable;
import io.trino.spi.predicate.Domain;
import io.trino.spi.TrinoException;
import io.trino.spi.catalog.CatalogName;
import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.connector.ColumnMetadata;
import io.trino.spi.connector.ConnectorMetadata;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.ConnectorTableHandle;
import io.trino.spi.connector.ConnectorTableMetadata;
import io.trino.spi.connector.ConnectorTableVersion;
import io.trino.spi.connector.ConnectorViewDefinition;
import io.trino.spi.connector.ConnectorViewDefinition.ViewColumn;
import io.trino.spi.connector.Constraint;
import io.trino.spi.connector.ConstraintApplicationResult;
import io.trino.spi.connector.SchemaTableName;
import io.trino.spi.predicate.TupleDomain;
import org.apache.iceberg.Table;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import static com.google.common.collect.ImmutableMap.toImmutableMap;
import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_SNAPSHOT_NOT_FOUND;
import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_TABLE_NOT_FOUND;
import static io.trino.spi.StandardErrorCode.NOT_SUPPORTED;
import static java.util.Objects.requireNonNull;

/**
 * Exposes each configured table twice: {@code <table>_versions}, every version of every reading from both tiers, and
 * {@code <table>}, the winning version per merge key (for now a view that resolves versions in the engine).
 */
public class MeterstoreMetadata
        implements ConnectorMetadata
{
    private final MeterstoreTables tables;
    private final String catalogName;

    @Inject
    public MeterstoreMetadata(MeterstoreTables tables, CatalogName catalogName)
    {
        this.tables = requireNonNull(tables, "tables is null");
        this.catalogName = requireNonNull(catalogName, "catalogName is null").toString();
    }

    @Override
    public List<String> listSchemaNames(ConnectorSession session)
    {
        return ImmutableList.of(tables.schema());
    }

    @Override
    public ConnectorTableHandle getTableHandle(ConnectorSession session, SchemaTableName tableName, Optional<ConnectorTableVersion> startVersion, Optional<ConnectorTableVersion> endVersion)
    {
        if (!tableName.getSchemaName().equals(tables.schema()) || tables.isResolvedTable(tableName)) {
            // another schema, or a view (getView answers for it)
            return null;
        }
        // Trino passes FOR ... AS OF as the end version; a start version would be a range of versions
        if (startVersion.isPresent()) {
            throw new TrinoException(NOT_SUPPORTED, "MeterStore does not support reading a range of versions");
        }
        String storageTable = tables.storageTableOfVersions(tableName)
                .orElseThrow(() -> new TrinoException(METERSTORE_TABLE_NOT_FOUND, "Table '%s' does not exist: MeterStore serves %s (configured by meterstore.tables)"
                        .formatted(tableName, ImmutableList.builder().addAll(tables.resolvedTables()).addAll(tables.versionsTables()).build())));
        Table icebergTable = tables.loadIcebergTable(storageTable);
        PinnedWatermark pinned;
        try {
            if (endVersion.isPresent()) {
                long snapshotId = snapshotId(tableName, endVersion.get());
                if (icebergTable.snapshot(snapshotId) == null) {
                    throw new TrinoException(METERSTORE_SNAPSHOT_NOT_FOUND, "Table '%s' has no snapshot %s: use a snapshot id from iceberg.%s.\"%s$snapshots\""
                            .formatted(tableName, snapshotId, tables.schema(), storageTable));
                }
                // the cold tier exactly as that snapshot had it, split at the watermark it carried
                pinned = new PinnedWatermark(Optional.of(snapshotId), WatermarkReader.ofSnapshot(icebergTable, snapshotId));
                return new MeterstoreTableHandle(tableName, storageTable, pinned.snapshotId(), MeterstoreTypes.toEpochMicros(pinned.watermark().instant()), TupleDomain.all(), true);
            }
            // the query pins this snapshot and the watermark it carries; both tiers are split at exactly this W
            pinned = WatermarkReader.current(icebergTable);
        }
        catch (MeterstoreException e) {
            throw MeterstoreErrorCode.toTrinoException(e);
        }
        return new MeterstoreTableHandle(tableName, storageTable, pinned.snapshotId(), MeterstoreTypes.toEpochMicros(pinned.watermark().instant()), TupleDomain.all(), false);
    }

    private static long snapshotId(SchemaTableName tableName, ConnectorTableVersion version)
    {
        return switch (version.getPointerType()) {
            case TARGET_ID -> {
                if (!(version.getVersion() instanceof Long snapshotId)) {
                    throw new TrinoException(NOT_SUPPORTED, "FOR VERSION AS OF on table '%s' takes an Iceberg snapshot id (bigint), not %s".formatted(tableName, version.getVersionType()));
                }
                yield snapshotId;
            }
            case TEMPORAL -> throw new TrinoException(NOT_SUPPORTED, "MeterStore does not support FOR TIMESTAMP AS OF on table '%s' yet; FOR VERSION AS OF <snapshot id> reads the cold tier as of that snapshot".formatted(tableName));
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
        if (columnHandle instanceof HotAggregateColumn aggregate) {
            return aggregate.toColumnMetadata();
        }
        return ((MeterstoreColumnHandle) columnHandle).toColumnMetadata();
    }

    @Override
    public List<SchemaTableName> listViews(ConnectorSession session, Optional<String> schemaName)
    {
        if (schemaName.isPresent() && !schemaName.get().equals(tables.schema())) {
            return ImmutableList.of();
        }
        return tables.resolvedTables();
    }

    @Override
    public Map<SchemaTableName, ConnectorViewDefinition> getViews(ConnectorSession session, Optional<String> schemaName)
    {
        ImmutableMap.Builder<SchemaTableName, ConnectorViewDefinition> views = ImmutableMap.builder();
        for (SchemaTableName name : listViews(session, schemaName)) {
            views.put(name, resolvedView(name));
        }
        return views.buildOrThrow();
    }

    @Override
    public Optional<ConnectorViewDefinition> getView(ConnectorSession session, SchemaTableName viewName)
    {
        if (!tables.isResolvedTable(viewName)) {
            return Optional.empty();
        }
        return Optional.of(resolvedView(viewName));
    }

    @Override
    public Optional<ConstraintApplicationResult<ConnectorTableHandle>> applyFilter(ConnectorSession session, ConnectorTableHandle table, Constraint constraint)
    {
        MeterstoreTableHandle handle = (MeterstoreTableHandle) table;
        if (handle.limit().isPresent() || handle.aggregation().isPresent()) {
            // a filter above a pushed limit or aggregation is not a filter below it
            return Optional.empty();
        }
        TupleDomain<MeterstoreColumnHandle> pushed = constraint.getSummary().transformKeys(MeterstoreColumnHandle.class::cast);
        TupleDomain<MeterstoreColumnHandle> combined = handle.constraint().intersect(pushed);
        if (combined.equals(handle.constraint())) {
            return Optional.empty();
        }
        // pushed into partition and file pruning and the SQL and Parquet predicates; Trino still filters every row the statements do not enforce
        MeterstoreTableHandle filtered = handle.withConstraint(combined);
        return Optional.of(new ConstraintApplicationResult<>(filtered, remainingFilter(filtered, constraint.getSummary()), constraint.getExpression(), false));
    }

    /**
     * The winning version of each merge key (malo_id, obis_code, "from") within its version scope: max(version),
     * ties broken by the latest recorded_at.
     */
    private ConnectorViewDefinition resolvedView(SchemaTableName name)
    {
        String columns = String.join(", ", MeterstoreTypes.columnHandles().stream().map(column -> quote(column.name())).toList());
        String sql = """
                SELECT %s
                FROM (
                    SELECT %s, row_number() OVER (
                        PARTITION BY malo_id, obis_code, "from", version_scope
                        ORDER BY version DESC, recorded_at DESC) AS meterstore_rank
                    FROM %s.%s.%s)
                WHERE meterstore_rank = 1""".formatted(columns, columns, quote(catalogName), quote(name.getSchemaName()), quote(name.getTableName() + MeterstoreTables.VERSIONS_SUFFIX));
        List<ViewColumn> viewColumns = MeterstoreTypes.columnHandles().stream()
                .map(column -> new ViewColumn(column.name(), column.type().getTypeId(), Optional.empty()))
                .toList();
        return new ConnectorViewDefinition(sql, Optional.of(catalogName), Optional.of(name.getSchemaName()), viewColumns,
                Optional.of("Winning version per (malo_id, obis_code, \"from\") within its version scope"), Optional.empty(), true, ImmutableList.of());
    }

    private static List<ColumnMetadata> columnsMetadata()
    {
        return MeterstoreTypes.columnHandles().stream().map(MeterstoreColumnHandle::toColumnMetadata).toList();
    }

    private static String quote(String identifier)
    {
        // Trino quotes identifiers as PostgreSQL does
        return Sql.quoteIdentifier(identifier);
    }

    /**
     * The part of a filter Trino must still apply. Only a read that is hot alone is filtered by its statements (the
     * cold reader prunes row groups but returns their every row), and only by the domains {@link HotSqlPredicate}
     * enforces exactly; the resolved table is left to its own rules.
     */
    private TupleDomain<ColumnHandle> remainingFilter(MeterstoreTableHandle handle, TupleDomain<ColumnHandle> filter)
    {
        if (!isHotOnlyVersionsRead(handle) || filter.isNone()) {
            return filter;
        }
        Map<MeterstoreColumnHandle, Domain> enforced = handle.constraint().getDomains().orElseThrow();
        return filter.filter((column, domain) -> {
            Domain pushed = enforced.get((MeterstoreColumnHandle) column);
            return pushed == null || !HotSqlPredicate.isEnforced((MeterstoreColumnHandle) column, pushed);
        });
    }

    /** A read of {@code <table>_versions} whose "from" range lies at or above the pinned watermark: PostgreSQL alone answers it. */
    private boolean isHotOnlyVersionsRead(MeterstoreTableHandle handle)
    {
        if (handle.historical() || handle.constraint().isNone() || tables.storageTableOfVersions(handle.schemaTableName()).isEmpty()) {
            return false;
        }
        TieringWatermark watermark = TieringWatermark.of(MeterstoreTypes.fromEpochMicros(handle.watermarkEpochMicros()));
        return TierSplit.of(FromRange.of(handle.constraint()), watermark).cold().isEmpty();
    }

    @Override
    public Optional<LimitApplicationResult<ConnectorTableHandle>> applyLimit(ConnectorSession session, ConnectorTableHandle table, long limit)
    {
        MeterstoreTableHandle handle = (MeterstoreTableHandle) table;
        if (handle.aggregation().isPresent() || (handle.limit().isPresent() && handle.limit().getAsLong() <= limit)) {
            return Optional.empty();
        }
        // every split may stop after the limit; there are several splits, so Trino still applies it
        return Optional.of(new LimitApplicationResult<>(handle.withLimit(limit), false, false));
    }

    /**
     * Pushes count(*), count(x), sum(x), min(x) and max(x) grouped by plain columns into one PostgreSQL statement,
     * for a read of {@code <table>_versions} that is hot alone and fully filtered by that statement.
     */
    @Override
    public Optional<AggregationApplicationResult<ConnectorTableHandle>> applyAggregation(
            ConnectorSession session,
            ConnectorTableHandle table,
            List<AggregateFunction> aggregates,
            Map<String, ColumnHandle> assignments,
            List<List<ColumnHandle>> groupingSets)
    {
        MeterstoreTableHandle handle = (MeterstoreTableHandle) table;
        if (!MeterstoreSessionProperties.isAggregationPushdownEnabled(session)
                || handle.aggregation().isPresent()
                || handle.limit().isPresent()
                || groupingSets.size() != 1
                || !isHotOnlyVersionsRead(handle)) {
            return Optional.empty();
        }
        // every pushed domain must be enforced by the statement: no row filter remains between the scan and the aggregation
        if (!handle.constraint().getDomains().orElseThrow().entrySet().stream().allMatch(entry -> HotSqlPredicate.isEnforced(entry.getKey(), entry.getValue()))) {
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
