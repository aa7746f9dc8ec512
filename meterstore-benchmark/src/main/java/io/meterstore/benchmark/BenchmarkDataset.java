package io.meterstore.benchmark;

import io.airlift.log.Logger;
import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchivalSettings;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.core.HotTier;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.TestingDatabase;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingS3Server;
import io.meterstore.testing.TestingWarehouse;
import io.meterstore.testing.TestingWarehouse.TestingBucket;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.CloseableIterable;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.TreeMap;
import java.util.stream.Stream;

import static com.google.common.base.Preconditions.checkState;
import static java.util.Objects.requireNonNull;

/**
 * The generated readings in both tiers under the benchmark directory: PostgreSQL's data directory and the Iceberg
 * warehouse. Loading 58 M rows takes minutes, so a dataset is kept and reused while the parameters it was made from
 * match; anything else there is deleted and made again.
 */
public final class BenchmarkDataset
        implements AutoCloseable
{
    public static final String SCHEMA = "metering";
    public static final String TABLE = "readings";
    public static final HotTier HOT_TIER = new HotTier(SCHEMA, new PartitionNaming(TABLE, PartitionNaming.DEFAULT_STEP), Duration.ofSeconds(5));
    // far enough ahead that every generated day is closed; the loop below stops at the wanted watermark
    public static final Instant LATER = Instant.parse("2100-01-01T00:00:00Z");

    private static final Logger log = Logger.get(BenchmarkDataset.class);
    private static final String MARKER = "dataset.properties";
    /**
     * In the marker, beside the parameters: the meters E1 erased from the dataset, comma-separated, oldest first. An
     * erasure changes the kept dataset for good (and its audit row refuses the meter's readings ever after), so each
     * E1 run erases a meter not named here, and the dataset is still reused with them gone.
     */
    static final String ERASED_METERS = "erased-meters";

    private final TestingPostgresServer postgres;
    private final Optional<TestingS3Server> s3;
    private final TestingWarehouse warehouse;
    private final ReadingsGenerator generator;
    private final TieringWatermark watermark;
    private final long rows;
    private final long coldRows;
    private final boolean reused;
    private final Path directory;
    private final List<String> erasedMeters;

    private BenchmarkDataset(TestingPostgresServer postgres, Optional<TestingS3Server> s3, TestingWarehouse warehouse, ReadingsGenerator generator, TieringWatermark watermark, long rows, long coldRows, boolean reused,
            Path directory, List<String> erasedMeters)
    {
        this.directory = requireNonNull(directory, "directory is null");
        this.erasedMeters = new ArrayList<>(erasedMeters);
        this.postgres = requireNonNull(postgres, "postgres is null");
        this.s3 = requireNonNull(s3, "s3 is null");
        this.warehouse = requireNonNull(warehouse, "warehouse is null");
        this.generator = requireNonNull(generator, "generator is null");
        this.watermark = requireNonNull(watermark, "watermark is null");
        this.rows = rows;
        this.coldRows = coldRows;
        this.reused = reused;
    }

    public static ReadingsGenerator generator(BenchmarkSettings settings)
    {
        return ReadingsGenerator.builder()
                .seed(BenchmarkSettings.SEED)
                .meters(settings.meters())
                .startDay(BenchmarkSettings.START_DAY)
                .days(settings.days())
                .correctionsFraction(BenchmarkSettings.CORRECTIONS_FRACTION)
                .build();
    }

    /** Opens the kept dataset if it was made from these settings, else makes it: load, archive all but the hot days, vacuum. */
    public static BenchmarkDataset open(BenchmarkSettings settings)
            throws Exception
    {
        Path directory = settings.directory();
        Map<String, String> key = settings.datasetKey();
        Optional<Map<String, String>> marker = readMarker(directory);
        // E1's erasures are recorded beside the parameters: a dataset with meters erased is still the one they describe
        boolean reuse = marker.map(BenchmarkDataset::withoutErasures).equals(Optional.of(key));
        List<String> erased = reuse ? erasedMeters(marker.orElseThrow()) : List.of();
        if (!reuse) {
            deleteRecursively(directory.resolve("pgdata"));
            deleteRecursively(directory.resolve("warehouse"));
            deleteRecursively(directory.resolve("s3"));
            Files.deleteIfExists(directory.resolve(MARKER));
        }
        Files.createDirectories(directory.resolve("warehouse"));
        TestingPostgresServer postgres = TestingPostgresServer.persistent(directory.resolve("pgdata"), 0);
        TestingDatabase database = postgres.database("benchmark");
        // on S3 the warehouse is a bucket of an S3 server whose objects are kept under the dataset directory
        Optional<TestingS3Server> s3 = switch (settings.storage()) {
            case LOCAL -> Optional.empty();
            case S3 -> Optional.of(TestingS3Server.persistent(directory.resolve("s3")));
        };
        TestingWarehouse warehouse = new TestingWarehouse(database, directory.resolve("warehouse"), TestingWarehouse.CATALOG_NAME,
                s3.map(server -> new TestingBucket(server, server.bucket("benchmark"))), Optional.empty());
        ReadingsGenerator generator = generator(settings);
        try {
            if (!reuse) {
                make(settings, database, warehouse, generator);
                writeMarker(directory, key);
            }
            Table table = warehouse.catalog().loadTable(TableIdentifier.of(SCHEMA, TABLE));
            LateCorrectionStream.rollBackLeftOver(table);
            TieringWatermark watermark = WatermarkReader.current(table).watermark();
            long coldRows = 0;
            try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
                for (FileScanTask task : tasks) {
                    coldRows += task.file().recordCount();
                }
            }
            long hotRows;
            try (Connection connection = database.connect(); Statement statement = connection.createStatement();
                    ResultSet result = statement.executeQuery("SELECT count(*) FROM metering.readings")) {
                checkState(result.next());
                hotRows = result.getLong(1);
            }
            return new BenchmarkDataset(postgres, s3, warehouse, generator, watermark, coldRows + hotRows, coldRows, reuse, directory, erased);
        }
        catch (Exception e) {
            postgres.close();
            s3.ifPresent(TestingS3Server::close);
            throw e;
        }
    }

    private static void make(BenchmarkSettings settings, TestingDatabase database, TestingWarehouse warehouse, ReadingsGenerator generator)
            throws Exception
    {
        try (Connection connection = database.connect()) {
            HOT_TIER.createParent(connection);
        }
        Table table = IcebergTableSpec.createIfMissing(warehouse.catalog(), TableIdentifier.of(SCHEMA, TABLE));
        log.info("Loading %s meters x %s days (about %s rows) into PostgreSQL", settings.meters(), settings.days(), generator.originalCount());
        long start = System.nanoTime();
        long loaded = new ReadingsLoader(HOT_TIER).load(database::connect, generator, 2);
        log.info("Loaded %s rows in %s s", loaded, (System.nanoTime() - start) / 1_000_000_000);

        // partitions are UTC days, so the cold tier ends at the UTC midnight that starts the first hot day
        Instant target = BenchmarkSettings.START_DAY.plusDays(settings.coldDays()).atStartOfDay(ZoneOffset.UTC).toInstant();
        ArchivalCycle cycle = new ArchivalCycle(
                warehouse.catalog(),
                TableIdentifier.of(SCHEMA, TABLE),
                HOT_TIER,
                database::connect,
                ArchivalSettings.DEFAULTS,
                InstantSource.fixed(LATER));
        while (WatermarkReader.current(table).watermark().instant().isBefore(target)) {
            ArchiveOutcome outcome = cycle.archiveOnce();
            checkState(outcome.kind() == ArchiveOutcome.Kind.ARCHIVED, "Archival stopped before %s: %s", target, outcome.describe());
            log.info("%s", outcome.describe());
            table.refresh();
        }
        // hint bits and planner statistics, as a database that has been live for a while has them
        try (Connection connection = database.connect(); Statement statement = connection.createStatement()) {
            statement.execute("VACUUM (ANALYZE) metering.readings");
        }
    }

    public TestingPostgresServer postgres()
    {
        return postgres;
    }

    public TestingDatabase database()
    {
        return warehouse.database();
    }

    public TestingWarehouse warehouse()
    {
        return warehouse;
    }

    public ReadingsGenerator generator()
    {
        return generator;
    }

    public TieringWatermark watermark()
    {
        return watermark;
    }

    public long rows()
    {
        return rows;
    }

    public long coldRows()
    {
        return coldRows;
    }

    public boolean reused()
    {
        return reused;
    }

    /** The meters E1 runs erased from this dataset, oldest first. */
    public List<String> erasedMeters()
    {
        return List.copyOf(erasedMeters);
    }

    /**
     * Records in the marker that {@code maloId} is erased, before the DELETE runs: a run that dies during it leaves the
     * meter named, so the next run erases another instead of timing what is left of a half-erased one.
     */
    public void recordErasure(String maloId)
            throws IOException
    {
        Map<String, String> marker = new TreeMap<>(readMarker(directory).orElseThrow(() -> new IllegalStateException("The kept dataset in %s has no marker".formatted(directory))));
        erasedMeters.add(maloId);
        marker.put(ERASED_METERS, String.join(",", erasedMeters));
        writeMarker(directory, marker);
    }

    private static Map<String, String> withoutErasures(Map<String, String> marker)
    {
        Map<String, String> key = new TreeMap<>(marker);
        key.remove(ERASED_METERS);
        return key;
    }

    private static List<String> erasedMeters(Map<String, String> marker)
    {
        return Optional.ofNullable(marker.get(ERASED_METERS)).stream()
                .flatMap(value -> Arrays.stream(value.split(",")))
                .map(String::trim)
                .filter(id -> !id.isEmpty())
                .toList();
    }

    @Override
    public void close()
            throws IOException
    {
        s3.ifPresent(TestingS3Server::close);
        postgres.close();
    }

    static Optional<Map<String, String>> readMarker(Path directory)
            throws IOException
    {
        Path marker = directory.resolve(MARKER);
        if (!Files.exists(marker)) {
            return Optional.empty();
        }
        Properties properties = new Properties();
        try (Reader reader = Files.newBufferedReader(marker)) {
            properties.load(reader);
        }
        Map<String, String> values = new TreeMap<>();
        properties.stringPropertyNames().forEach(name -> values.put(name, properties.getProperty(name)));
        return Optional.of(values);
    }

    static void writeMarker(Path directory, Map<String, String> key)
            throws IOException
    {
        Properties properties = new Properties();
        properties.putAll(key);
        try (Writer writer = Files.newBufferedWriter(directory.resolve(MARKER))) {
            properties.store(writer, "the parameters of the kept benchmark dataset; delete this file to make it again");
        }
    }

    static void deleteRecursively(Path path)
            throws IOException
    {
        if (!Files.exists(path)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(path)) {
            for (Path each : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(each);
            }
        }
    }
}
