package io.meterstore.trino;

import com.google.common.base.Throwables;
import com.google.common.collect.ImmutableMap;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.ReadingsOracle;
import io.meterstore.testing.ReadingsOracle.View;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingS3Server;
import io.meterstore.testing.TestingWarehouse;
import io.trino.testing.AbstractTestQueryFramework;
import io.trino.testing.MaterializedRow;
import io.trino.testing.QueryRunner;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.sql.Connection;
import java.time.Instant;
import java.time.LocalDate;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;
import static io.meterstore.trino.TestingInserts.timestamp;
import static io.meterstore.trino.base.MeterstoreConfig.COORDINATOR_FILE_CACHE_PROPERTY;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_COLD_READ_FAILED;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The S3 server holding the cold tier stopped under a query: the query fails naming the object it could not read, never
 * a short answer, and with the server back the same query is exact. Wrong credentials or a missing bucket fail the
 * first query at once, naming the settings. The server is this class's own (the other test
 * classes share theirs), stopped and started on the same port and data.
 */
final class TestMeterstoreObjectStorageRestart
        extends AbstractTestQueryFramework
{
    private TestingS3Server server;
    private TestingWarehouse warehouse;
    private ReadingsGenerator generator;

    @Override
    protected QueryRunner createQueryRunner()
            throws Exception
    {
        server = TestingS3Server.restartable();
        warehouse = TestingWarehouse.onS3(TestingPostgresServer.shared().createDatabase("s3_restart"), server);
        TestingMeterstoreTables.createTables(warehouse);
        generator = ReadingsGenerator.builder().seed(43).meters(4).startDay(LocalDate.of(2026, 3, 2)).days(3).correctionsFraction(0.02).build();
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, generator);
        }
        TestingArchival.archiveWindows(warehouse, 2);
        return MeterstoreQueryRunner.builder(warehouse)
                .withoutIceberg()
                // one retry, so a stopped server fails the read in a moment rather than after the SDK's ten; and data
                // files read as a worker reads them, from the bucket, where this coordinator would answer from memory
                .withCatalogOverrides(ImmutableMap.of("s3.max-error-retries", "1", COORDINATOR_FILE_CACHE_PROPERTY, "false"))
                .build();
    }

    @AfterAll
    void stopServer()
    {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void testS3StoppedDuringColdScan()
    {
        TieringWatermark watermark = WatermarkReader.current(warehouse.catalog().loadTable(TableIdentifier.of(SCHEMA, TestingMeterstoreTables.TABLE))).watermark();
        String sql = "SELECT count(*), sum(value) FROM readings_versions WHERE \"from\" < %s".formatted(timestamp(watermark.instant()));
        ReadingsOracle.Summary expected = ReadingsOracle.of(generator).summary(View.VERSIONS, ReadingsOracle.fromRange(Instant.EPOCH, watermark.instant()));
        assertThat(expected.count()).isPositive();
        assertExact(sql, expected);

        // the plan comes from the metadata and manifests the first query read; the data files are only in the bucket
        server.stop();
        try {
            assertThat(query(sql))
                    .failure()
                    .hasErrorCode(METERSTORE_COLD_READ_FAILED)
                    .hasMessageContaining("data file 's3://%s/warehouse/metering/readings/data/".formatted(warehouse.bucket().orElseThrow().name()))
                    .hasMessageContaining("check that the storage is reachable (meterstore.iceberg.warehouse (its bucket must exist), s3.endpoint, s3.aws-access-key and s3.aws-secret-key) and run the query again");
        }
        finally {
            server.start();
        }

        // with the server back, the same query answers in full
        assertExact(sql, expected);
    }

    @Test
    void testWrongStorageSettingsFailTheFirstQueryNamingThem()
    {
        Map<String, String> wrongKey = new HashMap<>(MeterstoreQueryRunner.catalogProperties(warehouse));
        wrongKey.put("s3.aws-secret-key", "not-the-" + TestingS3Server.SECRET_KEY);
        wrongKey.put("s3.max-error-retries", "1");
        getQueryRunner().createCatalog("s3_wrong_key", "meterstore", wrongKey);
        Map<String, String> noBucket = new HashMap<>(MeterstoreQueryRunner.catalogProperties(warehouse));
        noBucket.put("meterstore.iceberg.warehouse", "s3://no-such-bucket-4f2a/warehouse");
        noBucket.put("s3.max-error-retries", "1");
        getQueryRunner().createCatalog("s3_no_bucket", "meterstore", noBucket);

        // at once, not after Iceberg retried reading the table's metadata file for minutes, and never showing the key
        for (String catalog : List.of("s3_wrong_key", "s3_no_bucket")) {
            assertThat(query("SELECT count(*) FROM %s.%s.readings_versions".formatted(catalog, SCHEMA)))
                    .failure()
                    .hasErrorCode(METERSTORE_COLD_READ_FAILED)
                    .hasMessageContaining("Cannot list the warehouse 's3://")
                    .hasMessageContaining("check meterstore.iceberg.warehouse (its bucket must exist), s3.endpoint, s3.aws-access-key and s3.aws-secret-key")
                    .satisfies(failure -> assertThat(Throwables.getStackTraceAsString(failure)).doesNotContain(TestingS3Server.SECRET_KEY));
        }
    }

    private void assertExact(String sql, ReadingsOracle.Summary expected)
    {
        MaterializedRow row = computeActual(sql).getMaterializedRows().getFirst();
        assertThat((long) row.getField(0)).isEqualTo(expected.count());
        assertThat((BigDecimal) row.getField(1)).isEqualByComparingTo(expected.sum());
    }
}
