package io.meterstore.archiver.cli;

import com.google.common.collect.ImmutableMap;
import io.meterstore.archiver.cli.TestArchiverCli.Run;
import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchivalSettings;
import io.meterstore.archiver.cycle.TestingClock;
import io.meterstore.core.HotPartition;
import io.meterstore.core.HotTier;
import io.meterstore.core.IcebergCatalogs;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.Reading;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.storage.ColdStorage;
import io.meterstore.storage.ForwardingFileIo;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.TestingDatabase;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingS3Server;
import io.meterstore.testing.TestingWarehouse;
import io.trino.spi.security.ConnectorIdentity;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.OutputFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.Closeable;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.meterstore.archiver.cli.TestArchiverCli.properties;
import static io.meterstore.archiver.cli.TestArchiverCli.run;
import static io.meterstore.archiver.cli.TestArchiverCli.utcDay;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The archiver over S3-compatible object storage (a real S3 server speaking S3 over HTTP): it writes data and metadata
 * files to the bucket through the same file system and {@code fs.*}/{@code s3.*} keys as the connector, and a storage
 * fault fails the cycle without committing anything.
 */
final class TestArchiverObjectStorage
{
    private static final Instant MARCH_5 = Instant.parse("2024-03-05T00:00:00Z");
    private static final HotTier HOT_TIER = new HotTier("metering", new PartitionNaming("readings", Duration.ofDays(1)), Duration.ofSeconds(5));
    private static final TableIdentifier READINGS = TableIdentifier.of("metering", "readings");

    @TempDir
    Path directory;

