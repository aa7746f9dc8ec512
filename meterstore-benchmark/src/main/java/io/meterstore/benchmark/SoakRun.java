package io.meterstore.benchmark;

import com.google.common.base.Throwables;
import com.google.common.collect.ImmutableMap;
import com.google.common.collect.Lists;
import com.google.common.collect.Sets;
import io.airlift.log.Logger;
import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchivalSettings;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.cycle.Failpoints.Failpoint;
import io.meterstore.archiver.maintenance.CompactionSettings;
import io.meterstore.archiver.maintenance.MaintenanceOutcome;
import io.meterstore.archiver.maintenance.MaintenanceSettings;
import io.meterstore.archiver.maintenance.RetentionPeriod;
import io.meterstore.archiver.maintenance.RetentionSweep;
import io.meterstore.archiver.maintenance.TableMaintenance;
import io.meterstore.core.ErasureLog;
import io.meterstore.core.IcebergCatalogs;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingRules;
import io.meterstore.core.SnapshotRetention;
import io.meterstore.core.Sparte;
import io.meterstore.storage.ColdStorage;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsInserts;
import io.meterstore.testing.ReadingsOracle;
import io.meterstore.testing.ReadingsOracle.MeterDay;
import io.meterstore.testing.ReadingsOracle.Totals;
import io.meterstore.testing.ReadingsOracle.View;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingS3Server;
import io.meterstore.testing.TestingWarehouse;
import io.trino.testing.DistributedQueryRunner;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

import java.io.Closeable;
import java.io.IOException;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Random;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.base.Preconditions.checkState;
import static io.meterstore.testing.ReadingsInserts.epochMicros;
import static io.meterstore.testing.ReadingsInserts.timestamp;
import static java.util.Objects.requireNonNull;

/**
 * Issue 34's soak: N simulated days of M meters against the real services, an embedded PostgreSQL, a warehouse on S3 or a local one,
 * a Trino engine with the plugin (queried through the Trino JDBC driver) and the archiver, with an independent oracle
 * ({@link SoakOracle}) checking the store after every day.
 * <p>
 * One clock: the simulated days end two days before the real present, so every recorded_at the driver writes lies in
 * the past (the connector refuses one in its future beyond meterstore.max-clock-skew) and the connector needs no
 * clock of its own; the archiver takes its time from a {@link SoakClock} the run moves to each simulated evening, which
 * also reads the wall-clock stamps of snapshots and files as the simulated time they were made at, so expiry, erasure
 * completion and orphan removal judge their ages in simulated days. A deployment never sets that clock: the archiver
 * service's module binds the system clock (ArchiverModule's constructor without arguments), and only tests and this run
 * pass one of their own.
 * <p>
 * Each simulated day D: the morning after it, its readings of every meter in statements of {@code metersPerStatement}
 * meters (an MSCONS batch each); a redelivery of an earlier day of one meter (same payload: accepted, nothing changes);
 * late corrections of days 1 to 60 back ({@code correctionRate} of a day's rows, a quarter of them corrections of
 * corrections); on a schedule a conflicting redelivery, a second network operator's version and a correction on another
 * grid (all refused by the rules, counted); now and then a DELETE erasure of one meter's range, and a redelivery into
 * it (refused by the suppression list), every other erasure lifted days later and its days delivered again; a dashboard
 * queries beside the deliveries. That evening the archiver archives what is closed and, weekly, expires and compacts,
 * sweeping the months past the readings' retention if the run has one (then the oracle removes them by its own rule,
 * and the late corrections and redeliveries into them are sent and must be refused).
 * On a seeded schedule of their own: the Trino engine restarted before a day, PostgreSQL restarted in the middle of
 * one, the archiver killed (SIGKILL, in a JVM of its own) at a failpoint of the evening's cycle, the S3 server holding
 * the warehouse stopped through a day's deliveries and the evening's cycle tried during it. Then the oracle
 * compares {@code readings} and {@code readings_versions} per meter and day, and every few days
 * {@code readings FOR TIMESTAMP AS OF} three past instants and {@code meter_completeness}; the first difference stops
 * the run.
 */
public final class SoakRun
{
    private static final Logger log = Logger.get(SoakRun.class);
    private static final String SECOND_OPERATOR_ID = "9900000000010";
    static final int MAX_CORRECTION_DAYS = 60;
    // the soak's engine takes statements of up to 5,000,000 characters (Trino's query.max-length, 1,000,000 by default):
    // a meter's day is about 25 KB of INSERT text (40 KB as VALUES), so a statement may carry up to 100 meters' days
    static final int QUERY_MAX_LENGTH = 5_000_000;
    public static final int MAX_METERS_PER_STATEMENT = 100;
    public static final int DEFAULT_METERS_PER_STATEMENT = 20;
    // a market's MSCONS loaders send at once; more than the engine's cores buys nothing here
    public static final int MAX_DELIVERY_CONNECTIONS = 8;
    public static final int DEFAULT_DELIVERY_CONNECTIONS = 2;
    // at most 100 quarter-hours a day (the autumn Sunday)
    private static final int MAX_ROWS_PER_METER_DAY = 100;
    private static final int AS_OF_EVERY = 5;
    static final int MAINTENANCE_EVERY = 7;
    private static final List<Failpoint> KILL_POINTS = List.of(Failpoint.AFTER_DETACH, Failpoint.MID_STREAM, Failpoint.AFTER_WRITE, Failpoint.AFTER_COMMIT);
    private static final int GROWTH_EVERY = 30;
    private static final int COMPLETENESS_DAYS = 30;
    private static final int LIFT_AFTER = 5;
    private static final Duration LEASE_RELEASE = Duration.ofSeconds(30);
    // what the refusals' messages say (METERSTORE_ERASED, METERSTORE_CONFLICTING_REDELIVERY); the JDBC driver carries no error name
    private static final String ERASED = "was erased by erasure";
    private static final String CONFLICTING_REDELIVERY = "was already written with different values";
    // what a read of cold data says when the storage is unreachable (METERSTORE_COLD_READ_FAILED)
    private static final String STORAGE_UNREACHABLE = "check that the storage is reachable";
    // one retry of a request to S3, not the SDK's twenty with their backoff: with the server stopped, a request fails in a
    // moment (Iceberg's own retries of a metadata read, about 90 s, remain) instead of after minutes (TestMeterstoreObjectStorageRestart's too)
    static final Map<String, String> STORAGE_RETRIES = Map.of("s3.max-error-retries", "1");

