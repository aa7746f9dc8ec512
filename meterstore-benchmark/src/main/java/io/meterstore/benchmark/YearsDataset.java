package io.meterstore.benchmark;

import com.google.common.collect.ImmutableMap;
import io.airlift.log.Logger;
import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchivalSettings;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.cycle.ArchivalWindow;
import io.meterstore.archiver.maintenance.ColdTierLayout;
import io.meterstore.archiver.maintenance.CompactionSettings;
import io.meterstore.archiver.maintenance.MaintenanceSettings;
import io.meterstore.archiver.maintenance.SnapshotExpiry;
import io.meterstore.archiver.maintenance.TableMaintenance;
import io.meterstore.core.ArchivalHistory;
import io.meterstore.core.HotTier;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.LocalFileIo;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.SnapshotRetention;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.TestingDatabase;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.trino.testing.DistributedQueryRunner;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import static com.google.common.base.Preconditions.checkState;
import static java.util.Objects.requireNonNull;

/**
 * The "years" dataset of issue 13 under {@code var/benchmark-years}: {@code meters} x {@code days} of readings (1,000 x
 * 730, about 70 M rows), loaded into PostgreSQL a chunk of days at a time with the parallel binary COPY and archived
 * by the archiver's own cycle, one window (a UTC day) per commit as the service archives, dropping each partition after
 * the reader grace so the hot tier never holds more than a chunk. The archiver's maintenance ({@code expire}, then
 * {@code compact}) runs every {@code maintenanceEvery} archived days. For each of the last {@code correctionDays}
 * archived days, one INSERT through Trino writes late corrections: new versions of 2 % of the intervals of a day 5 to
 * 40 days back, below W, as production receives them.
 * <p>
 * What only the making can measure is measured then and kept in the marker with the parameters: Y3's planning time of
 * the dataset beside its twin {@link #EARLY_TABLE}, made the same way but stopped after the 60th archival commit, and
 * Y4's metadata files, counted after the last commit and again after an expiry that keeps the newest snapshots (which is
 * why Y3 is measured before it).
 */
