package io.meterstore.trino;

import com.google.common.collect.ImmutableMap;
import com.google.common.collect.Maps;
import com.google.inject.Injector;
import com.sun.net.httpserver.HttpServer;
import io.airlift.bootstrap.Bootstrap;
import io.meterstore.core.WatermarkReader;
import io.meterstore.storage.ColdStorageModule;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.trino.filesystem.Location;
import io.trino.filesystem.TrinoFileSystem;
import io.trino.filesystem.TrinoFileSystemFactory;
import io.trino.plugin.base.ConnectorContextModule;
import io.trino.spi.security.ConnectorIdentity;
import io.trino.testing.QueryRunner;
import io.trino.testing.TestingConnectorContext;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The cold tier's storage takes Trino's standard file system configuration (fs.s3.enabled and s3.*), and
 * local {@code file:} warehouses keep working with it or without it. No S3 server runs here: a loopback HTTP
 * server stands in for one, to show where the requests go and how they are signed.
 */
final class TestMeterstoreFileSystems
{
    private static final String ACCESS_KEY = "meterstore-access-key";
    private static final String REGION = "eu-central-1";

    @Test
    void testLocalWarehouseWorksWithS3Configured()
            throws Exception
    {
        TestingWarehouse warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("filesystems"));
        Table table = TestingMeterstoreTables.createTables(warehouse);
        long loaded;
        try (Connection connection = warehouse.database().connect()) {
            loaded = new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, ReadingsGenerator.builder()
                    .seed(41)
                    .meters(4)
                    .startDay(LocalDate.of(2026, 11, 2))
                    .days(3)
                    .build());
        }
        TestingArchival.archiveWindows(warehouse, 1);
        table.refresh();
        Instant watermark = WatermarkReader.current(table).watermark().instant();

        // the older spelling of fs.s3.enabled, as many Trino catalogs still have it
        Map<String, String> s3 = ImmutableMap.<String, String>builder()
                .putAll(Maps.filterKeys(s3Properties("http://127.0.0.1:1"), key -> !key.equals("fs.s3.enabled")))
                .put("fs.native-s3.enabled", "true")
                .buildOrThrow();
        try (QueryRunner queryRunner = MeterstoreQueryRunner.builder(warehouse).withoutIceberg().withCatalogOverrides(s3).build()) {
            assertThat(queryRunner.execute("SELECT count(*) FROM readings_versions").getOnlyValue()).isEqualTo(loaded);
            // the archived day is read from the local warehouse's Parquet files
            long cold = (long) queryRunner.execute("SELECT count(*) FROM readings_versions WHERE \"from\" < from_iso8601_timestamp('%s')".formatted(watermark)).getOnlyValue();
            assertThat(cold).isPositive().isEqualTo(coldRecords(table));
        }
    }

    @Test
    void testS3LocationsReachTheConfiguredEndpoint()
            throws Exception
    {
        List<String> requests = new CopyOnWriteArrayList<>();
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            requests.add(exchange.getRequestMethod() + " " + exchange.getRequestURI().getPath() + " " + exchange.getRequestHeaders().getFirst("Authorization"));
            exchange.sendResponseHeaders(404, -1);
            exchange.close();
        });
        server.start();
        try {
            TrinoFileSystem fileSystem = fileSystem(s3Properties("http://127.0.0.1:" + server.getAddress().getPort()));
            assertThat(fileSystem.newInputFile(Location.of("s3://warehouse/metering/readings/data/file.parquet")).exists()).isFalse();
            // path-style addressing against the configured endpoint, signed with the configured key for the configured region
            assertThat(requests).isNotEmpty().allSatisfy(request -> assertThat(request)
                    .startsWith("HEAD /warehouse/metering/readings/data/file.parquet ")
                    .contains("Credential=%s/".formatted(ACCESS_KEY))
                    .contains("/%s/s3/aws4_request".formatted(REGION)));

            // file: locations are still read from the root
            Path file = Files.createTempFile("meterstore", ".parquet");
            try {
                assertThat(fileSystem.newInputFile(Location.of(file.toUri().toString())).exists()).isTrue();
            }
            finally {
                Files.delete(file);
            }
        }
        finally {
            server.stop(0);
        }
    }

    @Test
    void testLocalFileSystemAsTrinoConfiguresIt()
            throws IOException
    {
        Path file = Files.createTempFile("meterstore", ".parquet");
        try {
            Location location = Location.of(file.toUri().toString());
            TrinoFileSystem local = fileSystem(ImmutableMap.of("fs.local.enabled", "true", "local.location", "/"));
            assertThat(local.newInputFile(location).exists()).isTrue();
            // configured without it, file: locations are refused
            TrinoFileSystem s3Only = fileSystem(ImmutableMap.<String, String>builder()
                    .putAll(s3Properties("http://127.0.0.1:1"))
                    .put("fs.local.enabled", "false")
                    .buildOrThrow());
            assertThatThrownBy(() -> s3Only.newInputFile(location).exists())
                    .hasMessageContaining("No file system is configured for location");
        }
        finally {
            Files.delete(file);
        }
    }

    @Test
    void testFileSystemsThePluginDoesNotShipAreRefused()
    {
        for (String property : List.of("fs.azure.enabled", "fs.native-azure.enabled", "fs.gcs.enabled", "fs.native-gcs.enabled", "fs.hadoop.enabled", "fs.cache.enabled")) {
            assertThatThrownBy(() -> fileSystem(ImmutableMap.of(property, "true")))
                    .hasMessageContaining("remove '%s' from the configuration".formatted(property));
        }
    }

    private static Map<String, String> s3Properties(String endpoint)
    {
        return ImmutableMap.<String, String>builder()
                .put("fs.s3.enabled", "true")
                .put("s3.endpoint", endpoint)
                .put("s3.region", REGION)
                .put("s3.path-style-access", "true")
                .put("s3.aws-access-key", ACCESS_KEY)
                .put("s3.aws-secret-key", "meterstore-secret-key")
                .put("s3.max-error-retries", "1")
                .buildOrThrow();
    }

    /** The file system the connector's modules bind for these catalog properties. */
    private static TrinoFileSystem fileSystem(Map<String, String> properties)
    {
        TestingConnectorContext context = new TestingConnectorContext();
        Injector injector = new Bootstrap(
                new ConnectorContextModule("test", context),
                new ColdStorageModule())
                .doNotInitializeLogging()
                .disableSystemProperties()
                .quiet()
                .setRequiredConfigurationProperties(properties)
                .initialize();
        return injector.getInstance(TrinoFileSystemFactory.class).create(ConnectorIdentity.ofUser("test"));
    }

    private static long coldRecords(Table table)
    {
        return Long.parseLong(table.currentSnapshot().summary().get("total-records"));
    }
}