    /**
     * What to run: the days end on {@code lastDay} ({@link #defaultLastDay()}, or earlier: a test pins its days in the
     * month); {@code retentionDays}, when present, is the readings' retention the archiver's expire sweeps by
     * ({@link RetentionPeriod#ofDays}); {@code snapshotRetentionDays} the snapshot retention it expires by (keeping the
     * newest {@value SnapshotRetention#DEFAULT_MIN_SNAPSHOTS_TO_KEEP} snapshots, as a deployment's default does).
     */
    public record Settings(int days, int meters, int metersPerStatement, int deliveryConnections, double correctionRate, int erasureEvery, int engineRestarts, int archiverKills, int postgresRestarts,
            int storageOutages, OptionalInt retentionDays, int snapshotRetentionDays, long seed, LocalDate lastDay)
    {
        public Settings
        {
            requireNonNull(retentionDays, "retentionDays is null");
            requireNonNull(lastDay, "lastDay is null");
            checkArgument(retentionDays.isEmpty() || retentionDays.getAsInt() >= 1, "retentionDays must be at least 1");
            checkArgument(snapshotRetentionDays >= 1, "snapshotRetentionDays must be at least 1");
            checkArgument(!lastDay.isAfter(defaultLastDay()), "lastDay must be at most %s, two days before today (UTC), so that every recorded_at lies in the past", defaultLastDay());
            checkArgument(engineRestarts >= 0 && engineRestarts < days, "engineRestarts must be in [0, days)");
            checkArgument(archiverKills >= 0 && archiverKills < days, "archiverKills must be in [0, days)");
            checkArgument(postgresRestarts >= 0 && postgresRestarts < days, "postgresRestarts must be in [0, days)");
            checkArgument(storageOutages >= 0 && storageOutages < days, "storageOutages must be in [0, days)");
            checkArgument(engineRestarts + storageOutages < days, "engineRestarts + storageOutages must be less than days: an engine restart never falls on a storage outage's day");
            checkArgument(days > 0, "days must be positive");
            checkArgument(meters > 0 && meters <= ReadingsGenerator.MAX_METERS, "meters out of range");
            // a day of a meter is about 25 KB of INSERT text; Trino refuses a statement over query.max-length
            checkArgument(metersPerStatement > 0 && metersPerStatement <= MAX_METERS_PER_STATEMENT,
                    "metersPerStatement must be in [1, %s]: a statement of more meters' days exceeds the soak engine's query.max-length of %s characters",
                    MAX_METERS_PER_STATEMENT, QUERY_MAX_LENGTH);
            checkArgument(deliveryConnections >= 1 && deliveryConnections <= MAX_DELIVERY_CONNECTIONS, "deliveryConnections must be in [1, %s]", MAX_DELIVERY_CONNECTIONS);
            checkArgument(correctionRate >= 0 && correctionRate < 1, "correctionRate must be in [0, 1)");
            checkArgument(erasureEvery > 0, "erasureEvery must be positive");
        }
    }

    /**
     * Whether the workload stopped correcting {@code month} (UTC, of "from") long enough before {@code day} for the
     * archiver to have compacted it once more: its last day's corrections ({@value #MAX_CORRECTION_DAYS} days back at
     * most, a day more for the Berlin day that begins in it), the compaction delay after them, and a week for the weekly
     * maintenance to come round.
     */
    static boolean correctionsSettled(YearMonth month, LocalDate day)
    {
        LocalDate lastCorrection = month.atEndOfMonth().plusDays(MAX_CORRECTION_DAYS + 1);
        return !lastCorrection.plusDays(CompactionSettings.DEFAULT_DELAY.toDays() + MAINTENANCE_EVERY).isAfter(day);
    }

    /** The last simulated day by default: two days before today (UTC), delivered the morning of yesterday. */
    public static LocalDate defaultLastDay()
    {
        return LocalDate.now(ZoneOffset.UTC).minusDays(2);
    }

    /**
     * A sweep of the readings' retention that removed months, on the evening of {@code day}: the cut, the months, the
     * data and delete files its commits removed (their snapshot summaries), the rows removed per tier as its audit rows
     * count them, which the oracle's own count of the versions it removed matched.
     */
    public record Sweep(LocalDate day, Instant cut, List<YearMonth> months, long dataFiles, long deleteFiles, long coldRows, long hotRows)
    {
        public Sweep
        {
            requireNonNull(day, "day is null");
            requireNonNull(cut, "cut is null");
            months = List.copyOf(months);
        }
    }

    /** A statement the driver sends, by what it is meant to do. */
    public enum Kind
    {
        DELIVERY,
        REDELIVERY,
        CORRECTION,
    }

    /**
     * A fault put into the run on purpose, to show that the oracle catches it: the rows actually sent of a statement the
     * oracle has already recorded, and what happens to the store before each check. The run sets none.
     */
    public interface Tampering
    {
        Tampering NONE = new Tampering() {};

        default List<Reading> sent(Kind kind, LocalDate day, List<Reading> rows)
        {
            return rows;
        }

        default void beforeCheck(LocalDate day, TestingWarehouse warehouse)
                throws SQLException {}
    }

    /** What the run did and measured. */
    public record Result(int days, int meters, long rowsSent, long rowsRecorded, Map<String, Integer> refused, int erasures, int archivalCommits,
            int maintenanceRuns, Map<String, Integer> faults, Map<String, Integer> outageFailures, int checks, int dashboardQueries, int lifts, List<Duration> dayTimes,
            List<Duration> storeTimes, List<SoakGrowth> growth, List<Sweep> sweeps, long rowsRefusedPastRetention, int snapshotsExpired, int orphansRemoved,
            int erasuresCompleted)
    {
        public Result
        {
            sweeps = List.copyOf(sweeps);
            refused = Map.copyOf(refused);
            faults = Map.copyOf(faults);
            outageFailures = Map.copyOf(outageFailures);
            growth = List.copyOf(growth);
            dayTimes = List.copyOf(dayTimes);
            storeTimes = List.copyOf(storeTimes);
        }
    }

    /** The run stopped because the store and the oracle disagree; the message is the first difference. */
    public static final class DivergenceException
            extends RuntimeException
    {
        DivergenceException(String message)
        {
            super(message);
        }
    }

    private final TestingWarehouse warehouse;
    private final Settings settings;
    private final Tampering tampering;
    private final ReadingsGenerator generator;
    private final SoakOracle oracle = new SoakOracle();
    private final Random random;
    private final SoakClock clock = new SoakClock();
    private final Map<String, Integer> refused = new TreeMap<>();
    private final Map<String, Integer> faultsInjected = new TreeMap<>();
    // what failed during the storage outages, as it must: the evening's archival cycle, the reads of cold data
    private final Map<String, Integer> outageFailures = new TreeMap<>();
    private final Set<ReadingKey> corrected = new HashSet<>();
    private final List<Sweep> sweeps = new ArrayList<>();
    // rows of the statements refused because they fell in a month the retention removed
    private long rowsRefusedPastRetention;
    // the morning after a sweep: one meter's batch of a swept day delivered again, which must be refused
    private Optional<LocalDate> sweptRedelivery = Optional.empty();
    private long rowsSent;
    // the last day's deliveries, of its writes
    private Duration deliveryTime = Duration.ZERO;
    private long rowsRecorded;
    private int archivalCommits;
    private int maintenanceRuns;
    private int snapshotsExpired;
    private int orphansRemoved;
    private int erasuresCompleted;
    private int checks;
    private int dashboardQueries;
    private int erasures;
    private int lifts;
    // erasures to lift, by the index of the day they are lifted on
    private final Map<Integer, Lift> pendingLifts = new TreeMap<>();