    @Test
    void testArchiveToS3()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("s3_archive")) {
            TestingWarehouse warehouse = TestingWarehouse.onS3(database, TestingS3Server.shared());
            Path config = write("archiver.properties", properties(database, warehouse));
            TestingClock clock = new TestingClock(MARCH_5.plus(Duration.ofDays(8)));
            assertThat(run(new String[] {"create", "--config", config.toString()}, clock).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            List<Reading> readings = utcDay(MARCH_5);
            try (Connection connection = database.connect()) {
                new ReadingsLoader(HOT_TIER).load(connection, readings);
            }

            Run run = run(new String[] {"archive-once", "--config", config.toString()}, clock);
            assertThat(run.err()).isEmpty();
            assertThat(run.out()).startsWith("metering.readings: archived [1970-01-01T00:00:00Z, 2024-03-06T00:00:00Z): %s rows in 2 files".formatted(readings.size()));

            String bucket = warehouse.bucket().orElseThrow().name();
            withTable(warehouse, table -> {
                assertThat(WatermarkReader.current(table).watermark()).isEqualTo(TieringWatermark.of(MARCH_5.plus(Duration.ofDays(1))));
                assertThat(table.location()).isEqualTo("s3://%s/warehouse/metering/readings".formatted(bucket));
                // the window's winners and the versions they supersede
                List<DataFile> files = dataFiles(table);
                assertThat(files).hasSize(2);
                assertThat(files.stream().mapToLong(DataFile::recordCount).sum()).isEqualTo(readings.size());
                for (DataFile file : files) {
                    assertThat(file.location()).startsWith("s3://%s/warehouse/metering/readings/data/".formatted(bucket));
                    // the object is in the server's bucket, whole: the size the archiver recorded is the size S3 stores
                    Path object = TestingS3Server.shared().objectPath(bucket, file.location().substring("s3://%s/".formatted(bucket).length()));
                    assertThat(Files.size(object)).isEqualTo(file.fileSizeInBytes());
                }
                assertThat(table.io().newInputFile(table.currentSnapshot().manifestListLocation()).exists()).isTrue();
            });

            run = run(new String[] {"check", "--config", config.toString()}, clock);
            assertThat(run.err()).isEmpty();
            assertThat(run.out()).contains("warehouse: ok, 's3://%s/warehouse' is readable".formatted(bucket));
        }
    }

    @Test
    void testS3StoppedDuringArchivalCommitsNothing()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("s3_stopped");
                TestingS3Server server = TestingS3Server.restartable()) {
            TestingWarehouse warehouse = TestingWarehouse.onS3(database, server);
            Path config = write("archiver.properties", properties(database, warehouse));
            TestingClock clock = new TestingClock(MARCH_5.plus(Duration.ofDays(8)));
            assertThat(run(new String[] {"create", "--config", config.toString()}, clock).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            List<Reading> readings = utcDay(MARCH_5);
            try (Connection connection = database.connect()) {
                new ReadingsLoader(HOT_TIER).load(connection, readings);
            }

            // the server stops as the cycle starts its Parquet file: after the table was read and the partition detached
            AtomicBoolean stopped = new AtomicBoolean();
            try (ColdStorage storage = ColdStorage.create(ImmutableMap.<String, String>builder().putAll(warehouse.storageProperties()).put("s3.max-error-retries", "1").buildOrThrow())) {
                FileIO stopping = new ForwardingFileIo(storage.fileSystemFactory().create(ConnectorIdentity.ofUser("test")))
                {
                    @Override
                    public OutputFile newOutputFile(String path)
                    {
                        if (path.contains("/data/") && stopped.compareAndSet(false, true)) {
                            server.stop();
                        }
                        return super.newOutputFile(path);
                    }
                };
                Catalog catalog = IcebergCatalogs.jdbc(warehouse.catalogSpec(), properties -> stopping);
                try {
                    ArchivalCycle cycle = new ArchivalCycle(catalog, READINGS, HOT_TIER, database::connect, ArchivalSettings.DEFAULTS, clock);
                    // the failure names the object it could not write
                    assertThatThrownBy(cycle::archiveOnce).hasMessageContaining("Put failed for bucket [%s] key [warehouse/metering/readings/data/".formatted(warehouse.bucket().orElseThrow().name()));
                }
                finally {
                    ((Closeable) catalog).close();
                }
            }
            assertThat(stopped).isTrue();

            server.start();
            withTable(warehouse, table -> {
                // nothing committed: the watermark has not moved and no data file is referenced
                assertThat(WatermarkReader.current(table).watermark()).isEqualTo(TieringWatermark.of(Instant.EPOCH));
                assertThat(dataFiles(table)).isEmpty();
            });
            try (Connection connection = database.connect()) {
                // the partition is still read by queries (detached or not) until a commit moves the watermark past it
                assertThat(HOT_TIER.partitions(connection)).extracting(HotPartition::name).containsExactly("readings_2024_03_05_0000");
            }

            // the next cycle after the restart completes the window
            Run run = run(new String[] {"archive-once", "--config", config.toString()}, clock);
            assertThat(run.err()).isEmpty();
            assertThat(run.out()).startsWith("metering.readings: archived [1970-01-01T00:00:00Z, 2024-03-06T00:00:00Z): %s rows in 2 files".formatted(readings.size()));
            withTable(warehouse, table -> assertThat(dataFiles(table).stream().mapToLong(DataFile::recordCount).sum()).isEqualTo((long) readings.size()));
        }
    }

    @Test
    void testCheckNamesTheStorageSetting()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("s3_check")) {
            TestingWarehouse warehouse = TestingWarehouse.onS3(database, TestingS3Server.shared());
            String bucket = warehouse.bucket().orElseThrow().name();
            String valid = properties(database, warehouse);
            TestingClock clock = new TestingClock(MARCH_5);
            assertThat(run(new String[] {"create", "--config", write("create.properties", valid).toString()}, clock).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);

            Path wrongSecret = write("secret.properties", valid.replace("s3.aws-secret-key=" + TestingS3Server.SECRET_KEY, "s3.aws-secret-key=not-the-secret") + "s3.max-error-retries=1\n");
            Run run = run(new String[] {"check", "--config", wrongSecret.toString()}, clock);
            assertThat(run.exitCode()).as(run.err()).isEqualTo(ArchiverCli.EXIT_FAILED);
            assertThat(run.err()).contains("warehouse: cannot list 's3://%s/warehouse'".formatted(bucket), "s3.endpoint, s3.aws-access-key and s3.aws-secret-key");
            // the secret is never printed
            assertThat(run.out() + run.err()).doesNotContain("not-the-secret", TestingS3Server.SECRET_KEY);

            Path missingBucket = write("bucket.properties", valid.replace("s3://" + bucket + "/", "s3://no-such-bucket-" + ProcessHandle.current().pid() + "/") + "s3.max-error-retries=1\n");
            run = run(new String[] {"check", "--config", missingBucket.toString()}, clock);
            assertThat(run.exitCode()).as(run.err()).isEqualTo(ArchiverCli.EXIT_FAILED);
            assertThat(run.err()).contains("warehouse: cannot list 's3://no-such-bucket-", "check meterstore.iceberg.warehouse (its bucket must exist)");

            int closedPort;
            try (ServerSocket socket = new ServerSocket(0)) {
                closedPort = socket.getLocalPort();
            }
            Path restDown = write("rest.properties", valid + "meterstore.iceberg.catalog-type=REST\nmeterstore.iceberg.rest-catalog.uri=http://127.0.0.1:%s\n".formatted(closedPort));
            run = run(new String[] {"check", "--config", restDown.toString()}, clock);
            assertThat(run.exitCode()).as(run.err()).isEqualTo(ArchiverCli.EXIT_FAILED);
            assertThat(run.err()).contains("catalogue: cannot open the Iceberg catalogue 'meterstore' in 'http://127.0.0.1:%s'".formatted(closedPort),
                    "check meterstore.iceberg.rest-catalog.uri and that the REST catalogue is running");
        }
    }

    private interface TableCheck
    {
        void check(Table table)
                throws IOException;
    }

    private static void withTable(TestingWarehouse warehouse, TableCheck check)
            throws IOException
    {
        Catalog catalog = warehouse.catalog();
        try {
            check.check(catalog.loadTable(READINGS));
        }
        finally {
            ((Closeable) catalog).close();
        }
    }

    private static List<DataFile> dataFiles(Table table)
            throws IOException
    {
        List<DataFile> files = new ArrayList<>();
        if (table.currentSnapshot() == null) {
            return files;
        }
        try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
            tasks.forEach(task -> files.add(task.file()));
        }
        return files;
    }

    private Path write(String name, String content)
            throws IOException
    {
        return Files.writeString(directory.resolve(name), content);
    }
}
