package io.meterstore.archiver.cli;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.Iterators;
import io.meterstore.core.HotTier;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.Reading;
import io.meterstore.core.TieringWatermark;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.TestingDatabase;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.Closeable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Peak memory is the chunk, not the partition: a day of 2 M rows is archived by {@code archive-once} in a JVM with a
 * 64 MiB heap, which could not hold a tenth of the day's rows as objects.
 */
final class TestArchiverCliMemory
{
    private static final Instant DAY = Instant.parse("2024-03-05T00:00:00Z");
    // 22,000 meters: their 92 quarter-hours of the Berlin day that fall into the UTC day, plus corrections
    private static final int METERS = 22_000;

    @TempDir
    Path directory;

    @Test
    void testArchivesTwoMillionRowsInSixtyFourMegabytes()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("cli_memory")) {
            TestingWarehouse warehouse = TestingWarehouse.create(database);
            Catalog catalog = warehouse.catalog();
            try {
                HotTier hotTier = new HotTier("metering", new PartitionNaming("readings", Duration.ofDays(1)), Duration.ofSeconds(5));
                TableIdentifier identifier = TableIdentifier.of(Namespace.of("metering"), "readings");
                IcebergTableSpec.createIfMissing(catalog, identifier);
                long rows;
                try (Connection connection = database.connect(); Statement statement = connection.createStatement()) {
                    hotTier.createParent(connection);
                    String partition = hotTier.naming().partitionName(DAY);
                    statement.execute("CREATE TABLE %s (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS)".formatted(hotTier.qualifiedPartition(partition), hotTier.qualifiedParent()));
                    // COPY into the partition while it is a table of its own: ATTACH then builds its primary key in one
                    // sort instead of row by row, which halves the load
                    HotTier standalone = new HotTier("metering", new PartitionNaming(partition, Duration.ofDays(1)), Duration.ofSeconds(5));
                    rows = new ReadingsLoader(standalone).copy(connection, readingsOfUtcDay());
                    statement.execute("ALTER TABLE %s ATTACH PARTITION %s FOR VALUES FROM ('2024-03-05T00:00:00Z') TO ('2024-03-06T00:00:00Z')"
                            .formatted(hotTier.qualifiedParent(), hotTier.qualifiedPartition(partition)));
                }
                assertThat(rows).isGreaterThanOrEqualTo(2_000_000);

                Path config = Files.writeString(directory.resolve("archiver.properties"), TestArchiverCli.properties(database, warehouse));
                Path output = directory.resolve("archiver.out");
                Process process = new ProcessBuilder(
                        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                        "-Xmx64m",
                        "-XX:+ExitOnOutOfMemoryError",
                        "--add-modules=jdk.incubator.vector",
                        "--enable-native-access=ALL-UNNAMED",
                        "--sun-misc-unsafe-memory-access=allow",
                        "-cp",
                        System.getProperty("java.class.path"),
                        ArchiverCli.class.getName(),
                        "archive-once",
                        "--config",
                        config.toString())
                        .redirectErrorStream(true)
                        .redirectOutput(output.toFile())
                        .start();
                boolean exited = process.waitFor(3, TimeUnit.MINUTES);
                if (!exited) {
                    process.destroyForcibly().waitFor();
                }
                String log = Files.readString(output);
                assertThat(exited).as("archive-once finished in time; output:%n%s", log).isTrue();
                assertThat(process.exitValue()).as("exit code; output:%n%s", log).isZero();
                assertThat(log).contains("metering.readings: archived [1970-01-01T00:00:00Z, 2024-03-06T00:00:00Z): %s rows in ".formatted(rows));

                Table table = catalog.loadTable(identifier);
                Snapshot snapshot = table.currentSnapshot();
                assertThat(table.snapshots()).hasSize(1);
                assertThat(snapshot.summary())
                        .containsEntry(TieringWatermark.ROW_COUNT_KEY, String.valueOf(rows))
                        .containsEntry(TieringWatermark.WATERMARK_KEY, "2024-03-06T00:00:00Z");
                List<DataFile> files = ImmutableList.copyOf(snapshot.addedDataFiles(table.io()));
                assertThat(files.stream().mapToLong(DataFile::recordCount).sum()).isEqualTo(rows);
                // 256 k rows per row group: the split offsets say the file was written in row groups, not one block
                assertThat(files.stream().mapToInt(file -> file.splitOffsets().size()).sum()).isGreaterThanOrEqualTo((int) (rows / IcebergTableSpec.ROW_GROUP_ROWS));
            }
            finally {
                ((Closeable) catalog).close();
            }
        }
    }

    /** The rows of one UTC day, streamed from the generator's Berlin days without holding them. */
    private static Iterator<Reading> readingsOfUtcDay()
    {
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(2024)
                .meters(METERS)
                .startDay(LocalDate.of(2024, 3, 5))
                .days(1)
                .build();
        Instant end = DAY.plus(Duration.ofDays(1));
        return Iterators.filter(generator.iterator(), reading -> !reading.from().isBefore(DAY) && reading.from().isBefore(end));
    }
}