    private record ReadingKey(String maloId, Instant from) {}

    /** An erasure found wrong: its id in the erasure log, and the meter and first day it erased (two days). */
    private record Lift(SoakOracle.Erasure erasure, long erasureId, int meter, LocalDate first) {}

    public SoakRun(TestingWarehouse warehouse, Settings settings, Tampering tampering)
    {
        this.warehouse = requireNonNull(warehouse, "warehouse is null");
        this.settings = requireNonNull(settings, "settings is null");
        this.tampering = requireNonNull(tampering, "tampering is null");
        checkArgument(settings.storageOutages() == 0 || warehouse.bucket().isPresent(),
                "A storage outage stops the S3 server holding the warehouse, and this warehouse is a local directory: run the soak on S3 (bin/soak: -Dsoak.storage=s3) or without outages (-Dsoak.storage-outages=0)");
        LocalDate lastDay = settings.lastDay();
        this.generator = ReadingsGenerator.builder()
                .seed(settings.seed())
                .meters(settings.meters())
                .startDay(lastDay.minusDays(settings.days() - 1))
                .days(settings.days())
                .correctionsFraction(0)
                .build();
        this.random = new Random(settings.seed());
    }

    /** Creates the table in both tiers and runs every simulated day; throws {@link DivergenceException} at the first difference. */
    public Result run()
            throws Exception
    {
        try (Connection postgres = warehouse.database().connect()) {
            BenchmarkDataset.HOT_TIER.createParent(postgres);
        }
        TableIdentifier identifier = TableIdentifier.of(BenchmarkDataset.SCHEMA, BenchmarkDataset.TABLE);
        IcebergTableSpec.createIfMissing(warehouse.catalog(), identifier);
        // on S3 the archiver's files go through a storage of the run's own, with one retry (STORAGE_RETRIES)
        Optional<ColdStorage> storage = warehouse.bucket().map(_ -> ColdStorage.create(ImmutableMap.<String, String>builder()
                .putAll(warehouse.storageProperties())
                .putAll(STORAGE_RETRIES)
                .buildKeepingLast()));
        Catalog catalog = storage.isPresent()
                ? IcebergCatalogs.jdbc(warehouse.catalogSpec(), properties -> storage.get().fileIo("meterstore-soak"))
                : warehouse.catalog();
        ArchivalCycle cycle = new ArchivalCycle(catalog, identifier, BenchmarkDataset.HOT_TIER, warehouse.database()::connect, ArchivalSettings.DEFAULTS, clock);
        // the readings' retention as a deployment configured with one sweeps it, in expire, on the soak's clock; the
        // snapshots expire by a retention of simulated days, which the clock reads their commits' stamps in
        SnapshotRetention snapshotRetention = new SnapshotRetention(Duration.ofDays(settings.snapshotRetentionDays()), SnapshotRetention.DEFAULT_MIN_SNAPSHOTS_TO_KEEP);
        MaintenanceSettings maintenanceSettings = new MaintenanceSettings(snapshotRetention, MaintenanceSettings.DEFAULTS.orphanSafetyAge(),
                MaintenanceSettings.DEFAULTS.readerGrace(), MaintenanceSettings.DEFAULTS.compaction(),
                settings.retentionDays().isPresent() ? Optional.of(RetentionPeriod.ofDays(settings.retentionDays().getAsInt())) : Optional.empty());
        TableMaintenance maintenance = new TableMaintenance(catalog, identifier, BenchmarkDataset.HOT_TIER, warehouse.database()::connect, maintenanceSettings, clock);
        Table table = catalog.loadTable(identifier);
        List<Duration> dayTimes = new ArrayList<>();
        // each day's time less the oracle's (its questions, and resolving its record, which grows with the run)
        List<Duration> storeTimes = new ArrayList<>();
        List<SoakGrowth> growth = new ArrayList<>();
        // the faults' schedule has a random stream of its own, so the workload is the same with or without them
        Random faults = new Random(settings.seed() + 1);
        Set<Integer> restartDays = faultDays(faults, settings.engineRestarts());
        Set<Integer> killDays = faultDays(faults, settings.archiverKills());
        Set<Integer> postgresDays = faultDays(faults, settings.postgresRestarts());
        // the kills take the cycle's failpoints in turn, from a seeded one
        int killPoint = faults.nextInt(KILL_POINTS.size());
        // drawn after the others, so the days of the faults before the outages stayed as they were; never a day the
        // engine restarts: a coordinator started while the storage is down cannot read the table's watermark (it is in
        // the snapshot's metadata file, on the storage), so it refuses every statement, today's INSERTs too, until the
        // storage is back, where a running one routes them by the table it holds (nobody can move W meanwhile)
        Set<Integer> outageDays = faultDays(faults, settings.storageOutages(), restartDays);
        Map<String, String> storageOverrides = storage.isPresent() ? STORAGE_RETRIES : Map.of();
        DistributedQueryRunner queryRunner = queryRunner(storageOverrides);
        Connection trino = MeterstoreBenchmark.trinoConnection(queryRunner);
        Connection dashboard = MeterstoreBenchmark.trinoConnection(queryRunner);
        // the day's deliveries go over these at once, the first of them the connection of every other statement
        List<Connection> deliveries = deliveryConnections(trino, queryRunner);
        try {
            int index = 0;
            for (LocalDate day : generator.localDays()) {
                long start = System.nanoTime();
                Duration resolvingBefore = oracle.resolvingTime();
                if (restartDays.contains(index)) {
                    // the engine restarted overnight: a new coordinator, nothing kept in memory of the last one
                    close(deliveries);
                    dashboard.close();
                    queryRunner.close();
                    queryRunner = queryRunner(storageOverrides);
                    trino = MeterstoreBenchmark.trinoConnection(queryRunner);
                    dashboard = MeterstoreBenchmark.trinoConnection(queryRunner);
                    deliveries = deliveryConnections(trino, queryRunner);
                    fault("engine_restart", index);
                }
                simulateDay(deliveries, dashboard, cycle, index, day, postgresDays.contains(index), outageDays.contains(index));
                long written = System.nanoTime();
                // the archiver's evening: archive what is closed, weekly compact and expire
                clock.set(evening(day));
                boolean killed = false;
                if (killDays.contains(index)) {
                    // the archiver's own JVM killed in the middle of the evening's cycle; the next cycle recovers on the ordinary path
                    Failpoint point = KILL_POINTS.get(killPoint++ % KILL_POINTS.size());
                    SoakArchiverProcess.killAt(warehouse, clock.instant(), point);
                    if (point == Failpoint.AFTER_COMMIT) {
                        archivalCommits++;
                    }
                    fault("archiver_sigkill_" + point.pointName(), index);
                    killed = true;
                }
                archive(cycle, killed);
                if (index % MAINTENANCE_EVERY == MAINTENANCE_EVERY - 1) {
                    // in the service's order (MaintenanceCommand): expire, with the retention's sweep, then compact
                    MaintenanceOutcome expired = maintenance.expire();
                    if (settings.retentionDays().isPresent()) {
                        swept(table, day, expired.swept().orElseThrow());
                    }
                    snapshotsExpired += expired.expired().orElseThrow().snapshots();
                    orphansRemoved += expired.orphans().orElseThrow().files();
                    erasuresCompleted += expired.erasures().orElseThrow().erasures().size();
                    maintenance.compact();
                    maintenanceRuns++;
                }
                long archived = System.nanoTime();
                Duration resolvingByDay = oracle.resolvingTime().minus(resolvingBefore);
                tampering.beforeCheck(day, warehouse);
                check(trino, index, day);
                long end = System.nanoTime();
                dayTimes.add(Duration.ofNanos(end - start));
                storeTimes.add(Duration.ofNanos(archived - start).minus(resolvingByDay));
                log.info("Soak day %s of %s (%s): %s rows sent, refused %s, %s archival commits, faults %s, %s checks; %.1f s (writes %.1f of which deliveries %.1f and the oracle's resolving %.1f, archiver %.1f, oracle's questions %.1f)",
                        index + 1, settings.days(), day, rowsSent, refused, archivalCommits, faultsInjected, checks,
                        (end - start) / 1e9, (written - start) / 1e9, deliveryTime.toNanos() / 1e9, resolvingByDay.toNanos() / 1e9, (archived - written) / 1e9, (end - archived) / 1e9);
                // the store's size on the first day, every 30th and the last, outside the day's time
                if (index == 0 || index % GROWTH_EVERY == GROWTH_EVERY - 1 || index == settings.days() - 1) {
                    growth.add(SoakGrowth.measure(day, table, warehouse));
                }
                index++;
            }
        }
        finally {
            close(deliveries);
            dashboard.close();
            queryRunner.close();
            if (catalog instanceof Closeable closeable) {
                closeable.close();
            }
            storage.ifPresent(ColdStorage::close);
        }
        return new Result(settings.days(), settings.meters(), rowsSent, rowsRecorded, refused, erasures, archivalCommits, maintenanceRuns, faultsInjected, outageFailures, checks,
                dashboardQueries, lifts, dayTimes, storeTimes, growth, sweeps, rowsRefusedPastRetention, snapshotsExpired, orphansRemoved, erasuresCompleted);
    }