public final class YearsDataset
        implements AutoCloseable
{
    public static final String SCHEMA = BenchmarkDataset.SCHEMA;
    public static final String TABLE = BenchmarkDataset.TABLE;
    public static final TableIdentifier IDENTIFIER = TableIdentifier.of(SCHEMA, TABLE);
    /** The dataset's twin, made the same way but stopped after the 60th archival commit: Y3's baseline, planned beside it. */
    public static final String EARLY_TABLE = "readings_early";
    /** Snapshots Y4 keeps when it expires the rest, as `meterstore.min-snapshots-to-keep` does by default. */
    public static final int KEPT_SNAPSHOTS = SnapshotRetention.DEFAULT_MIN_SNAPSHOTS_TO_KEEP;

    private static final Logger log = Logger.get(YearsDataset.class);
    private static final Duration READER_GRACE = Duration.ofHours(1);
    // the making's maintenance compacts no month: Y1's first peer reads the table as a deployment without compaction
    // has it, and the benchmark compacts it afterwards, timed (YearsBenchmark)
    private static final MaintenanceSettings AS_ARCHIVED = new MaintenanceSettings(SnapshotRetention.DEFAULT, MaintenanceSettings.DEFAULT_ORPHAN_SAFETY_AGE, READER_GRACE,
            new CompactionSettings(Duration.ofDays(365 * 100), CompactionSettings.DEFAULT_TARGET_FILE_SIZE_BYTES, CompactionSettings.DEFAULT_CORRECTION_FILES_THRESHOLD));
    private static final DateTimeFormatter LITERAL = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneOffset.UTC);
    private static final String MARKER = "dataset.properties";
    private static final String MEASURED = "measured.";
    /** In the marker after Y5: what its retention sweep removed; no settings have this key, so the dataset is made again. */
    private static final String RETENTION_SWEPT = "retention-swept";

    private final TestingPostgresServer postgres;
    private final TestingWarehouse warehouse;
    private final Catalog catalog;
    private final Map<String, String> measured;
    private final boolean reused;
    private final Path directory;

    private YearsDataset(TestingPostgresServer postgres, TestingWarehouse warehouse, Map<String, String> measured, boolean reused, Path directory)
    {
        this.directory = requireNonNull(directory, "directory is null");
        this.postgres = requireNonNull(postgres, "postgres is null");
        this.warehouse = requireNonNull(warehouse, "warehouse is null");
        this.catalog = warehouse.catalog();
        this.measured = new LinkedHashMap<>(measured);
        this.reused = reused;
    }

    /** Opens the kept dataset if it was made from these settings, else makes it, with the engine the making needs. */
    public static YearsDataset open(YearsSettings settings, EngineFactory engines)
            throws Exception
    {
        Path directory = settings.directory();
        Optional<Map<String, String>> marker = BenchmarkDataset.readMarker(directory);
        boolean reuse = marker.map(values -> withoutMeasured(values).equals(settings.datasetKey())).orElse(false);
        if (!reuse) {
            BenchmarkDataset.deleteRecursively(directory.resolve("pgdata"));
            BenchmarkDataset.deleteRecursively(directory.resolve("warehouse"));
            Files.deleteIfExists(directory.resolve(MARKER));
        }
        Files.createDirectories(directory.resolve("warehouse"));
        TestingPostgresServer postgres = TestingPostgresServer.persistent(directory.resolve("pgdata"), 0);
        try {
            TestingDatabase database = postgres.database("benchmark");
            TestingWarehouse warehouse = new TestingWarehouse(database, directory.resolve("warehouse"), TestingWarehouse.CATALOG_NAME);
            Map<String, String> measured;
            if (reuse) {
                measured = marker.orElseThrow();
            }
            else {
                measured = new LinkedHashMap<>(settings.datasetKey());
                measured.putAll(make(settings, database, warehouse, engines));
                BenchmarkDataset.writeMarker(directory, measured);
            }
            return new YearsDataset(postgres, warehouse, measured, reuse, directory);
        }
        catch (Exception e) {
            postgres.close();
            throw e;
        }
    }

    /** Starts the engine over the dataset's warehouse, serving {@link #TABLE} and {@link #EARLY_TABLE}; the making needs one for Y3 and for the correction INSERTs. */
    @FunctionalInterface
    public interface EngineFactory
    {
        DistributedQueryRunner start(TestingWarehouse warehouse)
                throws Exception;
    }

    private static Map<String, String> make(YearsSettings settings, TestingDatabase database, TestingWarehouse warehouse, EngineFactory engines)
            throws Exception
    {
        Map<String, String> measured = new LinkedHashMap<>();
        Catalog catalog = warehouse.catalog();
        try {
            return make(settings, database, warehouse, catalog, engines, measured);
        }
        finally {
            if (catalog instanceof Closeable closeable) {
                closeable.close();
            }
        }
    }

    private static Map<String, String> make(YearsSettings settings, TestingDatabase database, TestingWarehouse warehouse, Catalog catalog, EngineFactory engines, Map<String, String> measured)
            throws Exception
    {
        // the engine reads both tables: the dataset, and its twin that stops after the 60th archival commit
        for (String table : List.of(TABLE, EARLY_TABLE)) {
            try (Connection connection = database.connect()) {
                hotTier(table).createParent(connection);
            }
            Table created = IcebergTableSpec.createIfMissing(catalog, TableIdentifier.of(SCHEMA, table));
            if (ArchivalHistory.recordedStep(created).isEmpty()) {
                ArchivalHistory.recordStep(created, PartitionNaming.DEFAULT_STEP);
            }
        }
        try (DistributedQueryRunner engine = engines.start(warehouse);
                Connection trino = MeterstoreBenchmark.trinoConnection(engine)) {
            Made made = archive(settings, database, catalog, trino, TABLE, settings.days(), settings.correctionDays(), Integer.MAX_VALUE);
            Made early = archive(settings, database, catalog, trino, EARLY_TABLE, YearsSettings.EARLY_COMMITS + 2, 0, YearsSettings.EARLY_COMMITS);
            checkState(early.archivalCommits() == YearsSettings.EARLY_COMMITS, "The early twin has %s archival commits", early.archivalCommits());
            measured.put(MEASURED + "rows", String.valueOf(made.rows()));
            measured.put(MEASURED + "archival-commits", String.valueOf(made.archivalCommits()));
            measured.put(MEASURED + "correction-commits", String.valueOf(made.correctionCommits()));
            measured.put(MEASURED + "load-seconds", seconds(made.loadNanos()));
            measured.put(MEASURED + "archive-seconds", seconds(made.archiveNanos()));
            measured.put(MEASURED + "correction-seconds", seconds(made.correctionNanos()));
            measured.put(MEASURED + "maintenance-seconds", seconds(made.maintenanceNanos()));
            // both planned on one warm engine at one moment, rounds alternating, so neither side is timed on a colder one
            PlanningTime.Compared planning = PlanningTime.compare(trino, PlanningTime.oneDay(TABLE, settings.planDay()), PlanningTime.oneDay(EARLY_TABLE, settings.planDay()), settings.rounds());
            measured.put(MEASURED + "y3.late.nanos", join(planning.first()));
            measured.put(MEASURED + "y3.early.nanos", join(planning.second()));
            measured.put(MEASURED + "y3.late.layout", ColdTierLayout.of(catalog.loadTable(IDENTIFIER)).describe());
            measured.put(MEASURED + "y3.early.layout", ColdTierLayout.of(catalog.loadTable(TableIdentifier.of(SCHEMA, EARLY_TABLE))).describe());
        }
        try (Connection connection = database.connect(); Statement statement = connection.createStatement()) {
            statement.execute("VACUUM (ANALYZE) metering.readings");
        }
        measured.putAll(metadataFiles(catalog.loadTable(IDENTIFIER)));
        return measured;
    }

    private record Made(long rows, int archivalCommits, int correctionCommits, long loadNanos, long archiveNanos, long correctionNanos, long maintenanceNanos) {}

    /**
     * Loads {@code days} days into {@code table} a chunk at a time and archives them, one UTC day per commit, with the
     * maintenance every {@code maintenanceEvery} commits and after the last; corrects a day for each of the last
     * {@code correctionDays} archived days; stops after {@code maxCommits} archival commits.
     */
    private static Made archive(YearsSettings settings, TestingDatabase database, Catalog catalog, Connection trino, String table, int days, int correctionDays, int maxCommits)
            throws Exception
    {
        TableIdentifier identifier = TableIdentifier.of(SCHEMA, table);
        HotTier hotTier = hotTier(table);
        // the archiver's clock moves two hours a cycle, so every archived partition is dropped two cycles later
        AtomicReference<Instant> now = new AtomicReference<>(BenchmarkDataset.LATER);
        ArchivalCycle cycle = new ArchivalCycle(catalog, identifier, hotTier, database::connect,
                new ArchivalSettings(ArchivalSettings.DEFAULT_SETTLEMENT_LAG, READER_GRACE, ArchivalSettings.DEFAULT_CHUNK_ROWS), now::get);
        // maintenance on the machine's clock: snapshot times are the machine's, and nothing is old enough to expire
        TableMaintenance maintenance = new TableMaintenance(catalog, identifier, hotTier, database::connect, AS_ARCHIVED, Clock.systemUTC());
        LocalDate end = YearsSettings.START_DAY.plusDays(days);
        LocalDate firstCorrectionDay = end.minusDays(correctionDays);
        long loadNanos = 0;
        long archiveNanos = 0;
        long correctionNanos = 0;
        long maintenanceNanos = 0;
        int archivalCommits = 0;
        int correctionCommits = 0;
        long rows = 0;
        for (LocalDate chunk = YearsSettings.START_DAY; chunk.isBefore(end) && archivalCommits < maxCommits; chunk = chunk.plusDays(settings.chunkDays())) {
            int chunkDays = (int) Math.min(settings.chunkDays(), end.toEpochDay() - chunk.toEpochDay());
            ReadingsGenerator generator = ReadingsGenerator.builder()
                    .seed(YearsSettings.SEED)
                    .meters(settings.meters())
                    .startDay(chunk)
                    .days(chunkDays)
                    .correctionsFraction(BenchmarkSettings.CORRECTIONS_FRACTION)
                    .build();
            long start = System.nanoTime();
            rows += new ReadingsLoader(hotTier).load(database::connect, generator, 2);
            loadNanos += System.nanoTime() - start;
            boolean last = !chunk.plusDays(settings.chunkDays()).isBefore(end);
            // the next chunk's first Berlin day begins in this chunk's last UTC partition: that one waits for it
            Instant target = last
                    ? generator.end().atZone(ZoneOffset.UTC).toLocalDate().plusDays(1).atStartOfDay(ZoneOffset.UTC).toInstant()
                    : generator.end().atZone(ZoneOffset.UTC).toLocalDate().atStartOfDay(ZoneOffset.UTC).toInstant();
            log.info("Years: %s: loaded %s days from %s (%,d rows so far); archiving to %s", table, chunkDays, chunk, rows, target);
            TieringWatermark watermark = WatermarkReader.current(catalog.loadTable(identifier)).watermark();
            while (watermark.instant().isBefore(target) && archivalCommits < maxCommits) {
                now.set(now.get().plus(Duration.ofHours(2)));
                start = System.nanoTime();
                ArchiveOutcome outcome = cycle.archiveOnce();
                archiveNanos += System.nanoTime() - start;
                checkState(outcome.kind() == ArchiveOutcome.Kind.ARCHIVED, "Archival stopped before %s: %s", target, outcome.describe());
                watermark = outcome.watermark();
                archivalCommits++;
                if (archivalCommits % settings.maintenanceEvery() == 0) {
                    maintenanceNanos += maintain(maintenance);
                }
                LocalDate archived = outcome.window().map(ArchivalWindow::start).orElseThrow().atZone(ZoneOffset.UTC).toLocalDate();
                if (!archived.isBefore(firstCorrectionDay)) {
                    start = System.nanoTime();
                    correct(trino, table, archived);
                    correctionNanos += System.nanoTime() - start;
                    correctionCommits++;
                }
            }
        }
        maintenanceNanos += maintain(maintenance);
        return new Made(rows, archivalCommits, correctionCommits, loadNanos, archiveNanos, correctionNanos, maintenanceNanos);
    }

    private static long maintain(TableMaintenance maintenance)
            throws SQLException, IOException
    {
        long start = System.nanoTime();
        log.info("Years: %s", maintenance.expire().describe());
        log.info("Years: %s", maintenance.compact().describe());
        return System.nanoTime() - start;
    }

    static HotTier hotTier(String table)
    {
        return new HotTier(SCHEMA, new PartitionNaming(table, PartitionNaming.DEFAULT_STEP), Duration.ofSeconds(5));
    }

    private static String join(List<Long> nanos)
    {
        return String.join(",", nanos.stream().map(String::valueOf).toList());
    }

    /**
     * One INSERT through Trino of late corrections for a day 5 to 40 days before {@code archived}: a new version of one
     * interval in 50 of that day, read from the winners, recorded a week after {@code archived} ended.
     */
    private static void correct(Connection trino, String table, LocalDate archived)
            throws SQLException
    {
        SplittableRandom random = new SplittableRandom(YearsSettings.SEED ^ archived.toEpochDay());
        LocalDate corrected = archived.minusDays(random.nextInt(YearsSettings.CORRECTION_MIN_DAYS_BACK, YearsSettings.CORRECTION_MAX_DAYS_BACK + 1));
        Instant from = corrected.atStartOfDay(ZoneOffset.UTC).toInstant();
        Instant recorded = archived.plusDays(8).atTime(12, 0).toInstant(ZoneOffset.UTC);
        String columns = "malo_id, melo_id, obis_code, sparte, \"from\", \"to\", value, unit, quality, resolution, source_kind, source_detail, provenance, version, version_scope, recorded_at, balancing_day";
        String sql = """
                INSERT INTO meterstore.%1$s.%2$s_versions (%3$s)
                SELECT malo_id, melo_id, obis_code, sparte, "from", "to", CAST(value + DECIMAL '0.010000' AS decimal(18, 6)), unit, 'SUBSTITUTED', resolution,
                       source_kind, source_detail, provenance, CAST(version + 1 AS decimal(20, 0)), version_scope, TIMESTAMP '%4$s UTC', balancing_day
                FROM meterstore.%1$s.%2$s
                WHERE "from" >= TIMESTAMP '%5$s UTC' AND "from" < TIMESTAMP '%6$s UTC'
                  AND mod(from_big_endian_64(xxhash64(to_utf8(malo_id || to_iso8601("from")))), %7$s) = 0""".formatted(
                SCHEMA, table, columns, LITERAL.format(recorded), LITERAL.format(from), LITERAL.format(from.plus(Duration.ofDays(1))), YearsSettings.CORRECTED_ONE_IN);
        try (Statement statement = trino.createStatement()) {
            long inserted = statement.executeLargeUpdate(sql);
            log.info("Years: corrected %s intervals of %s after archiving %s", inserted, corrected, archived);
        }
    }

    /**
     * Y4's metadata part: the table's metadata files after the last commit, and after expiring all but the newest
     * snapshots as a retention that has passed would. The data files are untouched: every kept snapshot reads them.
     */
    private static Map<String, String> metadataFiles(Table table)
            throws Exception
    {
        Path metadata = LocalFileIo.path(table.location()).resolve("metadata");
        Map<String, String> counts = new LinkedHashMap<>();
        counts.putAll(count("before", metadata));
        MaintenanceSettings keepNewest = new MaintenanceSettings(new SnapshotRetention(Duration.ZERO, KEPT_SNAPSHOTS), MaintenanceSettings.DEFAULT_ORPHAN_SAFETY_AGE, READER_GRACE);
        // as if the retention had passed: the reader grace is over for every snapshot
        SnapshotExpiry.Expired expired = SnapshotExpiry.expire(table, Instant.now().plus(READER_GRACE.multipliedBy(2)), keepNewest, List.of());
        log.info("Years: expired %s snapshots, %s files, kept %s", expired.snapshots(), expired.deletedFiles(), expired.kept());
        counts.putAll(count("after", metadata));
        table.refresh();
        ColdTierLayout layout = ColdTierLayout.of(table);
        counts.put(MEASURED + "y4.months", String.valueOf(layout.months().size()));
        // the months whose late corrections' position deletes wait for compaction: each has a delete manifest of its own
        counts.put(MEASURED + "y4.delete-months", String.valueOf(layout.months().values().stream().filter(month -> month.deleteFiles() > 0).count()));
        return counts;
    }

    private static Map<String, String> count(String when, Path metadata)
            throws Exception
    {
        List<String> names;
        try (Stream<Path> files = Files.list(metadata)) {
            names = files.map(file -> file.getFileName().toString()).toList();
        }
        long json = names.stream().filter(name -> name.endsWith(".metadata.json")).count();
        long lists = names.stream().filter(name -> name.startsWith("snap-")).count();
        long manifests = names.stream().filter(name -> name.endsWith(".avro") && !name.startsWith("snap-")).count();
        return ImmutableMap.of(
                MEASURED + "y4." + when + ".metadata-json", String.valueOf(json),
                MEASURED + "y4." + when + ".manifest-lists", String.valueOf(lists),
                MEASURED + "y4." + when + ".manifests", String.valueOf(manifests),
                MEASURED + "y4." + when + ".snapshots", String.valueOf(lists));
    }

    private static String seconds(long nanos)
    {
        return String.valueOf(nanos / 1_000_000_000);
    }

    private static Map<String, String> withoutMeasured(Map<String, String> marker)
    {
        Map<String, String> key = new LinkedHashMap<>(marker);
        key.keySet().removeIf(name -> name.startsWith(MEASURED));
        return key;
    }

    /**
     * Records in the marker that Y5's retention sweep removed months of the dataset ({@code what}), under a key that is
     * not a parameter: the marker no longer matches any settings, so the next run makes the dataset again.
     */
    public void markRetentionSwept(String what)
            throws IOException
    {
        putInMarker(RETENTION_SWEPT, what);
    }

    /** Records a measurement of the kept dataset in its marker, so that a later run that reuses the dataset reports it. */
    public void recordMeasured(String key, String value)
            throws IOException
    {
        putInMarker(MEASURED + key, value);
        measured.put(MEASURED + key, value);
    }

    private void putInMarker(String key, String value)
            throws IOException
    {
        Map<String, String> marker = new LinkedHashMap<>(BenchmarkDataset.readMarker(directory).orElseThrow(() -> new IllegalStateException("The kept years dataset in %s has no marker".formatted(directory))));
        marker.put(key, value);
        BenchmarkDataset.writeMarker(directory, marker);
    }

    /** What the making measured, by key without the {@code measured.} prefix. */
    public Optional<String> measured(String key)
    {
        return Optional.ofNullable(measured.get(MEASURED + key));
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

    public boolean reused()
    {
        return reused;
    }

    public TieringWatermark watermark()
    {
        return WatermarkReader.current(table()).watermark();
    }

    public Table table()
    {
        return catalog.loadTable(IDENTIFIER);
    }

    @Override
    public void close()
            throws IOException
    {
        try (postgres) {
            if (catalog instanceof Closeable closeable) {
                closeable.close();
            }
        }
    }
}
