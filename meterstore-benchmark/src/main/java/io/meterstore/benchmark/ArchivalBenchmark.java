package io.meterstore.benchmark;

import com.google.common.collect.Iterators;
import io.airlift.log.Logger;
import io.meterstore.benchmark.BenchmarkResult.Comparison;
import io.meterstore.benchmark.BenchmarkResult.Target;
import io.meterstore.benchmark.BenchmarkResult.Unit;
import io.meterstore.core.HotTier;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.ReadingsSchema;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.TestingDatabase;
import io.meterstore.testing.TestingWarehouse;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.CloseableIterable;
import org.postgresql.PGConnection;

import java.io.IOException;
import java.io.OutputStream;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

import static com.google.common.base.Preconditions.checkState;
import static io.meterstore.core.Sql.quoteIdentifier;
import static java.util.Objects.requireNonNull;

/**
 * A1 and S1: one UTC day of at least 1 M rows in a table of its own ({@code bench_a1.readings}), archived by the real
 * archiver in a JVM of its own, against Trino's Iceberg writer inserting the same rows and against COPY reading them
 * to nowhere (the floor any archiver reading PostgreSQL stands on); then the bytes per row of the files each wrote.
 * The day's rows are kept in {@code bench_source.a1_day} and copied into a fresh partition for every round.
 */