    /**
     * After the evening's expire: the oracle sweeps by its own rule at the same instant, and what it removed must be
     * what the sweep's audit rows say it removed, at the same cut; the oracle's questions then check what is left.
     */
    private void swept(Table table, LocalDate day, RetentionSweep.Swept swept)
    {
        long removed = oracle.swept(clock.instant(), settings.retentionDays().getAsInt());
        Instant cut = swept.cut();
        if (removed != swept.coldRows() + swept.hotRows() || !cut.equals(SoakOracle.retentionCut(clock.instant(), settings.retentionDays().getAsInt()))) {
            throw new DivergenceException("Oracle check failed after simulated day %s (%s passed before it): retention: the sweep %s; the oracle removed %s rows before %s"
                    .formatted(day, checks, swept.describe(), removed, oracle.retainedFrom()));
        }
        checks++;
        if (swept.months().isEmpty()) {
            return;
        }
        // the files its commits removed, as their snapshot summaries count them
        table.refresh();
        long dataFiles = 0;
        long deleteFiles = 0;
        for (Snapshot snapshot : table.snapshots()) {
            String month = snapshot.summary().get(RetentionSweep.MONTH_KEY);
            if (month != null && swept.months().contains(YearMonth.parse(month))) {
                dataFiles += Long.parseLong(snapshot.summary().getOrDefault(SnapshotSummary.DELETED_FILES_PROP, "0"));
                deleteFiles += Long.parseLong(snapshot.summary().getOrDefault(SnapshotSummary.REMOVED_DELETE_FILES_PROP, "0"));
            }
        }
        sweeps.add(new Sweep(day, cut, swept.months(), dataFiles, deleteFiles, swept.coldRows(), swept.hotRows()));
        log.info("Soak day %s: retention: %s (%s data files, %s delete files); the oracle's rule removed every reading before %s",
                day, swept.describe(), dataFiles, deleteFiles, oracle.retainedFrom());
        // a sender redelivers a batch of a swept day next morning: refused, as every INSERT into a removed month
        LocalDate last = MeteringCalendar.localDay(oracle.retainedFrom()).minusDays(1);
        sweptRedelivery = Optional.of(last.isBefore(generator.startDay()) ? generator.startDay() : last);
    }

    /** {@code trino}, and as many more connections as the day's deliveries go over beside it. */
    private List<Connection> deliveryConnections(Connection trino, DistributedQueryRunner queryRunner)
            throws Exception
    {
        List<Connection> connections = new ArrayList<>(List.of(trino));
        while (connections.size() < settings.deliveryConnections()) {
            connections.add(MeterstoreBenchmark.trinoConnection(queryRunner));
        }
        return connections;
    }

    private static void close(List<Connection> connections)
            throws SQLException
    {
        for (Connection connection : connections) {
            connection.close();
        }
    }

    private DistributedQueryRunner queryRunner(Map<String, String> storageOverrides)
            throws Exception
    {
        return MeterstoreBenchmark.queryRunner(warehouse, false, BenchmarkDataset.TABLE, ImmutableMap.of("query.max-length", String.valueOf(QUERY_MAX_LENGTH)), storageOverrides);
    }

    /** The archiver's evening of {@code day}: 22:00 UTC the day after, once the day's deliveries and corrections are in. */
    private static Instant evening(LocalDate day)
    {
        return day.plusDays(1).atTime(22, 0).toInstant(ZoneOffset.UTC);
    }

    /** {@code count} distinct days of the run, never the first (the store is empty before it). */
    private Set<Integer> faultDays(Random faults, int count)
    {
        return faultDays(faults, count, Set.of());
    }

    /** {@code count} distinct days of the run, never the first nor one of {@code taken}. */
    private Set<Integer> faultDays(Random faults, int count, Set<Integer> taken)
    {
        Set<Integer> days = new TreeSet<>();
        while (days.size() < count) {
            int day = 1 + faults.nextInt(settings.days() - 1);
            if (!taken.contains(day)) {
                days.add(day);
            }
        }
        return days;
    }

