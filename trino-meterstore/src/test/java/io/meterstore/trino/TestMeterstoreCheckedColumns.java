package io.meterstore.trino;

import com.google.common.collect.ImmutableMap;
import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchivalException;
import io.meterstore.archiver.cycle.ArchivalSettings;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.core.HotTier;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.Reading;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsInserts;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.meterstore.trino.base.MeterstoreErrorCode;
import io.trino.testing.DistributedQueryRunner;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.InstantSource;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;
import static io.trino.spi.StandardErrorCode.INVALID_TABLE_PROPERTY;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS;

/**
 * Checked columns through the Trino JDBC driver: a table whose attribute columns grid_area and supplier are checked as
 * an EIC of object type Y (a control or bidding area) and a BDEW code stores each value in its canonical spelling, and
 * refuses a statement holding a value that does not parse (a wrong check character, another object type, 12 digits)
 * with nothing of it written; the hot tier's CHECK refuses a malformed value written straight into PostgreSQL, and the
 * archival cycle one with a wrong check character, which the CHECK lets through, archiving once it is repaired. A check
 * that cannot be declared (an object type ENTSO-E does not give, an unknown check, a column the table does not have)
 * creates nothing.
 */
@TestInstance(PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
final class TestMeterstoreCheckedColumns
{
    private static final String TABLE = "netze";
    private static final String COLUMNS = """
            (malo_id varchar NOT NULL, melo_id varchar, obis_code varchar NOT NULL, sparte varchar NOT NULL,
             "from" timestamp(6) with time zone NOT NULL, "to" timestamp(6) with time zone NOT NULL, value decimal(18,6) NOT NULL,
             unit varchar NOT NULL, quality varchar NOT NULL, resolution varchar NOT NULL, source_kind varchar NOT NULL,
             source_detail varchar, provenance varchar, version decimal(20,0) NOT NULL, version_scope varchar NOT NULL,
             recorded_at timestamp(6) with time zone, balancing_day date, grid_area varchar, supplier varchar)""";
    private static final String AMPRION = "10YDE-RWENET---I";
    private static final String SUPPLIER = "9900000000003";

    private TestingWarehouse warehouse;
    private DistributedQueryRunner queryRunner;
    private TestingClient client;
    // five quarter-hours of one meter, in the hot tier (the table has no watermark yet)
    private final List<Reading> readings = new ArrayList<>();

    @BeforeAll
    void setUp()
            throws Exception
    {
        warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("checked_columns"));
        queryRunner = MeterstoreQueryRunner.builder(warehouse)
                .withoutIceberg()
                .withCatalogOverrides(ImmutableMap.of("meterstore.tables", TABLE + ",refused"))
                .build();
        client = new TestingClient(queryRunner, warehouse, "checked_columns");
        ReadingsGenerator.builder().seed(33).meters(1).startDay(LocalDate.of(2026, 4, 2)).days(1).build().forEach(reading -> {
            if (readings.size() < 5) {
                readings.add(reading);
            }
        });
    }

    @AfterAll
    void tearDown()
    {
        if (queryRunner != null) {
            queryRunner.close();
        }
    }

    @Test
    @Order(1)
    void testChecksThatCannotBeDeclaredCreateNothing()
            throws Exception
    {
        int invalidProperty = INVALID_TABLE_PROPERTY.toErrorCode().getCode();
        assertRefused("CREATE TABLE refused %s WITH (checked_columns = ARRAY['grid_area:EIC:Q'])".formatted(COLUMNS), invalidProperty,
                "Check 'EIC:Q' of column 'grid_area' allows EIC object type 'Q', which ENTSO-E does not give: list letters among X Y Z W T V A, separated by '|' (EIC:X|Y)");
        assertRefused("CREATE TABLE refused %s WITH (checked_columns = ARRAY['supplier:GLN'])".formatted(COLUMNS), invalidProperty,
                "Unknown check 'GLN' of column 'supplier': write one of EIC, EIC:<object types among X Y Z W T V A separated by '|'>, MALO, MELO, BDEW");
        assertRefused("CREATE TABLE refused %s WITH (checked_columns = ARRAY['region:EIC'])".formatted(COLUMNS), invalidProperty,
                "Checked column 'region' is neither a readings column nor one of identity_columns and attribute_columns: declare it there first");
        assertRefused("CREATE TABLE refused %s WITH (checked_columns = ARRAY['malo_id:EIC'])".formatted(COLUMNS), invalidProperty,
                "Column 'malo_id' is checked as MALO, the identifier it holds: write malo_id:MALO, or leave it out of checked_columns");
        client.assertNothingCreated("refused");
    }

    @Test
    @Order(2)
    void testCreateTableDeclaresThemInBothTiers()
            throws Exception
    {
        client.execute("CREATE TABLE %s %s WITH (checked_columns = ARRAY['grid_area:EIC:Y', 'supplier:bdew'])".formatted(TABLE, COLUMNS));
        String declared = "grid_area:EIC:Y,malo_id:MALO,melo_id:MELO,supplier:BDEW";
        assertThat(warehouse.catalog().loadTable(TableIdentifier.of(SCHEMA, TABLE)).properties()).containsEntry("meterstore.checked-columns", declared);
        assertThat(client.value("SELECT value FROM \"%s$config\" WHERE setting = 'checked_columns'".formatted(TABLE))).isEqualTo(declared);
        assertThat((String) client.value("SHOW CREATE TABLE " + TABLE)).contains("checked_columns = ARRAY['grid_area:EIC:Y','malo_id:MALO','melo_id:MELO','supplier:BDEW']");
        assertThat(client.postgres("""
                SELECT string_agg(conname || ' ' || pg_get_constraintdef(oid), ', ' ORDER BY conname) FROM pg_constraint
                WHERE conrelid = 'metering.netze'::regclass AND conname IN ('grid_area_shape', 'supplier_shape')"""))
                .isEqualTo("grid_area_shape CHECK ((grid_area ~ '^[0-9A-Z-]{2}[Y][0-9A-Z-]{12}[0-9A-Z]$'::text)), supplier_shape CHECK ((supplier ~ '^[0-9]{13}$'::text))");
    }

    @Test
    @Order(3)
    void testValuesAreStoredCanonical()
            throws Exception
    {
        // blanks and lowercase, and a row without either value
        insert(List.of(
                with(readings.get(0), " 10yde-rwenet---i ", " " + SUPPLIER),
                with(readings.get(1), AMPRION, SUPPLIER),
                with(readings.get(2), null, null)));
        assertThat(client.value("SELECT count(*) FROM %s_versions".formatted(TABLE))).isEqualTo(3L);
        assertThat(client.value("SELECT array_join(array_agg(coalesce(grid_area, 'NULL') || ' ' || coalesce(supplier, 'NULL') ORDER BY \"from\"), ', ') FROM " + TABLE))
                .isEqualTo("%1$s %2$s, %1$s %2$s, NULL NULL".formatted(AMPRION, SUPPLIER));
        assertThat(client.postgres("SELECT count(*) FROM metering.netze WHERE grid_area = '%s' AND supplier = '%s'".formatted(AMPRION, SUPPLIER))).isEqualTo(2L);
    }

    @Test
    @Order(4)
    void testValuesThatDoNotParseWriteNothing()
            throws Exception
    {
        int invalidReading = MeterstoreErrorCode.METERSTORE_INVALID_READING.toErrorCode().getCode();
        // each beside a valid row, which is not written either
        Reading valid = with(readings.get(3), AMPRION, SUPPLIER);
        assertRefused(insertSql(valid, with(readings.get(4), "10YDE-RWENET---J", SUPPLIER)), invalidReading,
                "Column 'grid_area' holds '10YDE-RWENET---J', which its check EIC:Y refuses: Invalid EIC '10YDE-RWENET---J': check character is 'J', expected 'I'; a valid value is 16 characters");
        assertRefused(insertSql(valid, with(readings.get(4), "10X1001A1001A450", SUPPLIER)), invalidReading,
                "Column 'grid_area' holds '10X1001A1001A450', which its check EIC:Y refuses: Invalid EIC '10X1001A1001A450': its object type (character 3) is 'X', this column takes Y");
        assertRefused(insertSql(valid, with(readings.get(4), AMPRION, "990000000000")), invalidReading,
                "Column 'supplier' holds '990000000000', which its check BDEW refuses: Invalid BDEW code '990000000000': a BDEW code has exactly 13 digits, this has 12 characters; a valid value is 13 digits (e.g. '9900000000003'); nothing was written");
        assertThat(client.value("SELECT count(*) FROM %s_versions".formatted(TABLE))).isEqualTo(3L);

        // a writer straight into PostgreSQL meets the shape as a CHECK: a lowercase check character, an 11-digit code
        Map<String, String> refusedBy = ImmutableMap.of("'10YDE-RWENET---i', '%s'".formatted(SUPPLIER), "grid_area_shape", "'%s', '99000000000'".formatted(AMPRION), "supplier_shape");
        for (String values : refusedBy.keySet()) {
            assertThatThrownBy(() -> executePostgres("""
                    INSERT INTO metering.netze (malo_id, melo_id, obis_code, sparte, "from", "to", value, unit, quality, resolution, source_kind, version, version_scope, recorded_at, balancing_day, grid_area, supplier)
                    SELECT malo_id, melo_id, obis_code, sparte, "from", "to", value, unit, quality, resolution, source_kind, version + 1, version_scope, recorded_at, balancing_day, %s
                    FROM metering.netze WHERE grid_area IS NULL""".formatted(values)))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("23514"))
                    .hasMessageContaining("violates check constraint \"%s\"".formatted(refusedBy.get(values)));
        }
        assertThat(client.postgres("SELECT count(*) FROM metering.netze")).isEqualTo(3L);
    }

    @Test
    @Order(5)
    void testArchivalRefusesAStoredValueNotCanonical()
            throws Exception
    {
        // a wrong check character written straight into PostgreSQL passes the CHECK, which holds the shape only
        executePostgres("""
                INSERT INTO metering.netze (malo_id, melo_id, obis_code, sparte, "from", "to", value, unit, quality, resolution, source_kind, version, version_scope, recorded_at, balancing_day, grid_area, supplier)
                SELECT malo_id, melo_id, obis_code, sparte, "from" + interval '45 minutes', "to" + interval '45 minutes', value, unit, quality, resolution, source_kind, version, version_scope, recorded_at, balancing_day,
                    '10YDE-RWENET---J', supplier
                FROM metering.netze WHERE grid_area IS NULL""");
        ArchivalCycle cycle = new ArchivalCycle(warehouse.catalog(), TableIdentifier.of(SCHEMA, TABLE), new HotTier(SCHEMA, new PartitionNaming(TABLE, PartitionNaming.DEFAULT_STEP), Duration.ofSeconds(5)),
                () -> warehouse.database().connect(), ArchivalSettings.DEFAULTS, InstantSource.fixed(TestingArchival.LATER));
        assertThatThrownBy(cycle::archiveOnce)
                .isInstanceOfSatisfying(ArchivalException.class, e -> assertThat(e.reason()).isEqualTo(ArchivalException.Reason.READING_REFUSED))
                .hasMessageContaining("Column 'grid_area' holds '10YDE-RWENET---J', which its check EIC:Y refuses");
        assertThat(client.value("SELECT count(*) FROM %s WHERE \"$tier\" = 'cold'".formatted(TABLE))).isEqualTo(0L);

        // repaired, the window archives with the canonical values
        executePostgres("DELETE FROM metering.netze WHERE grid_area = '10YDE-RWENET---J'");
        ArchiveOutcome outcome = cycle.archiveOnce();
        assertThat(outcome.kind()).as(outcome.describe()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);
        assertThat(client.value("SELECT count(*) FROM %s WHERE \"$tier\" = 'cold' AND grid_area = '%s' AND supplier = '%s'".formatted(TABLE, AMPRION, SUPPLIER))).isEqualTo(2L);
    }

    private String insertSql(Reading valid, Reading invalid)
    {
        return ReadingsInserts.insert(List.of(valid, invalid)).replaceFirst("readings_versions", TABLE + "_versions");
    }

    private void insert(List<Reading> rows)
            throws SQLException
    {
        client.execute(ReadingsInserts.insert(rows).replaceFirst("readings_versions", TABLE + "_versions"));
    }

    private static Reading with(Reading reading, String gridArea, String supplier)
    {
        return reading.withAttributes(List.of(Optional.ofNullable(gridArea), Optional.ofNullable(supplier)));
    }

    private void executePostgres(String sql)
            throws SQLException
    {
        try (Connection connection = warehouse.database().connect(); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    private void assertRefused(String sql, int errorCode, String message)
    {
        assertThatThrownBy(() -> client.execute(sql))
                .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).as(e.getMessage()).isEqualTo(errorCode))
                .hasMessageContaining(message);
    }
}
