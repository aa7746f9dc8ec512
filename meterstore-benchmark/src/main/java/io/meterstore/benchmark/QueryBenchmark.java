package io.meterstore.benchmark;

import com.google.common.collect.ImmutableList;
import io.airlift.log.Logger;
import io.meterstore.benchmark.BenchmarkResult.Comparison;
import io.meterstore.benchmark.BenchmarkResult.Target;
import io.meterstore.benchmark.BenchmarkResult.Unit;
import io.meterstore.benchmark.TimedQuery.Execution;
import io.meterstore.testing.ReadingsGenerator;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.YearMonth;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.base.Preconditions.checkState;
import static com.google.common.collect.Iterables.getOnlyElement;
import static java.util.Objects.requireNonNull;

/**
 * Q1-Q6 (issue 4), R1-R2 (issue 5), R3, R1L, R3L (issue 12), C1 (issue 14) and H1, H2, J1 (issue 32): each query on MeterStore and on its peer, alternately,
 * {@code warmUps} untimed runs (the first one's answers compared) and then {@code rounds} timed rounds, the order swapped every round
 * so neither side always runs on a warmer cache.
 */
final class QueryBenchmark
{
    private static final Logger log = Logger.get(QueryBenchmark.class);
    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");
    private static final DateTimeFormatter LITERAL = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneOffset.UTC);
    private static final String MS = "meterstore.metering.readings_versions";
    private static final String ICEBERG = "iceberg.metering.readings";
    private static final String POSTGRES = "metering.readings";
    private static final String ROW_NUMBER = """
            (SELECT balancing_day, value, row_number() OVER (PARTITION BY malo_id, obis_code, "from", version_scope ORDER BY version DESC, recorded_at DESC) AS winner
             FROM meterstore.metering.readings_versions WHERE %s)""";

    /** How the peer's answer relates to MeterStore's, and so how they are compared. */
    enum Answer
    {
        /** The same rows in the same order. */
        SAME_ROWS,
        /** Aggregates keyed by the first column: the peer's parts (cold and hot) add up to MeterStore's. */
        SAME_AGGREGATES,
        /** The peer reads the cold part alone: its rows are the start of MeterStore's, ordered by "from". */
        COLD_PREFIX,
        /** Different tables by design (readings against readings_versions). */
        NOT_COMPARABLE,
        /** Different answers by nature (H2: AS OF against every version): MeterStore's equals the pair's check, run once untimed. */
        CHECKED,
    }

    record Pair(String id, String title, String meterstoreLabel, String peerLabel, TimedQuery meterstore, List<TimedQuery> peer, Answer answer, Target target, Optional<TimedQuery> check)
    {
        Pair
        {
            requireNonNull(id, "id is null");
            peer = ImmutableList.copyOf(peer);
            requireNonNull(check, "check is null");
            checkArgument(check.isPresent() == (answer == Answer.CHECKED), "a pair has a check exactly when its answer is CHECKED");
        }

        Pair(String id, String title, String meterstoreLabel, String peerLabel, TimedQuery meterstore, List<TimedQuery> peer, Answer answer, Target target)
        {
            this(id, title, meterstoreLabel, peerLabel, meterstore, peer, answer, target, Optional.empty());
        }
    }

    private final int warmUps;
    private final int rounds;

    QueryBenchmark(int warmUps, int rounds)
    {
        checkArgument(warmUps > 0, "warmUps must be positive");
        this.warmUps = warmUps;
        this.rounds = rounds;
    }

    /** The meter Q2, Q4, R1L and R3L read alone. */
    static String oneMeter(List<String> maloIds)
    {
        return maloIds.get(maloIds.size() / 3);
    }

    /** Q6's hundred meters: every n-th, so the list spans the whole id range. */
    static List<String> hundredMeters(List<String> maloIds)
    {
        return IntStream.range(0, 100).mapToObj(index -> maloIds.get(index * maloIds.size() / 100)).toList();
    }

    /**
     * H2's instant: three days before the dataset's last recorded_at (the hot tier holds the latest deliveries), to
     * the second, so the literal both sides read is the same instant.
     */
    static Instant asOf(Connection postgres)
            throws SQLException
    {
        try (Statement statement = postgres.createStatement();
                ResultSet result = statement.executeQuery("SELECT max(recorded_at) FROM %s".formatted(POSTGRES))) {
            checkState(result.next() && result.getObject(1) != null, "The hot tier holds no rows, so H2 has no instant to read as of");
            return result.getObject(1, OffsetDateTime.class).toInstant().minus(Duration.ofDays(3)).truncatedTo(ChronoUnit.SECONDS);
        }
    }

    /**
     * The pairs of the issues, over a dataset whose tiers split at {@code watermark}; H2 reads as of {@code asOf}.
     *
     * @param trinoUnpushed a Trino session without aggregation pushdown, so that a hot-range read of readings_versions
     * streams its rows as readings does, rather than aggregating in PostgreSQL
     */
    static List<Pair> pairs(Connection trino, Connection trinoUnpushed, Connection postgres, Instant watermark, Instant asOf, List<String> maloIds)
    {
        String w = LITERAL.format(watermark);
        String trinoCold = "\"from\" < TIMESTAMP '%s UTC'".formatted(w);
        String trinoHot = "\"from\" >= TIMESTAMP '%s UTC'".formatted(w);
        String lastTwentyDays = "\"from\" >= TIMESTAMP '%s UTC'".formatted(LITERAL.format(watermark.minus(Duration.ofDays(10))));
        String postgresHot = "\"from\" >= TIMESTAMPTZ '%s+00'".formatted(w);
        String oneMeter = "malo_id = '%s'".formatted(oneMeter(maloIds));
        List<String> hundred = hundredMeters(maloIds);
        String trinoList = hundred.stream().map(id -> "'" + id + "'").collect(Collectors.joining(", ", "(VALUES ", ")"));
        String postgresList = hundred.stream().map(id -> "('" + id + "')").collect(Collectors.joining(", ", "(VALUES ", ")"));
        String byDay = "SELECT balancing_day, count(*), sum(value) FROM %s WHERE %s GROUP BY balancing_day ORDER BY balancing_day";
        String trinoByMonth = "SELECT date_trunc('month', balancing_day) AS month, count(*), sum(value) FROM %s%s GROUP BY 1 ORDER BY 1";
        String postgresByMonth = "SELECT CAST(date_trunc('month', balancing_day) AS date) AS month, count(*), sum(value) FROM %s WHERE %s GROUP BY 1 ORDER BY 1";
        String trinoJoin = "SELECT date_trunc('month', r.balancing_day) AS month, count(*), sum(r.value) FROM %s r JOIN %s m(id) ON r.malo_id = m.id%s GROUP BY 1 ORDER BY 1";
        String postgresJoin = "SELECT CAST(date_trunc('month', r.balancing_day) AS date) AS month, count(*), sum(r.value) FROM %s r JOIN %s m(id) ON r.malo_id = m.id WHERE r.%s GROUP BY 1 ORDER BY 1";
        String everyInterval = "SELECT * FROM %s WHERE %s ORDER BY \"from\", version";
        String trinoAsOf = "meterstore.metering.readings FOR TIMESTAMP AS OF TIMESTAMP '%s UTC'".formatted(LITERAL.format(asOf));
        String postgresAsOf = "recorded_at <= TIMESTAMPTZ '%s+00'".formatted(LITERAL.format(asOf));
        String literalList = hundred.stream().map(id -> "'" + id + "'").collect(Collectors.joining(", ", "(", ")"));

        return List.of(
                new Pair("Q1", "cold range: sum by day over all meters", "readings_versions", "Iceberg connector",
                        new TimedQuery("meterstore", trino, byDay.formatted(MS, trinoCold)),
                        List.of(new TimedQuery("iceberg", trino, byDay.formatted(ICEBERG, trinoCold))),
                        Answer.SAME_ROWS, Target.atMost(1.0)),
                new Pair("Q2", "cold range: one meter, every interval", "readings_versions", "Iceberg connector",
                        new TimedQuery("meterstore", trino, everyInterval.formatted(MS, oneMeter + " AND " + trinoCold)),
                        List.of(new TimedQuery("iceberg", trino, everyInterval.formatted(ICEBERG, oneMeter + " AND " + trinoCold))),
                        Answer.SAME_ROWS, Target.atMost(1.0)),
                new Pair("Q3", "hot range: sum by day over all meters", "readings_versions", "native PostgreSQL",
                        new TimedQuery("meterstore", trino, byDay.formatted(MS, trinoHot)),
                        List.of(new TimedQuery("postgresql", postgres, byDay.formatted(POSTGRES, postgresHot))),
                        Answer.SAME_ROWS, Target.atMost(1.0)),
                new Pair("Q4", "whole range: one meter, every interval", "readings_versions", "Iceberg connector, cold part alone",
                        new TimedQuery("meterstore", trino, everyInterval.formatted(MS, oneMeter)),
                        List.of(new TimedQuery("iceberg", trino, everyInterval.formatted(ICEBERG, oneMeter + " AND " + trinoCold))),
                        Answer.COLD_PREFIX, Target.atMost(1.2)),
                new Pair("Q5", "whole range: sum by month", "readings_versions", "Iceberg (cold) + PostgreSQL (hot), times added",
                        new TimedQuery("meterstore", trino, trinoByMonth.formatted(MS, "")),
                        List.of(
                                new TimedQuery("iceberg", trino, trinoByMonth.formatted(ICEBERG, " WHERE " + trinoCold)),
                                new TimedQuery("postgresql", postgres, postgresByMonth.formatted(POSTGRES, postgresHot))),
                        Answer.SAME_AGGREGATES, Target.atMost(1.0)),
                new Pair("Q6", "whole range joined with a 100-meter list", "readings_versions", "Iceberg (cold) + PostgreSQL (hot), list in both",
                        new TimedQuery("meterstore", trino, trinoJoin.formatted(MS, trinoList, "")),
                        List.of(
                                new TimedQuery("iceberg", trino, trinoJoin.formatted(ICEBERG, trinoList, " WHERE r." + trinoCold)),
                                new TimedQuery("postgresql", postgres, postgresJoin.formatted(POSTGRES, postgresList, postgresHot))),
                        Answer.SAME_AGGREGATES, Target.atMost(1.0)),
                new Pair("R1", "whole range: sum by month, winners against all versions", "readings", "readings_versions",
                        new TimedQuery("meterstore", trino, trinoByMonth.formatted("meterstore.metering.readings", "")),
                        List.of(new TimedQuery("meterstore", trino, trinoByMonth.formatted(MS, ""))),
                        Answer.NOT_COMPARABLE, Target.atMost(1.3)),
                // the ROW_NUMBER peer holds every key of its range in memory at once: over all 58 M rows it exceeds the engine's 5 GB
                // per query, so this pair reads the last 20 days, 10 of each tier
                new Pair("R2", "last 20 days, both tiers: sum by month of the winners", "readings", "ROW_NUMBER over readings_versions",
                        new TimedQuery("meterstore", trino, trinoByMonth.formatted("meterstore.metering.readings", " WHERE " + lastTwentyDays)),
                        List.of(new TimedQuery("meterstore", trino, trinoByMonth.formatted(ROW_NUMBER.formatted(lastTwentyDays), " WHERE winner = 1"))),
                        Answer.SAME_AGGREGATES, Target.atMost(0.5)),
                oneMeterWinners("R3", "whole range: one meter, every interval, winners against all versions", trino, oneMeter),
                // R1 in its two parts, to show where its time goes
                new Pair("R1c", "R1's cold part: sum by month below W", "readings", "readings_versions",
                        new TimedQuery("meterstore", trino, trinoByMonth.formatted("meterstore.metering.readings", " WHERE " + trinoCold)),
                        List.of(new TimedQuery("meterstore", trino, trinoByMonth.formatted(MS, " WHERE " + trinoCold))),
                        Answer.NOT_COMPARABLE, Target.atMost(1.3)),
                new Pair("R1h", "R1's hot part: sum by month at or above W, rows streamed", "readings", "readings_versions",
                        new TimedQuery("meterstore", trinoUnpushed, trinoByMonth.formatted("meterstore.metering.readings", " WHERE " + trinoHot)),
                        List.of(new TimedQuery("meterstore", trinoUnpushed, trinoByMonth.formatted(MS, " WHERE " + trinoHot))),
                        Answer.NOT_COMPARABLE, Target.atMost(1.3)),
                completeness(trino, YearMonth.from(watermark.atZone(BERLIN))),
                // the hot tier's winners by their marks against PostgreSQL resolving every version as a user of the plain table would
                new Pair("H1", "hot range: sum by day over all meters, winners", "readings", "native PostgreSQL, DISTINCT ON",
                        new TimedQuery("meterstore", trino, byDay.formatted("meterstore.metering.readings", trinoHot)),
                        List.of(new TimedQuery("postgresql", postgres, distinctOnByDay(postgresHot))),
                        Answer.SAME_ROWS, Target.atMost(0.5)),
                // as known three days ago: fewer versions than readings_versions holds, so MeterStore's answer is checked apart
                new Pair("H2", "hot range: sum by day, readings AS OF 3 days before the last delivery", "readings FOR TIMESTAMP AS OF", "readings_versions",
                        new TimedQuery("meterstore", trino, byDay.formatted(trinoAsOf, trinoHot)),
                        List.of(new TimedQuery("meterstore", trino, byDay.formatted(MS, trinoHot))),
                        Answer.CHECKED, Target.atMost(1.3),
                        Optional.of(new TimedQuery("postgresql", postgres, distinctOnByDay(postgresHot + " AND " + postgresAsOf)))),
                // the meters as a relation the planner cannot fold away reach the scans as a dynamic filter only
                new Pair("J1", "Q6's join: a 100-row meter table against the literal list", "readings_versions JOIN VALUES", "readings_versions, malo_id IN (list)",
                        new TimedQuery("meterstore", trino, trinoJoin.formatted(MS, trinoList, "")),
                        List.of(new TimedQuery("meterstore", trino, trinoByMonth.formatted(MS, " WHERE malo_id IN " + literalList))),
                        Answer.SAME_ROWS, Target.atMost(1.2)));
    }

    /**
     * H1's and H2's PostgreSQL side: the winners of the hot rows matching {@code condition} as a user of the plain table
     * finds them, DISTINCT ON the merge key and version scope (ResolutionRule), then summed by day.
     */
    private static String distinctOnByDay(String condition)
    {
        return """
                SELECT balancing_day, count(*), sum(value) FROM (
                    SELECT DISTINCT ON (malo_id, obis_code, "from", version_scope) balancing_day, value FROM %s WHERE %s
                    ORDER BY malo_id, obis_code, "from", version_scope, version DESC, recorded_at DESC) winners
                GROUP BY balancing_day ORDER BY balancing_day""".formatted(POSTGRES, condition);
    }

    /**
     * C1 (issue 14): the completeness report of the settlement month that holds the watermark, so that both tiers are
     * read, against the same report in plain SQL over readings: a calendar from sequence, LEFT JOIN, GROUP BY.
     */
    private static Pair completeness(Connection trino, YearMonth month)
    {
        String columns = "malo_id, obis_code, sparte, resolution, expected, actual, missing, surplus, first_gap, substituted, not_billable, complete, measurable";
        String meterstore = "SELECT %s FROM TABLE(meterstore.system.meter_completeness(table_name => 'readings', settlement_month => '%s')) ORDER BY 1, 2, 3, 4"
                .formatted(columns, month);
        // the generated readings are electricity on a quarter-hour grid: a day holds its minutes / 15 intervals
        String plain = """
                WITH days AS (
                    SELECT day, date_diff('minute', with_timezone(CAST(day AS timestamp), 'Europe/Berlin'), with_timezone(CAST(day + INTERVAL '1' DAY AS timestamp), 'Europe/Berlin')) / 15 AS expected
                    FROM UNNEST(sequence(DATE '%1$s', DATE '%2$s')) AS t(day)),
                counts AS (
                    SELECT malo_id, obis_code, sparte, resolution, balancing_day, count(*) AS actual,
                           count_if(quality = 'SUBSTITUTED') AS substituted,
                           count_if(quality NOT IN ('MEASURED', 'ESTIMATED', 'SUBSTITUTED', 'CALCULATED', 'CORRECTED', 'PRELIMINARY')) AS not_billable
                    FROM meterstore.metering.readings
                    WHERE "from" >= TIMESTAMP '%1$s 00:00:00 Europe/Berlin' AND "from" < TIMESTAMP '%3$s 00:00:00 Europe/Berlin'
                    GROUP BY 1, 2, 3, 4, 5),
                channels AS (SELECT DISTINCT malo_id, obis_code, sparte, resolution FROM counts),
                judged AS (
                    SELECT c.malo_id, c.obis_code, c.sparte, c.resolution, d.day, d.expected, coalesce(n.actual, 0) AS actual,
                           coalesce(n.substituted, 0) AS substituted, coalesce(n.not_billable, 0) AS not_billable
                    FROM channels c CROSS JOIN days d
                    LEFT JOIN counts n ON n.malo_id = c.malo_id AND n.obis_code = c.obis_code AND n.sparte = c.sparte AND n.resolution = c.resolution AND n.balancing_day = d.day)
                SELECT malo_id, obis_code, sparte, resolution, sum(expected) AS expected, sum(actual) AS actual,
                       sum(greatest(expected - actual, 0)) AS missing, sum(greatest(actual - expected, 0)) AS surplus,
                       min(day) FILTER (WHERE actual < expected) AS first_gap, sum(substituted) AS substituted, sum(not_billable) AS not_billable,
                       sum(greatest(expected - actual, 0)) = 0 AND sum(greatest(actual - expected, 0)) = 0 AS complete, sum(expected) > 0 AS measurable
                FROM judged
                GROUP BY 1, 2, 3, 4
                ORDER BY 1, 2, 3, 4""".formatted(month.atDay(1), month.atEndOfMonth(), month.plusMonths(1).atDay(1));
        return new Pair("C1", "completeness of settlement month %s, both tiers".formatted(month), "meter_completeness", "plain SQL over readings",
                new TimedQuery("meterstore", trino, meterstore),
                List.of(new TimedQuery("meterstore", trino, plain)),
                Answer.SAME_ROWS, Target.atMost(0.5));
    }

    /** R1L and R3L: R1 and R3 again, once the late-correction stream has run (LateCorrectionStream). */
    static List<Pair> afterLateCorrections(Connection trino, List<String> maloIds)
    {
        String oneMeter = "malo_id = '%s'".formatted(oneMeter(maloIds));
        String byMonth = "SELECT date_trunc('month', balancing_day) AS month, count(*), sum(value) FROM %s GROUP BY 1 ORDER BY 1";
        return List.of(
                new Pair("R1L", "R1 after a late-correction stream", "readings", "readings_versions",
                        new TimedQuery("meterstore", trino, byMonth.formatted("meterstore.metering.readings")),
                        List.of(new TimedQuery("meterstore", trino, byMonth.formatted(MS))),
                        Answer.NOT_COMPARABLE, Target.atMost(1.3)),
                oneMeterWinners("R3L", "R3 after a late-correction stream", trino, oneMeter));
    }

    private static Pair oneMeterWinners(String id, String title, Connection trino, String oneMeter)
    {
        String everyInterval = "SELECT * FROM %s WHERE %s ORDER BY \"from\", version";
        return new Pair(id, title, "readings", "readings_versions",
                new TimedQuery("meterstore", trino, everyInterval.formatted("meterstore.metering.readings", oneMeter)),
                List.of(new TimedQuery("meterstore", trino, everyInterval.formatted(MS, oneMeter))),
                Answer.NOT_COMPARABLE, Target.atMost(1.2));
    }

    static List<String> maloIds(ReadingsGenerator generator)
    {
        return generator.maloIds();
    }

    BenchmarkResult run(Pair pair)
    {
        try {
            log.info("%s: warm-up", pair.id());
            Execution meterstoreWarmUp = pair.meterstore().execute();
            List<Execution> peerWarmUp;
            try {
                peerWarmUp = executeAll(pair.peer());
            }
            catch (SQLException e) {
                return peerFailed(pair, meterstoreWarmUp, e);
            }
            Optional<Execution> check = pair.check().isEmpty() ? Optional.empty() : Optional.of(pair.check().orElseThrow().execute());
            Comparison comparison = check
                    .map(expected -> meterstoreWarmUp.rows().equals(expected.rows()) ? Comparison.SAME_RESULT : Comparison.MISMATCH)
                    .orElseGet(() -> compare(pair.answer(), meterstoreWarmUp, peerWarmUp));
            // small queries pay the JIT compilation of a path's per-query code until it has run a few times; a server runs them warm
            for (int warmUp = 1; warmUp < warmUps; warmUp++) {
                pair.meterstore().execute();
                executeAll(pair.peer());
            }
            List<Long> meterstoreSamples = new ArrayList<>();
            List<Long> peerSamples = new ArrayList<>();
            for (int round = 0; round < rounds; round++) {
                if (round % 2 == 0) {
                    meterstoreSamples.add(pair.meterstore().execute().nanos());
                    peerSamples.add(totalNanos(executeAll(pair.peer())));
                }
                else {
                    peerSamples.add(totalNanos(executeAll(pair.peer())));
                    meterstoreSamples.add(pair.meterstore().execute().nanos());
                }
            }
            double meterstore = Medians.seconds(Math.round(Medians.median(meterstoreSamples)));
            double peer = Medians.seconds(Math.round(Medians.median(peerSamples)));
            log.info("%s: MeterStore %.3f s, peer %.3f s, ratio %.2f, %s", pair.id(), meterstore, peer, meterstore / peer, comparison);
            return new BenchmarkResult(pair.id(), pair.title(), pair.meterstoreLabel(), pair.peerLabel(), Unit.SECONDS, meterstore, peer, pair.target(), comparison,
                    Optional.empty(), details(pair, comparison, meterstoreWarmUp, peerWarmUp, check, meterstoreSamples, peerSamples));
        }
        catch (SQLException | RuntimeException e) {
            log.error(e, "%s failed", pair.id());
            return BenchmarkResult.failed(pair.id(), pair.title(), pair.meterstoreLabel(), pair.peerLabel(), Unit.SECONDS, pair.target(), e);
        }
    }

    /** A peer that cannot answer (e.g. a query over Trino's memory limit) leaves MeterStore's rounds to report, and its reason. */
    private BenchmarkResult peerFailed(Pair pair, Execution meterstoreWarmUp, SQLException failure)
            throws SQLException
    {
        log.error(failure, "%s: the peer failed; timing MeterStore alone", pair.id());
        List<Long> meterstoreSamples = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            meterstoreSamples.add(pair.meterstore().execute().nanos());
        }
        double meterstore = Medians.seconds(Math.round(Medians.median(meterstoreSamples)));
        String reason = BenchmarkResult.reason(failure);
        List<String> details = new ArrayList<>();
        details.add(meterstoreDetail(pair, meterstoreWarmUp, meterstoreSamples));
        pair.peer().forEach(query -> details.add("Peer, %s:\n\n```sql\n%s\n```".formatted(query.engine(), query.sql())));
        details.add("The peer failed in its warm-up, so it has no time and its answer none to compare: %s".formatted(reason));
        return new BenchmarkResult(pair.id(), pair.title(), pair.meterstoreLabel(), pair.peerLabel(), Unit.SECONDS, meterstore, Double.NaN, pair.target(), Comparison.NOT_COMPARABLE,
                Optional.of("the peer failed: " + reason), details);
    }

    private static List<Execution> executeAll(List<TimedQuery> queries)
            throws SQLException
    {
        List<Execution> executions = new ArrayList<>();
        for (TimedQuery query : queries) {
            executions.add(query.execute());
        }
        return executions;
    }

    private static long totalNanos(List<Execution> executions)
    {
        return executions.stream().mapToLong(Execution::nanos).sum();
    }

    static Comparison compare(Answer answer, Execution meterstore, List<Execution> peer)
    {
        return switch (answer) {
            case SAME_ROWS -> meterstore.rows().equals(getOnlyElement(peer).rows()) ? Comparison.SAME_RESULT : Comparison.MISMATCH;
            case SAME_AGGREGATES -> addUp(List.of(meterstore)).equals(addUp(peer)) ? Comparison.SAME_RESULT : Comparison.MISMATCH;
            case COLD_PREFIX -> {
                List<List<String>> cold = getOnlyElement(peer).rows();
                List<List<String>> all = meterstore.rows();
                // the meter has rows in both tiers, so the prefix is a proper one
                yield !cold.isEmpty() && all.size() > cold.size() && all.subList(0, cold.size()).equals(cold) ? Comparison.SAME_RESULT : Comparison.MISMATCH;
            }
            case NOT_COMPARABLE, CHECKED -> Comparison.NOT_COMPARABLE;
        };
    }

    /** Adds up rows keyed by their first column: a month's count and sum over both tiers is the sum of its parts. */
    static Map<String, List<BigDecimal>> addUp(List<Execution> executions)
    {
        Map<String, List<BigDecimal>> totals = new TreeMap<>();
        for (Execution execution : executions) {
            for (List<String> row : execution.rows()) {
                List<BigDecimal> values = row.subList(1, row.size()).stream().map(BigDecimal::new).toList();
                totals.merge(row.getFirst(), values, (left, right) -> IntStream.range(0, left.size()).mapToObj(index -> left.get(index).add(right.get(index))).toList());
            }
        }
        totals.replaceAll((key, values) -> values.stream().map(value -> value.signum() == 0 ? BigDecimal.ZERO : value.stripTrailingZeros()).toList());
        return totals;
    }

    private List<String> details(Pair pair, Comparison comparison, Execution meterstore, List<Execution> peer, Optional<Execution> check, List<Long> meterstoreSamples, List<Long> peerSamples)
    {
        List<String> details = new ArrayList<>();
        details.add(meterstoreDetail(pair, meterstore, meterstoreSamples));
        for (int index = 0; index < pair.peer().size(); index++) {
            TimedQuery query = pair.peer().get(index);
            details.add("Peer, %s (%s rows)%s:\n\n```sql\n%s\n```".formatted(
                    query.engine(),
                    peer.get(index).rows().size(),
                    index == 0 ? ", %s%s".formatted(samples(peerSamples), pair.peer().size() > 1 ? " (all parts added)" : "") : "",
                    query.sql()));
        }
        check.ifPresent(expected -> details.add("Check, %s (%s rows), run once, untimed:\n\n```sql\n%s\n```".formatted(
                pair.check().orElseThrow().engine(), expected.rows().size(), pair.check().orElseThrow().sql())));
        details.add(switch (comparison) {
            case SAME_RESULT -> switch (pair.answer()) {
                case SAME_ROWS -> "Both returned the same rows.";
                case SAME_AGGREGATES -> "The peer's parts add up to MeterStore's answer, group by group.";
                case COLD_PREFIX -> "The peer's rows are exactly MeterStore's rows below the watermark.";
                case NOT_COMPARABLE -> "";
                case CHECKED -> "MeterStore's rows equal the check's; the peer's differ by nature (every version, not as known then).";
            };
            case MISMATCH -> "**MISMATCH**: the answers differ, so the timing compares nothing.";
            case NOT_COMPARABLE -> "Different tables by design (winners against every version), so not the same answer; the pairs whose peer resolves versions (R2, Y1, Y1b, Y2) and the tests check the winners.";
        });
        return details;
    }

    private String meterstoreDetail(Pair pair, Execution meterstore, List<Long> samples)
    {
        return "MeterStore (%s rows), %s:\n\n```sql\n%s\n```".formatted(meterstore.rows().size(), samples(samples), pair.meterstore().sql());
    }

    private String samples(List<Long> samples)
    {
        return samples.stream().map(nanos -> BenchmarkReport.figure(Medians.seconds(nanos), Unit.SECONDS)).collect(Collectors.joining(", ", "rounds ", ""));
    }
}
