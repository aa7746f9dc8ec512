package io.meterstore.trino;

import com.google.common.collect.ImmutableMap;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.ReadingsSchema;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.trino.testing.AbstractTestQueryFramework;
import io.trino.testing.DistributedQueryRunner;
import io.trino.testing.QueryRunner;
import org.apache.iceberg.Schema;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_CATALOG_UNAVAILABLE;
import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_POSTGRES_UNAVAILABLE;
import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_TABLE_NOT_FOUND;
import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_UNSUPPORTED_TABLE_LAYOUT;
import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_WATERMARK_MISSING;
import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;
import static io.trino.spi.StandardErrorCode.TABLE_NOT_FOUND;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Every refusal names what is wrong and what to do, with a MeterStore error code. */
final class TestMeterstoreBadInput
        extends AbstractTestQueryFramework
{
    // nothing listens on port 1
    private static final String UNREACHABLE_POSTGRES = "jdbc:postgresql://localhost:1/metering?connectTimeout=2";

    @Override
    protected QueryRunner createQueryRunner()
            throws Exception
    {
        TestingWarehouse warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("bad_input"));
        TestingMeterstoreTables.createTables(warehouse);
        Catalog catalog = warehouse.catalog();

        // a table another tool wrote: snapshots, none of them MeterStore's
        IcebergTableSpec.createIfMissing(catalog, TableIdentifier.of(SCHEMA, "foreign"))
                .newAppend().set("engine", "compaction").commit();
        // format v3, which MeterStore refuses to read
        Schema schema = ReadingsSchema.icebergSchema();
        catalog.buildTable(TableIdentifier.of(SCHEMA, "future"), schema)
                .withPartitionSpec(IcebergTableSpec.partitionSpec(schema))
                .withProperty("format-version", "3")
                .create();

        DistributedQueryRunner queryRunner = MeterstoreQueryRunner.builder(warehouse)
                .withoutIceberg()
                .withCatalogOverrides(ImmutableMap.of("meterstore.tables", "readings,foreign,future,absent"))
                .build();

        Map<String, String> postgresDown = new HashMap<>(MeterstoreQueryRunner.catalogProperties(warehouse));
        postgresDown.put("meterstore.postgresql.url", UNREACHABLE_POSTGRES);
        postgresDown.put("meterstore.iceberg.jdbc-url", warehouse.database().jdbcUrl());
        queryRunner.createCatalog("postgres_down", "meterstore", postgresDown);

        Map<String, String> everythingDown = new HashMap<>(MeterstoreQueryRunner.catalogProperties(warehouse));
        everythingDown.put("meterstore.postgresql.url", UNREACHABLE_POSTGRES);
        queryRunner.createCatalog("everything_down", "meterstore", everythingDown);
        return queryRunner;
    }

    @Test
    void testUnknownTableIsMissingAsOnEveryCatalog()
            throws Exception
    {
        assertThat(query("SELECT count(*) FROM readings_nope"))
                .failure()
                .hasErrorCode(TABLE_NOT_FOUND)
                .hasMessage("line 1:22: Table 'meterstore.metering.readings_nope' does not exist");

        // through the real JDBC driver, as a BI tool sees the catalog
        try (Connection connection = DriverManager.getConnection("jdbc:trino://%s/meterstore/metering".formatted(getDistributedQueryRunner().getCoordinator().getAddress()), "bi", null);
                Statement statement = connection.createStatement()) {
            DatabaseMetaData metaData = connection.getMetaData();
            assertThat(columnNames(metaData.getColumns("meterstore", "metering", "readings_nope", null))).isEmpty();
            assertThat(columnNames(metaData.getColumns("meterstore", "metering", "readings_versions", null))).containsExactlyElementsOf(
                    Stream.of(ReadingsColumn.values()).map(ReadingsColumn::columnName).toList());
            // every served table lists its columns, even one whose Iceberg table is missing: listing reads no catalogue
            List<String> tables = new ArrayList<>();
            try (ResultSet columns = metaData.getColumns("meterstore", "metering", null, "malo_id")) {
                while (columns.next()) {
                    tables.add(columns.getString("TABLE_NAME"));
                }
            }
            assertThat(tables).containsExactlyInAnyOrder("readings", "readings_versions", "foreign", "foreign_versions", "future", "future_versions", "absent", "absent_versions");

            assertThat(longValue(statement, "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'metering' AND table_name = 'readings_nope'")).isZero();
            assertThat(longValue(statement, "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'metering' AND table_name = 'readings'")).isEqualTo(ReadingsColumn.values().length);
            assertThat(longValue(statement, "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'metering' AND table_name = 'readings_nope'")).isZero();

            // IF EXISTS is a no-op; SHOW CREATE TABLE and DESCRIBE report the name missing, as Trino does
            assertThat(statement.execute("DROP TABLE IF EXISTS readings_nope")).isFalse();
            for (String sql : List.of("SHOW CREATE TABLE readings_nope", "DESCRIBE readings_nope", "SHOW COLUMNS FROM readings_nope")) {
                assertThatThrownBy(() -> statement.execute(sql))
                        .as(sql)
                        .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(TABLE_NOT_FOUND.toErrorCode().getCode()))
                        .hasMessageContaining("Table 'meterstore.metering.readings_nope' does not exist");
            }
            try (ResultSet created = statement.executeQuery("SHOW CREATE TABLE readings_versions")) {
                assertThat(created.next()).isTrue();
                assertThat(created.getString(1)).startsWith("CREATE TABLE meterstore.metering.readings_versions (").contains("malo_id varchar NOT NULL");
            }
        }
    }

    private static List<String> columnNames(ResultSet columns)
            throws SQLException
    {
        try (columns) {
            List<String> names = new ArrayList<>();
            while (columns.next()) {
                names.add(columns.getString("COLUMN_NAME"));
            }
            return names;
        }
    }

    private static long longValue(Statement statement, String sql)
            throws SQLException
    {
        try (ResultSet result = statement.executeQuery(sql)) {
            assertThat(result.next()).isTrue();
            return result.getLong(1);
        }
    }

    @Test
    void testConfiguredTableMissingInIceberg()
    {
        assertThat(query("SELECT count(*) FROM absent_versions"))
                .failure()
                .hasErrorCode(METERSTORE_TABLE_NOT_FOUND)
                .hasMessageContaining("Iceberg table 'metering.absent'")
                .hasMessageContaining("meterstore-archiver create");
    }

    @Test
    void testWatermarkChainWithoutMeterstoreSnapshot()
    {
        assertThat(query("SELECT count(*) FROM foreign_versions"))
                .failure()
                .hasErrorCode(METERSTORE_WATERMARK_MISSING)
                .hasMessageContaining("meterstore.tiering_watermark")
                .hasMessageContaining("reassert the watermark");
    }

    @Test
    void testFormatVersionThree()
    {
        assertThat(query("SELECT count(*) FROM future_versions"))
                .failure()
                .hasErrorCode(METERSTORE_UNSUPPORTED_TABLE_LAYOUT)
                .hasMessageContaining("format version 3")
                .hasMessageContaining("format version 2 only");
    }

    @Test
    void testUnreachablePostgres()
    {
        assertThat(query("SELECT count(*) FROM postgres_down.metering.readings_versions"))
                .failure()
                .hasErrorCode(METERSTORE_POSTGRES_UNAVAILABLE)
                .hasMessageContaining("Cannot connect to PostgreSQL at '%s'".formatted(UNREACHABLE_POSTGRES))
                .hasMessageContaining("meterstore.postgresql");
    }

    @Test
    void testUnreachableCatalogue()
    {
        assertThat(query("SELECT count(*) FROM everything_down.metering.readings_versions"))
                .failure()
                .hasErrorCode(METERSTORE_CATALOG_UNAVAILABLE)
                .hasMessageContaining("Iceberg catalogue 'meterstore'");
    }

    @Test
    void testEmptyTableReadsEmpty()
    {
        // a table with no snapshot has W = the epoch: everything is hot, and there is nothing yet
        assertThat(query("SELECT count(*) FROM readings_versions")).matches("VALUES BIGINT '0'");
        assertThat(query("SELECT count(*) FROM readings")).matches("VALUES BIGINT '0'");
    }
}
