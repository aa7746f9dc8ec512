package io.meterstore.trino;

import com.google.common.collect.ImmutableMap;
import io.meterstore.core.IcebergTableSpec;
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

import java.util.HashMap;
import java.util.Map;

import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_CATALOG_UNAVAILABLE;
import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_POSTGRES_UNAVAILABLE;
import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_TABLE_NOT_FOUND;
import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_UNSUPPORTED_TABLE_LAYOUT;
import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_WATERMARK_MISSING;
import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;
import static org.assertj.core.api.Assertions.assertThat;

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
    void testUnknownTable()
    {
        assertThat(query("SELECT count(*) FROM readings_nope"))
                .failure()
                .hasErrorCode(METERSTORE_TABLE_NOT_FOUND)
                .hasMessageContaining("Table 'metering.readings_nope' does not exist")
                .hasMessageContaining("meterstore.tables");
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
