package io.meterstore.testing;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * Iceberg's reference REST catalogue server ({@code RESTCatalogServer} from iceberg-open-api's test fixtures, the Iceberg
 * of Trino's BOM) over a warehouse in a {@link TestingS3Server} bucket, backed by the JDBC catalogue in the warehouse's
 * own database. It runs as a child process ({@link ServerProcess}) and writes table metadata itself, with Iceberg's
 * S3FileIO, as a production REST catalogue does.
 */
public final class TestingRestCatalog
        implements AutoCloseable
{
    /** The server's main class; docker/iceberg-rest/Dockerfile runs the same. */
    public static final String SERVER_CLASS = "org.apache.iceberg.rest.RESTCatalogServer";

    private final TestingWarehouse warehouse;
    private final int port;
    private final ServerProcess process;

    private TestingRestCatalog(TestingWarehouse warehouse, int port, ServerProcess process)
    {
        this.warehouse = requireNonNull(warehouse, "warehouse is null");
        this.port = port;
        this.process = requireNonNull(process, "process is null");
    }

    /** A REST catalogue for {@code warehouse}, which must be in a bucket ({@link TestingWarehouse#onS3}). */
    public static TestingRestCatalog start(TestingWarehouse warehouse)
    {
        checkArgument(warehouse.bucket().isPresent(), "The REST catalogue serves a warehouse in a bucket");
        TestingS3Server s3 = warehouse.bucket().get().server();
        int port = ServerProcess.freePort();
        Path log;
        try {
            log = Files.createTempFile("meterstore-rest-catalog-", ".log");
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        // RESTCatalogServer reads its backing catalogue's properties from CATALOG_* variables: '__' is '-', '_' is '.'
        ImmutableMap<String, String> environment = ImmutableMap.<String, String>builder()
                .put("CATALOG_REST_PORT", String.valueOf(port))
                .put("CATALOG_URI", warehouse.database().jdbcUrl())
                .put("CATALOG_JDBC_USER", warehouse.database().user())
                .put("CATALOG_WAREHOUSE", warehouse.location())
                .put("CATALOG_IO__IMPL", "org.apache.iceberg.aws.s3.S3FileIO")
                .put("CATALOG_S3_ENDPOINT", s3.endpoint())
                .put("CATALOG_S3_PATH__STYLE__ACCESS", "true")
                .put("CATALOG_S3_ACCESS__KEY__ID", TestingS3Server.ACCESS_KEY)
                .put("CATALOG_S3_SECRET__ACCESS__KEY", TestingS3Server.SECRET_KEY)
                .put("CATALOG_CLIENT_REGION", TestingS3Server.REGION)
                // checksums only where S3 requires them: S3Proxy 2.6 does not read the trailing checksums newer SDKs send
                .put("AWS_REQUEST_CHECKSUM_CALCULATION", "WHEN_REQUIRED")
                .put("AWS_RESPONSE_CHECKSUM_VALIDATION", "WHEN_REQUIRED")
                .buildOrThrow();
        ServerProcess process = ServerProcess.start("iceberg-rest", "servers/iceberg-rest.classpath", ImmutableList.of(), SERVER_CLASS,
                ImmutableList.of(), environment, port, log);
        return new TestingRestCatalog(warehouse, port, process);
    }

    public String uri()
    {
        return "http://127.0.0.1:" + port;
    }

    /** The warehouse with its tables in this catalogue. */
    public TestingWarehouse warehouse()
    {
        return warehouse.withRestCatalog(uri());
    }

    @Override
    public void close()
    {
        process.close();
    }
}
