package io.meterstore.core;

import io.meterstore.core.ReadingsColumn.ColumnKind;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.inmemory.InMemoryCatalog;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.types.Types.NestedField;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.meterstore.core.MeterstoreException.Reason.TABLE_LAYOUT_UNSUPPORTED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class TestTableColumns
{
    private static final TableShape CONTRACTS = TableShape.declared(Map.of("attribute_columns", "contract_ref,source_system"));

    @Test
    void testDefaultTableHasTheReadingsColumnsAlone()
    {
        assertThat(TableColumns.of(TableShape.DEFAULT)).isSameAs(TableColumns.READINGS);
        assertThat(TableColumns.READINGS.all()).extracting(TableColumn::name).containsExactlyElementsOf(ReadingsSchema.COLUMNS.stream().map(ReadingsColumn::columnName).toList());
        assertThat(TableColumns.READINGS.hasAttributes()).isFalse();
        // the default table's schema and DDL are what they were before attribute columns
        assertThat(TableColumns.READINGS.icebergSchema().sameSchema(ReadingsSchema.icebergSchema())).isTrue();
        assertThat(TableColumns.READINGS.postgresColumnList()).isEqualTo(ReadingsSchema.postgresColumnList());
        for (ReadingsColumn column : ReadingsColumn.values()) {
            assertThat(TableColumn.of(column).readingsColumn()).contains(column);
            assertThat(TableColumn.of(column).attributeColumn()).isFalse();
        }
    }

    @Test
    void testAttributeColumnsFollowTheReadingsColumns()
    {
        TableColumns columns = TableColumns.of(CONTRACTS);
        assertThat(columns.size()).isEqualTo(19);
        assertThat(columns.attributes()).containsExactly(
                new TableColumn("contract_ref", ColumnKind.STRING, 18, true),
                new TableColumn("source_system", ColumnKind.STRING, 19, true));
        assertThat(columns.attributeNames()).containsExactly("contract_ref", "source_system");
        assertThat(columns.attributeChannel(0)).isEqualTo(17);
        assertThat(columns.attributeChannel(1)).isEqualTo(18);
        assertThat(columns.all().subList(0, 17)).isEqualTo(TableColumns.READINGS.all());
        assertThat(columns.attributes().getFirst().readingsColumn()).isEmpty();
        assertThat(columns.attributes().getFirst().attributeColumn()).isTrue();
        assertThat(columns.column("source_system")).contains(columns.attributes().getLast());
        assertThat(columns.column("tenant")).isEmpty();

        assertThat(columns.icebergSchema().findField(18)).isEqualTo(NestedField.optional(18, "contract_ref", Types.StringType.get()));
        assertThat(columns.icebergSchema().findField(19)).isEqualTo(NestedField.optional(19, "source_system", Types.StringType.get()));
        assertThat(columns.postgresColumnDefinitions()).endsWith("""
                "balancing_day" date NOT NULL,
                    "contract_ref" text COLLATE "C",
                    "source_system" text COLLATE "C\"""");
        assertThat(columns.postgresColumnList()).endsWith("\"balancing_day\", \"contract_ref\", \"source_system\"");
        assertThat(columns.postgresColumnList("s")).endsWith("s.\"balancing_day\", s.\"contract_ref\", s.\"source_system\"");
    }

    @Test
    void testAttributeColumnsAreStoredAndOthersStillRefused()
    {
        // attribute columns and identity columns are shapes this release stores: the identity columns first, NOT NULL, in the key
        TableShape tenants = TableShape.declared(Map.of("identity_columns", "tenant", "attribute_columns", "contract_ref"));
        TableColumns columns = TableColumns.of(tenants);
        assertThat(columns.attributeNames()).containsExactly("tenant", "contract_ref");
        assertThat(columns.keyNames()).containsExactly("tenant");
        assertThat(columns.keyChannels()).containsExactly(17);
        assertThat(columns.icebergSchema().findField(18)).isEqualTo(NestedField.required(18, "tenant", Types.StringType.get()));
        assertThat(columns.icebergSchema().findField(19)).isEqualTo(NestedField.optional(19, "contract_ref", Types.StringType.get()));
        assertThat(tenants.mergeKey()).containsExactly("malo_id", "tenant", "obis_code", "from");
        // keyed by melo_id: melo_id NOT NULL, in the key after "from"
        TableColumns melo = TableColumns.of(TableShape.declared(Map.of("time_model", "point")));
        assertThat(melo.keyNames()).containsExactly("melo_id");
        assertThat(melo.keyChannels()).containsExactly(ReadingsColumn.MELO_ID.ordinal());
        assertThat(melo.postgresColumnDefinitions()).contains("\"melo_id\" text COLLATE \"C\" NOT NULL");
        assertThat(TableColumns.of(TableShape.DEFAULT)).isSameAs(TableColumns.READINGS);
        assertThat(TableColumns.READINGS.keyChannels()).isEmpty();
        for (String reserved : List.of("superseded_at", "xmin", "ctid", "tableoid")) {
            assertThatThrownBy(() -> TableShape.declared(Map.of("attribute_columns", reserved)))
                    .hasMessage("Column '%s' of identity_columns or attribute_columns is a name PostgreSQL or MeterStore's hot tier keeps for itself: name it otherwise", reserved);
        }
    }

    @Test
    void testIcebergTableOfAShapeHasItsColumnsAndIsVerifiedByThem()
    {
        InMemoryCatalog catalog = new InMemoryCatalog();
        catalog.initialize("test", Map.of());
        TableIdentifier identifier = TableIdentifier.of(Namespace.of("metering"), "vertraege");
        Table table = IcebergTableSpec.createIfMissing(catalog, identifier, CONTRACTS.properties(), TableColumns.of(CONTRACTS));
        assertThat(table.schema().findField(18)).isEqualTo(NestedField.optional(18, "contract_ref", Types.StringType.get()));
        assertThat(table.schema().findField(19)).isEqualTo(NestedField.optional(19, "source_system", Types.StringType.get()));
        assertThat(TableColumns.of(table)).isEqualTo(TableColumns.of(CONTRACTS));
        IcebergTableSpec.verify(table);

        // a column the shape declares that the schema lost is a table altered outside MeterStore
        table.updateSchema().deleteColumn("source_system").commit();
        assertThatThrownBy(() -> IcebergTableSpec.verify(table))
                .isInstanceOfSatisfying(MeterstoreException.class, e -> assertThat(e.reason()).isEqualTo(TABLE_LAYOUT_UNSUPPORTED))
                .hasMessageContaining("column 'source_system' (field id 19, string) was dropped");
        // a table created before shapes has the readings columns, whatever else its schema holds
        Table plain = IcebergTableSpec.createIfMissing(catalog, TableIdentifier.of(Namespace.of("metering"), "readings"));
        assertThat(TableColumns.of(plain)).isSameAs(TableColumns.READINGS);
        assertThat(TableShape.ofProperties(plain.properties())).isEqualTo(Optional.empty());
    }

    @Test
    void testReadingCarriesItsAttributesAsPayload()
    {
        Instant from = Instant.parse("2026-08-20T10:15:00Z");
        Reading reading = new Reading("41373559241", Optional.empty(), "1-1:1.29.0", Sparte.STROM, from, from.plusSeconds(900), BigDecimal.ONE, Sparte.MeasurementUnit.KWH,
                Quality.MEASURED, "PT15M", "MSCONS", Optional.empty(), Optional.empty(), BigInteger.ONE, Reading.versionScope("9900000000003", Sparte.STROM, from), from,
                MeteringCalendar.balancingDay(Sparte.STROM, from)).validate();
        Reading carried = reading.withAttributes(List.of(Optional.of("V-1"), Optional.empty()));
        assertThat(reading.attributes()).isEmpty();
        assertThat(carried.samePayload(carried.withAttributes(List.of(Optional.of("V-1"), Optional.empty())))).isTrue();
        assertThat(carried.samePayload(carried.withAttributes(List.of(Optional.of("V-2"), Optional.empty())))).isFalse();
        assertThat(carried.samePayload(carried.withAttributes(List.of(Optional.of("V-1"), Optional.of("MANUAL"))))).isFalse();
    }
}
