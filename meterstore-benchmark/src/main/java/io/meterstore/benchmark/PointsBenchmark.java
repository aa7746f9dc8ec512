package io.meterstore.benchmark;

import com.google.common.collect.ImmutableMap;
import io.airlift.log.Logger;
import io.meterstore.benchmark.BenchmarkResult.Target;
import io.meterstore.benchmark.QueryBenchmark.Answer;
import io.meterstore.benchmark.QueryBenchmark.Pair;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.TestingWarehouse;
import io.trino.testing.DistributedQueryRunner;

import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkState;

/**
 * Issue 31's P1 ({@code bin/benchmark -Dbenchmark.dataset=points}): consumption per balancing month from a point table's
 * daily register readings, by the statement of docs/sql.md, for one meter and for all meters, on MeterStore and on Trino's
 * Iceberg connector over the same Iceberg table, which resolves the versions the cold tier holds as the Q-queries' peers
 * do (ROW_NUMBER over the merge key and version scope). Writes its section of {@code docs/benchmarks.md} beside the others.
 */
final class PointsBenchmark
{
    static final String ONE_METER = "P1";
    static final String ALL_METERS = "P1a";

    private static final Logger log = Logger.get(PointsBenchmark.class);
    private static final String MONTHLY = """
            SELECT malo_id, obis_code, month,
                   lead(first_reading) OVER (PARTITION BY malo_id, obis_code ORDER BY month) - first_reading AS kwh
            FROM (SELECT malo_id, obis_code, meterstore.system.meter_balancing_month("from", sparte) AS month,
                         min_by(value, "from") AS first_reading
                  FROM %s GROUP BY 1, 2, 3)
            ORDER BY 1, 2, 3""";
    private static final String WINNERS = """
            (SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY malo_id, obis_code, "from", version_scope ORDER BY version DESC, recorded_at DESC) AS winner
             FROM iceberg.%s.%s%s) WHERE winner = 1)""";

    /** Why a target may be missed and what would close it, as far as it is known; the report shows it beside a miss. */
    static final Map<String, String> NOTES = ImmutableMap.of();

    private PointsBenchmark() {}

    static int run(PointsSettings settings, PrintStream console)
    {
        try {
            Files.createDirectories(settings.directory());
            try (PointsDataset dataset = PointsDataset.open(settings, PointsBenchmark::engine)) {
                log.info("Points dataset %s: watermark %s", dataset.reused() ? "reused" : "made", dataset.watermark());
                try (DistributedQueryRunner engine = engine(dataset.warehouse())) {
                    if (settings.probe().isPresent()) {
                        ProbeQueries.run(settings.probe().orElseThrow(), engine, dataset.database(), settings.rounds(), console);
                        return 0;
                    }
                    benchmark(settings, dataset, engine, console);
                }
            }
            return 0;
        }
        catch (Exception e) {
            log.error(e, "Points benchmark failed");
            return 1;
        }
    }

    /** An engine whose MeterStore catalog serves the point table, beside Trino's Iceberg connector over the same catalogue. */
    private static DistributedQueryRunner engine(TestingWarehouse warehouse)
            throws Exception
    {
        return MeterstoreBenchmark.queryRunner(warehouse, false, PointsDataset.TABLE);
    }

    private static void benchmark(PointsSettings settings, PointsDataset dataset, DistributedQueryRunner engine, PrintStream console)
            throws Exception
    {
        List<BenchmarkResult> results = new ArrayList<>();
        double loadBefore = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        long hotRows;
        long coldVersions;
        try (Connection trino = MeterstoreBenchmark.trinoConnection(engine)) {
            hotRows = count(trino, "SELECT count(*) FROM meterstore.%s.%s_versions WHERE \"$tier\" = 'hot'".formatted(PointsDataset.SCHEMA, PointsDataset.TABLE));
            coldVersions = count(trino, "SELECT count(*) FROM iceberg.%s.%s".formatted(PointsDataset.SCHEMA, PointsDataset.TABLE));
            QueryBenchmark queries = new QueryBenchmark(settings.warmUps(), settings.rounds());
            for (Pair pair : pairs(trino, ReadingsGenerator.maloId(settings.meters() / 3))) {
                results.add(queries.run(pair));
            }
        }
        double loadAfter = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        BenchmarkReport.Run run = new BenchmarkReport.Run(settings.meters(), settings.days(), BenchmarkStorage.LOCAL, List.of(ONE_METER, ALL_METERS));
        List<String> lines = describe(settings, dataset, hotRows, coldVersions, loadBefore, loadAfter);
        BenchmarkReport report = new BenchmarkReport(run, MeterstoreBenchmark.environment(dataset.database()), lines, results, NOTES);
        Files.createDirectories(settings.output());
        Path markdown = settings.output().resolve("benchmarks.md");
        String existing = Files.exists(markdown) ? Files.readString(markdown) : "";
        Files.writeString(markdown, BenchmarkReport.document(existing, report.section("P1: a point table, %,d meters x %s days of daily register readings".formatted(settings.meters(), settings.days()))));
        Files.writeString(settings.output().resolve(run.chart()), report.svg());
        console.println();
        for (BenchmarkResult result : results) {
            console.printf("%-4s %-46s %12s %12s  ratio %6s  target %-10s %s%n",
                    result.id(), result.title(), BenchmarkReport.figure(result.meterstore(), result.unit()), BenchmarkReport.figure(result.peer(), result.unit()),
                    Double.isFinite(result.ratio()) ? BenchmarkReport.ratio(result.ratio()) : "-", result.target().text(), result.verdict() + result.error().map(error -> ": " + error).orElse(""));
        }
        console.printf("%nWrote the P1 section of %s and %s beside it%n", markdown, run.chart());
        // the answers must agree: a mismatch is a wrong answer on one side, never a figure to report quietly
        for (BenchmarkResult result : results) {
            checkState(result.comparison() != BenchmarkResult.Comparison.MISMATCH, "%s: MeterStore's and the Iceberg connector's answers differ (see docs/benchmarks.md): the timing compares nothing", result.id());
            checkState(result.error().isEmpty(), "%s failed: %s", result.id(), result.error().orElse(""));
        }
    }