    private void fault(String kind, int index)
    {
        faultsInjected.merge(kind, 1, Integer::sum);
        log.info("Soak day %s: fault %s", index + 1, kind);
    }

    /**
     * PostgreSQL stopped as an operator stops it (every session terminated) and started again on its data directory and
     * port, between two of the day's statements: the engine's pools and the archiver's catalogue hold connections that
     * are gone and must open new ones.
     */
    private void restartPostgres(int index)
            throws IOException
    {
        TestingPostgresServer server = warehouse.database().server();
        server.stop();
        server.start();
        fault("postgres_restart", index);
    }

    /**
     * The S3 server holding the warehouse stopped overnight, before the day's deliveries, and started again after them:
     * the deliveries (hot days) must go in as on any other day; the evening's archival cycle, tried while the storage is
     * down, must fail with an error naming the storage and change nothing (it loads the table, whose metadata is in the
     * bucket, before it detaches a partition), and the evening's ordinary cycle catches up; a read of the first days'
     * rows, archived by then, either fails naming the storage or answers as the oracle.
     */
    private void duringStorageOutage(Connection trino, ArchivalCycle cycle, int index, LocalDate day)
            throws SQLException, IOException
    {
        TestingS3Server storage = warehouse.bucket().orElseThrow().server();
        String location = warehouse.location();
        clock.set(evening(day));
        try {
            ArchiveOutcome outcome = cycle.archiveOnce();
            throw new DivergenceException("The archival cycle ran while the storage was stopped: " + outcome.describe());
        }
        catch (RuntimeException | IOException e) {
            if (e instanceof DivergenceException || e.getMessage() == null || !e.getMessage().contains(location)) {
                throw e;
            }
            outageFailure("archival_cycle", index, e);
        }
        LocalDate first = generator.startDay();
        Instant lower = MeteringCalendar.startOfLocalDay(first);
        Instant upper = MeteringCalendar.startOfLocalDay(first.plusDays(2));
        String relation = "readings_versions WHERE \"from\" >= %s AND \"from\" < %s".formatted(timestamp(lower), timestamp(upper));
        try {
            compare(day, "during the storage outage, " + relation, totalsByMeterDay(trino, relation),
                    oracle.oracle().totalsByMeterDay(View.VERSIONS, ReadingsOracle.fromRange(lower, upper)));
        }
        catch (SQLException e) {
            if (e.getMessage() == null || !e.getMessage().contains(STORAGE_UNREACHABLE)) {
                throw e;
            }
            outageFailure("cold_query", index, e);
        }
        storage.start();
        fault("storage_outage", index);
    }

    private void outageFailure(String what, int index, Exception e)
    {
        outageFailures.merge(what, 1, Integer::sum);
        log.info("Soak day %s: during the storage outage, %s failed as it must: %s", index + 1, what, e.getMessage());
    }

    private void simulateDay(List<Connection> deliveries, Connection dashboard, ArchivalCycle cycle, int index, LocalDate day, boolean restartPostgres, boolean storageOutage)
            throws SQLException, IOException, InterruptedException
    {
        Connection trino = deliveries.getFirst();
        if (storageOutage) {
            warehouse.bucket().orElseThrow().server().stop();
        }
        // the morning after the day: its batches are recorded from 05:00 UTC to 06:00 (the generator's), the rest at 07:00
        Instant morning = day.plusDays(1).atTime(7, 0).toInstant(ZoneOffset.UTC);
        // the dashboards read the week before the day while its deliveries run, and nobody writes that week meanwhile
        Instant weekAgo = MeteringCalendar.startOfLocalDay(day.minusDays(7).isBefore(generator.startDay()) ? generator.startDay() : day.minusDays(7));
        Instant today = MeteringCalendar.startOfLocalDay(day);
        // not during a storage outage: the week may be archived, and its reads would fail
        Optional<SoakDashboards> dashboards = index == 0 || storageOutage
                ? Optional.empty()
                : Optional.of(new SoakDashboards(dashboard, oracle.oracle().totalsByMeter(View.RESOLVED, ReadingsOracle.fromRange(weekAgo, today)), weekAgo, today, settings.seed() + index));
        long deliveriesStart = System.nanoTime();
        try {
            List<String> meters = generator.maloIds();
            List<String> statements = new ArrayList<>();
            for (int first = 0; first < meters.size(); first += settings.metersPerStatement()) {
                List<Reading> batch = new ArrayList<>();
                for (int meter = first; meter < Math.min(meters.size(), first + settings.metersPerStatement()); meter++) {
                    batch.addAll(generator.readings(meter, day));
                }
                statements.addAll(recorded(Kind.DELIVERY, day, batch));
            }
            executeAtOnce(deliveries, statements);
            deliveryTime = Duration.ofNanos(System.nanoTime() - deliveriesStart);
        }
        finally {
            if (dashboards.isPresent()) {
                dashboardQueries += dashboards.get().stop();
            }
        }
        if (storageOutage) {
            duringStorageOutage(trino, cycle, index, day);
        }
        if (restartPostgres) {
            restartPostgres(index);
        }
        redeliver(trino, index, day);
        if (sweptRedelivery.isPresent()) {
            // one meter's batch of the last day of a month the retention removed last night
            List<Reading> batch = generator.readings(random.nextInt(settings.meters()), sweptRedelivery.get());
            refusePastRetention(trino, batch, "retention_redelivery");
            sweptRedelivery = Optional.empty();
        }
        correct(trino, index, day, morning);
        if (index % 3 == 1) {
            conflictingRedelivery(trino, randomWinner(index, day));
        }
        if (index % 4 == 2) {
            secondOperator(trino, randomWinner(index, day), morning);
            regrid(trino, randomWinner(index, day), morning);
        }
        if (index >= 15 && index % settings.erasureEvery() == 0) {
            erase(trino, index, day);
        }
        Optional<Lift> lift = Optional.ofNullable(pendingLifts.remove(index));
        if (lift.isPresent()) {
            lift(trino, day, lift.get());
        }
    }

    /** One meter's batch of a day 1 to 10 back, sent again as it was: accepted, nothing changes; refused if erased. */
    private void redeliver(Connection trino, int index, LocalDate day)
            throws SQLException
    {
        if (index == 0) {
            return;
        }
        int meter = random.nextInt(settings.meters());
        LocalDate earlier = day.minusDays(1 + random.nextInt(Math.min(10, index)));
        List<Reading> batch = generator.readings(meter, earlier);
        if (batch.stream().anyMatch(oracle::isSwept)) {
            refusePastRetention(trino, batch, "retention_redelivery");
            return;
        }
        if (batch.stream().anyMatch(oracle::isErased)) {
            refuse(trino, batch, ERASED, "erased");
            return;
        }
        rowsSent += batch.size();
        execute(trino, insert(tampering.sent(Kind.REDELIVERY, day, batch)));
    }

