package io.meterstore.core;

import com.google.common.collect.ImmutableMap;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.TableUtil;
import org.apache.iceberg.UpdateProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.SupportsNamespaces;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.types.Types.NestedField;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.meterstore.core.MeterstoreException.Reason.TABLE_LAYOUT_UNSUPPORTED;

/**
 * The cold tier's table: Iceberg format v2 (verified after creation, never v3, which many engines cannot read),
 * partitioned by each identity column, then month("from") ({@link ColdPartitions}; day partitions would make ~3,650
 * small partitions a decade), sorted by the merge key and version, ZSTD, bloom filters on the point-lookup columns, 512 MiB target files.
 */
public final class IcebergTableSpec
{
    public static final int FORMAT_VERSION = 2;
    public static final long TARGET_FILE_SIZE_BYTES = 512L * 1024 * 1024;
    public static final int ROW_GROUP_ROWS = 256 * 1024;
    /** Metadata files kept besides the current one, as the Rust MeterStore keeps them; older ones are deleted on commit. */
    public static final int PREVIOUS_METADATA_VERSIONS = 100;

    private IcebergTableSpec() {}

    /** The partition spec of a table of the default shape: month("from"). */
    public static PartitionSpec partitionSpec(Schema schema)
    {
        return ColdPartitions.spec(schema, TableColumns.READINGS);
    }

    public static SortOrder sortOrder(Schema schema)
    {
        return sortOrder(schema, List.of());
    }

    /**
     * The sort order of a table whose merge key has {@code keyColumns} besides malo_id, obis_code and "from"
     * ({@link TableColumns#keyNames()}): (malo_id, obis_code, "from", those, version), which is the default key's order
     * when there are none, so that every file written before keeps it.
     */
    public static SortOrder sortOrder(Schema schema, List<String> keyColumns)
    {
        SortOrder.Builder builder = SortOrder.builderFor(schema);
        for (ReadingsColumn column : ReadingsColumn.SORT_KEY) {
            if (column == ReadingsColumn.VERSION) {
                keyColumns.forEach(builder::asc);
            }
            builder.asc(column.columnName());
        }
        return builder.build();
    }

    public static Map<String, String> properties()
    {
        return ImmutableMap.<String, String>builder()
                .put(TableProperties.FORMAT_VERSION, String.valueOf(FORMAT_VERSION))
                .put(TableProperties.DEFAULT_FILE_FORMAT, "parquet")
                .put(TableProperties.PARQUET_COMPRESSION, "zstd")
                .put(TableProperties.PARQUET_BLOOM_FILTER_COLUMN_ENABLED_PREFIX + ReadingsColumn.MALO_ID.columnName(), "true")
                .put(TableProperties.PARQUET_BLOOM_FILTER_COLUMN_ENABLED_PREFIX + ReadingsColumn.OBIS_CODE.columnName(), "true")
                .put(TableProperties.WRITE_TARGET_FILE_SIZE_BYTES, String.valueOf(TARGET_FILE_SIZE_BYTES))
                // the library's retry re-applies a stale summary, which could republish an older watermark;
                // MeterStore owns the retry loop and re-derives the summary from the refreshed base
                .put(TableProperties.COMMIT_NUM_RETRIES, "0")
                .putAll(maintenanceProperties(SnapshotRetention.DEFAULT))
                .buildOrThrow();
    }

    /**
     * The properties the archiver's maintenance keeps true on every readings table, restated when its settings change:
     * the snapshot retention (so any engine expiring the table keeps the same history), metadata files bounded by
     * {@value #PREVIOUS_METADATA_VERSIONS} versions, and no manifest merging on append. The archiver rewrites manifests by
     * month of "from"; merging on append would fold those months back into one manifest that every query reads whole.
     */
    public static Map<String, String> maintenanceProperties(SnapshotRetention retention)
    {
        return ImmutableMap.<String, String>builder()
                .putAll(retention.properties())
                .put(TableProperties.METADATA_DELETE_AFTER_COMMIT_ENABLED, "true")
                .put(TableProperties.METADATA_PREVIOUS_VERSIONS_MAX, String.valueOf(PREVIOUS_METADATA_VERSIONS))
                .put(TableProperties.MANIFEST_MERGE_ENABLED, "false")
                .buildOrThrow();
    }

    /** Sets the maintenance properties of {@code retention} that {@code table} does not have yet; returns whether it changed any. */
    public static boolean restateMaintenanceProperties(Table table, SnapshotRetention retention)
    {
        Map<String, String> wanted = maintenanceProperties(retention);
        Map<String, String> current = table.properties();
        Map<String, String> changed = wanted.entrySet().stream()
                .filter(entry -> !entry.getValue().equals(current.get(entry.getKey())))
                .collect(ImmutableMap.toImmutableMap(Map.Entry::getKey, Map.Entry::getValue));
        if (changed.isEmpty()) {
            return false;
        }
        UpdateProperties update = table.updateProperties();
        changed.forEach(update::set);
        update.commit();
        return true;
    }

