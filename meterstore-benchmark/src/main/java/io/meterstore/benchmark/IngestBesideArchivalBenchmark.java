package io.meterstore.benchmark;

import io.airlift.log.Logger;
import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchivalSettings;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.benchmark.BenchmarkResult.Comparison;
import io.meterstore.benchmark.BenchmarkResult.Target;
import io.meterstore.benchmark.BenchmarkResult.Unit;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.trino.base.PostgresConnectionPool;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.InstantSource;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

import static com.google.common.base.Preconditions.checkState;
import static java.util.Objects.requireNonNull;

/**
 * W1 (issue 33): the latency of today's ingestion ({@link IngestionStream}: 1,000-row INSERTs through Trino, one a
 * second) while an archival cycle archives a day, against the same stream with no cycle. Afterwards every row is
 * checked to lie in exactly one tier, and the dataset is put back as it was (the cycle's commit rolled back, its
 * partition attached again, the stream's rows and partitions dropped).
 */
final class IngestBesideArchivalBenchmark
{
    static final String ID = "W1";
    // the same, the cycle in a JVM of its own at the lowest CPU priority, as docs/operations.md gives a deployment
    static final String NICE_ID = "W1n";
    private static final Logger log = Logger.get(IngestBesideArchivalBenchmark.class);
    private static final List<String> NICE = List.of("nice", "-n", "19");
    private static final String TITLE = "INSERT today's readings beside an archival cycle: p95";
    private static final String NICE_TITLE = "W1 with the archiver at nice 19, in a JVM of its own";
    private static final String LABEL = "beside a cycle";
    private static final String PEER = "no cycle";
    private static final Target TARGET = new Target(1.5, "<= 1.50, no error, every row in one tier");
    private static final DateTimeFormatter LITERAL = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneOffset.UTC);

    private final BenchmarkSettings settings;
    private final BenchmarkDataset dataset;
    private final Supplier<Connection> trinoConnections;
    private final Connection trino;
    private final boolean niced;
    private final String id;
    private final String title;

    /** What the cycle beside the stream did. */
    private record CycleRun(boolean archived, String description) {}

    /**
     * @param trinoConnections opens the ingestion stream's JDBC connection to the engine
     * @param trino a connection of the benchmark's own, for the checks
     * @param niced W1n: the cycle in a JVM of its own at nice 19; W1, in the benchmark's JVM, otherwise
     */
    IngestBesideArchivalBenchmark(BenchmarkSettings settings, BenchmarkDataset dataset, Supplier<Connection> trinoConnections, Connection trino, boolean niced)
    {
        this.settings = requireNonNull(settings, "settings is null");
        this.dataset = requireNonNull(dataset, "dataset is null");
        this.trinoConnections = requireNonNull(trinoConnections, "trinoConnections is null");
        this.trino = requireNonNull(trino, "trino is null");
        this.niced = niced;
        this.id = niced ? NICE_ID : ID;
        this.title = niced ? NICE_TITLE : TITLE;
    }

    BenchmarkResult run()
    {
        DatasetRestore before;
        try {
            before = DatasetRestore.capture(dataset);
        }
        catch (SQLException e) {
            return BenchmarkResult.failed(id, title, LABEL, PEER, Unit.SECONDS, TARGET, e);
        }
        IngestionStream stream = new IngestionStream(settings, dataset, trinoConnections, Set.of());
        try {
            return measure(stream, before.table());
        }
        catch (Exception e) {
            log.error(e, "%s failed", id);
            return BenchmarkResult.failed(id, title, LABEL, PEER, Unit.SECONDS, TARGET, e);
        }
        finally {
            stream.dropCreated();
            before.restore(id, Optional.empty());
        }
    }

    private BenchmarkResult measure(IngestionStream stream, Table table)
            throws Exception
    {
        long rowsBefore = tierRows();
        TieringWatermark watermarkBefore = WatermarkReader.current(table).watermark();
        LockWaits lockWaits = new LockWaits();
        IngestionStream.Beside<CycleRun> beside = stream.beside(() -> lockWaits.sampledWhile(this::cycle));
        log.info("%s: %s", id, beside.event().description());
        table.refresh();
        TieringWatermark watermark = WatermarkReader.current(table).watermark();

        // every row in exactly one tier: each tier counted on its own, on its side of W, and the two add up
        long inserted = beside.rows() + beside.alone().stream().mapToLong(IngestionStream.Sample::rows).sum();
        long hot = hotRows();
        long coldAboveW = count("SELECT count(*) FROM iceberg.metering.readings WHERE \"from\" >= TIMESTAMP '%s UTC'".formatted(LITERAL.format(watermark.instant())));
        long hotBelowW = hotRowsBelow(watermark);
        long cold = count("SELECT count(*) FROM iceberg.metering.readings");
        long streamHot = stream.hotRows();
        List<String> failures = new ArrayList<>();
        check(failures, beside.event().archived() && watermark.instant().isAfter(watermarkBefore.instant()),
                "the cycle archived a day beside the stream (%s)", beside.event().description());
        check(failures, streamHot == inserted, "the stream's %,d rows are all in PostgreSQL (%,d there)", inserted, streamHot);
        check(failures, coldAboveW == 0 && hotBelowW == 0, "no row lies on the wrong side of W %s: %,d in Iceberg at or above it, %,d in PostgreSQL's attached partitions below it",
                TieringWatermark.formatInstant(watermark.instant()), coldAboveW, hotBelowW);
        check(failures, cold + hot == rowsBefore + inserted, "Iceberg's %,d rows and PostgreSQL's %,d add up to the %,d before and the stream's %,d", cold, hot, rowsBefore, inserted);

        List<String> details = new ArrayList<>();
        details.add(beside.describe("an archival cycle (%s)".formatted(beside.event().description())));
        details.add(lockWaits.describe());
        details.add("The headline is the p95 of the statements that overlapped the cycle against the p95 of the stream alone; at small sizes a cycle overlaps a few statements only, so its p95 is their slowest.");
        details.add("Checks, after the cycle: %s.".formatted(failures.isEmpty()
                ? "the cycle archived a day; every row the stream wrote is in PostgreSQL; nothing in Iceberg at or above W, nothing in PostgreSQL's attached partitions below it; Iceberg's %,d rows and PostgreSQL's %,d are the %,d before plus the stream's %,d, so every row is in exactly one tier, once"
                        .formatted(cold, hot, rowsBefore, inserted)
                : "**failed**: " + String.join("; ", failures)));
        details.add("Afterwards the dataset is restored: the Iceberg table rolled back to its snapshot before W1, the partition the cycle archived attached again, the stream's rows and partitions dropped.");
        return new BenchmarkResult(id, title, LABEL, PEER, Unit.SECONDS, IngestionStream.p95(beside.during()), IngestionStream.p95(beside.alone()), TARGET,
                failures.isEmpty() ? Comparison.SAME_RESULT : Comparison.MISMATCH, beside.error(), details);
    }

    /**
     * One archival cycle of the dataset's table: W1 runs it in the benchmark's JVM, warm, beside the engine; W1n as a
     * deployment that shares its cores would run the archiver, in a JVM of its own at the lowest CPU priority, so the
     * engine's and PostgreSQL's work goes first (PostgreSQL's backend reading the day for it keeps its own priority).
     */
    private CycleRun cycle()
            throws Exception
    {
        if (!niced) {
            ArchiveOutcome outcome = new ArchivalCycle(
                    dataset.warehouse().catalog(),
                    TableIdentifier.of(BenchmarkDataset.SCHEMA, BenchmarkDataset.TABLE),
                    BenchmarkDataset.HOT_TIER,
                    () -> dataset.database().connect(),
                    ArchivalSettings.DEFAULTS,
                    InstantSource.fixed(BenchmarkDataset.LATER))
                    .archiveOnce();
            return new CycleRun(outcome.kind() == ArchiveOutcome.Kind.ARCHIVED, outcome.describe());
        }
        ArchiveOnceProbe.Cycle cycle = ArchiveOnceProbe.runInChildJvm(NICE, settings.archiverHeap(), 1, dataset.warehouse(), BenchmarkDataset.SCHEMA, BenchmarkDataset.TABLE, settings.directory())
                .cycles().getFirst();
        return new CycleRun(cycle.archived(), "%s, %,d rows in %.1f s, the cycle alone, in a JVM of its own at nice 19".formatted(cycle.kind(), cycle.rows(), cycle.nanos() / 1e9));
    }

    /**
     * What the connector's PostgreSQL sessions (the INSERTs' among them) waited for while the cycle ran, sampled from
     * pg_stat_activity every {@value #SAMPLE_MILLIS} ms on a connection of its own: a statement waiting for a lock the
     * cycle holds shows as wait_event_type 'Lock'; one held up by the CPU or the disk the cycle takes does not.
     */
    private final class LockWaits
    {
        private static final long SAMPLE_MILLIS = 20;

        private int samples;
        private int active;
        private int waiting;
        private final Map<String, Integer> events = new TreeMap<>();
        private Optional<String> failure = Optional.empty();

        <T> T sampledWhile(Callable<T> event)
                throws Exception
        {
            AtomicBoolean done = new AtomicBoolean();
            // a thread of its own: the stream beside the cycle holds the common pool, which has one thread on two cores
            Thread sampler = Thread.ofPlatform().name("w1-lock-waits").start(() -> sample(done));
            try {
                return event.call();
            }
            finally {
                done.set(true);
                sampler.join();
            }
        }

        private void sample(AtomicBoolean done)
        {
            try (Connection connection = dataset.database().connect();
                    PreparedStatement statement = connection.prepareStatement("""
                            SELECT count(*), count(*) FILTER (WHERE wait_event_type = 'Lock'), string_agg(wait_event, ',') FILTER (WHERE wait_event_type = 'Lock')
                            FROM pg_stat_activity WHERE datname = current_database() AND application_name = ? AND state = 'active'""")) {
                statement.setString(1, PostgresConnectionPool.APPLICATION_NAME);
                while (!done.get()) {
                    try (ResultSet result = statement.executeQuery()) {
                        result.next();
                        samples++;
                        active += result.getLong(1) > 0 ? 1 : 0;
                        if (result.getLong(2) > 0) {
                            waiting++;
                            for (String kind : result.getString(3).split(",")) {
                                events.merge(kind, 1, Integer::sum);
                            }
                        }
                    }
                    Thread.sleep(SAMPLE_MILLIS);
                }
            }
            catch (SQLException e) {
                failure = Optional.of(e.getMessage());
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        String describe()
        {
            return "Lock waits while the cycle ran (pg_stat_activity every %s ms, the connector's sessions): %,d samples, %,d with a statement of the connector running, %,d with one waiting for a lock%s%s."
                    .formatted(SAMPLE_MILLIS, samples, active, waiting, events.isEmpty() ? "" : " (%s)".formatted(events),
                            failure.map(message -> "; sampling stopped early: " + message).orElse(""));
        }
    }

    /** Both tiers' rows: Iceberg's current snapshot and PostgreSQL's attached partitions. */
    private long tierRows()
            throws SQLException
    {
        return count("SELECT count(*) FROM iceberg.metering.readings") + hotRows();
    }

    private long hotRows()
            throws SQLException
    {
        return postgresCount("SELECT count(*) FROM %s".formatted(BenchmarkDataset.HOT_TIER.qualifiedParent()), Optional.empty());
    }

    private long hotRowsBelow(TieringWatermark watermark)
            throws SQLException
    {
        return postgresCount("SELECT count(*) FROM %s WHERE \"from\" < ?".formatted(BenchmarkDataset.HOT_TIER.qualifiedParent()), Optional.of(watermark));
    }

    private long postgresCount(String sql, Optional<TieringWatermark> watermark)
            throws SQLException
    {
        try (Connection connection = dataset.database().connect(); PreparedStatement statement = connection.prepareStatement(sql)) {
            if (watermark.isPresent()) {
                statement.setObject(1, watermark.get().instant().atOffset(ZoneOffset.UTC));
            }
            try (ResultSet result = statement.executeQuery()) {
                checkState(result.next());
                return result.getLong(1);
            }
        }
    }

    private long count(String sql)
            throws SQLException
    {
        List<List<String>> rows = new TimedQuery("iceberg", trino, sql).execute().rows();
        checkState(rows.size() == 1, "Expected one row from %s, got %s", sql, rows.size());
        return Long.parseLong(rows.getFirst().getFirst());
    }

    private static void check(List<String> failures, boolean held, String what, Object... arguments)
    {
        if (!held) {
            failures.add(what.formatted(arguments));
        }
    }
}