    /**
     * Late corrections: {@code correctionRate} of a day's rows, spread over three days 1 to 60 back, each a new version
     * of the current winner recorded this morning; a quarter of them correct a reading corrected before.
     */
    private void correct(Connection trino, int index, LocalDate day, Instant morning)
            throws SQLException
    {
        int back = Math.min(MAX_CORRECTION_DAYS, index);
        if (back == 0) {
            return;
        }
        int wanted = (int) Math.round(settings.meters() * 96 * settings.correctionRate());
        ReadingsOracle current = oracle.oracle();
        Map<ReadingKey, Reading> chosen = new LinkedHashMap<>();
        // corrections of corrections reach back as far as corrections do: a key corrected before that is let go
        Instant horizon = MeteringCalendar.startOfLocalDay(day.minusDays(MAX_CORRECTION_DAYS));
        corrected.removeIf(key -> key.from().isBefore(horizon));
        List<ReadingKey> again = corrected.stream().sorted(Comparator.comparing(ReadingKey::from).thenComparing(ReadingKey::maloId)).toList();
        Set<ReadingKey> picked = new LinkedHashSet<>();
        for (int pick = 0; pick < wanted / 4 && !again.isEmpty(); pick++) {
            picked.add(again.get(random.nextInt(again.size())));
        }
        // the picked keys' winners in one pass over the oracle's rows (an erased or swept key has none)
        Map<ReadingKey, Reading> pickedWinners = new HashMap<>();
        for (Reading winner : current.resolved(reading -> picked.contains(new ReadingKey(reading.maloId(), reading.from())))) {
            pickedWinners.putIfAbsent(new ReadingKey(winner.maloId(), winner.from()), winner);
        }
        for (ReadingKey key : picked) {
            if (pickedWinners.containsKey(key)) {
                chosen.put(key, pickedWinners.get(key));
            }
        }
        Map<ReadingKey, Reading> pastRetention = new LinkedHashMap<>();
        for (int target = 0; target < 3 && chosen.size() < wanted; target++) {
            LocalDate late = day.minusDays(1 + random.nextInt(back));
            Instant lower = MeteringCalendar.startOfLocalDay(late);
            Instant upper = MeteringCalendar.startOfLocalDay(late.plusDays(1));
            List<Reading> winners = current.resolved(ReadingsOracle.fromRange(lower, upper));
            int share = (wanted - chosen.size()) / (3 - target);
            if (lower.isBefore(oracle.retainedFrom())) {
                // a day (or its first hour) of a month the retention removed: the sender corrects what it sent of it
                List<Reading> sent = generator.readings(random.nextInt(settings.meters()), late).stream().filter(oracle::isSwept).toList();
                for (int pick = 0; pick < share && !sent.isEmpty(); pick++) {
                    Reading reading = sent.get(random.nextInt(sent.size()));
                    pastRetention.putIfAbsent(new ReadingKey(reading.maloId(), reading.from()), reading);
                }
                continue;
            }
            for (int pick = 0; pick < share && !winners.isEmpty(); pick++) {
                Reading winner = winners.get(random.nextInt(winners.size()));
                chosen.putIfAbsent(new ReadingKey(winner.maloId(), winner.from()), winner);
            }
        }
        List<Reading> corrections = new ArrayList<>();
        int offset = 0;
        for (Reading winner : chosen.values()) {
            corrections.add(correction(winner, morning.plusMillis(offset++), day));
            corrected.add(new ReadingKey(winner.maloId(), winner.from()));
        }
        if (!pastRetention.isEmpty()) {
            // the sender corrects what it sent of a month the retention removed: its own statement, refused as a whole
            List<Reading> refusedCorrections = new ArrayList<>();
            for (Reading sent : pastRetention.values()) {
                refusedCorrections.add(correction(sent, morning.plusMillis(offset++), day));
            }
            refusePastRetention(trino, refusedCorrections, "retention_correction");
        }
        write(trino, Kind.CORRECTION, day, corrections);
    }

    /** A new version of {@code winner} with another value, recorded at {@code recordedAt}: the version is the instant in microseconds, as the generator's. */
    private Reading correction(Reading winner, Instant recordedAt, LocalDate day)
    {
        BigDecimal value = winner.value().add(BigDecimal.valueOf(1 + random.nextInt(500), 3)).setScale(Reading.VALUE_SCALE);
        return new Reading(winner.maloId(), winner.meloId(), winner.obisCode(), winner.sparte(), winner.from(), winner.to(), value, winner.unit(),
                Quality.CORRECTED, winner.resolution(), "MANUAL_ENTRY", Optional.of("{\"soak\":\"correction\",\"day\":\"%s\"}".formatted(day)), winner.provenance(),
                epochMicros(recordedAt), winner.versionScope(), recordedAt, winner.balancingDay());
    }

    /** A stored version sent again with another value: refused, nothing written. */
    private void conflictingRedelivery(Connection trino, Reading stored)
            throws SQLException
    {
        Reading changed = new Reading(stored.maloId(), stored.meloId(), stored.obisCode(), stored.sparte(), stored.from(), stored.to(), stored.value().add(BigDecimal.ONE),
                stored.unit(), stored.quality(), stored.resolution(), stored.sourceKind(), stored.sourceDetail(), stored.provenance(), stored.version(), stored.versionScope(),
                stored.recordedAt(), stored.balancingDay());
        refuse(trino, List.of(changed), CONFLICTING_REDELIVERY, "conflicting_redelivery");
    }

    /** A higher version of a stored reading under another network operator's scope: refused by one_operator_per_reading. */
    private void secondOperator(Connection trino, Reading stored, Instant morning)
            throws SQLException
    {
        Instant recordedAt = morning.plusSeconds(3_000);
        Reading other = new Reading(stored.maloId(), stored.meloId(), stored.obisCode(), stored.sparte(), stored.from(), stored.to(), stored.value(), stored.unit(),
                Quality.CORRECTED, stored.resolution(), "MANUAL_ENTRY", Optional.empty(), Optional.empty(), epochMicros(recordedAt),
                Reading.versionScope(SECOND_OPERATOR_ID, Sparte.STROM, stored.from()), recordedAt, stored.balancingDay());
        refuse(trino, List.of(other), ReadingRules.ONE_OPERATOR_PER_READING, ReadingRules.ONE_OPERATOR_PER_READING);
    }

