package io.meterstore.benchmark;

import com.google.common.collect.ImmutableMap;
import io.airlift.log.Logger;
import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchivalSettings;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.maintenance.ColdTierLayout;
import io.meterstore.archiver.maintenance.MaintenanceSettings;
import io.meterstore.archiver.maintenance.TableMaintenance;
import io.meterstore.core.ArchivalHistory;
import io.meterstore.core.HotTier;
import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsTableCreation;
import io.meterstore.core.Sparte;
import io.meterstore.core.TableShape;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
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
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

import static com.google.common.base.Preconditions.checkState;
import static java.util.Objects.requireNonNull;

/**
 * P1's dataset under {@code var/benchmark-points}: a point table {@link #TABLE} (time_model point, keyed by malo_id) of
 * {@code meters} x {@code days} daily register readings ({@link RegisterReadings}), loaded into PostgreSQL a chunk of days
 * at a time by the binary COPY and archived by the archiver's own cycle, one UTC day per commit, with the archiver's
 * maintenance ({@code expire}, then {@code compact} at its defaults: a month is compacted 14 days after it ended) every
 * {@link PointsSettings#MAINTENANCE_EVERY} archived days. The cycle stops before the last {@link PointsSettings#HOT_DAYS}
 * Berlin days, which stay hot. Then late corrections below W, as production receives them: one INSERT through Trino per
 * archived month, a new version of the month's first reading for one meter in {@link #LATE_CORRECTED_ONE_IN}, and the
 * maintenance once more. Reused while its parameters match, as the years dataset is.
 */
