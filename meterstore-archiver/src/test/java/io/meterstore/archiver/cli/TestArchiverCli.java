package io.meterstore.archiver.cli;

import com.google.common.collect.ImmutableMap;
import io.meterstore.archiver.cycle.Failpoints;
import io.meterstore.archiver.cycle.TestingClock;
import io.meterstore.archiver.lease.ArchiverLease;
import io.meterstore.archiver.maintenance.MaintenanceCommand;
import io.meterstore.core.ErasureLog;
import io.meterstore.core.HotPartition;
import io.meterstore.core.HotTier;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.LocalFileIo;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsSchema;
import io.meterstore.core.ReadingsTableCreation;
import io.meterstore.core.TableShape;
import io.meterstore.core.TieringWatermark;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.TestingDatabase;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.stream.Collectors.joining;
import static org.assertj.core.api.Assertions.assertThat;

final class TestArchiverCli
{
    private static final Instant MARCH_5 = Instant.parse("2024-03-05T00:00:00Z");
    private static final String DEFAULT_SHAPE = "time_model=interval; reading_id=malo_id; identity_columns=; attribute_columns=; checked_columns=malo_id:MALO,melo_id:MELO";
    private static final HotTier HOT_TIER = new HotTier("metering", new PartitionNaming("readings", Duration.ofDays(1)), Duration.ofSeconds(5));

    @TempDir
    Path directory;

    @Test
    void testUsage()
    {
        Run run = run(new String[] {"archive-once"});
        assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_USAGE);
        assertThat(run.err()).startsWith("'archive-once' needs --config <file.properties>%nUsage: archiver <command> --config <file.properties>".formatted());
        assertThat(run.err()).contains("  check ", "  status ", "  run ");