final class ArchivalBenchmark
{
    static final String SCHEMA = "bench_a1";
    static final String TABLE = "readings";
    static final String CATALOG = "meterstore_a1";
    private static final Logger log = Logger.get(ArchivalBenchmark.class);
    private static final Instant DAY = Instant.parse("2026-06-10T00:00:00Z");
    private static final String SOURCE = "bench_source.a1_day";
    private static final HotTier HOT_TIER = new HotTier(SCHEMA, new PartitionNaming(TABLE, PartitionNaming.DEFAULT_STEP), Duration.ofSeconds(5));
    private static final TableIdentifier IDENTIFIER = TableIdentifier.of(SCHEMA, TABLE);
    private static final DateTimeFormatter LITERAL = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneOffset.UTC);
    private static final String TRINO_TABLE = "iceberg.%s.trino_insert".formatted(SCHEMA);
    private static final String TRINO_CTAS = "iceberg.%s.s1_ctas".formatted(SCHEMA);
    // the archiver's layout, as Trino's Iceberg connector spells it: month partitions, the sort key, bloom filters; ZSTD is the catalog's codec
    private static final String TRINO_LAYOUT = """
            WITH (format = 'PARQUET', partitioning = ARRAY['month("from")'], sorted_by = ARRAY['malo_id', 'obis_code', '"from"', 'version'],
                  parquet_bloom_filter_columns = ARRAY['malo_id', 'obis_code'])""";

    private final BenchmarkSettings settings;
    private final TestingWarehouse warehouse;
    private final Connection trino;

    ArchivalBenchmark(BenchmarkSettings settings, TestingWarehouse warehouse, Connection trino)
    {
        this.settings = requireNonNull(settings, "settings is null");
        this.warehouse = requireNonNull(warehouse, "warehouse is null");
        this.trino = requireNonNull(trino, "trino is null");
    }

    /** One round: the first day archived in a fresh JVM ({@code archiveNanos}), the second in the same JVM after it ({@code warmNanos}). */
    private record Round(long rows, long postgresBytes, long copyNanos, long insertNanos, long archiveNanos, long warmNanos, long peakHeap, long maxHeap) {}

    /** Creates the kept source day unless it holds the rows of these settings; the hot tier of bench_a1 must exist before the catalog reads it. */
    static void prepare(BenchmarkSettings settings, TestingWarehouse warehouse)
            throws SQLException
    {
        TestingDatabase database = warehouse.database();
        String comment = "meters=%s".formatted(settings.archivalMeters());
        try (Connection connection = database.connect(); Statement statement = connection.createStatement()) {
            HOT_TIER.createParent(connection);
            try (ResultSet result = statement.executeQuery("SELECT obj_description(to_regclass('%s'), 'pg_class')".formatted(SOURCE))) {
                if (result.next() && comment.equals(result.getString(1))) {
                    return;
                }
            }
            log.info("A1: generating one UTC day of %s meters into %s", settings.archivalMeters(), SOURCE);
            statement.execute("DROP SCHEMA IF EXISTS bench_source CASCADE");
            statement.execute("CREATE SCHEMA bench_source");
            statement.execute("CREATE TABLE %s (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS)".formatted(SOURCE, HOT_TIER.qualifiedParent()));
            HotTier source = new HotTier("bench_source", new PartitionNaming("a1_day", PartitionNaming.DEFAULT_STEP), Duration.ofSeconds(5));
            long rows = new ReadingsLoader(source).copy(connection, readingsOfDay(settings.archivalMeters()));
            statement.execute("COMMENT ON TABLE %s IS '%s'".formatted(SOURCE, comment));
            log.info("A1: %s rows in %s", rows, SOURCE);
        }
    }

    List<BenchmarkResult> run()
    {
        Target faster = new Target(1 / 1.5, ">= 1.5x faster (<= 0.67)");
        Target floor = Target.atMost(3.0);
        String title = "archive one day (%s meters)".formatted(settings.archivalMeters());
        String warmTitle = "archive one day (%s meters), warm JVM".formatted(settings.archivalMeters());
        String floorTitle = "archive one day, against the read floor";
        List<Round> rounds = new ArrayList<>();
        try {
            for (int round = 0; round < settings.archivalRounds(); round++) {
                rounds.add(round(round));
            }
        }
        catch (Exception e) {
            log.error(e, "A1 failed");
            return List.of(
                    BenchmarkResult.failed("A1", title, "archiver", "Trino INSERT INTO iceberg", Unit.SECONDS, faster, e),
                    BenchmarkResult.failed("A1w", warmTitle, "archiver, second cycle in its JVM", "Trino INSERT INTO iceberg", Unit.SECONDS, faster, e),
                    BenchmarkResult.failed("A1c", floorTitle, "archiver", "COPY ... TO STDOUT (FORMAT binary)", Unit.SECONDS, floor, e));
        }
        long rows = rounds.getFirst().rows();
        double archive = median(rounds.stream().map(Round::archiveNanos).toList());
        double warm = median(rounds.stream().map(Round::warmNanos).toList());
        double insert = median(rounds.stream().map(Round::insertNanos).toList());
        double copy = median(rounds.stream().map(Round::copyNanos).toList());
        long peakHeap = rounds.stream().mapToLong(Round::peakHeap).max().orElseThrow();
        String summary = "%,d rows from one hot partition; medians of %s rounds. Archiver: %,.0f rows/s, peak heap %s MiB (in -Xmx%s, JVM maximum %s MiB), rounds %s. Trino INSERT: %,.0f rows/s, rounds %s. COPY: %,.0f rows/s, rounds %s."
                .formatted(rows, rounds.size(),
                        rows / archive, mebibytes(peakHeap), settings.archiverHeap(), mebibytes(rounds.getFirst().maxHeap()), seconds(rounds.stream().map(Round::archiveNanos).toList()),
                        rows / insert, seconds(rounds.stream().map(Round::insertNanos).toList()),
                        rows / copy, seconds(rounds.stream().map(Round::copyNanos).toList()));
        List<String> details = List.of(
                summary,
                "Archiver: `ArchivalCycle.archiveOnce()` in a JVM of its own (`ArchiveOnceProbe`), timed inside it: lease, DETACH, the ordered read, Parquet, the commit. A1 is its first cycle, in a fresh JVM as `archive-once` runs; A1w the second, in the same JVM, as the service runs every cycle after its first.",
                "Trino:\n\n```sql\nINSERT INTO %s SELECT * FROM %s.%s.readings_versions\n```\n\ninto a table created %s".formatted(TRINO_TABLE, CATALOG, SCHEMA, TRINO_LAYOUT.replace("\n", " ").replaceAll(" +", " ")),
                "COPY:\n\n```sql\n%s\n```\n\nto a stream that discards it.".formatted(copySql(HOT_TIER.qualifiedPartition(HOT_TIER.naming().partitionName(DAY)))));
        return List.of(
                new BenchmarkResult("A1", title, "archiver", "Trino INSERT INTO iceberg", Unit.SECONDS, archive, insert, faster, Comparison.SAME_RESULT, Optional.empty(), details),
                new BenchmarkResult("A1w", warmTitle, "archiver, second cycle in its JVM", "Trino INSERT INTO iceberg", Unit.SECONDS, warm, insert, faster, Comparison.SAME_RESULT, Optional.empty(),
                        List.of("The same rounds as A1. The archiver's JVM archives a second day of the same rows (shifted by a day) right after the first, as the service's scheduler runs every cycle after its first in one JVM; rounds %s, %,.0f rows/s."
                                .formatted(seconds(rounds.stream().map(Round::warmNanos).toList()), rows / warm))),
                new BenchmarkResult("A1c", floorTitle, "archiver", "COPY ... TO STDOUT (FORMAT binary)", Unit.SECONDS, archive, copy, floor, Comparison.NOT_COMPARABLE, Optional.empty(),
                        List.of("The same rounds as A1: the floor reads the rows the archiver reads, in its order, and writes nothing.")));
    }

    /** S1 after A1's last round: the archiver's files of that day against Trino's CTAS of the same rows, and PostgreSQL's partition. */
    BenchmarkResult storage(Optional<Long> postgresBytesPerDay, long mainColdRows)
    {
        String title = "bytes per row of the Parquet files";
        // winners and the versions they supersede in separate files cost a second footer and dictionary per day
        Target target = Target.atMost(1.05);
        try {
            Catalog catalog = warehouse.catalog();
            Table archived = catalog.loadTable(IDENTIFIER);
            checkState(archived.currentSnapshot() != null, "Run A1 first: bench_a1.readings has no archived rows");
            FileSizes archiver = fileSizes(archived);
            execute("DROP TABLE IF EXISTS " + TRINO_CTAS);
            execute("CREATE TABLE %s %s AS SELECT * FROM iceberg.%s.%s".formatted(TRINO_CTAS, TRINO_LAYOUT, SCHEMA, TABLE));
            FileSizes trinoWriter = fileSizes(catalog.loadTable(TableIdentifier.of(SCHEMA, "s1_ctas")));
            checkState(trinoWriter.rows() == archiver.rows(), "CTAS wrote %s rows, the archiver %s", trinoWriter.rows(), archiver.rows());
            FileSizes mainCold = fileSizes(catalog.loadTable(TableIdentifier.of(BenchmarkDataset.SCHEMA, BenchmarkDataset.TABLE)));
            String postgres;
            try (Connection connection = warehouse.database().connect(); Statement statement = connection.createStatement();
                    ResultSet result = statement.executeQuery("""
                            SELECT sum(pg_total_relation_size(i.inhrelid)), (SELECT count(*) FROM metering.readings)
                            FROM pg_inherits i WHERE i.inhparent = 'metering.readings'::regclass""")) {
                checkState(result.next());
                postgres = "%.2f B/row over the dataset's %,d hot rows".formatted(result.getLong(1) / (double) result.getLong(2), result.getLong(2));
            }
            List<String> details = List.of(
                    "The two days A1 archived (%,d rows; realistic values: Wh resolution, a load profile with noise, daily delivery batches, 2%% corrections): archiver %.2f B/row in %s files (the winners apart from the versions they supersede), Trino's Iceberg writer (CTAS) %.2f B/row in %s files, PostgreSQL %s."
                            .formatted(archiver.rows(), archiver.bytesPerRow(), archiver.files(), trinoWriter.bytesPerRow(), trinoWriter.files(),
                                    postgresBytesPerDay.map(bytes -> "%.2f B/row (pg_total_relation_size of the first day's partition: heap, TOAST, primary key)".formatted(bytes / (archiver.rows() / 2.0))).orElse("not measured")),
                    "The whole dataset: the archiver's cold tier %.2f B/row over %,d rows in %s files (a winners and a superseded file per archived day and month); PostgreSQL %s.".formatted(mainCold.bytesPerRow(), mainColdRows, mainCold.files(), postgres),
                    "Trino:\n\n```sql\nCREATE TABLE %s %s AS SELECT * FROM iceberg.%s.%s\n```".formatted(TRINO_CTAS, TRINO_LAYOUT, SCHEMA, TABLE));
            return new BenchmarkResult("S1", title, "archiver", "Trino's Iceberg writer (CTAS)", Unit.BYTES_PER_ROW, archiver.bytesPerRow(), trinoWriter.bytesPerRow(), target,
                    Comparison.SAME_RESULT, Optional.empty(), details);
        }
        catch (Exception e) {
            log.error(e, "S1 failed");
            return BenchmarkResult.failed("S1", title, "archiver", "Trino's Iceberg writer (CTAS)", Unit.BYTES_PER_ROW, target, e);
        }
    }

    private record FileSizes(long bytes, long rows, int files)
    {
        double bytesPerRow()
        {
            return bytes / (double) rows;
        }
    }

    private static FileSizes fileSizes(Table table)
            throws IOException
    {
        long bytes = 0;
        long rows = 0;
        int files = 0;
        try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
            for (FileScanTask task : tasks) {
                bytes += task.file().fileSizeInBytes();
                rows += task.file().recordCount();
                files++;
            }
        }
        return new FileSizes(bytes, rows, files);
    }

    private Optional<Long> lastPostgresBytes = Optional.empty();

    Optional<Long> postgresBytes()
    {
        return lastPostgresBytes;
    }

    private Round round(int round)
            throws Exception
    {
        log.info("A1: round %s of %s", round + 1, settings.archivalRounds());
        String partition = HOT_TIER.qualifiedPartition(HOT_TIER.naming().partitionName(DAY));
        String nextPartition = HOT_TIER.qualifiedPartition(HOT_TIER.naming().partitionName(DAY.plus(Duration.ofDays(1))));
        Catalog catalog = warehouse.catalog();
        execute("DROP TABLE IF EXISTS " + TRINO_TABLE);
        execute("DROP TABLE IF EXISTS " + TRINO_CTAS);
        if (catalog.tableExists(IDENTIFIER)) {
            catalog.dropTable(IDENTIFIER, true);
        }
        long rows;
        long postgresBytes;
        try (Connection connection = warehouse.database().connect(); Statement statement = connection.createStatement()) {
            statement.execute("DROP SCHEMA IF EXISTS %s CASCADE".formatted(quoteIdentifier(SCHEMA)));
            HOT_TIER.createParent(connection);
            // filled while standalone, then attached: the primary key is built in one sort, as TestArchiverCliMemory does
            statement.execute("CREATE TABLE %s (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS)".formatted(partition, HOT_TIER.qualifiedParent()));
            statement.execute("INSERT INTO %s SELECT * FROM %s".formatted(partition, SOURCE));
            statement.execute("ALTER TABLE %s ATTACH PARTITION %s FOR VALUES FROM ('%s') TO ('%s')".formatted(HOT_TIER.qualifiedParent(), partition, DAY, DAY.plus(Duration.ofDays(1))));
            // the same rows a day later, for the archiver's second (warm) cycle
            statement.execute("CREATE TABLE %s (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS)".formatted(nextPartition, HOT_TIER.qualifiedParent()));
            statement.execute("INSERT INTO %s (%s) SELECT %s FROM %s".formatted(nextPartition, ReadingsSchema.postgresColumnList(), shiftedByADay(), SOURCE));
            statement.execute("ALTER TABLE %s ATTACH PARTITION %s FOR VALUES FROM ('%s') TO ('%s')".formatted(HOT_TIER.qualifiedParent(), nextPartition, DAY.plus(Duration.ofDays(1)), DAY.plus(Duration.ofDays(2))));
            // hint bits set and statistics taken, so no reader pays for the load
            statement.execute("VACUUM (ANALYZE) " + partition);
            statement.execute("VACUUM (ANALYZE) " + nextPartition);
            try (ResultSet result = statement.executeQuery("SELECT count(*), pg_total_relation_size('%s') FROM %s".formatted(partition, partition))) {
                checkState(result.next());
                rows = result.getLong(1);
                postgresBytes = result.getLong(2);
            }
        }
        IcebergTableSpec.createIfMissing(catalog, IDENTIFIER);
        lastPostgresBytes = Optional.of(postgresBytes);

        long copyNanos = copyToNowhere(partition);

        execute("CREATE TABLE %s %s AS SELECT * FROM %s.%s.readings_versions WITH NO DATA".formatted(TRINO_TABLE, TRINO_LAYOUT, CATALOG, SCHEMA));
        long start = System.nanoTime();
        long inserted;
        try (Statement statement = trino.createStatement()) {
            inserted = statement.executeLargeUpdate("INSERT INTO %s SELECT * FROM %s.%s.readings_versions WHERE \"from\" < TIMESTAMP '%s UTC'"
                    .formatted(TRINO_TABLE, CATALOG, SCHEMA, LITERAL.format(DAY.plus(Duration.ofDays(1)))));
        }
        long insertNanos = System.nanoTime() - start;
        checkState(inserted == rows, "Trino inserted %s rows, the partition holds %s", inserted, rows);

        ArchiveOnceProbe.Run run = ArchiveOnceProbe.runInChildJvm(List.of(), settings.archiverHeap(), 2, warehouse, SCHEMA, TABLE, settings.directory());
        log.info("A1: the archiver's output:%n%s", run.output().strip());
        ArchiveOnceProbe.Cycle fresh = run.cycles().get(0);
        ArchiveOnceProbe.Cycle warm = run.cycles().get(1);
        checkState(fresh.archived() && fresh.rows() == rows, "The archiver did not archive the day's %s rows: %s", rows, fresh);
        checkState(warm.archived() && warm.rows() == rows, "The archiver did not archive the second day's %s rows: %s", rows, warm);
        Round result = new Round(rows, postgresBytes, copyNanos, insertNanos, fresh.nanos(), warm.nanos(),
                Math.max(fresh.peakHeapBytes(), warm.peakHeapBytes()), fresh.maxHeapBytes());
        log.info("A1: %s", result);
        return result;
    }

    /** The source day's columns in the parent's order, "from", "to" and the balancing day a day later. */
    private static String shiftedByADay()
    {
        return Arrays.stream(ReadingsColumn.values())
                .map(column -> switch (column) {
                    case FROM, TO -> "%s + interval '1 day'".formatted(quoteIdentifier(column.columnName()));
                    case BALANCING_DAY -> "%s + 1".formatted(quoteIdentifier(column.columnName()));
                    default -> quoteIdentifier(column.columnName());
                })
                .collect(Collectors.joining(", "));
    }

    private long copyToNowhere(String partition)
            throws SQLException, IOException
    {
        try (Connection connection = warehouse.database().connect()) {
            long start = System.nanoTime();
            connection.unwrap(PGConnection.class).getCopyAPI().copyOut(copySql(partition), OutputStream.nullOutputStream());
            return System.nanoTime() - start;
        }
    }

    /** What the archiver reads, in its order: the partition by the sort key, every column. */
    private static String copySql(String partition)
    {
        String order = ReadingsColumn.SORT_KEY.stream().map(column -> quoteIdentifier(column.columnName())).collect(Collectors.joining(", "));
        return "COPY (SELECT %s FROM %s ORDER BY %s) TO STDOUT (FORMAT binary)".formatted(ReadingsSchema.postgresColumnList(), partition, order);
    }

    private void execute(String sql)
            throws SQLException
    {
        try (Statement statement = trino.createStatement()) {
            statement.execute(sql);
        }
    }

    /** The rows of one UTC day, streamed from the generator's Berlin days without holding them. */
    private static Iterator<Reading> readingsOfDay(int meters)
    {
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(7)
                .meters(meters)
                .startDay(LocalDate.ofInstant(DAY, java.time.ZoneOffset.UTC))
                .days(2)
                .correctionsFraction(BenchmarkSettings.CORRECTIONS_FRACTION)
                .build();
        Instant end = DAY.plus(Duration.ofDays(1));
        return Iterators.filter(generator.iterator(), reading -> !reading.from().isBefore(DAY) && reading.from().isBefore(end));
    }

    private static double median(List<Long> nanos)
    {
        return Medians.seconds(Math.round(Medians.median(nanos)));
    }

    private static String seconds(List<Long> nanos)
    {
        return nanos.stream().map(value -> BenchmarkReport.figure(Medians.seconds(value), Unit.SECONDS)).collect(Collectors.joining(", "));
    }

    private static long mebibytes(long bytes)
    {
        return bytes / (1024 * 1024);
    }
}
