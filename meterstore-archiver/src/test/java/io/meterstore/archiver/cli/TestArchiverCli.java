package io.meterstore.archiver.cli;

import io.meterstore.archiver.cycle.TestingClock;
import io.meterstore.core.HotPartition;
import io.meterstore.core.HotTier;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.Reading;
import io.meterstore.core.TieringWatermark;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.TestingDatabase;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

final class TestArchiverCli
{
    private static final Instant MARCH_5 = Instant.parse("2024-03-05T00:00:00Z");

    @TempDir
    Path directory;

    @Test
    void testUsage()
    {
        Run run = run(new String[] {"archive-once"});
        assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_USAGE);
        assertThat(run.err()).startsWith("Usage: archiver <command> --config <file.properties>");

        run = run(new String[] {"archive-twice", "--config", "archiver.properties"});
        assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_USAGE);
        assertThat(run.err()).startsWith("Unknown command 'archive-twice'");
    }

    @Test
    void testInvalidConfiguration()
            throws IOException
    {
        Path missing = directory.resolve("missing.properties");
        Run run = run(new String[] {"archive-once", "--config", missing.toString()});
        assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_USAGE);
        assertThat(run.err()).isEqualTo("Invalid configuration in '%s': the file does not exist%n".formatted(missing));

        Path typo = write("typo.properties", """
                meterstore.postgresql.url=jdbc:postgresql://localhost:5432/metering
                meterstore.postgresql.user=archiver
                meterstore.iceberg.warehouse=file:///tmp/warehouse
                meterstore.setlement-lag=10d
                """);
        run = run(new String[] {"archive-once", "--config", typo.toString()});
        assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_USAGE);
        assertThat(run.err()).contains("unknown properties [meterstore.setlement-lag]: remove them or fix their spelling");

        Path shortLag = write("lag.properties", """
                meterstore.postgresql.url=jdbc:postgresql://localhost:5432/metering
                meterstore.postgresql.user=archiver
                meterstore.iceberg.warehouse=file:///tmp/warehouse
                meterstore.settlement-lag=12h
                """);
        run = run(new String[] {"archive-once", "--config", shortLag.toString()});
        assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_USAGE);
        assertThat(run.err()).contains("meterstore.settlement-lag must be at least meterstore.archival-step");
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
            assertThat(run.out()).isEqualTo("metering.readings: created (PostgreSQL table \"metering\".\"readings\", Iceberg table 'metering.readings')%n".formatted());
            // idempotent
            assertThat(run(new String[] {"create", "--config", config.toString()}, clock).exitCode()).isEqualTo(ArchiverCli.EXIT_OK);

            HotTier hotTier = new HotTier("metering", new PartitionNaming("readings", Duration.ofDays(1)), Duration.ofSeconds(5));
            List<Reading> readings = ReadingsGenerator.builder()
                    .meters(4)
                    .startDay(LocalDate.ofInstant(MARCH_5, ZoneOffset.UTC))
                    .days(2)
                    .build()
                    .stream()
                    .filter(reading -> !reading.from().isBefore(MARCH_5) && reading.from().isBefore(MARCH_5.plus(Duration.ofDays(1))))
                    .toList();
            try (Connection connection = database.connect()) {
                new ReadingsLoader(hotTier).load(connection, readings);
            }

            run = run(new String[] {"archive-once", "--config", config.toString()}, clock);
            assertThat(run.err()).isEmpty();
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            assertThat(run.out()).matches("metering\\.readings: archived \\[1970-01-01T00:00:00Z, 2024-03-06T00:00:00Z\\): %s rows in 1 files \\(\\d+ bytes\\), watermark 2024-03-06T00:00:00Z\\R".formatted(readings.size()));

            run = run(new String[] {"archive-once", "--config", config.toString()}, clock);
            assertThat(run.exitCode()).isEqualTo(ArchiverCli.EXIT_OK);
            assertThat(run.out()).isEqualTo("metering.readings: idle, nothing closed to archive, watermark 2024-03-06T00:00:00Z%n".formatted());

            clock.advance(Duration.ofHours(1));
            run = run(new String[] {"archive-once", "--config", config.toString()}, clock);
            assertThat(run.out()).isEqualTo("metering.readings: idle, nothing closed to archive, watermark 2024-03-06T00:00:00Z, dropped readings_2024_03_05_0000%n".formatted());

            Catalog catalog = warehouse.catalog();
            try {
                Table table = catalog.loadTable(TableIdentifier.of(Namespace.of("metering"), "readings"));
                assertThat(TieringWatermark.fromSummary(table.currentSnapshot().summary())).contains(TieringWatermark.of(MARCH_5.plus(Duration.ofDays(1))));
            }
            finally {
                ((Closeable) catalog).close();
            }
            try (Connection connection = database.connect()) {
                assertThat(hotTier.partitions(connection)).extracting(HotPartition::name).isEmpty();
            }
        }
    }

    static String properties(TestingDatabase database, TestingWarehouse warehouse)
    {
        return """
                meterstore.postgresql.url=%s
                meterstore.postgresql.user=%s
                meterstore.iceberg.warehouse=%s
                """.formatted(database.jdbcUrl(), database.user(), warehouse.location());
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

    private static Run run(String[] args, TestingClock clock)
    {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exitCode = new ArchiverCli(new PrintStream(out, true, UTF_8), new PrintStream(err, true, UTF_8), clock).run(args);
        return new Run(exitCode, out.toString(UTF_8), err.toString(UTF_8));
    }

    private record Run(int exitCode, String out, String err) {}
}