    /** A PT1H correction over four stored quarter-hours at a higher version: refused by one_grid_per_reading. */
    private void regrid(Connection trino, Reading stored, Instant morning)
            throws SQLException
    {
        Instant hour = stored.from().truncatedTo(ChronoUnit.HOURS);
        Instant recordedAt = morning.plusSeconds(3_100);
        Reading hourly = new Reading(stored.maloId(), stored.meloId(), stored.obisCode(), stored.sparte(), hour, hour.plus(Duration.ofHours(1)), stored.value().multiply(BigDecimal.valueOf(4)),
                stored.unit(), Quality.CORRECTED, "PT1H", "MANUAL_ENTRY", Optional.empty(), Optional.empty(), epochMicros(recordedAt),
                Reading.versionScope(ReadingsGenerator.DEFAULT_OPERATOR_ID, Sparte.STROM, hour), recordedAt, MeteringCalendar.balancingDay(Sparte.STROM, hour));
        refuse(trino, List.of(hourly), ReadingRules.ONE_GRID_PER_READING, ReadingRules.ONE_GRID_PER_READING);
    }

    /**
     * DELETE of one meter's readings of two days 20 to 30 back, as docs/sql.md's "Erasure" has it; every other erasure
     * (the first, the third, ...) is found wrong and lifted {@value #LIFT_AFTER} days later.
     */
    private void erase(Connection trino, int index, LocalDate day)
            throws SQLException
    {
        String meter = generator.maloIds().get(random.nextInt(settings.meters()));
        LocalDate back = day.minusDays(20 + random.nextInt(11));
        LocalDate first = back.isBefore(generator.startDay()) ? generator.startDay() : back;
        SoakOracle.Erasure erasure = new SoakOracle.Erasure(meter, MeteringCalendar.startOfLocalDay(first), MeteringCalendar.startOfLocalDay(first.plusDays(2)));
        oracle.erased(erasure);
        erasures++;
        execute(trino, "DELETE FROM readings_versions WHERE malo_id = '%s' AND \"from\" >= %s AND \"from\" < %s"
                .formatted(meter, timestamp(erasure.lower()), timestamp(erasure.upper())));
        // the erased day's MSCONS batch delivered again: the suppression list keeps it out
        refuse(trino, generator.readings(generator.maloIds().indexOf(meter), first), ERASED, "erased");
        if (erasures % 2 == 1 && index + LIFT_AFTER < settings.days()) {
            pendingLifts.put(index + LIFT_AFTER, new Lift(erasure, lastErasureId(), generator.maloIds().indexOf(meter), first));
        }
    }

    private long lastErasureId()
            throws SQLException
    {
        try (Connection postgres = warehouse.database().connect();
                Statement statement = postgres.createStatement();
                ResultSet result = statement.executeQuery("SELECT max(erasure_id) FROM %s.%s".formatted(BenchmarkDataset.SCHEMA, ErasureLog.TABLE))) {
            checkState(result.next() && result.getLong(1) > 0, "The erasure log holds no erasure after a DELETE");
            return result.getLong(1);
        }
    }

    /**
     * The erasure lifted as docs/operations.md has it ({@code lift_erasure}), then its two days' MSCONS batches delivered
     * again: accepted now (to Iceberg, the days being archived), and the oracle holds them again.
     */
    private void lift(Connection trino, LocalDate day, Lift lift)
            throws SQLException
    {
        execute(trino, "CALL meterstore.system.lift_erasure('%s', '%s', %s, 'Erased by mistake: soak')".formatted(BenchmarkDataset.SCHEMA, BenchmarkDataset.TABLE, lift.erasureId()));
        oracle.lifted(lift.erasure());
        lifts++;
        List<Reading> batches = new ArrayList<>(generator.readings(lift.meter(), lift.first()));
        batches.addAll(generator.readings(lift.meter(), lift.first().plusDays(1)));
        if (batches.stream().anyMatch(oracle::isSwept)) {
            // the lift lifts the DELETE, not the retention: a month removed since stays refused
            refusePastRetention(trino, batches, "retention_redelivery");
            return;
        }
        write(trino, Kind.REDELIVERY, day, batches);
    }

    /**
     * Archives every closed window. After a kill the killed archiver's sessions may outlive it for a moment (PostgreSQL
     * ends a backend when it reads the closed socket), and with them its lease: the cycle is tried again for a while.
     */
    private void archive(ArchivalCycle cycle, boolean afterKill)
            throws Exception
    {
        long deadline = System.nanoTime() + LEASE_RELEASE.toNanos();
        while (true) {
            ArchiveOutcome outcome = cycle.archiveOnce();
            switch (outcome.kind()) {
                case ARCHIVED -> archivalCommits++;
                case IDLE -> {
                    return;
                }
                case DEFERRED, SUPERSEDED, LEASE_CONTENDED -> {
                    if (!afterKill || System.nanoTime() > deadline) {
                        throw new IllegalStateException("Archival did not run as the only archiver: " + outcome.describe());
                    }
                    Thread.sleep(200);
                }
            }
        }
    }

    /** The oracle's questions after a day; the first difference stops the run. */
    private void check(Connection trino, int index, LocalDate day)
            throws SQLException
    {
        ReadingsOracle expected = oracle.oracle();
        compare(day, "readings", totalsByMeterDay(trino, "readings"), expected.totalsByMeterDay(View.RESOLVED, ReadingsOracle.all()));
        compare(day, "readings_versions", totalsByMeterDay(trino, "readings_versions"), expected.totalsByMeterDay(View.VERSIONS, ReadingsOracle.all()));
        if (index % AS_OF_EVERY == AS_OF_EVERY - 1) {
            Instant morning = day.plusDays(1).atTime(7, 0).toInstant(ZoneOffset.UTC);
            for (Duration before : List.of(Duration.ofMinutes(30), Duration.ofDays(3), Duration.ofDays(20))) {
                Instant knownAt = morning.minus(before);
                compare(day, "readings FOR TIMESTAMP AS OF " + knownAt, totalsByMeterDay(trino, "readings FOR TIMESTAMP AS OF " + timestamp(knownAt)),
                        expected.asKnownAt(knownAt).totalsByMeterDay(View.RESOLVED, ReadingsOracle.all()));
            }
            checkCompleteness(trino, day, expected);
        }
    }