    /** Creates the table (and its namespace) if missing, then verifies the layout either way. */
    public static Table createIfMissing(Catalog catalog, TableIdentifier identifier)
    {
        return createIfMissing(catalog, identifier, Map.of());
    }

    /**
     * As {@link #createIfMissing(Catalog, TableIdentifier)}, a new table created with {@code extraProperties} too (its
     * shape, {@link TableShape#properties()}) in the commit that creates it.
     */
    public static Table createIfMissing(Catalog catalog, TableIdentifier identifier, Map<String, String> extraProperties)
    {
        return createIfMissing(catalog, identifier, extraProperties, TableShape.ofProperties(extraProperties).map(TableColumns::of).orElse(TableColumns.READINGS));
    }

    /**
     * As {@link #createIfMissing(Catalog, TableIdentifier, Map)}, a new table created with {@code columns}: the readings
     * columns' fields, then an optional string field per attribute column of its shape, with the ids after theirs.
     */
    public static Table createIfMissing(Catalog catalog, TableIdentifier identifier, Map<String, String> extraProperties, TableColumns columns)
    {
        if (catalog instanceof SupportsNamespaces namespaces && !identifier.namespace().isEmpty()) {
            Namespace namespace = identifier.namespace();
            if (!namespaces.namespaceExists(namespace)) {
                try {
                    namespaces.createNamespace(namespace);
                }
                catch (AlreadyExistsException ignored) {
                    // created concurrently: fine
                }
            }
        }
        Table table;
        if (catalog.tableExists(identifier)) {
            table = catalog.loadTable(identifier);
        }
        else {
            Schema schema = columns.icebergSchema();
            try {
                table = catalog.buildTable(identifier, schema)
                        .withPartitionSpec(ColdPartitions.spec(schema, columns))
                        .withSortOrder(sortOrder(schema, columns.keyNames()))
                        .withProperties(properties())
                        .withProperties(extraProperties)
                        .create();
            }
            catch (AlreadyExistsException e) {
                table = catalog.loadTable(identifier);
            }
        }
        verify(table);
        return table;
    }

    /** How {@code schema} differs from the table's schema at {@code column}, matched by field id as Iceberg does. */
    private static Optional<String> schemaDifference(Schema schema, TableColumn column)
    {
        NestedField field = schema.findField(column.fieldId());
        if (field == null) {
            NestedField sameName = schema.findField(column.name());
            String readded = sameName == null ? "" : ", and the column of that name is a new one (field id %s): dropped and added again".formatted(sameName.fieldId());
            return Optional.of("column '%s' (field id %s, %s) was dropped%s".formatted(column.name(), column.fieldId(), column.icebergType(), readded));
        }
        if (!field.name().equals(column.name())) {
            return Optional.of("column '%s' (field id %s) was renamed to '%s'".formatted(column.name(), column.fieldId(), field.name()));
        }
        if (!field.type().equals(column.icebergType())) {
            return Optional.of("column '%s' (field id %s) is of type %s, a readings table's is %s".formatted(column.name(), column.fieldId(), field.type(), column.icebergType()));
        }
        if (column.attributeColumn() && column.nullable() && field.isRequired()) {
            return Optional.of("attribute column '%s' (field id %s) is required, a readings table's are optional".formatted(column.name(), column.fieldId()));
        }
        return Optional.empty();
    }

    /**
     * Verifies what MeterStore relies on: format v2, the readings schema by field id and type (and the attribute columns
     * the table's shape declares, each an optional string after them), partitions by its identity columns and month("from")
     * ({@link ColdPartitions#accepted}).
     * The format version is checked rather than trusted because it is a reserved property: a library default moving
     * to v3 must fail loudly instead of silently migrating a decade of history.
     */
    public static void verify(Table table)
    {
        int formatVersion = TableUtil.formatVersion(table);
        if (formatVersion != FORMAT_VERSION) {
            throw new MeterstoreException(TABLE_LAYOUT_UNSUPPORTED,
                    "Iceberg table '%s' has format version %s: MeterStore reads and writes format version 2 only; recreate the table with format-version=2"
                            .formatted(table.name(), formatVersion));
        }
        Schema schema = table.schema();
        for (TableColumn column : TableColumns.of(table).all()) {
            schemaDifference(schema, column).ifPresent(difference -> {
                throw new MeterstoreException(TABLE_LAYOUT_UNSUPPORTED,
                        "Iceberg table '%s' is not a readings table: %s; it was altered outside MeterStore, which reads and writes exactly the readings columns: undo the change (point the catalogue at the table's metadata file from before it)"
                                .formatted(table.name(), difference));
            });
        }
        PartitionSpec spec = table.spec();
        TableColumns columns = TableColumns.of(table);
        if (!ColdPartitions.accepted(spec, columns)) {
            throw new MeterstoreException(TABLE_LAYOUT_UNSUPPORTED, "Iceberg table '%s' is partitioned by %s: %s"
                    .formatted(table.name(), spec.fields().stream().map(PartitionField::toString).toList(), ColdPartitions.describe(columns)));
        }
    }
}
