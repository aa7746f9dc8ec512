package io.meterstore.benchmark;

import com.google.common.collect.ImmutableList;
import io.airlift.log.Logger;
import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchivalSettings;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.benchmark.BenchmarkResult.Comparison;
import io.meterstore.benchmark.BenchmarkResult.Target;
import io.meterstore.benchmark.BenchmarkResult.Unit;
import io.meterstore.benchmark.TimedQuery.Execution;
import io.meterstore.core.HotPartition;
import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.Sql;
import io.meterstore.testing.TestingWarehouse;
import io.meterstore.trino.base.MeterstoreMetrics;
import io.trino.plugin.base.metrics.TDigestHistogram;
import io.trino.spi.metrics.Metric;
import io.trino.spi.metrics.Metrics;
import org.apache.iceberg.ExpireSnapshots;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.util.SnapshotUtil;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static com.google.common.base.Preconditions.checkState;
import static java.util.Objects.requireNonNull;

/**
 * D1 (issue 11): dashboards over JDBC. 1, 4 and 8 clients, each on a connection of its own, run a mix of four
 * dashboard queries over {@code readings} for {@code benchmark.d1.seconds} each, while correction INSERTs arrive and
 * one archival cycle moves W. Every answer is checked against the one a different path gives: ROW_NUMBER over
 * {@code readings_versions}, computed before the clients start. The corrections repeat each winner's value under a
 * higher version, so every right answer stays the same while they land and while W moves. Afterwards the dataset is
 * put back as it was (the Iceberg table rolled back to its snapshot before D1 and D1's snapshots expired, the
 * partitions D1 archived attached again, the corrections deleted), so later runs measure the same data.
 */