    /**
     * meter_completeness over the last {@value #COMPLETENESS_DAYS} days (hot and cold, erasures and corrections in them):
     * each meter's winning intervals ({@code actual}, summed over its grids) are the oracle's winners of the range.
     */
    private void checkCompleteness(Connection trino, LocalDate day, ReadingsOracle expected)
            throws SQLException
    {
        LocalDate first = day.minusDays(COMPLETENESS_DAYS - 1);
        Instant lower = MeteringCalendar.startOfLocalDay(first.isBefore(generator.startDay()) ? generator.startDay() : first);
        Instant upper = MeteringCalendar.startOfLocalDay(day.plusDays(1));
        SortedMap<String, Long> wanted = new TreeMap<>();
        expected.totalsByMeter(View.RESOLVED, ReadingsOracle.fromRange(lower, upper)).forEach((meter, totals) -> wanted.put(meter, totals.count()));
        SortedMap<String, Long> actual = new TreeMap<>();
        String sql = """
                SELECT malo_id, sum(actual)
                FROM TABLE(meterstore.system.meter_completeness(table_name => 'readings', range_start => %s, range_end => %s))
                GROUP BY malo_id""".formatted(timestamp(lower), timestamp(upper));
        try (Statement statement = trino.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            while (result.next()) {
                actual.put(result.getString(1), result.getLong(2));
            }
        }
        if (!actual.equals(wanted)) {
            String meter = new TreeSet<>(Sets.union(actual.keySet(), wanted.keySet())).stream()
                    .filter(key -> !Objects.equals(actual.get(key), wanted.get(key)))
                    .findFirst()
                    .orElseThrow();
            throw new DivergenceException("Oracle check failed after simulated day %s (%s passed before it): meter_completeness from %s to %s: meter %s: expected %s winning intervals, actual %s"
                    .formatted(day, checks, lower, upper, meter, wanted.getOrDefault(meter, 0L), actual.getOrDefault(meter, 0L)));
        }
        checks++;
    }

    private void compare(LocalDate day, String question, SortedMap<MeterDay, Totals> actual, SortedMap<MeterDay, Totals> expected)
    {
        Optional<String> difference = SoakOracle.firstDifference(question, expected, actual);
        if (difference.isPresent()) {
            throw new DivergenceException("Oracle check failed after simulated day %s (%s passed before it): %s".formatted(day, checks, difference.get()));
        }
        checks++;
    }

    private static SortedMap<MeterDay, Totals> totalsByMeterDay(Connection trino, String relation)
            throws SQLException
    {
        String sql = """
                SELECT malo_id, CAST(date("from" AT TIME ZONE 'Europe/Berlin') AS varchar), count(*), sum(value)
                FROM %s
                GROUP BY 1, 2""".formatted(relation);
        SortedMap<MeterDay, Totals> totals = new TreeMap<>();
        try (Statement statement = trino.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            while (result.next()) {
                totals.put(new MeterDay(result.getString(1), LocalDate.parse(result.getString(2))), new Totals(result.getLong(3), result.getBigDecimal(4).setScale(Reading.VALUE_SCALE)));
            }
        }
        return totals;
    }

    /** Records {@code rows} in the oracle, then sends what the tampering lets through (all of them in a run). */
    private void write(Connection trino, Kind kind, LocalDate day, List<Reading> rows)
            throws SQLException
    {
        for (String statement : recorded(kind, day, rows)) {
            execute(trino, statement);
        }
    }

    /** Records {@code rows} in the oracle before anything is sent; returns the statements that send what the tampering lets through. */
    private List<String> recorded(Kind kind, LocalDate day, List<Reading> rows)
    {
        if (rows.isEmpty()) {
            return List.of();
        }
        oracle.written(rows);
        rowsRecorded += rows.size();
        List<Reading> sent = tampering.sent(kind, day, rows);
        rowsSent += sent.size();
        // a day's corrections of 1,000 meters (3 %: 2,880 rows) would exceed query.max-length in one statement: as many
        // rows a statement as a delivery's
        return Lists.partition(sent, settings.metersPerStatement() * MAX_ROWS_PER_METER_DAY).stream().map(SoakRun::insert).toList();
    }

    /**
     * Sends {@code statements} over every connection at once, each taking the next statement as it finishes one, as a
     * market's loaders deliver their batches side by side; returns when all are done, throwing the first failure.
     */
    static void executeAtOnce(List<Connection> connections, List<String> statements)
            throws SQLException, InterruptedException
    {
        AtomicInteger next = new AtomicInteger();
        List<Future<Void>> sending = new ArrayList<>();
        try (ExecutorService executor = Executors.newFixedThreadPool(connections.size())) {
            for (Connection connection : connections) {
                sending.add(executor.submit(() -> {
                    for (int statement = next.getAndIncrement(); statement < statements.size(); statement = next.getAndIncrement()) {
                        execute(connection, statements.get(statement));
                    }
                    return null;
                }));
            }
        }
        // every sender has finished (the executor's close waits): the first failure, if any, is the statements'
        for (Future<Void> sender : sending) {
            try {
                sender.get();
            }
            catch (ExecutionException e) {
                Throwables.throwIfInstanceOf(e.getCause(), SQLException.class);
                Throwables.throwIfUnchecked(e.getCause());
                throw new RuntimeException(e.getCause());
            }
        }
    }

    /**
     * Sends {@code rows}, some of which lie in a month the retention removed: the write path refuses the whole statement
     * as erased (METERSTORE_ERASED, naming the retention's erasure), nothing written, as any INSERT into an erasure.
     */
    private void refusePastRetention(Connection trino, List<Reading> rows, String reason)
            throws SQLException
    {
        refuse(trino, rows, ERASED, reason);
        rowsRefusedPastRetention += rows.size();
    }

    /** Sends {@code rows}, which the store must refuse with a message saying {@code expected}; counts the refused statement under {@code reason}. */
    private void refuse(Connection trino, List<Reading> rows, String expected, String reason)
            throws SQLException
    {
        try {
            execute(trino, insert(rows));
        }
        catch (SQLException e) {
            if (e.getMessage() == null || !e.getMessage().contains(expected)) {
                throw e;
            }
            refused.merge(reason, 1, Integer::sum);
            return;
        }
        throw new DivergenceException("The store accepted what it must refuse (%s): %s".formatted(expected, rows.getFirst()));
    }

    /** A stored winner of this day or one up to 40 days back, hot or cold; never an erased one nor one past the retention (the oracle holds none). */
    private Reading randomWinner(int index, LocalDate day)
    {
        // the first day the retention left rows of (the first hour of a Berlin month's first day lies in the UTC month before)
        long kept = ChronoUnit.DAYS.between(MeteringCalendar.localDay(oracle.retainedFrom()), day);
        LocalDate stored = day.minusDays(random.nextInt((int) Math.min(Math.min(index, 40), kept) + 1));
        List<Reading> winners = oracle.oracle().resolved(ReadingsOracle.fromRange(MeteringCalendar.startOfLocalDay(stored), MeteringCalendar.startOfLocalDay(stored.plusDays(1))));
        checkState(!winners.isEmpty(), "No readings of %s", stored);
        return winners.get(random.nextInt(winners.size()));
    }

    private static void execute(Connection trino, String sql)
            throws SQLException
    {
        try (Statement statement = trino.createStatement()) {
            statement.executeUpdate(sql);
        }
    }

    /**
     * The rows as one INSERT with every column given (learned at their own recorded_at), written as a bulk loader
     * writes them: an UNNEST of one JSON text per column, which Trino parses and plans in a fraction of the time of
     * VALUES or of an array of literals (docs/sql.md, "Writing many rows").
     */
    static String insert(List<Reading> rows)
    {
        return ReadingsInserts.insertAsRecordedJson(rows);
    }



}