        // each usage error says what is wrong before the usage
        assertThat(run(new String[] {}).err()).startsWith("No command given%n".formatted());
        assertThat(run(new String[] {"status", "--config=archiver.properties"}).err()).startsWith("Write '--config archiver.properties', with a space%n".formatted());
        assertThat(run(new String[] {"status", "--config"}).err()).startsWith("--config needs the configuration file%n".formatted());
        run = run(new String[] {"expire", "--config", "archiver.properties", "--dry-run"});
        assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_USAGE);
        assertThat(run.err()).startsWith("'expire' takes no options: remove --dry-run%n".formatted());

        run = run(new String[] {"archive-twice", "--config", "archiver.properties"});
        assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_USAGE);
        assertThat(run.err()).startsWith("Unknown command 'archive-twice'");
    }

    @Test
    void testUnknownFailpointIsRefusedBeforeAnyCommand()
            throws IOException, InterruptedException
    {
        // the test hook armed with a name no point has would never stop the process: refused before the configuration is read
        ProcessRun run = runProcess(List.of("-D%s=after-detatch".formatted(Failpoints.PROPERTY)), "check", directory.resolve("missing.properties"));
        assertThat(run.exitCode()).as(run.output()).isEqualTo(ArchiverCli.EXIT_USAGE);
        assertThat(run.output()).startsWith("Unknown failpoint 'after-detatch' in -Dmeterstore.failpoint: use one of [after-detach, mid-stream,");
    }

    @Test
    void testOneShotCommandPrintsItsAnswerWithoutLibraryLogLines()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("cli_quiet")) {
            TestingWarehouse warehouse = TestingWarehouse.create(database);
            Path config = write("quiet.properties", properties(database, warehouse));
            assertThat(run(new String[] {"create", "--config", config.toString()}).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);

            // as bin/archiver runs it: a JVM of its own, whose console shows both streams; Iceberg logs each table load at INFO
            ProcessRun run = runProcess(List.of(), "status", config);
            assertThat(run.output()).contains("metering.readings: ");
            assertThat(run.output()).doesNotContain("INFO:").doesNotContain("org.apache.iceberg");
        }
    }

    @Test
    void testSignalShutsTheServiceDownAsTheHttpRequestDoes()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("cli_signal")) {
            TestingWarehouse warehouse = TestingWarehouse.create(database);
            Path config = write("signal.properties", properties(database, warehouse) + "http-server.http.port=0\n");
            assertThat(run(new String[] {"create", "--config", config.toString()}).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);

            // as docker stop or Kubernetes ends it: SIGTERM to the service's JVM
            Process process = startProcess(List.of(), "run", config);
            StringBuilder output = new StringBuilder();
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream(), UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null && !line.startsWith("Archiver serving on")) {
                    output.append(line).append('\n');
                }
                assertThat(line).as(output.toString()).isNotNull();
                // SIGTERM; Process.destroy() would also close the streams the rest of the output comes on
                assertThat(process.toHandle().destroy()).isTrue();
                reader.lines().forEach(rest -> output.append(rest).append('\n'));
            }
            finally {
                process.destroyForcibly();
            }
            assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
            // drained while still logging, then ended as a shutdown over HTTP ends it
            assertThat(process.exitValue()).as(output.toString()).isEqualTo(0);
            assertThat(output.toString()).contains("Shutdown requested", "Drained: no cycle is running");
        }
    }

    private static ProcessRun runProcess(List<String> jvmOptions, String command, Path config)
            throws IOException, InterruptedException
    {
        Process process = startProcess(jvmOptions, command, config);
        String output = new String(process.getInputStream().readAllBytes(), UTF_8);
        return new ProcessRun(process.waitFor(), output);
    }

    /** The archiver's command line in a JVM of its own, as bin/archiver starts it; its console shows both streams. */
    private static Process startProcess(List<String> jvmOptions, String command, Path config)
            throws IOException
    {
        List<String> arguments = new ArrayList<>();
        arguments.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        arguments.addAll(jvmOptions);
        arguments.addAll(List.of("-cp", System.getProperty("java.class.path"), ArchiverCli.class.getName(), command, "--config", config.toString()));
        return new ProcessBuilder(arguments)
                .redirectErrorStream(true)
                .start();
    }

    private record ProcessRun(int exitCode, String output) {}

    @Test
    void testInvalidConfiguration()
            throws IOException
    {
        Path missing = directory.resolve("missing.properties");
        Run run = run(new String[] {"archive-once", "--config", missing.toString()});
        assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_USAGE);
        assertThat(run.err()).isEqualTo("Invalid configuration in '%s': the file does not exist%n".formatted(missing));

        // every command, 'run' included, refuses a misspelt property and names the right one
        Path typo = write("typo.properties", """
                meterstore.postgresql.url=jdbc:postgresql://localhost:5432/metering
                meterstore.postgresql.user=archiver
                meterstore.iceberg.warehouse=file:///tmp/warehouse
                meterstore.setlement-lag=10d
                """);
        for (String command : List.of("create", "check", "status", "archive-once", "run")) {
            run = run(new String[] {command, "--config", typo.toString()});
            assertThat(run.exitCode()).as(command).isEqualTo(ArchiverCli.EXIT_USAGE);
            assertThat(run.err()).as(command).isEqualTo("""
                    Invalid configuration in '%s':
                      Configuration property 'meterstore.setlement-lag' was not used. Did you mean to use 'meterstore.settlement-lag', 'meterstore.schema' or 'meterstore.tables'?
                    """.formatted(typo));
        }

        Path required = write("required.properties", """
                meterstore.postgresql.user=archiver
                meterstore.iceberg.warehouse=file:///tmp/warehouse
                meterstore.archival-step=1d
                meterstore.schedule-interval=1m
                """);
        run = run(new String[] {"check", "--config", required.toString()});
        assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_USAGE);
        assertThat(run.err()).contains("meterstore.postgresql.url", "must not be null");
        // the file's correct properties are not called unused because another one is missing
        assertThat(run.err()).doesNotContain("was not used");

        // the service's own properties are accepted, and validated, by every command
        Path service = write("service.properties", """
                meterstore.postgresql.url=jdbc:postgresql://localhost:5432/metering
                meterstore.postgresql.user=archiver
                meterstore.iceberg.warehouse=file:///tmp/warehouse
                meterstore.schedule-interval=10ms
                http-server.http.port=8081
                node.environment=production
                log.levels-file=%s
                """.formatted(write("log.properties", "io.meterstore=DEBUG\n")));
        run = run(new String[] {"check", "--config", service.toString()});
        assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_USAGE);
        assertThat(run.err()).startsWith("Invalid configuration in '%s':%n".formatted(service));
        assertThat(run.err()).contains("meterstore.schedule-interval", "must be greater than or equal to 1s");
        assertThat(run.err().lines()).hasSize(2);

        // the service would refuse to start without its levels file: so does every command
        Path levels = write("levels.properties", """
                meterstore.postgresql.url=jdbc:postgresql://localhost:5432/metering
                meterstore.postgresql.user=archiver
                meterstore.iceberg.warehouse=file:///tmp/warehouse
                log.levels-file=/nonexistent/levels.properties
                """);
        run = run(new String[] {"check", "--config", levels.toString()});
        assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_USAGE);
        assertThat(run.err()).isEqualTo("Invalid configuration in '%s': log.levels-file names '/nonexistent/levels.properties', which does not exist%n".formatted(levels));
    }

    @Test
    void testSettlementLagBelowStepIsRefused()
            throws IOException
    {
        assertRefused("meterstore.settlement-lag=12h\n", List.of("check", "status", "archive-once", "run"),
                "meterstore.settlement-lag must be at least meterstore.archival-step");
        // the reader grace is the connector's key too, the snapshot retention the archiver's own: the check spans both
        assertRefused("meterstore.reader-grace=2h\nmeterstore.snapshot-retention=1h\n", List.of("check", "run"),
                "meterstore.snapshot-retention must be at least meterstore.reader-grace");
    }

    @Test
    void testStepOrTableThatCannotNamePartitionsIsRefused()
            throws IOException
    {
        // refused before anything runs, naming the property, as every other configuration error is
        List<String> commands = List.of("check", "create", "status", "archive-once", "run");
        assertRefused("meterstore.archival-step=7m\n", commands, "meterstore.archival-step must be whole minutes that divide a day (15m, 1h, 6h), or whole days");
        assertRefused("meterstore.tables=readings,Gas_Readings\n", commands, "meterstore.tables must name each table in lowercase letters, digits and underscores, at most 47 characters");
    }

    @Test
    void testValueThatCannotBeReadSaysHowToWriteIt()
            throws IOException
    {
        List<String> commands = List.of("check", "run");
        assertRefused("meterstore.schedule-interval=1 hour\n", commands, "  Invalid value '1 hour' for property 'meterstore.schedule-interval': write a duration such as 30s, 15m, 1h or 7d\n");
        assertRefused("meterstore.compaction-target-file-size=lots\n", commands, "  Invalid value 'lots' for property 'meterstore.compaction-target-file-size': write a size such as 512kB, 64MB or 1GB\n");
        // the lock timeout under its name and its older one
        assertRefused("meterstore.lock-timeout=5s\nmeterstore.postgresql.lock-timeout=10s\n", commands,
                "'meterstore.postgresql.lock-timeout' is set twice, under that name and under an older name of it: keep only 'meterstore.postgresql.lock-timeout'\n");
        Path config = write("refused.properties", """
                meterstore.postgresql.url=jdbc:postgresql://localhost:5432/metering
                meterstore.postgresql.user=archiver
                meterstore.iceberg.warehouse=file:///tmp/warehouse
                meterstore.archival-step=1 day
                """);
        Run run = run(new String[] {"check", "--config", config.toString()});
        // one line for the one error: no Java method, and the file's other properties not called unused
        assertThat(run.err()).isEqualTo("""
                Invalid configuration in '%s':
                  Invalid value '1 day' for property 'meterstore.archival-step': write a duration such as 30s, 15m, 1h or 7d
                """.formatted(config));
    }

    // a configuration of the required keys and {@code lines}, which each of {@code commands} refuses with a usage error naming what is wrong
    private void assertRefused(String lines, List<String> commands, String message)
            throws IOException
    {
        Path config = write("refused.properties", """
                meterstore.postgresql.url=jdbc:postgresql://localhost:5432/metering
                meterstore.postgresql.user=archiver
                meterstore.iceberg.warehouse=file:///tmp/warehouse
                """ + lines);
        for (String command : commands) {
            Run run = run(new String[] {command, "--config", config.toString()});
            assertThat(run.exitCode()).as(command).isEqualTo(ArchiverCli.EXIT_USAGE);
            assertThat(run.err()).as(command).contains(message);
        }
    }

    @Test
    void testWarehouseTheArchiverCannotWriteIsRefused()
            throws IOException
    {
        // an S3 warehouse needs the S3 file system: without it nothing could write there, and nothing is touched
        Path s3 = write("s3.properties", """
                meterstore.postgresql.url=jdbc:postgresql://localhost:5432/metering
                meterstore.postgresql.user=archiver
                meterstore.iceberg.warehouse=s3://meterstore/warehouse
                """);
        for (String command : List.of("create", "check", "status", "archive-once", "run")) {
            Run run = run(new String[] {command, "--config", s3.toString()});
            assertThat(run.exitCode()).as(command).isEqualTo(ArchiverCli.EXIT_USAGE);
            assertThat(run.err()).as(command).isEqualTo("""
                    Invalid configuration in '%s':
                      'meterstore.iceberg.warehouse' = 's3://meterstore/warehouse' is on S3 storage, which is not enabled: set fs.s3.enabled=true and the s3.* properties (s3.endpoint, s3.region, s3.aws-access-key, s3.aws-secret-key) as in Trino's catalog
                    """.formatted(s3));
        }
        assertThat(Path.of("s3:")).doesNotExist();
    }

    @Test
    void testWarehouseThatDoesNotExistIsRefusedBeforeAnythingIsCreated()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("cli_no_warehouse")) {
            // a typo, or a volume that is not mounted: the archiver would have made a warehouse of its own there
            String warehouse = directory.resolve("unmounted/warehouse").toUri().toString();
            Path config = write("archiver.properties", """
                    meterstore.postgresql.url=%s
                    meterstore.postgresql.user=%s
                    meterstore.iceberg.warehouse=%s
                    http-server.http.port=0
                    """.formatted(database.jdbcUrl(), database.user(), warehouse));
            String refusal = "Warehouse '%s' does not exist: create the directory (or mount the volume) or fix meterstore.iceberg.warehouse".formatted(warehouse);

            Run check = run(new String[] {"check", "--config", config.toString()}, new TestingClock(MARCH_5));
            assertThat(check.exitCode()).isEqualTo(ArchiverCli.EXIT_FAILED);
            assertThat(check.err()).contains("warehouse: " + refusal + "\n");
            Run create = run(new String[] {"create", "--config", config.toString()}, new TestingClock(MARCH_5));
            assertThat(create.exitCode()).isEqualTo(ArchiverCli.EXIT_FAILED);
            assertThat(create.err()).isEqualTo(refusal + "\n");
            Run serve = run(new String[] {"run", "--config", config.toString()}, new TestingClock(MARCH_5));
            assertThat(serve.exitCode()).isEqualTo(ArchiverCli.EXIT_FAILED);
            assertThat(serve.err()).isEqualTo("Cannot start the archiver: " + refusal + "\n");

            // nothing was created in either tier, nor the directory
            assertThat(relations(database)).isEmpty();
            assertThat(directory.resolve("unmounted")).doesNotExist();
        }
    }

    @Test
    void testCreateThenArchiveOnce()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("cli_archive")) {
            TestingWarehouse warehouse = TestingWarehouse.create(database);
            Path config = write("archiver.properties", properties(database, warehouse));
            TestingClock clock = new TestingClock(MARCH_5.plus(Duration.ofDays(8)));

            // before 'create' there is nothing to archive into: the failure says what to do
            Run run = run(new String[] {"archive-once", "--config", config.toString()}, clock);
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_FAILED);
            assertThat(run.err()).isEqualTo("metering.readings: failed: Iceberg table 'metering.readings' does not exist: run the archiver's 'create' command first%n".formatted());

            run = run(new String[] {"create", "--config", config.toString()}, clock);
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            assertThat(run.out()).isEqualTo("metering.readings: created (PostgreSQL table \"metering\".\"readings\", Iceberg table 'metering.readings'), shape %s%n".formatted(DEFAULT_SHAPE));
            // idempotent, and says so
            run = run(new String[] {"create", "--config", config.toString()}, clock);
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            assertThat(run.out()).isEqualTo("metering.readings: exists (PostgreSQL table \"metering\".\"readings\", Iceberg table 'metering.readings'), shape %s%n".formatted(DEFAULT_SHAPE));
            // with the schema's erasure log, empty
            try (Connection connection = database.connect()) {
                assertThat(ErasureLog.exists(connection, "metering")).isTrue();
                assertThat(ErasureLog.erasures(connection, "metering", "readings")).isEmpty();
            }

            List<Reading> readings = utcDay(MARCH_5);
            try (Connection connection = database.connect()) {
                new ReadingsLoader(HOT_TIER).load(connection, readings);
            }

            run = run(new String[] {"archive-once", "--config", config.toString()}, clock);
            assertThat(run.err()).isEmpty();
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            // the day's winners and the versions they supersede, in a file each; then the partitions of now's two days ahead
            assertThat(run.out()).matches("metering\\.readings: archived \\[1970-01-01T00:00:00Z, 2024-03-06T00:00:00Z\\): %s rows in 2 files \\(\\d+ bytes\\), watermark 2024-03-06T00:00:00Z\\R".formatted(readings.size())
                    + "metering\\.readings: created 2 partitions ahead of now: readings_2024_03_13_0000, readings_2024_03_14_0000\\R");

            run = run(new String[] {"archive-once", "--config", config.toString()}, clock);
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            assertThat(run.out()).isEqualTo("metering.readings: idle, nothing closed to archive, watermark 2024-03-06T00:00:00Z%n".formatted());

            // an hour later the headroom reaches into a third day
            clock.advance(Duration.ofHours(1));
            // but while another archiver holds the lease, archive-once changes nothing, as it says: that archiver creates it
            try (Connection holder = database.connect();
                    ArchiverLease lease = ArchiverLease.tryAcquire(holder, "metering", "readings", Duration.ZERO).orElseThrow()) {
                run = run(new String[] {"archive-once", "--config", config.toString()}, clock);
                assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
                assertThat(run.out()).startsWith("metering.readings: lease contended").doesNotContain("created");
            }
            run = run(new String[] {"archive-once", "--config", config.toString()}, clock);
            assertThat(run.out()).isEqualTo("""
                    metering.readings: idle, nothing closed to archive, watermark 2024-03-06T00:00:00Z, dropped readings_2024_03_05_0000
                    metering.readings: created 1 partition ahead of now: readings_2024_03_15_0000
                    """);

            Catalog catalog = warehouse.catalog();
            try {
                Table table = catalog.loadTable(TableIdentifier.of(Namespace.of("metering"), "readings"));
                assertThat(TieringWatermark.fromSummary(table.currentSnapshot().summary())).contains(TieringWatermark.of(MARCH_5.plus(Duration.ofDays(1))));
            }
            finally {
                ((Closeable) catalog).close();
            }
            try (Connection connection = database.connect()) {
                assertThat(HOT_TIER.partitions(connection)).extracting(HotPartition::name)
                        .containsExactly("readings_2024_03_13_0000", "readings_2024_03_14_0000", "readings_2024_03_15_0000");
            }
        }
    }

    @Test
    void testTableCreatedBeyondTheConfigurationIsCheckedAndArchived()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("cli_created")) {
            TestingWarehouse warehouse = TestingWarehouse.create(database);
            Path config = write("archiver.properties", properties(database, warehouse));
            TestingClock clock = new TestingClock(MARCH_5.plus(Duration.ofDays(8)));
            assertThat(run(new String[] {"create", "--config", config.toString()}, clock).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            // what CREATE TABLE through the connector runs, for a table meterstore.tables does not list; and an Iceberg
            // table of another engine in the namespace, which is not MeterStore's
            HotTier lastgang = new HotTier("metering", new PartitionNaming("lastgang", Duration.ofDays(1)), Duration.ofSeconds(5));
            Catalog catalog = warehouse.catalog();
            List<Reading> readings = utcDay(MARCH_5);
            try (Connection connection = database.connect()) {
                ReadingsTableCreation.create(connection, lastgang, catalog, TableIdentifier.of("metering", "lastgang"), Optional.of(TableShape.DEFAULT), "CREATE TABLE", ReadingsTableCreation.BY_CREATE_TABLE);
                new ReadingsLoader(lastgang).load(connection, readings);
                catalog.createTable(TableIdentifier.of("metering", "other_engine"), new Schema(Types.NestedField.required(1, "id", Types.LongType.get())));
                // and a table another archiver's create made (its meterstore.tables lists it): that archiver's, not this one's
                HotTier another = new HotTier("metering", new PartitionNaming("another_archivers", Duration.ofDays(1)), Duration.ofSeconds(5));
                ReadingsTableCreation.create(connection, another, catalog, TableIdentifier.of("metering", "another_archivers"), Optional.empty(), "meterstore.tables");
                new ReadingsLoader(another).load(connection, readings);
            }
            finally {
                ((Closeable) catalog).close();
            }

            Run run = run(new String[] {"check", "--config", config.toString()}, clock);
            assertThat(run.exitCode()).as(run.err()).isEqualTo(ArchiverCli.EXIT_OK);
            assertThat(run.out()).contains("metering.readings: ok").contains("metering.lastgang: ok").doesNotContain("other_engine").doesNotContain("another_archivers");

            run = run(new String[] {"archive-once", "--config", config.toString()}, clock);
            assertThat(run.exitCode()).as(run.err()).isEqualTo(ArchiverCli.EXIT_OK);
            assertThat(run.out()).contains("metering.readings: archived [1970-01-01T00:00:00Z, 2024-03-06T00:00:00Z): 0 rows")
                    .containsPattern("metering\\.lastgang: archived \\[1970-01-01T00:00:00Z, 2024-03-06T00:00:00Z\\): %s rows in \\d+ files".formatted(readings.size()))
                    .contains("metering.lastgang: created 2 partitions ahead of now: lastgang_2024_03_13_0000, lastgang_2024_03_14_0000")
                    .doesNotContain("other_engine")
                    .doesNotContain("another_archivers");
            assertThat(run(new String[] {"status", "--config", config.toString()}, clock).out()).contains("metering.lastgang");
        }
    }

    @Test
    void testCheck()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("cli_check")) {
            TestingWarehouse warehouse = TestingWarehouse.create(database);
            Path config = write("archiver.properties", properties(database, warehouse));
            TestingClock clock = new TestingClock(MARCH_5.plus(Duration.ofDays(8)));

            // before 'create': says what to do, and creates nothing, not even the catalogue's own table
            Run run = run(new String[] {"check", "--config", config.toString()}, clock);
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_FAILED);
            assertThat(run.out()).contains(
                    "configuration: ok, tables [readings] in schema 'metering', archival step 1.00d, settlement lag 7.00d, reader grace 1.00h, retention off",
                    "postgresql: ok, logged in to '%s' as 'postgres' (PostgreSQL 17.".formatted(database.jdbcUrl()));
            assertThat(run.err()).isEqualTo("""
                    catalogue: the Iceberg JDBC catalogue has no tables in '%s': run the archiver's 'create' command, or check meterstore.iceberg.jdbc-url
                    metering.readings: PostgreSQL table "metering"."readings" does not exist: run the archiver's 'create' command
                    """.formatted(database.jdbcUrl()));
            assertThat(relations(database)).isEmpty();

            assertThat(run(new String[] {"create", "--config", config.toString()}, clock).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            try (Connection connection = database.connect()) {
                new ReadingsLoader(HOT_TIER).load(connection, utcDay(MARCH_5));
            }
            List<String> relations = relations(database);

            run = run(new String[] {"check", "--config", config.toString()}, clock);
            assertThat(run.err()).isEmpty();
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            assertThat(run.out().lines()).containsExactly(
                    "configuration: ok, tables [readings] in schema 'metering', archival step 1.00d, settlement lag 7.00d, reader grace 1.00h, retention off",
                    run.out().lines().toList().get(1),
                    "catalogue: ok, Iceberg JDBC catalogue 'meterstore' in '%s', warehouse '%s'".formatted(database.jdbcUrl(), warehouse.location()),
                    "warehouse: ok, '%s' is readable and writable".formatted(warehouse.location()),
                    "metering.readings: ok, PostgreSQL table \"metering\".\"readings\" with 1 partition, Iceberg table 'metering.readings' at watermark 1970-01-01T00:00:00Z, shape " + DEFAULT_SHAPE);
            assertThat(relations(database)).isEqualTo(relations);
        }
    }

    @Test
    void testCheckUnknownTable()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("cli_unknown_table")) {
            TestingWarehouse warehouse = TestingWarehouse.create(database);
            TestingClock clock = new TestingClock(MARCH_5);
            assertThat(run(new String[] {"create", "--config", write("create.properties", properties(database, warehouse)).toString()}, clock).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            Path config = write("archiver.properties", properties(database, warehouse) + "meterstore.tables=readings,redings\n");
            List<String> relations = relations(database);

            Run run = run(new String[] {"check", "--config", config.toString()}, clock);
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_FAILED);
            assertThat(run.out()).contains("metering.readings: ok");
            assertThat(run.err()).isEqualTo("""
                    metering.redings: exists in neither tier (no PostgreSQL table "metering"."redings", no Iceberg table 'metering.redings'): fix meterstore.tables, or run the archiver's 'create' command to create it
                    """);

            run = run(new String[] {"status", "--config", config.toString()}, clock);
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_FAILED);
            assertThat(run.err()).isEqualTo("""
                    metering.redings: unhealthy: PostgreSQL table "metering"."redings" does not exist: fix meterstore.tables, or run the archiver's 'create' command
                    """);
            assertThat(relations(database)).isEqualTo(relations);
        }
    }

    @Test
    void testCheckStepDifferentFromTheTables()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("cli_step")) {
            TestingWarehouse warehouse = TestingWarehouse.create(database);
            TestingClock clock = new TestingClock(MARCH_5.plus(Duration.ofDays(8)));
            Path days = write("days.properties", properties(database, warehouse));
            assertThat(run(new String[] {"create", "--config", days.toString()}, clock).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            try (Connection connection = database.connect()) {
                new ReadingsLoader(HOT_TIER).load(connection, utcDay(MARCH_5));
            }
            assertThat(run(new String[] {"archive-once", "--config", days.toString()}, clock).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);

            Path hours = write("hours.properties", properties(database, warehouse) + "meterstore.archival-step=1h\n");
            Run run = run(new String[] {"check", "--config", hours.toString()}, clock);
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_FAILED);
            assertThat(run.err()).isEqualTo("metering.readings: archived with a step of 86400 seconds, but meterstore.archival-step is 3600 seconds: set meterstore.archival-step to 86400s%n".formatted());
        }
    }

    @Test
    void testCreateRecordsTheStep()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("cli_create_step")) {
            TestingWarehouse warehouse = TestingWarehouse.create(database);
            TestingClock clock = new TestingClock(MARCH_5.plus(Duration.ofDays(8)));
            Path hours = write("hours.properties", properties(database, warehouse) + "meterstore.archival-step=1h\n");
            assertThat(run(new String[] {"create", "--config", hours.toString()}, clock).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            // recorded before any partition or archival exists, so writers create partitions of the archiver's step
            Catalog catalog = warehouse.catalog();
            try {
                Table table = catalog.loadTable(TableIdentifier.of(Namespace.of("metering"), "readings"));
                assertThat(table.properties()).containsEntry("meterstore.archival_step", "3600");
                assertThat(table.currentSnapshot()).isNull();
            }
            finally {
                ((Closeable) catalog).close();
            }

            // another step is refused by create and by check, before anything was archived with either
            Path days = write("days.properties", properties(database, warehouse));
            Run run = run(new String[] {"create", "--config", days.toString()}, clock);
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_FAILED);
            assertThat(run.err()).isEqualTo("metering.readings: failed: Table 'metering.readings' is archived with a step of 3600 seconds, but meterstore.archival-step is 86400 seconds: set meterstore.archival-step to 3600s%n".formatted());
            run = run(new String[] {"check", "--config", days.toString()}, clock);
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_FAILED);
            assertThat(run.err()).isEqualTo("metering.readings: archived with a step of 3600 seconds, but meterstore.archival-step is 86400 seconds: set meterstore.archival-step to 3600s%n".formatted());
            assertThat(run(new String[] {"create", "--config", hours.toString()}, clock).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
        }
    }

    @Test
    void testCreateStoresTheShapeAndRefusesAnotherOne()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("cli_shape")) {
            TestingWarehouse warehouse = TestingWarehouse.create(database);
            TableIdentifier identifier = TableIdentifier.of(Namespace.of("metering"), "readings");
            // a table created before shapes were declared: both tiers, no shape stored in either
            try (Connection connection = database.connect()) {
                HOT_TIER.createParent(connection);
            }
            Catalog catalog = warehouse.catalog();
            try {
                IcebergTableSpec.createIfMissing(catalog, identifier);
                Path plain = write("plain.properties", properties(database, warehouse));
                Run run = run(new String[] {"create", "--config", plain.toString()});
                assertThat(run.exitCode()).as(run.err()).isEqualTo(ArchiverCli.EXIT_OK);
                // read as the default shape, and recorded as it in both tiers
                assertThat(run.out()).contains("metering.readings: recorded its shape, which it had not stored yet");
                assertThat(catalog.loadTable(identifier).properties())
                        .containsEntry("meterstore.time-model", "interval")
                        .containsEntry("meterstore.reading-id", "malo_id")
                        .containsEntry("meterstore.identity-columns", "")
                        .containsEntry("meterstore.checked-columns", "malo_id:MALO,melo_id:MELO");
                assertThat(tableComment(database, "readings")).contains("time_model=interval", "reading_id=malo_id");
                assertThat(run(new String[] {"create", "--config", plain.toString()}).out()).doesNotContain("recorded its shape");

                // an entry declaring another key is refused by create, check and the service's start, naming the difference
                Path melo = write("melo.properties", properties(database, warehouse) + "meterstore.tables=readings(time_model=interval; reading_id=melo_id)\nhttp-server.http.port=0\n");
                String difference = "Table 'metering.readings' stores reading_id 'malo_id', but meterstore.tables's entry 'readings' declares reading_id 'melo_id': a table's shape is declared once, at its creation; declare what the table stores, or drop the declaration from meterstore.tables's entry 'readings'";
                run = run(new String[] {"create", "--config", melo.toString()});
                assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_FAILED);
                assertThat(run.err()).isEqualTo("metering.readings: failed: %s%n".formatted(difference));
                run = run(new String[] {"check", "--config", melo.toString()});
                assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_FAILED);
                assertThat(run.err()).isEqualTo("metering.readings: %s%n".formatted(difference));
                run = run(new String[] {"run", "--config", melo.toString()});
                assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_FAILED);
                assertThat(run.err()).isEqualTo("Cannot start the archiver: %s%n".formatted(difference));
                assertThat(catalog.loadTable(identifier).properties()).containsEntry("meterstore.reading-id", "malo_id");

                // a point table keyed by MeLo-ID, its default as in the Rust MeterStore: melo_id in the hot tier's primary key, NOT NULL
                Path point = write("point.properties", properties(database, warehouse) + "meterstore.tables=zaehlerstaende_melo(time_model=point)\n");
                run = run(new String[] {"create", "--config", point.toString()});
                assertThat(run.exitCode()).as(run.err()).isEqualTo(ArchiverCli.EXIT_OK);
                assertThat(catalog.loadTable(TableIdentifier.of(Namespace.of("metering"), "zaehlerstaende_melo")).properties()).containsEntry("meterstore.reading-id", "melo_id");
                try (Connection connection = database.connect(); Statement statement = connection.createStatement();
                        ResultSet result = statement.executeQuery("SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'metering.zaehlerstaende_melo'::regclass AND contype = 'p'")) {
                    assertThat(result.next()).isTrue();
                    assertThat(result.getString(1)).isEqualTo("PRIMARY KEY (malo_id, obis_code, \"from\", melo_id, version)");
                }

                // keyed by malo_id it is created: "to" optional in Iceberg, nullable and required NULL in PostgreSQL
                Path pointByMalo = write("point-malo.properties", properties(database, warehouse) + "meterstore.tables=zaehlerstaende(time_model=point; reading_id=malo_id)\n");
                run = run(new String[] {"create", "--config", pointByMalo.toString()});
                assertThat(run.exitCode()).as(run.err()).isEqualTo(ArchiverCli.EXIT_OK);
                Table pointTable = catalog.loadTable(TableIdentifier.of(Namespace.of("metering"), "zaehlerstaende"));
                assertThat(pointTable.properties()).containsEntry("meterstore.time-model", "point").containsEntry("meterstore.reading-id", "malo_id");
                assertThat(pointTable.schema().findField("to").isOptional()).isTrue();
                try (Connection connection = database.connect(); Statement statement = connection.createStatement();
                        ResultSet result = statement.executeQuery("SELECT count(*) FROM pg_constraint WHERE conrelid = 'metering.zaehlerstaende'::regclass AND conname = 'point_reading_has_no_to'")) {
                    assertThat(result.next()).isTrue();
                    assertThat(result.getLong(1)).isEqualTo(1);
                }
            }
            finally {
                ((Closeable) catalog).close();
            }
        }
    }

    @Test
    void testCreateStoresAttributeColumnsInBothTiers()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("cli_attributes")) {
            TestingWarehouse warehouse = TestingWarehouse.create(database);
            Catalog catalog = warehouse.catalog();
            try {
                // an entry declaring attribute columns, its list by spaces: the configuration splits entries at commas
                Path config = write("attributes.properties", properties(database, warehouse) + "meterstore.tables=vertraege(attribute_columns=contract_ref source_system)\n");
                Run run = run(new String[] {"create", "--config", config.toString()});
                assertThat(run.exitCode()).as(run.err()).isEqualTo(ArchiverCli.EXIT_OK);
                // Iceberg: optional strings after the readings columns' 17 field ids; PostgreSQL: nullable text after the readings columns
                Table table = catalog.loadTable(TableIdentifier.of(Namespace.of("metering"), "vertraege"));
                assertThat(table.schema().columns()).hasSize(19);
                assertThat(table.schema().findField(18)).isEqualTo(Types.NestedField.optional(18, "contract_ref", Types.StringType.get()));
                assertThat(table.schema().findField(19)).isEqualTo(Types.NestedField.optional(19, "source_system", Types.StringType.get()));
                assertThat(table.properties()).containsEntry("meterstore.attribute-columns", "contract_ref,source_system");
                assertThat(tableComment(database, "vertraege")).contains("attribute_columns=contract_ref,source_system");
                try (Connection connection = database.connect();
                        Statement statement = connection.createStatement();
                        ResultSet result = statement.executeQuery("""
                                SELECT string_agg(column_name || ' ' || data_type || ' ' || is_nullable, ', ' ORDER BY ordinal_position)
                                FROM information_schema.columns WHERE table_schema = 'metering' AND table_name = 'vertraege' AND ordinal_position > 17""")) {
                    assertThat(result.next()).isTrue();
                    assertThat(result.getString(1)).isEqualTo("contract_ref text YES, source_system text YES, superseded_at timestamp with time zone YES");
                }
                run = run(new String[] {"check", "--config", config.toString()});
                assertThat(run.exitCode()).as(run.err()).isEqualTo(ArchiverCli.EXIT_OK);
                assertThat(run.out()).contains("shape time_model=interval; reading_id=malo_id; identity_columns=; attribute_columns=contract_ref,source_system; checked_columns=malo_id:MALO,melo_id:MELO");

                // an entry naming them in another order declares another table: refused, naming both
                Path other = write("other.properties", properties(database, warehouse) + "meterstore.tables=vertraege(attribute_columns=source_system contract_ref)\n");
                run = run(new String[] {"create", "--config", other.toString()});
                assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_FAILED);
                assertThat(run.err()).startsWith("metering.vertraege: failed: Table 'metering.vertraege' stores attribute_columns 'contract_ref,source_system', but meterstore.tables's entry 'vertraege' declares attribute_columns 'source_system,contract_ref'");
                // one naming a column PostgreSQL keeps for itself is refused before anything is created
                Path reserved = write("reserved.properties", properties(database, warehouse) + "meterstore.tables=other(attribute_columns=xmin)\n");
                run = run(new String[] {"create", "--config", reserved.toString()});
                assertThat(run.exitCode()).isNotEqualTo(ArchiverCli.EXIT_OK);
                assertThat(run.err()).contains("Column 'xmin' of identity_columns or attribute_columns is a name PostgreSQL or MeterStore's hot tier keeps for itself");
                assertThat(catalog.tableExists(TableIdentifier.of(Namespace.of("metering"), "other"))).isFalse();
            }
            finally {
                ((Closeable) catalog).close();
            }
        }
    }

    @Test
    void testCreateGivesCheckedColumnsTheirChecks()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("cli_checked")) {
            TestingWarehouse warehouse = TestingWarehouse.create(database);
            Catalog catalog = warehouse.catalog();
            try {
                // '|' between an EIC's object types, spaces between the list's items
                Path config = write("checked.properties", properties(database, warehouse)
                        + "meterstore.tables=netze(attribute_columns=grid_area supplier; checked_columns=grid_area:EIC:Y|X supplier:BDEW)\n");
                Run run = run(new String[] {"create", "--config", config.toString()});
                assertThat(run.exitCode()).as(run.err()).isEqualTo(ArchiverCli.EXIT_OK);
                assertThat(catalog.loadTable(TableIdentifier.of(Namespace.of("metering"), "netze")).properties())
                        .containsEntry("meterstore.checked-columns", "grid_area:EIC:X|Y,malo_id:MALO,melo_id:MELO,supplier:BDEW");
                String shapes = "SELECT string_agg(conname || ' ' || convalidated || ' ' || pg_get_constraintdef(oid), ', ' ORDER BY conname) FROM pg_constraint WHERE conrelid = 'metering.netze'::regclass AND conname IN ('grid_area_shape', 'supplier_shape')";
                String expected = "grid_area_shape true CHECK ((grid_area ~ '^[0-9A-Z-]{2}[XY][0-9A-Z-]{12}[0-9A-Z]$'::text)), supplier_shape true CHECK ((supplier ~ '^[0-9]{13}$'::text))";
                assertThat(postgresValue(database, shapes)).isEqualTo(expected);

                // a CHECK dropped by hand: create run again adds it NOT VALID and validates it, as the model's own
                try (Connection connection = database.connect(); Statement statement = connection.createStatement()) {
                    statement.execute("ALTER TABLE metering.netze DROP CONSTRAINT grid_area_shape");
                }
                run = run(new String[] {"create", "--config", config.toString()});
                assertThat(run.exitCode()).as(run.err()).isEqualTo(ArchiverCli.EXIT_OK);
                assertThat(postgresValue(database, shapes)).isEqualTo(expected);

                // an object type ENTSO-E does not give is refused, naming those it does, before anything is created
                Path refused = write("refused.properties", properties(database, warehouse) + "meterstore.tables=other(attribute_columns=grid_area; checked_columns=grid_area:EIC:Q)\n");
                run = run(new String[] {"create", "--config", refused.toString()});
                assertThat(run.exitCode()).isNotEqualTo(ArchiverCli.EXIT_OK);
                assertThat(run.err()).contains("Check 'EIC:Q' of column 'grid_area' allows EIC object type 'Q', which ENTSO-E does not give: list letters among X Y Z W T V A");
                assertThat(catalog.tableExists(TableIdentifier.of(Namespace.of("metering"), "other"))).isFalse();
            }
            finally {
                ((Closeable) catalog).close();
            }
        }
    }

    private static String postgresValue(TestingDatabase database, String sql)
            throws SQLException
    {
        try (Connection connection = database.connect(); Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            assertThat(result.next()).isTrue();
            return result.getString(1);
        }
    }

    private static String tableComment(TestingDatabase database, String table)
            throws SQLException
    {
        try (Connection connection = database.connect();
                Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SELECT obj_description('metering.%s'::regclass, 'pg_class')".formatted(table))) {
            assertThat(result.next()).isTrue();
            return result.getString(1);
        }
    }

    @Test
    void testCheckUnreachablePostgresql()
            throws Exception
    {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        String url = "jdbc:postgresql://localhost:%s/metering".formatted(port);
        Path config = write("archiver.properties", """
                meterstore.postgresql.url=%s
                meterstore.postgresql.user=archiver
                meterstore.iceberg.warehouse=file:///tmp/warehouse
                """.formatted(url));
        for (String command : List.of("check", "status")) {
            Run run = run(new String[] {command, "--config", config.toString()});
            assertThat(run.exitCode()).as(command).isEqualTo(ArchiverCli.EXIT_FAILED);
            assertThat(run.err()).as(command).startsWith("postgresql: cannot connect to '%s': Connection to localhost:%s refused".formatted(url, port));
            assertThat(run.err()).as(command).contains("(SQLSTATE 08001)");
        }
        // the commands that act say which properties to check too
        for (String command : List.of("archive-once", "compact", "expire", "erasures")) {
            Run run = run(new String[] {command, "--config", config.toString()});
            assertThat(run.exitCode()).as(command).isEqualTo(ArchiverCli.EXIT_FAILED);
            assertThat(run.err()).as(command)
                    .startsWith("metering.readings: failed: ")
                    .contains("Connection to localhost:%s refused".formatted(port))
                    .endsWith("; check meterstore.postgresql.url, meterstore.postgresql.user and meterstore.postgresql.password "
                            + "(and meterstore.iceberg.jdbc-url if the catalogue has a database of its own); the 'check' command tests each\n");
        }
    }

    @Test
    void testStatusTellsACycleInFlightFromAnInterruptedOne()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("cli_in_flight")) {
            TestingWarehouse warehouse = TestingWarehouse.create(database);
            Path config = write("archiver.properties", properties(database, warehouse));
            TestingClock clock = new TestingClock(MARCH_5.plus(Duration.ofDays(8)));
            assertThat(run(new String[] {"create", "--config", config.toString()}, clock).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            try (Connection connection = database.connect(); Statement statement = connection.createStatement()) {
                new ReadingsLoader(HOT_TIER).load(connection, utcDay(MARCH_5));
                // what a cycle does before it streams the partition into Iceberg
                statement.execute("ALTER TABLE metering.readings DETACH PARTITION metering.readings_2024_03_05_0000");
            }
            Run run = run(new String[] {"status", "--config", config.toString()}, clock);
            assertThat(run.out()).contains("  interrupted    ", "by an interrupted cycle", "readings_2024_03_05_0000");

            // while an archiver holds the table's lease, the partition is its cycle's, in flight
            try (Connection holder = database.connect();
                    ArchiverLease lease = ArchiverLease.tryAcquire(holder, "metering", "readings", Duration.ZERO).orElseThrow()) {
                run = run(new String[] {"status", "--config", config.toString()}, clock);
                assertThat(run.out()).contains("  archiving      ", "by the cycle in flight", "readings_2024_03_05_0000").doesNotContain("interrupted");
            }
        }
    }

    @Test
    void testStatusShowsARefusedWindowUntilItsRowIsRepaired()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("cli_refused")) {
            TestingWarehouse warehouse = TestingWarehouse.create(database);
            Path config = write("archiver.properties", properties(database, warehouse));
            TestingClock clock = new TestingClock(MARCH_5.plus(Duration.ofDays(8)));
            assertThat(run(new String[] {"create", "--config", config.toString()}, clock).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            String maloId;
            try (Connection connection = database.connect(); Statement statement = connection.createStatement()) {
                new ReadingsLoader(HOT_TIER).load(connection, utcDay(MARCH_5));
                // written around MeterStore: the first row's MaLo-ID with its check digit changed, which no constraint checks
                try (ResultSet result = statement.executeQuery("""
                        UPDATE metering.readings_2024_03_05_0000 SET malo_id = left(malo_id, 10) || ((right(malo_id, 1)::int + 1) %% 10)::text
                        WHERE (malo_id, obis_code, "from", version) = (SELECT malo_id, obis_code, "from", version FROM metering.readings_2024_03_05_0000 ORDER BY 1, 2, 3, 4 LIMIT 1)
                        RETURNING malo_id""".formatted())) {
                    assertThat(result.next()).isTrue();
                    maloId = result.getString(1);
                }
            }
            String refusal = "Window [1970-01-01T00:00:00Z, 2024-03-06T00:00:00Z) of table 'metering.readings' is not archived: partition 'readings_2024_03_05_0000' holds the reading (malo_id '%s', "
                    .formatted(maloId);
            String remedy = "Repair or delete that row in PostgreSQL partition \"metering\".\"readings_2024_03_05_0000\"; the next cycle archives the window";

            Run run = run(new String[] {"archive-once", "--config", config.toString()}, clock);
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_FAILED);
            assertThat(run.err()).startsWith("metering.readings: failed: " + refusal).contains("which the write path refuses: Invalid MaLo-ID '%s': check digit is ".formatted(maloId), remedy);
            run = run(new String[] {"status", "--config", config.toString()}, clock);
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_FAILED);
            assertThat(run.out()).startsWith("""
                    metering.readings: unhealthy
                      watermark      1970-01-01T00:00:00Z, lag""");
            // the window's partition attached as it was
            assertThat(run.out()).contains("  hot            1 partition attached, 2024-03-05T00:00:00Z to 2024-03-06T00:00:00Z");
            assertThat(run.out()).contains("  invariant      violated\n    " + refusal, remedy + " (refused by the archival cycle at 2024-03-13T00:00:00Z)\n");

            try (Connection connection = database.connect(); Statement statement = connection.createStatement()) {
                assertThat(statement.executeUpdate("DELETE FROM metering.readings_2024_03_05_0000 WHERE malo_id = '%s'".formatted(maloId))).isEqualTo(1);
            }
            assertThat(run(new String[] {"archive-once", "--config", config.toString()}, clock).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            run = run(new String[] {"status", "--config", config.toString()}, clock);
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            assertThat(run.out()).startsWith("metering.readings: healthy\n").contains("  invariant      holds\n");
        }
    }

    @Test
    void testCompletenessWithoutTrinoSaysWhereItLooked()
            throws Exception
    {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        Path config = write("archiver.properties", """
                meterstore.postgresql.url=jdbc:postgresql://localhost:5432/metering
                meterstore.postgresql.user=archiver
                meterstore.iceberg.warehouse=file:///tmp/warehouse
                """);
        // the Trino driver connects with the first statement: that failure names the URL and the option too
        String url = "jdbc:trino://localhost:%s/meterstore".formatted(port);
        Run run = run(new String[] {"completeness", "--config", config.toString(), "--month", "2026-03", "--trino", url});
        assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_FAILED);
        assertThat(run.err()).startsWith("trino: cannot connect to '%s': ".formatted(url)).endsWith("; start Trino with the MeterStore catalog, or pass --trino%n".formatted());
    }

    @Test
    void testCheckWrongCredentials()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("cli_credentials");
                PasswordRole role = PasswordRole.create(database, "meterstore_cli_" + ProcessHandle.current().pid(), "right")) {
            TestingWarehouse warehouse = TestingWarehouse.create(database);
            Path config = write("archiver.properties", """
                    meterstore.postgresql.url=%s
                    meterstore.postgresql.user=%s
                    meterstore.postgresql.password=wrong
                    meterstore.iceberg.warehouse=%s
                    """.formatted(database.jdbcUrl(), role.name(), warehouse.location()));
            for (String command : List.of("check", "status")) {
                Run run = run(new String[] {command, "--config", config.toString()});
                assertThat(run.exitCode()).as(command).isEqualTo(ArchiverCli.EXIT_FAILED);
                assertThat(run.err()).as(command).startsWith(
                        "postgresql: cannot log in to '%s' as '%s': FATAL: password authentication failed for user \"%s\" (SQLSTATE 28P01)".formatted(database.jdbcUrl(), role.name(), role.name()));
            }

            // a role that does not exist at all
            Path unknown = write("unknown.properties", properties(database, warehouse).replace("meterstore.postgresql.user=postgres", "meterstore.postgresql.user=nobody_here"));
            Run run = run(new String[] {"check", "--config", unknown.toString()});
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_FAILED);
            assertThat(run.err()).startsWith("postgresql: cannot log in to '%s' as 'nobody_here': FATAL: role \"nobody_here\" does not exist (SQLSTATE 28000)".formatted(database.jdbcUrl()));
        }
    }

    @Test
    void testStatus()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("cli_status")) {
            TestingWarehouse warehouse = TestingWarehouse.create(database);
            Path config = write("archiver.properties", properties(database, warehouse));
            TestingClock clock = new TestingClock(MARCH_5.plus(Duration.ofDays(8)));
            assertThat(run(new String[] {"create", "--config", config.toString()}, clock).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            try (Connection connection = database.connect()) {
                new ReadingsLoader(HOT_TIER).load(connection, utcDay(MARCH_5));
                new ReadingsLoader(HOT_TIER).load(connection, utcDay(MARCH_5.plus(Duration.ofDays(1))));
            }
            assertThat(run(new String[] {"archive-once", "--config", config.toString()}, clock).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            List<String> relations = relations(database);

            Run run = run(new String[] {"status", "--config", config.toString()}, clock);
            assertThat(run.err()).isEmpty();
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            assertThat(run.out()).startsWith("""
                    metering.readings: healthy
                      watermark      2024-03-06T00:00:00Z, lag 7.00d
                      hot            3 partitions attached, 2024-03-06T00:00:00Z to 2024-03-15T00:00:00Z
                      awaiting drop  1 (detached below the watermark, dropped once the reader grace has passed): readings_2024_03_05_0000
                      invariant      holds
                    """);
            // the cold tier's layout and upkeep, for information (the snapshot's time is the committing machine's clock);
            // the archived day carries corrections: a winners and a superseded file
            assertThat(run.out().lines().skip(5).toList()).satisfiesExactly(
                    line -> assertThat(line).isEqualTo("  erasures       none awaiting physical completion"),
                    line -> assertThat(line).matches("  cold tier      2 data files in 1 month \\(at most 2 in a month\\), 1 manifest, 1 snapshot, the oldest from \\S+Z"),
                    line -> assertThat(line).isEqualTo("  retention      snapshots older than 3653d, except the newest 20; orphan files removed once older than 3d; readings kept for ever (meterstore.retention unset)"),
                    line -> assertThat(line).isEqualTo("  maintenance    expire never ran, compact never ran"),
                    line -> assertThat(line).isEqualTo("  compaction     no month compacted; 0 months not resolved"));
            assertThat(relations(database)).isEqualTo(relations);

            // a day below W attached again: its rows are read by neither tier
            try (Connection connection = database.connect()) {
                new ReadingsLoader(HOT_TIER).load(connection, utcDay(MARCH_5.minus(Duration.ofDays(1))));
            }
            run = run(new String[] {"status", "--config", config.toString()}, clock);
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_FAILED);
            assertThat(run.out()).startsWith("metering.readings: unhealthy\n");
            assertThat(run.out()).contains("""
                      invariant      violated
                        Partition 'readings_2024_03_04_0000' of table 'metering.readings' is attached but starts at 2024-03-04T00:00:00Z, below the watermark 2024-03-06T00:00:00Z: its rows below the watermark are read by neither tier
                    """);
            // detached, it still holds rows no tier reads: the cold tier lacks them, so it is reported and never dropped
            try (Connection connection = database.connect()) {
                HOT_TIER.detach(connection, "readings_2024_03_04_0000");
            }
            run = run(new String[] {"status", "--config", config.toString()}, clock);
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_FAILED);
            assertThat(run.out()).contains("""
                      invariant      violated
                        Detached partition 'readings_2024_03_04_0000' of table 'metering.readings' lies below the watermark 2024-03-06T00:00:00Z and holds %s rows, but the archival commits that streamed it hold 0: the cold tier lacks its rows, and it is not dropped; INSERT its rows through MeterStore (rows below the watermark go to Iceberg), then drop it by hand
                    """.formatted(utcDay(MARCH_5.minus(Duration.ofDays(1))).size()));
            try (Connection connection = database.connect()) {
                HOT_TIER.drop(connection, "readings_2024_03_04_0000");
            }

            // nobody archived for a while: the watermark trails by more than the settlement lag and two steps
            clock.advance(Duration.ofDays(3));
            run = run(new String[] {"status", "--config", config.toString()}, clock);
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_FAILED);
            assertThat(run.out()).startsWith("""
                    metering.readings: unhealthy
                      watermark      2024-03-06T00:00:00Z, lag 10.00d (behind: more than the settlement lag plus two steps, 9.00d; is the archiver running?)
                      hot            3 partitions attached, 2024-03-06T00:00:00Z to 2024-03-15T00:00:00Z (none ahead of now: each cycle creates meterstore.partition-headroom ahead; is the archiver running?)
                    """);
            assertThat(run.out()).contains("  invariant      holds");

            // the archiver back: W catches up and the partitions ahead of now are there again
            assertThat(run(new String[] {"archive-once", "--config", config.toString()}, clock).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            run = run(new String[] {"status", "--config", config.toString()}, clock);
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            assertThat(run.out()).startsWith("metering.readings: healthy\n");
            assertThat(run.out()).containsPattern("  hot            \\d+ partitions attached, \\S+ to 2024-03-18T00:00:00Z\n");

            // W on time, the invariant holding, but no partition ahead of now: unhealthy, as "readings$watermark" says too
            try (Connection connection = database.connect()) {
                for (HotPartition partition : HOT_TIER.partitions(connection)) {
                    if (partition.end().isAfter(clock.instant())) {
                        HOT_TIER.detach(connection, partition.name());
                        HOT_TIER.drop(connection, partition.name());
                    }
                }
            }
            run = run(new String[] {"status", "--config", config.toString()}, clock);
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_FAILED);
            assertThat(run.out()).startsWith("metering.readings: unhealthy\n");
            assertThat(run.out()).doesNotContain("behind");
            assertThat(run.out()).contains("(none ahead of now: each cycle creates meterstore.partition-headroom ahead; is the archiver running?)\n");
            assertThat(run.out()).contains("  invariant      holds");
        }
    }

    @Test
    void testStatusNamesDamagedColdFiles()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("cli_damaged")) {
            TestingWarehouse warehouse = TestingWarehouse.create(database);
            Path config = write("archiver.properties", properties(database, warehouse));
            TestingClock clock = new TestingClock(MARCH_5.plus(Duration.ofDays(8)));
            assertThat(run(new String[] {"create", "--config", config.toString()}, clock).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            try (Connection connection = database.connect()) {
                new ReadingsLoader(HOT_TIER).load(connection, utcDay(MARCH_5));
                new ReadingsLoader(HOT_TIER).load(connection, utcDay(MARCH_5.plus(Duration.ofDays(1))));
            }
            assertThat(run(new String[] {"archive-once", "--config", config.toString()}, clock).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            clock.advance(Duration.ofDays(1));
            assertThat(run(new String[] {"archive-once", "--config", config.toString()}, clock).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            List<DataFile> files = new ArrayList<>();
            Catalog catalog = warehouse.catalog();
            try (CloseableIterable<FileScanTask> tasks = catalog.loadTable(TableIdentifier.of(Namespace.of("metering"), "readings")).newScan().planFiles()) {
                tasks.forEach(task -> files.add(task.file()));
            }
            finally {
                ((Closeable) catalog).close();
            }
            // each archived day with corrections is a winners and a superseded file
            assertThat(files).hasSize(4);

            // one data file deleted by hand, another cut short
            Path deleted = LocalFileIo.path(files.get(0).location());
            Path truncated = LocalFileIo.path(files.get(1).location());
            byte[] deletedContent = Files.readAllBytes(deleted);
            byte[] truncatedContent = Files.readAllBytes(truncated);
            Files.delete(deleted);
            try (FileChannel channel = FileChannel.open(truncated, StandardOpenOption.WRITE)) {
                channel.truncate(100);
            }
            Run run = run(new String[] {"status", "--config", config.toString()}, clock);
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_FAILED);
            assertThat(run.out()).startsWith("metering.readings: unhealthy\n");
            assertThat(run.out()).contains(
                    "  cold files     2 damaged: queries that read them fail; restore them from a backup\n",
                    "    '%s' does not exist\n".formatted(files.get(0).location()),
                    "    '%s' is 100 bytes long, the snapshot records %s bytes: truncated or overwritten\n".formatted(files.get(1).location(), files.get(1).fileSizeInBytes()),
                    "  invariant      holds");

            // restored from a backup: healthy again
            Files.write(deleted, deletedContent);
            Files.write(truncated, truncatedContent);
            run = run(new String[] {"status", "--config", config.toString()}, clock);
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            assertThat(run.out()).doesNotContain("cold files");
        }
    }

    @Test
    void testCheckTableAlteredByAnotherTool()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("cli_altered")) {
            TestingWarehouse warehouse = TestingWarehouse.create(database);
            Path config = write("archiver.properties", properties(database, warehouse));
            TestingClock clock = new TestingClock(MARCH_5);
            assertThat(run(new String[] {"create", "--config", config.toString()}, clock).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            TableIdentifier identifier = TableIdentifier.of(Namespace.of("metering"), "readings");
            Catalog catalog = warehouse.catalog();
            try {
                // another engine drops a column
                catalog.loadTable(identifier).updateSchema().deleteColumn("provenance").commit();
                Run run = run(new String[] {"check", "--config", config.toString()}, clock);
                assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_FAILED);
                assertThat(run.err()).isEqualTo(("metering.readings: Iceberg table 'meterstore.metering.readings' is not a readings table: column 'provenance' (field id 13, string) was dropped; "
                        + "it was altered outside MeterStore, which reads and writes exactly the readings columns: undo the change (point the catalogue at the table's metadata file from before it)%n").formatted());

                // and replaces the table by one in format v1
                catalog.dropTable(identifier, false);
                Schema schema = ReadingsSchema.icebergSchema();
                catalog.buildTable(identifier, schema).withPartitionSpec(IcebergTableSpec.partitionSpec(schema)).withProperty("format-version", "1").create();
                run = run(new String[] {"check", "--config", config.toString()}, clock);
                assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_FAILED);
                assertThat(run.err()).isEqualTo("metering.readings: Iceberg table 'meterstore.metering.readings' has format version 1: MeterStore reads and writes format version 2 only; recreate the table with format-version=2%n".formatted());
            }
            finally {
                ((Closeable) catalog).close();
            }
        }
    }

    @Test
    void testCompactThenExpire()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("cli_maintenance")) {
            TestingWarehouse warehouse = TestingWarehouse.create(database);
            Path config = write("archiver.properties", properties(database, warehouse) + """
                    meterstore.snapshot-retention=1h
                    meterstore.min-snapshots-to-keep=1
                    meterstore.orphan-safety-age=1h
                    """);
            TestingClock clock = new TestingClock(MARCH_5.plus(Duration.ofDays(8)));
            assertThat(run(new String[] {"create", "--config", config.toString()}, clock).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            Catalog catalog = warehouse.catalog();
            TableIdentifier identifier = TableIdentifier.of(Namespace.of("metering"), "readings");
            // the configured retention, for every engine that expires the table by its properties
            assertThat(catalog.loadTable(identifier).properties())
                    .containsEntry("history.expire.max-snapshot-age-ms", "3600000")
                    .containsEntry("history.expire.min-snapshots-to-keep", "1");
            try (Connection connection = database.connect()) {
                new ReadingsLoader(HOT_TIER).load(connection, utcDay(MARCH_5));
                new ReadingsLoader(HOT_TIER).load(connection, utcDay(MARCH_5.plus(Duration.ofDays(1))));
            }
            assertThat(run(new String[] {"archive-once", "--config", config.toString()}, clock).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            clock.advance(Duration.ofDays(1));
            assertThat(run(new String[] {"archive-once", "--config", config.toString()}, clock).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);

            Run run = run(new String[] {"compact", "--config", config.toString()}, clock);
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            assertThat(run.err()).isEmpty();
            assertThat(run.out()).matches("""
                    metering.readings: compact: no month needed compaction; manifests: 2 manifests rewritten into 1 by month \\(\\d+ bytes\\), \
                    watermark 2024-03-07T00:00:00Z republished; now 4 data files in 1 month \\(at most 4 in a month\\), 1 manifest, 3 snapshots
                    """);
            run = run(new String[] {"compact", "--config", config.toString()}, clock);
            assertThat(run.out()).startsWith("metering.readings: compact: no month needed compaction; manifests: already one per month, nothing rewritten; now");
            assertThat(MaintenanceCommand.COMPACT.lastRun(catalog.loadTable(identifier))).contains(clock.instant());

            // the last archived partition is dropped after the reader grace; then, an hour after the commits, every snapshot but the newest expires
            clock.advance(Duration.ofHours(2));
            assertThat(run(new String[] {"archive-once", "--config", config.toString()}, clock).out()).contains(", dropped readings_2024_03_06_0000\n");
            Instant later = Instant.ofEpochMilli(catalog.loadTable(identifier).currentSnapshot().timestampMillis()).plus(Duration.ofHours(2));
            run = run(new String[] {"expire", "--config", config.toString()}, new TestingClock(later));
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            assertThat(run.out()).matches("""
                    metering.readings: expire: erasures: no erasure due; 2 snapshots expired with 4 files only they referenced, kept 1 snapshot, the oldest from \\S+ \\(retention: snapshots older than 1h, except the newest 1\\); \
                    0 files no snapshot references removed \\(0 bytes\\) of \\d+ listed, older than 1h; now 4 data files in 1 month \\(at most 4 in a month\\), 1 manifest, 1 snapshot
                    """);

            run = run(new String[] {"status", "--config", config.toString()}, new TestingClock(later));
            assertThat(run.out()).contains("  maintenance    expire %s (".formatted(later.truncatedTo(ChronoUnit.SECONDS)));
        }
    }

    @Test
    void testRetentionThenErasures()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("cli_retention")) {
            TestingWarehouse warehouse = TestingWarehouse.create(database);
            Path config = write("archiver.properties", properties(database, warehouse) + "meterstore.retention=1y\n");
            // in 2026 the settlement year 2024 is past a retention of one year: March 2024 goes
            TestingClock clock = new TestingClock(Instant.parse("2026-06-01T00:00:00Z"));
            assertThat(run(new String[] {"create", "--config", config.toString()}, clock).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            assertThat(run(new String[] {"check", "--config", config.toString()}, clock).out()).contains(", retention 1 settlement year\n");
            try (Connection connection = database.connect()) {
                new ReadingsLoader(HOT_TIER).load(connection, utcDay(MARCH_5));
            }
            assertThat(run(new String[] {"archive-once", "--config", config.toString()}, clock).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            long rows = utcDay(MARCH_5).size();

            Run run = run(new String[] {"expire", "--config", config.toString()}, clock);
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            assertThat(run.out()).startsWith("metering.readings: expire: retention: 1 month past the retention removed (2024-03 to 2024-03, before 2024-12-31T23:00:00Z): %s cold rows, 0 hot rows; erasures: no erasure due, 1 awaiting (next due ".formatted(rows));

            // the audit row, and when its files leave storage: an hour (the reader grace) after the commit
            Catalog catalog = warehouse.catalog();
            Instant committed = Instant.ofEpochMilli(catalog.loadTable(TableIdentifier.of(Namespace.of("metering"), "readings")).currentSnapshot().timestampMillis());
            run = run(new String[] {"erasures", "--config", config.toString()}, clock);
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            assertThat(run.out()).matches("""
                    metering.readings: 1 erasure, 1 awaiting physical completion
                      #1 retention by meterstore-archiver at 2026-06-01T00:00:00Z; every malo_id, every obis_code, "from" in \\[2024-03-01T00:00:00Z, 2024-04-01T00:00:00Z\\); \
                    removed 0 hot, %s cold rows in snapshot \\d+; physical awaiting, due %s; lifted no
                    """.formatted(rows, committed.plus(Duration.ofHours(1))));
            run = run(new String[] {"status", "--config", config.toString()}, clock);
            assertThat(run.out()).contains("""
                      erasures       1 awaiting physical completion ('expire' expires the snapshots that still hold their rows once due)
                        erasure 1 due %s
                    """.formatted(committed.plus(Duration.ofHours(1))));
            assertThat(run.out()).contains("; readings kept 1 settlement year (before 2024-12-31T23:00:00Z removed)\n");

            TestingClock later = new TestingClock(committed.plus(Duration.ofHours(2)));
            run = run(new String[] {"expire", "--config", config.toString()}, later);
            assertThat(run.out()).contains("; erasures: 1 erasure made physical (1 snapshot expired, ");
            assertThat(run(new String[] {"erasures", "--config", config.toString()}, later).out())
                    .contains(" cold rows in snapshot ")
                    .contains("; physical since %s; lifted no\n".formatted(later.instant()));
            assertThat(run(new String[] {"status", "--config", config.toString()}, later).out()).contains("  erasures       none awaiting physical completion\n");
        }
    }

    @Test
    void testRun()
            throws IOException
    {
        // the service starts only from a configuration the command line accepts; its start is covered by TestArchiverServer
        Path config = write("archiver.properties", """
                meterstore.postgresql.url=jdbc:postgresql://localhost:5432/metering
                meterstore.postgresql.user=archiver
                meterstore.iceberg.warehouse=file:///tmp/warehouse
                meterstore.shutdown-timeout=-1s
                """);
        Run run = run(new String[] {"run", "--config", config.toString()});
        assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_USAGE);
        assertThat(run.err()).startsWith("Invalid configuration in '%s':".formatted(config));
        assertThat(run.err()).contains("meterstore.shutdown-timeout");
        assertThat(run.out()).isEmpty();
    }

    static String properties(TestingDatabase database, TestingWarehouse warehouse)
    {
        return """
                meterstore.postgresql.url=%s
                meterstore.postgresql.user=%s
                meterstore.iceberg.warehouse=%s
                """.formatted(database.jdbcUrl(), database.user(), warehouse.location())
                + ImmutableMap.<String, String>builder().putAll(warehouse.catalogProperties()).putAll(warehouse.storageProperties()).buildOrThrow()
                        .entrySet().stream().map(entry -> entry.getKey() + "=" + entry.getValue() + "\n").collect(joining());
    }

    /** The readings of four meters whose interval starts on the UTC day starting at {@code day}. */
    static List<Reading> utcDay(Instant day)
    {
        return ReadingsGenerator.builder()
                .meters(4)
                .startDay(LocalDate.ofInstant(day, ZoneOffset.UTC))
                .days(2)
                .build()
                .stream()
                .filter(reading -> !reading.from().isBefore(day) && reading.from().isBefore(day.plus(Duration.ofDays(1))))
                .toList();
    }

    /** Every relation outside the system schemas, with its kind and whether it is a partition: what a command could change. */
    private static List<String> relations(TestingDatabase database)
            throws SQLException
    {
        try (Connection connection = database.connect();
                Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("""
                        SELECT n.nspname || '.' || c.relname || ' ' || c.relkind::text || ' ' || c.relispartition::text
                        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                        WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
                        ORDER BY 1""")) {
            List<String> relations = new ArrayList<>();
            while (result.next()) {
                relations.add(result.getString(1));
            }
            return relations;
        }
    }

    private Path write(String name, String content)
            throws IOException
    {
        return Files.writeString(directory.resolve(name), content);
    }

    private static Run run(String[] args)
    {
        return run(args, new TestingClock(Instant.EPOCH));
    }

    static Run run(String[] args, TestingClock clock)
    {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exitCode = new ArchiverCli(new PrintStream(out, true, UTF_8), new PrintStream(err, true, UTF_8), clock).run(args);
        return new Run(exitCode, out.toString(UTF_8), err.toString(UTF_8));
    }

    record Run(int exitCode, String out, String err) {}
}