final class DashboardBenchmark
{
    static final List<Integer> CLIENTS = List.of(1, 4, 8);
    private static final Logger log = Logger.get(DashboardBenchmark.class);
    private static final String SOURCE_KIND = "D1_CORRECTION";
    private static final DateTimeFormatter LITERAL = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneOffset.UTC);
    private static final int METERS = 8;
    // two cores shared by eight clients: a light query may wait for the seven others' share, no more (issue 33)
    private static final double MAX_P95_RATIO = 8.0;

    /** The queries of a metering dashboard; each filters by "from" the way a user would, so both tiers prune. */
    enum Kind
    {
        TODAY_TOTAL("D1t", "today's total", true, "count(*), sum(value)", ""),
        METER_LAST_WEEK("D1w", "one meter's last 7 days", true, "\"from\", value", " ORDER BY \"from\""),
        MONTH_BY_DAY("D1m", "this month's totals per day", false, "balancing_day, count(*), sum(value)", " GROUP BY balancing_day ORDER BY balancing_day"),
        METER_YEAR("D1y", "one meter over a year", false, "date_trunc('month', balancing_day), count(*), sum(value)", " GROUP BY 1 ORDER BY 1");

        // the id of its one-client pair
        private final String pairId;
        private final String title;
        // a light query reads a day or a meter's week, a heavy one a month of every meter or a meter's year
        private final boolean light;
        private final String select;
        private final String tail;

        Kind(String pairId, String title, boolean light, String select, String tail)
        {
            this.pairId = pairId;
            this.title = title;
            this.light = light;
            this.select = select;
            this.tail = tail;
        }

        /** Its filter on a dashboard whose last day is {@code lastDay}, for {@code meter} where it reads one. */
        String filter(LocalDate lastDay, String meter)
        {
            return switch (this) {
                case TODAY_TOTAL -> dayFilter(lastDay);
                case METER_LAST_WEEK -> "malo_id = '%s' AND \"from\" >= %s".formatted(meter, literal(MeteringCalendar.startOfLocalDay(lastDay.minusDays(6))));
                case MONTH_BY_DAY -> "\"from\" >= %s".formatted(literal(MeteringCalendar.startOfLocalDay(lastDay.withDayOfMonth(1))));
                case METER_YEAR -> "malo_id = '%s' AND \"from\" >= %s".formatted(meter, literal(MeteringCalendar.startOfLocalDay(lastDay.minusDays(364))));
            };
        }

        /** The query over {@code table}, as the mix runs it over {@code readings}. */
        String sql(String table, LocalDate lastDay, String meter)
        {
            return "SELECT %s FROM %s WHERE %s%s".formatted(select, table, filter(lastDay, meter), tail);
        }
    }

    /** One query of the mix: its kind, its SQL over {@code readings}, and the answer ROW_NUMBER over every version gives. */
    private record DashboardQuery(Kind kind, String sql, List<List<String>> expected) {}

    /**
     * @param queryId the engine's id of the query, whose statistics are looked up beside the clients
     * @param connectionWaitMillis the longest a hot split of the query waited for a PostgreSQL connection; empty without a hot split
     */
    private record Sample(Kind kind, long nanos, boolean wrong, Optional<String> error, Optional<String> queryId, OptionalDouble connectionWaitMillis)
    {
        Sample withConnectionWait(OptionalDouble waitMillis)
        {
            return new Sample(kind, nanos, wrong, error, queryId, waitMillis);
        }
    }

    private record Phase(int clients, double seconds, List<Sample> samples, long corrections, String archival) {}

    private final BenchmarkSettings settings;
    private final BenchmarkDataset dataset;
    private final Supplier<Connection> trinoConnections;
    private final Function<String, Metrics> connectorMetrics;
    private final Connection trino;
    private final boolean reportsApart;

    /**
     * @param trinoConnections opens a JDBC connection to the engine, one per client
     * @param connectorMetrics the connector's metrics of a finished query, by its query id
     * @param trino a connection of the benchmark's own, for the expected answers and the corrections
     * @param reportsApart D1g: the heavy kinds tagged {@value DashboardResourceGroups#REPORT_TAG}, for an engine with
     *         {@link DashboardResourceGroups}; D1 otherwise
     */
    DashboardBenchmark(BenchmarkSettings settings, BenchmarkDataset dataset, Supplier<Connection> trinoConnections, Function<String, Metrics> connectorMetrics, Connection trino, boolean reportsApart)
    {
        this.settings = requireNonNull(settings, "settings is null");
        this.dataset = requireNonNull(dataset, "dataset is null");
        this.trinoConnections = requireNonNull(trinoConnections, "trinoConnections is null");
        this.connectorMetrics = requireNonNull(connectorMetrics, "connectorMetrics is null");
        this.trino = requireNonNull(trino, "trino is null");
        this.reportsApart = reportsApart;
    }

    private String id()
    {
        return reportsApart ? "D1g" : "D1";
    }

    BenchmarkResult run()
    {
        String title = reportsApart
                ? "D1 with heavy queries in a resource group of their own, one at a time (docs/operations.md)"
                : "dashboards: light queries' p95 at 8 clients against 1 client, heavy ones beside them";
        Target target = new Target(MAX_P95_RATIO, "<= 8.00, no error, no wrong answer");
        DatasetRestore before;
        try {
            before = DatasetRestore.capture(dataset);
        }
        catch (SQLException e) {
            return BenchmarkResult.failed(id(), title, "8 clients", "1 client", Unit.SECONDS, target, e);
        }
        try {
            List<DashboardQuery> queries = queries();
            List<Phase> phases = new ArrayList<>();
            AtomicLong version = new AtomicLong();
            for (int clients : CLIENTS) {
                phases.add(phase(clients, queries, version));
            }
            return result(title, target, queries, phases);
        }
        catch (Exception e) {
            log.error(e, "%s failed", id());
            return BenchmarkResult.failed(id(), title, "8 clients", "1 client", Unit.SECONDS, target, e);
        }
        finally {
            before.restore(id(), Optional.of(SOURCE_KIND));
        }
    }

    /** The meters whose dashboards the mix reads: every n-th, across the id range. */
    static List<String> meters(List<String> maloIds)
    {
        return IntStream.range(0, METERS).mapToObj(index -> maloIds.get(index * maloIds.size() / METERS)).toList();
    }

    /** The mix, with the answers of another path: ROW_NUMBER over every version picks the same winners as readings must. */
    private List<DashboardQuery> queries()
            throws SQLException
    {
        LocalDate lastDay = lastDay(settings);
        List<String> meters = meters(dataset.generator().maloIds());

        List<DashboardQuery> queries = new ArrayList<>();
        queries.add(query(Kind.TODAY_TOTAL, lastDay, ""));
        queries.add(monthByDay(lastDay));
        for (String meter : meters) {
            queries.add(query(Kind.METER_LAST_WEEK, lastDay, meter));
            queries.add(query(Kind.METER_YEAR, lastDay, meter));
        }
        return ImmutableList.copyOf(queries);
    }

    /** The dataset's last day, the dashboards' today. */
    static LocalDate lastDay(BenchmarkSettings settings)
    {
        return BenchmarkSettings.START_DAY.plusDays(settings.days() - 1);
    }

    /**
     * D1's kinds, one client (issue 32): each on {@code readings} against the same query on {@code readings_versions},
     * for the first of the mix's meters where it reads one. Winners against every version, so not the same answer.
     */
    static List<QueryBenchmark.Pair> singleClientPairs(Connection trino, LocalDate lastDay, List<String> maloIds)
    {
        String meter = meters(maloIds).getFirst();
        return Stream.of(Kind.values())
                .map(kind -> new QueryBenchmark.Pair(
                        kind.pairId,
                        "D1's %s, one client".formatted(kind.title),
                        "readings",
                        "readings_versions",
                        new TimedQuery("meterstore", trino, kind.sql("meterstore.metering.readings", lastDay, meter)),
                        List.of(new TimedQuery("meterstore", trino, kind.sql("meterstore.metering.readings_versions", lastDay, meter))),
                        QueryBenchmark.Answer.NOT_COMPARABLE,
                        Target.atMost(1.2)))
                .toList();
    }

    private DashboardQuery query(Kind kind, LocalDate lastDay, String meter)
            throws SQLException
    {
        String winners = winners(kind.select, kind.filter(lastDay, meter), kind.tail);
        return checked(kind, kind.sql("meterstore.metering.readings", lastDay, meter), new TimedQuery("meterstore", trino, winners).execute().rows(), winners);
    }

    /**
     * This month's totals per day, its answer from ROW_NUMBER computed a local day of "from" at a time: over the whole
     * month TopNRanking holds every key at once, which at 10,000 meters exceeds the engine's per-node memory. Every version
     * of a key shares its "from", so each day's winners are exact.
     */
    private DashboardQuery monthByDay(LocalDate lastDay)
            throws SQLException
    {
        String select = Kind.MONTH_BY_DAY.select;
        String tail = Kind.MONTH_BY_DAY.tail;
        List<Execution> days = new ArrayList<>();
        for (LocalDate day = lastDay.withDayOfMonth(1); !day.isAfter(lastDay); day = day.plusDays(1)) {
            days.add(new TimedQuery("meterstore", trino, winners(select, dayFilter(day), tail)).execute());
        }
        // the query's range is open: whatever lies beyond the last day counts too
        String beyond = "\"from\" >= %s".formatted(literal(MeteringCalendar.startOfLocalDay(lastDay.plusDays(1))));
        days.add(new TimedQuery("meterstore", trino, winners(select, beyond, tail)).execute());
        String filter = Kind.MONTH_BY_DAY.filter(lastDay, "");
        return checked(Kind.MONTH_BY_DAY, Kind.MONTH_BY_DAY.sql("meterstore.metering.readings", lastDay, ""), merged(days),
                "a local day of \"from\" at a time: " + winners(select, filter, tail));
    }

    /**
     * The rows of several executions as one answer, as {@link TimedQuery} gives it: one row per value of the first column,
     * in its order (an ISO date sorts as its text), the other columns added. A gas balancing day spans two local days, so
     * two days' rows can share one.
     */
    static List<List<String>> merged(List<Execution> executions)
    {
        return QueryBenchmark.addUp(executions).entrySet().stream()
                .map(total -> Stream.concat(Stream.of(total.getKey()), total.getValue().stream().map(TimedQuery::normalize)).toList())
                .toList();
    }

    private static String winners(String select, String filter, String tail)
    {
        return """
                SELECT %s FROM (
                    SELECT *, row_number() OVER (PARTITION BY malo_id, obis_code, "from", version_scope ORDER BY version DESC, recorded_at DESC) AS winner
                    FROM meterstore.metering.readings_versions WHERE %s)
                WHERE winner = 1%s""".formatted(select, filter, tail);
    }

    /** The query of the mix with its {@code expected} answer, once it has given that answer itself. */
    private DashboardQuery checked(Kind kind, String sql, List<List<String>> expected, String winners)
            throws SQLException
    {
        checkState(!expected.isEmpty(), "D1 query %s has no answer on this dataset", sql);
        // the warm-up: one round of each query before any is timed
        checkState(new TimedQuery("meterstore", trino, sql).execute().rows().equals(expected), "D1 query %s disagrees with ROW_NUMBER before any load: %s", sql, winners);
        return new DashboardQuery(kind, sql, expected);
    }

    /** {@code clients} clients running the mix for the phase's time, corrections arriving, and one archival cycle a quarter in. */
    private Phase phase(int clients, List<DashboardQuery> queries, AtomicLong version)
            throws Exception
    {
        log.info("%s: %s clients for %s s", id(), clients, settings.d1Seconds());
        long deadline = System.nanoTime() + Duration.ofSeconds(settings.d1Seconds()).toNanos();
        Queue<Sample> samples = new ConcurrentLinkedQueue<>();
        // each query's statistics looked up beside the clients, as soon as it finished, so that no client pauses between
        // its queries for them, and before the engine prunes a finished query's operator statistics (query.max-history)
        Map<String, CompletableFuture<OptionalDouble>> connectionWaits = new ConcurrentHashMap<>();
        ExecutorService lookups = Executors.newFixedThreadPool(2, Thread.ofPlatform().name("d1-lookup-", 0).daemon().factory());
        AtomicLong corrections = new AtomicLong();
        ExecutorService executor = Executors.newFixedThreadPool(clients + 2, Thread.ofPlatform().name("d1-", 0).daemon().factory());
        try {
            List<Future<?>> clientRuns = new ArrayList<>();
            for (int client = 0; client < clients; client++) {
                int seed = client;
                clientRuns.add(executor.submit(() -> {
                    runClient(seed, queries, deadline, samples, queryId -> connectionWaits.put(queryId, CompletableFuture.supplyAsync(() -> connectionWaitMillis(queryId), lookups)));
                    return null;
                }));
            }
            Future<?> correcting = executor.submit(() -> {
                correct(deadline, version, corrections);
                return null;
            });
            Future<String> archiving = executor.submit(() -> {
                Thread.sleep(Duration.ofSeconds(settings.d1Seconds()).toMillis() / 4);
                return archiveOnce();
            });
            for (Future<?> clientRun : clientRuns) {
                clientRun.get();
            }
            correcting.get();
            String archival = archiving.get();
            long start = deadline - Duration.ofSeconds(settings.d1Seconds()).toNanos();
            double seconds = (System.nanoTime() - start) / 1e9;
            List<Sample> measured = new ArrayList<>();
            for (Sample sample : samples) {
                measured.add(sample.withConnectionWait(connectionWaits.getOrDefault(sample.queryId().orElse(""), CompletableFuture.completedFuture(OptionalDouble.empty())).get()));
            }
            return new Phase(clients, seconds, measured, corrections.get(), archival);
        }
        finally {
            executor.shutdownNow();
            lookups.shutdownNow();
        }
    }

    private void runClient(int seed, List<DashboardQuery> queries, long deadline, Queue<Sample> samples, Consumer<String> finished)
            throws SQLException
    {
        Random random = new Random(seed);
        try (Connection connection = trinoConnections.get()) {
            Map<Kind, List<DashboardQuery>> byKind = queries.stream().collect(Collectors.groupingBy(DashboardQuery::kind, () -> new EnumMap<>(Kind.class), Collectors.toList()));
            while (System.nanoTime() < deadline) {
                // each kind as often as the others, whatever the number of meters
                List<DashboardQuery> ofKind = byKind.get(Kind.values()[random.nextInt(Kind.values().length)]);
                DashboardQuery query = ofKind.get(random.nextInt(ofKind.size()));
                if (reportsApart) {
                    // as a deployment's report panels would be set up: a data source of their own, with its client tags
                    connection.setClientInfo("ClientTags", query.kind().light ? null : DashboardResourceGroups.REPORT_TAG);
                }
                long start = System.nanoTime();
                try {
                    TimedQuery.Execution execution = new TimedQuery("meterstore", connection, query.sql()).execute();
                    execution.queryId().ifPresent(finished);
                    samples.add(new Sample(query.kind(), execution.nanos(), !execution.rows().equals(query.expected()), Optional.empty(), execution.queryId(), OptionalDouble.empty()));
                }
                catch (SQLException | RuntimeException e) {
                    samples.add(new Sample(query.kind(), System.nanoTime() - start, false, Optional.of(Optional.ofNullable(e.getMessage()).orElse(e.toString())), Optional.empty(), OptionalDouble.empty()));
                }
            }
        }
    }

    /** The longest wait of the query's hot splits for a PostgreSQL connection, as the connector reports it per split. */
    private OptionalDouble connectionWaitMillis(String queryId)
    {
        Metric<?> waits = connectorMetrics.apply(queryId).getMetrics().get(MeterstoreMetrics.POSTGRESQL_CONNECTION_WAIT_MILLIS);
        return waits instanceof TDigestHistogram histogram && histogram.getTotal() > 0 ? OptionalDouble.of(histogram.getMax()) : OptionalDouble.empty();
    }

    /**
     * Correction INSERTs through Trino, one every few seconds: a whole day of one meter again, each winner's value under
     * a higher version, in the last hot days (which stay hot through every phase's archival cycle).
     */
    private void correct(long deadline, AtomicLong version, AtomicLong corrections)
            throws Exception
    {
        Random random = new Random(version.get());
        List<String> maloIds = dataset.generator().maloIds();
        LocalDate lastDay = BenchmarkSettings.START_DAY.plusDays(settings.days() - 1);
        long pause = Math.max(1_000, Duration.ofSeconds(settings.d1Seconds()).toMillis() / 40);
        try (Connection connection = trinoConnections.get(); Statement statement = connection.createStatement()) {
            while (System.nanoTime() < deadline) {
                LocalDate day = lastDay.minusDays(random.nextInt(Math.max(1, settings.hotDays() - CLIENTS.size() - 1)));
                String meter = maloIds.get(random.nextInt(maloIds.size()));
                statement.executeUpdate("""
                        INSERT INTO meterstore.metering.readings_versions
                        SELECT malo_id, melo_id, obis_code, sparte, "from", "to", value, unit, quality, resolution, '%s', source_detail, provenance,
                               version + %s, version_scope, NULL, balancing_day
                        FROM meterstore.metering.readings WHERE malo_id = '%s' AND "from" >= %s AND "from" < %s"""
                        .formatted(SOURCE_KIND, version.incrementAndGet(), meter, literal(MeteringCalendar.startOfLocalDay(day)), literal(MeteringCalendar.startOfLocalDay(day.plusDays(1)))));
                corrections.incrementAndGet();
                Thread.sleep(pause);
            }
        }
    }

    private String archiveOnce()
            throws Exception
    {
        ArchivalCycle cycle = new ArchivalCycle(
                dataset.warehouse().catalog(),
                TableIdentifier.of(BenchmarkDataset.SCHEMA, BenchmarkDataset.TABLE),
                BenchmarkDataset.HOT_TIER,
                () -> dataset.database().connect(),
                ArchivalSettings.DEFAULTS,
                InstantSource.fixed(BenchmarkDataset.LATER));
        ArchiveOutcome outcome = cycle.archiveOnce();
        log.info("%s: %s", id(), outcome.describe());
        return outcome.describe();
    }

    private BenchmarkResult result(String title, Target target, List<DashboardQuery> queries, List<Phase> phases)
    {
        Phase one = phases.getFirst();
        Phase eight = phases.getLast();
        // the light kind whose p95 grew most decides: a mix's p95 could hide one kind's collapse; the heavy kinds are reported
        Kind worst = Kind.TODAY_TOTAL;
        double worstRatio = 0;
        for (Kind kind : Kind.values()) {
            double ratio = percentile(eight, kind, 0.95) / percentile(one, kind, 0.95);
            if (kind.light && ratio > worstRatio) {
                worstRatio = ratio;
                worst = kind;
            }
        }
        long errors = phases.stream().flatMap(phase -> phase.samples().stream()).filter(sample -> sample.error().isPresent()).count();
        long wrong = phases.stream().flatMap(phase -> phase.samples().stream()).filter(Sample::wrong).count();
        Optional<String> error = phases.stream().flatMap(phase -> phase.samples().stream())
                .flatMap(sample -> sample.error().stream())
                .findFirst()
                .map(first -> "%s errors, the first: %s".formatted(errors, first));
        List<String> details = new ArrayList<>();
        details.add("""
                %s clients one after another, each on its own JDBC connection for %s s, picking a query kind of the mix below at random, each as often (the meter-based ones for one of %s meters) and running the next as soon as one is fetched. \
                Meanwhile a writer INSERTs corrections through Trino (a day of one meter again, each winner's value under a higher version) and one archival cycle moves W a quarter into each phase. \
                Every answer is compared with the one ROW_NUMBER over `readings_versions` gave before the clients started (this month's totals per day a local day of "from" at a time, added up by balancing day: over the whole month ROW_NUMBER holds every key and can exceed the engine's memory): the corrections leave every right answer as it was. \
                Headline: the light query kind (today's total, one meter's last 7 days) whose p95 grew most from 1 to 8 clients (%s), the heavy ones (this month's totals per day, one meter over a year) running beside it in the same mix. After D1 the dataset is restored: the Iceberg table rolled back to its snapshot before D1, the partitions D1 archived attached again, the corrections deleted."""
                .formatted(CLIENTS.stream().map(String::valueOf).collect(Collectors.joining(", ")), settings.d1Seconds(), METERS, worst.title));
        if (reportsApart) {
            details.add("""
                    The engine has the resource groups docs/operations.md gives for dashboards beside heavy reports (DashboardResourceGroups): each client tags its queries of the heavy kinds `%s` (the JDBC driver's client tags), and those run in the group `reports`, %s at a time, the others queued there; the light kinds, the corrections and every other query run in `dashboards`, whose limits do not bind. A heavy query's latency below includes its time queued.""".formatted(DashboardResourceGroups.REPORT_TAG, DashboardResourceGroups.REPORTS_AT_ONCE));
        }
        StringBuilder table = new StringBuilder("| clients | query | queries | queries/s | p50 | p95 | connection wait p95 | errors | wrong answers |\n|--:|---|--:|--:|--:|--:|--:|--:|--:|\n");
        for (Phase phase : phases) {
            for (Kind kind : Kind.values()) {
                List<Sample> ofKind = phase.samples().stream().filter(sample -> sample.kind() == kind).toList();
                table.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n".formatted(
                        phase.clients(),
                        kind.title,
                        ofKind.size(),
                        String.format(Locale.ROOT, "%.2f", ofKind.size() / phase.seconds()),
                        BenchmarkReport.figure(percentile(phase, kind, 0.50), Unit.SECONDS),
                        BenchmarkReport.figure(percentile(phase, kind, 0.95), Unit.SECONDS),
                        connectionWait(ofKind),
                        ofKind.stream().filter(sample -> sample.error().isPresent()).count(),
                        ofKind.stream().filter(Sample::wrong).count()));
            }
            table.append("| %s | all | %s | %s | | | | | |\n".formatted(phase.clients(), phase.samples().size(), String.format(Locale.ROOT, "%.2f", phase.samples().size() / phase.seconds())));
        }
        details.add(table.toString().strip());
        details.add("Connection wait: the longest any hot split of a query waited for one of the node's PostgreSQL connections, as the connector reports it in the query's metrics (`%s`; the pool's size beside it, `%s`), the p95 over the queries of a kind; a light query queueing behind heavy ones for connections shows here, CPU shared by the clients does not."
                .formatted(MeterstoreMetrics.POSTGRESQL_CONNECTION_WAIT_MILLIS, MeterstoreMetrics.POSTGRESQL_CONNECTIONS));
        details.add("p95 at 8 clients against 1 client per kind: " + Stream.of(Kind.values())
                .map(kind -> String.format(Locale.ROOT, "%s (%s) %.2f", kind.title, kind.light ? "light" : "heavy", percentile(eight, kind, 0.95) / percentile(one, kind, 0.95)))
                .collect(Collectors.joining("; ")) + ".");
        details.add(queueing(one, eight, phases));
        details.add(phases.stream()
                .map(phase -> "%s clients: %s correction INSERTs; archival: %s".formatted(phase.clients(), phase.corrections(), phase.archival()))
                .collect(Collectors.joining("; ")) + ".");
        Map<Kind, String> examples = new EnumMap<>(Kind.class);
        queries.forEach(query -> examples.putIfAbsent(query.kind(), query.sql()));
        examples.forEach((kind, sql) -> details.add("%s:\n\n```sql\n%s\n```".formatted(kind.title, sql)));
        return new BenchmarkResult(id(), title, "8 clients", "1 client", Unit.SECONDS,
                percentile(eight, worst, 0.95), percentile(one, worst, 0.95), target,
                wrong > 0 ? Comparison.MISMATCH : Comparison.SAME_RESULT, error, details);
    }

    /**
     * What queueing alone makes of the latency at 8 clients, from the phases' throughputs: a closed loop of N clients
     * that each run the next query as soon as one is fetched holds N queries in the engine, so by Little's law a
     * query's mean latency is N over the throughput. Once the cores are busy the throughput stops growing, and every
     * further client adds its query to the queue: the mean latency then grows with N whatever a query waits for.
     */
    private static String queueing(Phase one, Phase eight, List<Phase> phases)
    {
        double single = one.samples().size() / one.seconds();
        double crowded = eight.samples().size() / eight.seconds();
        double best = phases.stream().mapToDouble(phase -> phase.samples().size() / phase.seconds()).max().orElseThrow();
        double meanOne = one.clients() / single;
        double meanEight = eight.clients() / crowded;
        return String.format(Locale.ROOT, """
                Queueing: the mix ran %s at 1 client and %s at 8, at most %s in any phase (%s of the most at 8 clients: %s). By Little's law a query's mean latency is the clients over the throughput: %.3f s at 1 client, %.3f s at 8, a ratio of %.2f from queueing alone. A p95 at 8 clients of at most %.0f times the p95 at 1 client, with the spread of latencies as it is at 1 client, needs the mean to grow at most as much, so 8 clients would have to get %s, %.1f times one client's throughput, from the same cores.""",
                rate(single), rate(crowded), rate(best), String.format(Locale.ROOT, "%.0f %%", 100 * crowded / best),
                // a tenth below the most is within a phase's spread
                crowded >= 0.9 * best ? "the throughput does not fall as clients are added" : "the throughput fell as clients were added, more than sharing the cores explains",
                meanOne, meanEight, meanEight / meanOne, MAX_P95_RATIO,
                rate(eight.clients() / (MAX_P95_RATIO * meanOne)), eight.clients() / (MAX_P95_RATIO * meanOne) / single);
    }

    /** The p95 of the queries' longest connection wait, over the queries of a kind that had a hot split; - without one. */
    private static String connectionWait(List<Sample> samples)
    {
        List<Double> waits = samples.stream()
                .filter(sample -> sample.error().isEmpty() && sample.connectionWaitMillis().isPresent())
                .map(sample -> sample.connectionWaitMillis().getAsDouble())
                .sorted()
                .toList();
        if (waits.isEmpty()) {
            return "-";
        }
        return String.format(Locale.ROOT, "%.0f ms", waits.get(Math.max(0, (int) Math.ceil(0.95 * waits.size()) - 1)));
    }

    private static String rate(double queriesPerSecond)
    {
        return String.format(Locale.ROOT, "%.2f queries/s", queriesPerSecond);
    }

    /** The {@code quantile} of the phase's times of one kind, in seconds (nearest rank). */
    private static double percentile(Phase phase, Kind kind, double quantile)
    {
        List<Long> nanos = new ArrayList<>(phase.samples().stream().filter(sample -> sample.kind() == kind && sample.error().isEmpty()).map(Sample::nanos).toList());
        if (nanos.isEmpty()) {
            return Double.NaN;
        }
        Collections.sort(nanos);
        int rank = (int) Math.ceil(quantile * nanos.size());
        return Medians.seconds(nanos.get(Math.max(0, rank - 1)));
    }

    /** The rows of one local day of "from". */
    private static String dayFilter(LocalDate day)
    {
        return "\"from\" >= %s AND \"from\" < %s".formatted(literal(MeteringCalendar.startOfLocalDay(day)), literal(MeteringCalendar.startOfLocalDay(day.plusDays(1))));
    }

    private static String literal(Instant instant)
    {
        return "TIMESTAMP '%s UTC'".formatted(LITERAL.format(instant));
    }
}
