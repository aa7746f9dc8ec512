package io.meterstore.core;

import org.apache.iceberg.PartitionData;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.SortDirection;
import org.apache.iceberg.SortField;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableUtil;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.inmemory.InMemoryCatalog;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.types.Types.NestedField;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.meterstore.core.MeterstoreException.Reason.TABLE_LAYOUT_UNSUPPORTED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class TestIcebergTableSpec
{
    private static final Namespace NAMESPACE = Namespace.of("meterstore");

    private InMemoryCatalog catalog;

    @BeforeEach
    void createCatalog()
    {
        catalog = new InMemoryCatalog();
        catalog.initialize("test", Map.of());
    }

    @Test
    void testCreateIfMissing()
    {
        TableIdentifier identifier = TableIdentifier.of(NAMESPACE, "readings");
        Table table = IcebergTableSpec.createIfMissing(catalog, identifier);

        assertThat(catalog.namespaceExists(NAMESPACE)).isTrue();
        assertThat(TableUtil.formatVersion(table)).isEqualTo(2);
        assertThat(table.schema().sameSchema(ReadingsSchema.icebergSchema())).isTrue();
        assertThat(table.schema().columns().stream().map(NestedField::name).toList())
                .containsExactly("malo_id", "melo_id", "obis_code", "sparte", "from", "to", "value", "unit", "quality", "resolution", "source_kind", "source_detail", "provenance", "version", "version_scope", "recorded_at", "balancing_day");
        assertThat(table.schema().findField("value").type()).isEqualTo(Types.DecimalType.of(18, 6));
        assertThat(table.schema().findField("version").type()).isEqualTo(Types.DecimalType.of(20, 0));
        assertThat(table.schema().findField("melo_id").isOptional()).isTrue();
        assertThat(table.schema().findField("malo_id").isRequired()).isTrue();

        assertThat(table.spec().fields()).hasSize(1);
        assertThat(table.spec().fields().getFirst().transform().toString()).isEqualTo("month");
        assertThat(table.spec().fields().getFirst().sourceId()).isEqualTo(ReadingsColumn.FROM.fieldId());

        List<String> sortColumns = new ArrayList<>();
        for (SortField field : table.sortOrder().fields()) {
            assertThat(field.direction()).isEqualTo(SortDirection.ASC);
            sortColumns.add(table.schema().findColumnName(field.sourceId()));
        }
        assertThat(sortColumns).containsExactly("malo_id", "obis_code", "from", "version");

        assertThat(table.properties())
                .containsEntry("write.parquet.compression-codec", "zstd")
                .containsEntry("write.parquet.bloom-filter-enabled.column.malo_id", "true")
                .containsEntry("write.parquet.bloom-filter-enabled.column.obis_code", "true")
                .containsEntry("write.target-file-size-bytes", String.valueOf(512L * 1024 * 1024))
                .containsEntry("commit.retry.num-retries", "0")
                // the maintenance contract, as the Rust MeterStore writes it: ten years, the newest 20, 100 metadata files
                .containsEntry("history.expire.max-snapshot-age-ms", String.valueOf(3653L * 24 * 3600 * 1000))
                .containsEntry("history.expire.min-snapshots-to-keep", "20")
                .containsEntry("write.metadata.delete-after-commit.enabled", "true")
                .containsEntry("write.metadata.previous-versions-max", "100")
                // manifests are kept one per month by the archiver; merging on append would fold the months together
                .containsEntry("commit.manifest-merge.enabled", "false");

        // a second call finds the table instead of replacing it
        Table again = IcebergTableSpec.createIfMissing(catalog, identifier);
        assertThat(again.uuid()).isEqualTo(table.uuid());
    }

    @Test
    void testRestateMaintenanceProperties()
    {
        Table table = IcebergTableSpec.createIfMissing(catalog, TableIdentifier.of(NAMESPACE, "readings_restated"));
        assertThat(IcebergTableSpec.restateMaintenanceProperties(table, SnapshotRetention.DEFAULT)).isFalse();

        SnapshotRetention shorter = new SnapshotRetention(Duration.ofDays(400), 5);
        assertThat(IcebergTableSpec.restateMaintenanceProperties(table, shorter)).isTrue();
        table.refresh();
        assertThat(table.properties())
                .containsEntry("history.expire.max-snapshot-age-ms", String.valueOf(400L * 24 * 3600 * 1000))
                .containsEntry("history.expire.min-snapshots-to-keep", "5");
        assertThat(SnapshotRetention.of(table.properties())).contains(shorter);

        // another tool turned merging back on: restated, the retention untouched
        table.updateProperties().set("commit.manifest-merge.enabled", "true").commit();
        assertThat(IcebergTableSpec.restateMaintenanceProperties(table, shorter)).isTrue();
        table.refresh();
        assertThat(table.properties()).containsEntry("commit.manifest-merge.enabled", "false");
        assertThat(IcebergTableSpec.restateMaintenanceProperties(table, shorter)).isFalse();
    }

    @Test
    void testSnapshotRetentionOfTableProperties()
    {
        assertThat(SnapshotRetention.of(Map.of())).isEmpty();
        assertThat(SnapshotRetention.DEFAULT.describe()).isEqualTo("snapshots older than 3653d, except the newest 20");
        assertThat(new SnapshotRetention(Duration.ofHours(36), 1).describe()).isEqualTo("snapshots older than 36h, except the newest 1");
        assertThatThrownBy(() -> SnapshotRetention.of(Map.of("history.expire.max-snapshot-age-ms", "ten years", "history.expire.min-snapshots-to-keep", "20")))
                .isInstanceOfSatisfying(MeterstoreException.class, e -> assertThat(e.reason()).isEqualTo(MeterstoreException.Reason.SUMMARY_MALFORMED))
                .hasMessage("Table properties 'history.expire.max-snapshot-age-ms' = 'ten years' and 'history.expire.min-snapshots-to-keep' = '20' are not a snapshot retention: set them to a number of milliseconds and a number of snapshots of at least 1");
    }

    @Test
    void testVersion3Rejected()
    {
        TableIdentifier identifier = TableIdentifier.of(NAMESPACE, "readings_v3");
        catalog.createNamespace(NAMESPACE);
        Schema schema = ReadingsSchema.icebergSchema();
        Table table = catalog.buildTable(identifier, schema)
                .withPartitionSpec(IcebergTableSpec.partitionSpec(schema))
                .withProperty("format-version", "3")
                .create();
        assertThat(TableUtil.formatVersion(table)).isEqualTo(3);

        assertThatThrownBy(() -> IcebergTableSpec.verify(table))
                .isInstanceOfSatisfying(MeterstoreException.class, e -> assertThat(e.reason()).isEqualTo(TABLE_LAYOUT_UNSUPPORTED))
                .hasMessage("Iceberg table '%s' has format version 3: MeterStore reads and writes format version 2 only; recreate the table with format-version=2".formatted(table.name()));
        // finding the table is no excuse to skip the check
        assertThatThrownBy(() -> IcebergTableSpec.createIfMissing(catalog, identifier))
                .isInstanceOfSatisfying(MeterstoreException.class, e -> assertThat(e.reason()).isEqualTo(TABLE_LAYOUT_UNSUPPORTED));
    }

    @Test
    void testOtherSchemaRejected()
    {
        catalog.createNamespace(NAMESPACE);
        List<NestedField> fields = new ArrayList<>(ReadingsSchema.icebergSchema().columns());
        // value as a double: the one change that would silently lose exactness
        fields.set(ReadingsColumn.VALUE.ordinal(), NestedField.required(ReadingsColumn.VALUE.fieldId(), "value", Types.DoubleType.get()));
        Schema doubleValue = new Schema(fields);
        Table table = catalog.buildTable(TableIdentifier.of(NAMESPACE, "double_value"), doubleValue)
                .withPartitionSpec(IcebergTableSpec.partitionSpec(doubleValue))
                .withProperty("format-version", "2")
                .create();
        assertThatThrownBy(() -> IcebergTableSpec.verify(table))
                .isInstanceOfSatisfying(MeterstoreException.class, e -> assertThat(e.reason()).isEqualTo(TABLE_LAYOUT_UNSUPPORTED))
                .hasMessageStartingWith("Iceberg table '%s' is not a readings table: column 'value' (field id 7) is of type double, a readings table's is decimal(18, 6); it was altered outside MeterStore".formatted(table.name()));

        Schema missingColumn = new Schema(ReadingsSchema.icebergSchema().columns().subList(0, 16));
        Table withoutBalancingDay = catalog.buildTable(TableIdentifier.of(NAMESPACE, "missing_column"), missingColumn)
                .withPartitionSpec(IcebergTableSpec.partitionSpec(missingColumn))
                .withProperty("format-version", "2")
                .create();
        assertThatThrownBy(() -> IcebergTableSpec.verify(withoutBalancingDay))
                .isInstanceOfSatisfying(MeterstoreException.class, e -> assertThat(e.reason()).isEqualTo(TABLE_LAYOUT_UNSUPPORTED))
                .hasMessageContaining("column 'balancing_day' (field id 17, date) was dropped;");
    }

    @Test
    void testTableAlteredByAnotherToolRejected()
    {
        // what another engine's ALTER TABLE does to a readings table: each is named with the table and the difference
        Table dropped = IcebergTableSpec.createIfMissing(catalog, TableIdentifier.of(NAMESPACE, "dropped"));
        dropped.updateSchema().deleteColumn("provenance").commit();
        assertThatThrownBy(() -> IcebergTableSpec.verify(dropped))
                .isInstanceOfSatisfying(MeterstoreException.class, e -> assertThat(e.reason()).isEqualTo(TABLE_LAYOUT_UNSUPPORTED))
                .hasMessage(("Iceberg table '%s' is not a readings table: column 'provenance' (field id 13, string) was dropped; it was altered outside MeterStore, "
                        + "which reads and writes exactly the readings columns: undo the change (point the catalogue at the table's metadata file from before it)").formatted(dropped.name()));

        Table readded = IcebergTableSpec.createIfMissing(catalog, TableIdentifier.of(NAMESPACE, "readded"));
        readded.updateSchema().deleteColumn("provenance").commit();
        readded.updateSchema().addColumn("provenance", Types.StringType.get()).commit();
        assertThatThrownBy(() -> IcebergTableSpec.verify(readded))
                .hasMessageContaining("column 'provenance' (field id 13, string) was dropped, and the column of that name is a new one (field id 18): dropped and added again;");

        Table renamed = IcebergTableSpec.createIfMissing(catalog, TableIdentifier.of(NAMESPACE, "renamed"));
        renamed.updateSchema().renameColumn("quality", "qualitaet").commit();
        assertThatThrownBy(() -> IcebergTableSpec.verify(renamed))
                .hasMessageContaining("column 'quality' (field id 9) was renamed to 'qualitaet';");

        Table widened = IcebergTableSpec.createIfMissing(catalog, TableIdentifier.of(NAMESPACE, "widened"));
        widened.updateSchema().updateColumn("value", Types.DecimalType.of(38, 6)).commit();
        assertThatThrownBy(() -> IcebergTableSpec.verify(widened))
                .hasMessageContaining("column 'value' (field id 7) is of type decimal(38, 6), a readings table's is decimal(18, 6);");

        // the format downgraded: the table replaced by one in format v1
        Schema schema = ReadingsSchema.icebergSchema();
        Table version1 = catalog.buildTable(TableIdentifier.of(NAMESPACE, "version1"), schema)
                .withPartitionSpec(IcebergTableSpec.partitionSpec(schema))
                .withProperty("format-version", "1")
                .create();
        assertThatThrownBy(() -> IcebergTableSpec.verify(version1))
                .hasMessage("Iceberg table '%s' has format version 1: MeterStore reads and writes format version 2 only; recreate the table with format-version=2".formatted(version1.name()));
    }

    @Test
    void testIdentityColumnsArePartitionFields()
    {
        TableShape tenants = new TableShape(TableShape.TimeModel.INTERVAL, TableShape.ReadingIdentifier.MALO_ID, List.of("tenant", "contract"), List.of("note"), TableShape.DEFAULT.checkedColumns());
        Table table = IcebergTableSpec.createIfMissing(catalog, TableIdentifier.of(NAMESPACE, "tenants"), tenants.properties());
        assertThat(table.spec().fields()).extracting(field -> table.schema().findColumnName(field.sourceId()) + ":" + field.transform())
                .containsExactly("tenant:identity", "contract:identity", "from:month");
        // a file's month is its partition's last field, whatever comes before it
        PartitionData partition = ColdPartitions.partition(table, YearMonth.of(2026, 3), List.of("a", "k-17"));
        assertThat(partition.get(0, String.class)).isEqualTo("a");
        assertThat(partition.get(1, String.class)).isEqualTo("k-17");
        assertThat(ColdPartitions.month(partition)).isEqualTo(YearMonth.of(2026, 3));

        // a table of that shape created before identity columns were partition fields keeps working
        Schema schema = TableColumns.of(tenants).icebergSchema();
        Table monthOnly = catalog.buildTable(TableIdentifier.of(NAMESPACE, "tenants_by_month"), schema)
                .withPartitionSpec(IcebergTableSpec.partitionSpec(schema))
                .withProperties(tenants.properties())
                .withProperty("format-version", "2")
                .create();
        IcebergTableSpec.verify(monthOnly);
        assertThat(ColdPartitions.month(ColdPartitions.partition(monthOnly, YearMonth.of(2026, 3), List.of("a", "k-17")))).isEqualTo(YearMonth.of(2026, 3));

        // identity fields in another order, or of a column that is not an identity column, are another layout
        for (PartitionSpec other : List.of(
                PartitionSpec.builderFor(schema).identity("contract").identity("tenant").month("from").build(),
                PartitionSpec.builderFor(schema).identity("tenant").identity("note").month("from").build(),
                PartitionSpec.builderFor(schema).identity("tenant").month("from").build())) {
            Table wrong = catalog.buildTable(TableIdentifier.of(NAMESPACE, "tenants_" + other.fields().size() + "_" + other.fields().get(1).name()), schema)
                    .withPartitionSpec(other)
                    .withProperties(tenants.properties())
                    .withProperty("format-version", "2")
                    .create();
            assertThatThrownBy(() -> IcebergTableSpec.verify(wrong))
                    .isInstanceOfSatisfying(MeterstoreException.class, e -> assertThat(e.reason()).isEqualTo(TABLE_LAYOUT_UNSUPPORTED))
                    .hasMessageEndingWith("]: a readings table of identity columns [tenant, contract] is partitioned by identity(tenant), identity(contract), month(\"from\") "
                            + "(or by month(\"from\") alone, as one created before identity columns were partition fields)");
        }
    }

    @Test
    void testOtherPartitioningRejected()
    {
        catalog.createNamespace(NAMESPACE);
        Schema schema = ReadingsSchema.icebergSchema();
        Table daily = catalog.buildTable(TableIdentifier.of(NAMESPACE, "daily"), schema)
                .withPartitionSpec(PartitionSpec.builderFor(schema).day("from").build())
                .withProperty("format-version", "2")
                .create();
        assertThatThrownBy(() -> IcebergTableSpec.verify(daily))
                .isInstanceOfSatisfying(MeterstoreException.class, e -> assertThat(e.reason()).isEqualTo(TABLE_LAYOUT_UNSUPPORTED))
                .hasMessageStartingWith("Iceberg table '%s' is partitioned by [".formatted(daily.name()))
                .hasMessageEndingWith("]: a readings table is partitioned by month(\"from\")");

        Table unpartitioned = catalog.buildTable(TableIdentifier.of(NAMESPACE, "unpartitioned"), schema)
                .withProperty("format-version", "2")
                .create();
        assertThatThrownBy(() -> IcebergTableSpec.verify(unpartitioned))
                .isInstanceOfSatisfying(MeterstoreException.class, e -> assertThat(e.reason()).isEqualTo(TABLE_LAYOUT_UNSUPPORTED))
                .hasMessage("Iceberg table '%s' is partitioned by []: a readings table is partitioned by month(\"from\")".formatted(unpartitioned.name()));

        Table monthOfRecordedAt = catalog.buildTable(TableIdentifier.of(NAMESPACE, "by_recorded_at"), schema)
                .withPartitionSpec(PartitionSpec.builderFor(schema).month("recorded_at").build())
                .withProperty("format-version", "2")
                .create();
        assertThatThrownBy(() -> IcebergTableSpec.verify(monthOfRecordedAt))
                .isInstanceOfSatisfying(MeterstoreException.class, e -> assertThat(e.reason()).isEqualTo(TABLE_LAYOUT_UNSUPPORTED));

        // a table of the default shape has no identity column to partition by
        Table meterAndMonth = catalog.buildTable(TableIdentifier.of(NAMESPACE, "by_meter_and_month"), schema)
                .withPartitionSpec(PartitionSpec.builderFor(schema).identity("malo_id").month("from").build())
                .withProperty("format-version", "2")
                .create();
        assertThatThrownBy(() -> IcebergTableSpec.verify(meterAndMonth))
                .isInstanceOfSatisfying(MeterstoreException.class, e -> assertThat(e.reason()).isEqualTo(TABLE_LAYOUT_UNSUPPORTED))
                .hasMessageEndingWith("]: a readings table is partitioned by month(\"from\")");

        Table monthAndMeter = catalog.buildTable(TableIdentifier.of(NAMESPACE, "by_month_and_meter"), schema)
                .withPartitionSpec(PartitionSpec.builderFor(schema).month("from").identity("malo_id").build())
                .withProperty("format-version", "2")
                .create();
        assertThatThrownBy(() -> IcebergTableSpec.verify(monthAndMeter))
                .isInstanceOfSatisfying(MeterstoreException.class, e -> assertThat(e.reason()).isEqualTo(TABLE_LAYOUT_UNSUPPORTED));
    }
}