    /** P1's two pairs: the monthly consumption of one meter ({@code maloId}) and of all meters. */
    static List<Pair> pairs(Connection trino, String maloId)
    {
        String meterstore = "meterstore.%s.%s".formatted(PointsDataset.SCHEMA, PointsDataset.TABLE);
        String oneMeter = " WHERE malo_id = '%s'".formatted(maloId);
        return List.of(
                new Pair(ONE_METER, "consumption per month from daily register readings, one meter", "zaehlerstaende", "Iceberg connector, ROW_NUMBER",
                        new TimedQuery("meterstore", trino, MONTHLY.formatted(meterstore + oneMeter)),
                        List.of(new TimedQuery("iceberg", trino, MONTHLY.formatted(WINNERS.formatted(PointsDataset.SCHEMA, PointsDataset.TABLE, oneMeter)))),
                        Answer.SAME_ROWS, Target.atMost(1.0)),
                new Pair(ALL_METERS, "consumption per month from daily register readings, all meters", "zaehlerstaende", "Iceberg connector, ROW_NUMBER",
                        new TimedQuery("meterstore", trino, MONTHLY.formatted(meterstore)),
                        List.of(new TimedQuery("iceberg", trino, MONTHLY.formatted(WINNERS.formatted(PointsDataset.SCHEMA, PointsDataset.TABLE, "")))),
                        Answer.SAME_ROWS, Target.atMost(1.0)));
    }

    private static long count(Connection trino, String sql)
            throws Exception
    {
        try (Statement statement = trino.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            checkState(result.next(), "No count from %s", sql);
            return result.getLong(1);
        }
    }

    private static List<String> describe(PointsSettings settings, PointsDataset dataset, long hotRows, long coldVersions, double loadBefore, double loadAfter)
    {
        return List.of(
                "A point table `%s` (time_model point, reading_id malo_id): %,d meters x %s Berlin days from %s, seed %s, a daily register reading (OBIS %s, STROM, P1D) at each Berlin midnight, across the DST days; each day's consumption from the meter's yearly one with a season, weekends, the day's hours, noise and days away (RegisterReadings). %s versions in all: one reading in %s delivered misread first and corrected by a second version two days later."
                        .formatted(PointsDataset.TABLE, settings.meters(), settings.days(), PointsSettings.START_DAY, PointsSettings.SEED, RegisterReadings.REGISTER,
                                dataset.measured("rows").map(rows -> "%,d".formatted(Long.parseLong(rows))).orElse("?"), RegisterReadings.CORRECTED_ONE_IN),
                "Made by the archiver's own code: %s days at a time loaded into PostgreSQL by the binary COPY, then archived by `ArchivalCycle`, one UTC day per commit (%s archival commits), with the archiver's maintenance (`expire`, then `compact` at its defaults) every %s archived days; then late corrections below W: one `INSERT INTO %s_versions ... SELECT` through Trino per archived month, a new version of the month's first reading for one meter in %s (%s commits, %s readings), and the maintenance once more. Loading took %s s, archiving %s s, the corrections %s s, the maintenance %s s; the whole making %s s."
                        .formatted(PointsSettings.CHUNK_DAYS, dataset.measured("archival-commits").orElse("?"), PointsSettings.MAINTENANCE_EVERY, PointsDataset.TABLE, PointsDataset.LATE_CORRECTED_ONE_IN,
                                dataset.measured("correction-commits").orElse("?"), dataset.measured("corrected-readings").map(readings -> "%,d".formatted(Long.parseLong(readings))).orElse("?"), dataset.measured("load-seconds").orElse("?"),
                                dataset.measured("archive-seconds").orElse("?"), dataset.measured("correction-seconds").orElse("?"), dataset.measured("maintenance-seconds").orElse("?"),
                                dataset.measured("build-seconds").orElse("?")),
                "Cold tier: %,d versions (Trino's Iceberg connector counts them, superseded ones included) below the watermark %s: %s. Hot tier: %,d versions, the last %s days."
                        .formatted(coldVersions, dataset.watermark().instant(), dataset.layout().describe(), hotRows, PointsSettings.HOT_DAYS),
                "Both sides run docs/sql.md's monthly statement (each month's first reading by min_by, lead() over the months) with MeterStore's `meter_balancing_month`; the peer over `iceberg.metering.%s` with the winners first found by ROW_NUMBER, as the Q-queries' peers resolve versions. The hot days lie in the last month after its first reading, so both answers are the same rows, compared every run."
                        .formatted(PointsDataset.TABLE),
                "One Trino 483 engine in one JVM (coordinator only) hosts `meterstore` and Trino's `iceberg` connector over the same JDBC catalogue and warehouse (a local directory). Times are client side through the JDBC driver, fetching every row; each pair first runs %s untimed, alternately, then %s rounds alternating the two sides (the order swapped each round); the tables show medians."
                        .formatted(settings.warmUps() == 1 ? "once" : settings.warmUps() + " times", settings.rounds()),
                "The machine's load average (1 minute) was %.1f when the pairs began and %.1f when they ended, on %s cores: above 1 other work shared them, so compare the ratios, not single times."
                        .formatted(loadBefore, loadAfter, Runtime.getRuntime().availableProcessors()));
    }
}