public final class PointsDataset
        implements AutoCloseable
{
    public static final String SCHEMA = BenchmarkDataset.SCHEMA;
    public static final String TABLE = "zaehlerstaende";
    public static final TableIdentifier IDENTIFIER = TableIdentifier.of(SCHEMA, TABLE);
    public static final int LATE_CORRECTED_ONE_IN = 50;

    private static final Logger log = Logger.get(PointsDataset.class);
    private static final Duration READER_GRACE = Duration.ofHours(1);
    private static final DateTimeFormatter LITERAL = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneOffset.UTC);
    private static final String MEASURED = "measured.";
    private static final String COLUMNS = "malo_id, melo_id, obis_code, sparte, \"from\", \"to\", value, unit, quality, resolution, source_kind, source_detail, provenance, version, version_scope, recorded_at, balancing_day";

    private final TestingPostgresServer postgres;
    private final TestingWarehouse warehouse;
    private final Catalog catalog;
    private final Map<String, String> measured;
    private final boolean reused;

    private PointsDataset(TestingPostgresServer postgres, TestingWarehouse warehouse, Map<String, String> measured, boolean reused)
    {
        this.postgres = requireNonNull(postgres, "postgres is null");
        this.warehouse = requireNonNull(warehouse, "warehouse is null");
        this.catalog = warehouse.catalog();
        this.measured = ImmutableMap.copyOf(measured);
        this.reused = reused;
    }

    /** Opens the kept dataset if it was made from these settings, else makes it, with the engine the making needs. */
    public static PointsDataset open(PointsSettings settings, YearsDataset.EngineFactory engines)
            throws Exception
    {
        Path directory = settings.directory();
        Optional<Map<String, String>> marker = BenchmarkDataset.readMarker(directory);
        boolean reuse = marker.map(values -> withoutMeasured(values).equals(settings.datasetKey())).orElse(false);
        if (!reuse) {
            BenchmarkDataset.deleteRecursively(directory.resolve("pgdata"));
            BenchmarkDataset.deleteRecursively(directory.resolve("warehouse"));
            Files.deleteIfExists(directory.resolve("dataset.properties"));
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
                long start = System.nanoTime();
                measured.putAll(make(settings, database, warehouse, engines));
                measured.put(MEASURED + "build-seconds", seconds(System.nanoTime() - start));
                BenchmarkDataset.writeMarker(directory, measured);
            }
            return new PointsDataset(postgres, warehouse, measured, reuse);
        }
        catch (Exception e) {
            postgres.close();
            throw e;
        }
    }

    private static Map<String, String> make(PointsSettings settings, TestingDatabase database, TestingWarehouse warehouse, YearsDataset.EngineFactory engines)
            throws Exception
    {
        Catalog catalog = warehouse.catalog();
        try {
            return make(settings, database, catalog, warehouse, engines);
        }
        finally {
            if (catalog instanceof Closeable closeable) {
                closeable.close();
            }
        }
    }

    private static Map<String, String> make(PointsSettings settings, TestingDatabase database, Catalog catalog, TestingWarehouse warehouse, YearsDataset.EngineFactory engines)
            throws Exception
    {
        HotTier hotTier = hotTier();
        try (Connection connection = database.connect()) {
            // both tiers as the archiver's create makes them from an entry zaehlerstaende(time_model=point; reading_id=malo_id)
            TableShape shape = TableShape.declared(ImmutableMap.of(TableShape.TIME_MODEL, "point", TableShape.READING_ID, "malo_id"));
            ReadingsTableCreation.create(connection, hotTier, catalog, IDENTIFIER, Optional.of(shape), "the points benchmark");
        }
        Table created = catalog.loadTable(IDENTIFIER);
        if (ArchivalHistory.recordedStep(created).isEmpty()) {
            ArchivalHistory.recordStep(created, PartitionNaming.DEFAULT_STEP);
        }
        // the archiver's clock moves two hours a cycle, so every archived partition is dropped two cycles later
        AtomicReference<Instant> now = new AtomicReference<>(BenchmarkDataset.LATER);
        ArchivalCycle cycle = new ArchivalCycle(catalog, IDENTIFIER, hotTier, database::connect,
                new ArchivalSettings(ArchivalSettings.DEFAULT_SETTLEMENT_LAG, READER_GRACE, ArchivalSettings.DEFAULT_CHUNK_ROWS), now::get);
        // maintenance at its defaults on the machine's clock: a month is compacted once W passed it and 14 days have
        TableMaintenance maintenance = new TableMaintenance(catalog, IDENTIFIER, hotTier, database::connect, MaintenanceSettings.DEFAULTS, Clock.systemUTC());
        ReadingsLoader loader = new ReadingsLoader(hotTier);
        RegisterReadings readings = new RegisterReadings(PointsSettings.SEED, settings.meters(), PointsSettings.START_DAY);
        // the first hot reading is the one at the start of Berlin day end - HOT_DAYS, which lies in the UTC day before it
        Instant watermark = settings.endDay().minusDays(PointsSettings.HOT_DAYS + 1).atStartOfDay(ZoneOffset.UTC).toInstant();
        long rows = 0;
        long loadNanos = 0;
        long archiveNanos = 0;
        long maintenanceNanos = 0;
        int archivalCommits = 0;
        for (LocalDate chunk = PointsSettings.START_DAY; chunk.isBefore(settings.endDay()); chunk = chunk.plusDays(PointsSettings.CHUNK_DAYS)) {
            LocalDate chunkEnd = chunk.plusDays(PointsSettings.CHUNK_DAYS).isBefore(settings.endDay()) ? chunk.plusDays(PointsSettings.CHUNK_DAYS) : settings.endDay();
            long start = System.nanoTime();
            try (Connection connection = database.connect()) {
                loader.ensurePartitions(connection, MeteringCalendar.startOfBalancingDay(Sparte.STROM, chunk), MeteringCalendar.startOfBalancingDay(Sparte.STROM, chunkEnd));
                for (LocalDate day = chunk; day.isBefore(chunkEnd); day = day.plusDays(1)) {
                    List<Reading> versions = readings.day(day);
                    rows += loader.copy(connection, versions.iterator());
                }
            }
            loadNanos += System.nanoTime() - start;
            // the next chunk's first reading (its first Berlin midnight) lies in the UTC day before it: that day waits for it
            Instant chunkTarget = chunkEnd.minusDays(1).atStartOfDay(ZoneOffset.UTC).toInstant();
            Instant target = chunkTarget.isBefore(watermark) ? chunkTarget : watermark;
            log.info("Points: loaded %s days from %s (%,d rows so far); archiving to %s", chunkEnd.toEpochDay() - chunk.toEpochDay(), chunk, rows, target);
            TieringWatermark current = WatermarkReader.current(catalog.loadTable(IDENTIFIER)).watermark();
            while (current.instant().isBefore(target)) {
                now.set(now.get().plus(Duration.ofHours(2)));
                start = System.nanoTime();
                ArchiveOutcome outcome = cycle.archiveOnce();
                archiveNanos += System.nanoTime() - start;
                checkState(outcome.kind() == ArchiveOutcome.Kind.ARCHIVED, "Archival stopped before %s: %s", target, outcome.describe());
                current = outcome.watermark();
                archivalCommits++;
                if (archivalCommits % PointsSettings.MAINTENANCE_EVERY == 0) {
                    maintenanceNanos += maintain(maintenance);
                }
            }
        }
        long correctionNanos;
        List<Long> corrected = new ArrayList<>();
        try (DistributedQueryRunner engine = engines.start(warehouse);
                Connection trino = MeterstoreBenchmark.trinoConnection(engine)) {
            long start = System.nanoTime();
            for (YearMonth month = YearMonth.from(PointsSettings.START_DAY); ; month = month.plusMonths(1)) {
                Instant first = MeteringCalendar.startOfBalancingMonth(Sparte.STROM, month);
                if (!first.isBefore(watermark)) {
                    break;
                }
                corrected.add(correct(trino, month));
            }
            correctionNanos = System.nanoTime() - start;
        }
        maintenanceNanos += maintain(maintenance);
        try (Connection connection = database.connect(); Statement statement = connection.createStatement()) {
            statement.execute("VACUUM (ANALYZE) " + hotTier.qualifiedParent());
        }
        Map<String, String> measured = new LinkedHashMap<>();
        measured.put(MEASURED + "rows", String.valueOf(rows));
        measured.put(MEASURED + "archival-commits", String.valueOf(archivalCommits));
        measured.put(MEASURED + "correction-commits", String.valueOf(corrected.size()));
        measured.put(MEASURED + "corrected-readings", String.valueOf(corrected.stream().mapToLong(Long::longValue).sum()));
        measured.put(MEASURED + "load-seconds", seconds(loadNanos));
        measured.put(MEASURED + "archive-seconds", seconds(archiveNanos));
        measured.put(MEASURED + "correction-seconds", seconds(correctionNanos));
        measured.put(MEASURED + "maintenance-seconds", seconds(maintenanceNanos));
        return measured;
    }

    /**
     * One INSERT through Trino of late corrections of {@code month}: a new version of the month's first reading for one
     * meter in 50, 5 Wh lower (a day's consumption is at least 10 Wh, so the register still never runs backwards), recorded
     * 20 days into the month.
     */
    private static long correct(Connection trino, YearMonth month)
            throws SQLException
    {
        Instant from = MeteringCalendar.startOfBalancingMonth(Sparte.STROM, month);
        Instant recorded = month.atDay(20).atTime(12, 0).toInstant(ZoneOffset.UTC);
        String sql = """
                INSERT INTO meterstore.%1$s.%2$s_versions (%3$s)
                SELECT malo_id, melo_id, obis_code, sparte, "from", "to", CAST(value - DECIMAL '0.005000' AS decimal(18, 6)), unit, 'CORRECTED', resolution,
                       source_kind, source_detail, provenance, CAST(version + 1 AS decimal(20, 0)), version_scope, TIMESTAMP '%4$s UTC', balancing_day
                FROM meterstore.%1$s.%2$s
                WHERE "from" = TIMESTAMP '%5$s UTC'
                  AND mod(from_big_endian_64(xxhash64(to_utf8(malo_id))), %6$s) = 0""".formatted(
                SCHEMA, TABLE, COLUMNS, LITERAL.format(recorded), LITERAL.format(from), LATE_CORRECTED_ONE_IN);
        try (Statement statement = trino.createStatement()) {
            long inserted = statement.executeLargeUpdate(sql);
            log.info("Points: corrected %s first readings of %s below W", inserted, month);
            return inserted;
        }
    }

    private static long maintain(TableMaintenance maintenance)
            throws SQLException, IOException
    {
        long start = System.nanoTime();
        log.info("Points: %s", maintenance.expire().describe());
        log.info("Points: %s", maintenance.compact().describe());
        return System.nanoTime() - start;
    }

    static HotTier hotTier()
    {
        return new HotTier(SCHEMA, new PartitionNaming(TABLE, PartitionNaming.DEFAULT_STEP), Duration.ofSeconds(5));
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

    /** What the making measured, by key without the {@code measured.} prefix. */
    public Optional<String> measured(String key)
    {
        return Optional.ofNullable(measured.get(MEASURED + key));
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

    public ColdTierLayout layout()
    {
        return ColdTierLayout.of(table());
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
