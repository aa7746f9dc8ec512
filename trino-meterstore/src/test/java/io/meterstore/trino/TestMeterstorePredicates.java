package io.meterstore.trino;

import com.google.common.collect.ImmutableList;
import com.google.common.util.concurrent.Futures;
import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.Sparte;
import io.meterstore.core.Sparte.MeasurementUnit;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.meterstore.trino.handle.MeterstoreTableHandle;
import io.trino.testing.AbstractTestQueryFramework;
import io.trino.testing.MaterializedRow;
import io.trino.testing.QueryRunner;
import io.trino.testing.QueryRunner.MaterializedResultWithPlan;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static io.meterstore.trino.TestingInserts.epochMicros;
import static io.meterstore.trino.TestingInserts.lateCorrection;
import static io.meterstore.trino.TestingInserts.literal;
import static io.meterstore.trino.TestingInserts.timestamp;
import static io.meterstore.trino.TestingPlans.scannedTables;
import static io.trino.testing.MaterializedResult.DEFAULT_PRECISION;
import static java.util.stream.Collectors.joining;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every predicate shape the connector pushes down (PostgreSQL statements and aggregations, Parquet row-group, page and
 * bloom-filter pruning, Iceberg file pruning, "from" ranges choosing partitions and files, LIMIT) answers exactly as
 * the same predicate applied by Trino above an unpushed scan. Trino never pushes a filter below a LIMIT, so
 * {@code (SELECT * FROM t LIMIT 1000000000) WHERE P} is the oracle for {@code t WHERE P}; both tiers hold rows of
 * every kind the predicates name, so most predicates select rows on both sides of the watermark.
 */
final class TestMeterstorePredicates
        extends AbstractTestQueryFramework
{
    private static final LocalDate START = LocalDate.of(2026, 11, 2);
    private static final int DAYS = 5;
    private static final int METERS = 12;
    // the first Berlin day starts at 2026-11-01 23:00 UTC: three UTC windows archive up to 2026-11-04
    private static final int ARCHIVED_WINDOWS = 3;
    private static final Instant WATERMARK = Instant.parse("2026-11-04T00:00:00Z");
    // late corrections through INSERT, on both sides of the watermark, learned after everything else
    private static final Instant LATE = Instant.parse("2026-11-20T08:00:00Z");
    // after the first deliveries, before most corrections: a past state of both tables
    private static final Instant KNOWN_AT = Instant.parse("2026-11-06T12:00:00Z");
    private static final String UNPUSHED = "(SELECT * FROM %s LIMIT 1000000000)";
    // aggregates PostgreSQL computes for a read that is hot alone; a count of no rows is zero, any other aggregate null
    private static final List<Aggregate> AGGREGATES = List.of(
            new Aggregate("count(*)", true),
            new Aggregate("sum(value)", false),
            new Aggregate("min(value)", false),
            new Aggregate("max(value)", false),
            new Aggregate("min(\"from\")", false),
            new Aggregate("max(\"from\")", false),
            new Aggregate("max(\"to\")", false),
            new Aggregate("max(recorded_at)", false),
            new Aggregate("min(balancing_day)", false),
            new Aggregate("count(melo_id)", true),
            new Aggregate("count(provenance)", true),
            new Aggregate("max(version)", false),
            new Aggregate("sum(version)", false));
    private static final String AGGREGATE_LIST = AGGREGATES.stream().map(Aggregate::sql).collect(joining(", "));
    private static final String GROUPS = "malo_id, balancing_day";
    // a fingerprint of the rows themselves, every column of them; no aggregation is pushed with it
    private static final String CHECKSUM = "checksum(ROW(malo_id, melo_id, obis_code, sparte, \"from\", \"to\", value, unit, quality, resolution, source_kind, source_detail, provenance, version, version_scope, recorded_at, balancing_day))";
    private static final int PARALLEL_QUERIES = 3;
    private static final List<String> STRANGE_SOURCE_KINDS = List.of("\u00c4\u00d6", "\ud83d\ude00", "\ufb00", "", "NULL", "a\"b\\c", "x,y", "{}");

    @Override
    protected QueryRunner createQueryRunner()
            throws Exception
    {
        TestingWarehouse warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("predicates"));
        Table table = TestingMeterstoreTables.createTables(warehouse);
        // small row groups, so that statistics, dictionaries and bloom filters decide which row groups are read
        table.updateProperties().set(TableProperties.PARQUET_ROW_GROUP_SIZE_BYTES, "16384").commit();
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(61)
                .meters(METERS)
                .startDay(START)
                .days(DAYS)
                .correctionsFraction(0.05)
                .build();
        TestingArchival.loadAndArchive(warehouse, generator, variants(generator), ARCHIVED_WINDOWS);
        table.refresh();
        assertThat(WatermarkReader.current(table).watermark().instant()).isEqualTo(WATERMARK);
        QueryRunner queryRunner = MeterstoreQueryRunner.builder(warehouse).withoutIceberg().build();
        // late corrections of a meter on the last cold day and the first hot days: winners files get position deletes
        List<Reading> late = new ArrayList<>();
        for (LocalDate day : List.of(LocalDate.of(2026, 11, 3), LocalDate.of(2026, 11, 4), LocalDate.of(2026, 11, 5))) {
            List<Reading> readings = generator.readings(5, day);
            for (int index = 0; index < 96; index += 7) {
                late.add(lateCorrection(readings.get(index), LATE, "{\"ticket\":\"\ud83d\ude00 \u00c4\u00d6\"}"));
            }
        }
        queryRunner.execute(TestingInserts.insertAsRecorded(late));
        return queryRunner;
    }

    @Test
    void testOracleReadsWithoutPredicate()
    {
        for (String table : List.of("readings_versions", "readings")) {
            String predicate = "malo_id = %s AND \"from\" >= %s".formatted(meter(3), timestamp(WATERMARK));
            List<MeterstoreTableHandle> oracle = scannedTables(executeWithPlan("SELECT %s FROM %s WHERE %s".formatted(AGGREGATE_LIST, UNPUSHED.formatted(table), predicate)));
            // the LIMIT is pushed into the handle, the predicate stays above it
            assertThat(oracle).singleElement().satisfies(handle -> {
                assertThat(handle.constraint().isAll()).as(table).isTrue();
                assertThat(handle.limit()).as(table).isPresent();
                assertThat(handle.aggregation()).as(table).isEmpty();
            });
            List<MeterstoreTableHandle> pushed = scannedTables(executeWithPlan("SELECT %s FROM %s WHERE %s".formatted(AGGREGATE_LIST, table, predicate)));
            // at or above W: readings' hot winners are known by their marks, so its aggregation is pushed down too
            assertThat(pushed).singleElement().satisfies(handle -> {
                assertThat(handle.constraint().isAll()).as(table).isFalse();
                assertThat(handle.aggregation()).as(table).isPresent();
            });
        }
    }

    @Test
    void testBoundsPostgresqlCannotTakeAsTheyAre()
    {
        // an inclusive upper bound at the end of year 9999 becomes the exclusive 10000-01-01, which PostgreSQL must read
        long all = (long) computeActual("SELECT count(*) FROM readings_versions").getOnlyValue();
        assertThat(computeActual("SELECT count(*) FROM readings_versions WHERE \"from\" <= TIMESTAMP '9999-12-31 23:59:59.999999 UTC'").getOnlyValue()).isEqualTo(all);
        // PostgreSQL text cannot hold a NUL: no hot row equals a value with one, in a scan or a pushed aggregation
        assertThat(computeActual("SELECT count(*) FROM readings_versions WHERE malo_id = chr(0)").getOnlyValue()).isEqualTo(0L);
        String hot = "\"from\" >= " + timestamp(WATERMARK);
        assertThat(computeActual("SELECT count(*) FROM readings_versions WHERE %s AND source_kind IN ('MSCONS', chr(0))".formatted(hot)).getOnlyValue())
                .isEqualTo(computeActual("SELECT count(*) FROM readings_versions WHERE %s AND source_kind = 'MSCONS'".formatted(hot)).getOnlyValue())
                .isNotEqualTo(0L);
    }

    @Test
    void testPredicatesOnEveryVersion()
    {
        List<String> predicates = predicates();
        List<Answer> oracle = oracle(predicates, "readings_versions");
        Checked rows = checkRows(predicates, "readings_versions", oracle);
        // where the oracle found no cold row PostgreSQL may answer the aggregation alone: grouped, or over all rows
        List<Check> aggregations = new ArrayList<>();
        for (int index = 0; index < predicates.size(); index++) {
            String predicate = predicates.get(index);
            Answer answer = oracle.get(index);
            if (answer.coldRows() > 0) {
                continue;
            }
            aggregations.add(aggregations.size() % 2 == 0
                    ? new Check(predicate, "SELECT %s, %s FROM readings_versions WHERE %s GROUP BY %s".formatted(GROUPS, AGGREGATE_LIST, predicate, GROUPS), answer.groups())
                    : new Check(predicate, "SELECT %s FROM readings_versions WHERE %s".formatted(AGGREGATE_LIST, predicate), List.of(answer.aggregates())));
        }
        Checked aggregated = run(aggregations);
        assertSameAnswers(rows.plus(aggregated));

        // not vacuous: most predicates select rows in both tiers, a few select none, and the connector took most of them
        assertThat(predicates).hasSizeGreaterThanOrEqualTo(90);
        assertThat(oracle).filteredOn(answer -> answer.coldRows() > 0 && answer.hotRows() > 0).hasSizeGreaterThan(predicates.size() / 2);
        assertThat(oracle).filteredOn(answer -> answer.coldRows() + answer.hotRows() == 0).hasSizeBetween(5, predicates.size() / 5);
        assertThat(rows.constrainedScans()).isGreaterThan(predicates.size() * 2 / 3);
        assertThat(aggregated.aggregatedScans()).isGreaterThanOrEqualTo(10);
    }

    @Test
    void testPredicatesOnWinners()
    {
        // every other predicate: each kind of them, at half the cost of a resolving read of each
        List<String> predicates = predicates();
        List<String> sample = IntStream.range(0, predicates.size()).filter(index -> index % 2 == 0).mapToObj(predicates::get).toList();
        List<Answer> oracle = oracle(sample, "readings");
        Checked rows = checkRows(sample, "readings", oracle);
        assertSameAnswers(rows);
        assertThat(sample).hasSizeGreaterThanOrEqualTo(45);
        assertThat(oracle).filteredOn(answer -> answer.coldRows() > 0 && answer.hotRows() > 0).hasSizeGreaterThan(sample.size() / 2);
        assertThat(rows.constrainedScans()).isGreaterThan(sample.size() / 2);
        // the late corrections won: readings is not readings_versions with fewer rows by chance
        assertThat(computeActual("SELECT count(*) FROM readings WHERE recorded_at = " + timestamp(LATE)).getOnlyValue()).isEqualTo(42L);
    }

    @Test
    void testPredicatesAsOf()
    {
        List<String> predicates = predicates();
        // before most corrections, and the instant the late ones were recorded
        for (Instant knownAt : List.of(KNOWN_AT, LATE)) {
            int offset = knownAt.equals(KNOWN_AT) ? 0 : 5;
            List<String> sample = IntStream.range(0, predicates.size()).filter(index -> index % 10 == offset).mapToObj(predicates::get).toList();
            for (String table : List.of("readings_versions", "readings")) {
                String asOf = table + " FOR TIMESTAMP AS OF " + timestamp(knownAt);
                List<Answer> oracle = oracle(sample, asOf);
                assertSameAnswers(checkRows(sample, asOf, oracle));
                assertThat(oracle).as(asOf).filteredOn(answer -> answer.coldRows() > 0 && answer.hotRows() > 0).hasSizeGreaterThan(sample.size() / 3);
            }
        }
    }

    /**
     * The unpushed answers of all predicates, in their order, from one scan. Trino evaluates each predicate on every
     * row above the LIMIT, as a WHERE clause there would.
     */
    private List<Answer> oracle(List<String> predicates, String table)
    {
        String matches = IntStream.range(0, predicates.size())
                .mapToObj(index -> "IF(%s, %s)".formatted(predicates.get(index), index))
                .collect(joining(", "));
        String sql = """
                SELECT matched, grouping(malo_id, balancing_day), %s, %s, %s, count_if("from" < %s), count_if("from" >= %s)
                FROM %s CROSS JOIN UNNEST(ARRAY[%s]) AS matches(matched)
                WHERE matched IS NOT NULL
                GROUP BY GROUPING SETS ((matched), (matched, %s))"""
                .formatted(GROUPS, AGGREGATE_LIST, CHECKSUM, timestamp(WATERMARK), timestamp(WATERMARK), UNPUSHED.formatted(table), matches, GROUPS);
        MaterializedResultWithPlan result = executeWithPlan(sql);
        assertThat(scannedTables(result)).singleElement().satisfies(handle -> assertThat(handle.constraint().isAll()).isTrue());
        List<List<Object>> totals = new ArrayList<>(Collections.nCopies(predicates.size(), Answer.NONE));
        List<List<MaterializedRow>> groups = IntStream.range(0, predicates.size()).<List<MaterializedRow>>mapToObj(_ -> new ArrayList<>()).toList();
        for (MaterializedRow row : result.result().getMaterializedRows()) {
            int index = (int) row.getField(0);
            List<Object> fields = row.getFields().subList(2, row.getFieldCount());
            if ((int) row.getField(1) == 0) {
                groups.get(index).add(new MaterializedRow(DEFAULT_PRECISION, fields.subList(0, 2 + AGGREGATES.size())));
            }
            else {
                totals.set(index, fields.subList(2, fields.size()));
            }
        }
        return IntStream.range(0, predicates.size()).mapToObj(index -> new Answer(totals.get(index), groups.get(index))).toList();
    }

    /** The count and checksum of the rows each predicate selects, and for every fourth the rows a pushed LIMIT above it returns. */
    private Checked checkRows(List<String> predicates, String table, List<Answer> oracle)
    {
        List<Check> checks = new ArrayList<>();
        for (int index = 0; index < predicates.size(); index++) {
            String predicate = predicates.get(index);
            Answer answer = oracle.get(index);
            checks.add(new Check(predicate, "SELECT count(*), %s FROM %s WHERE %s".formatted(CHECKSUM, table, predicate), List.of(answer.rows())));
            if (index % 4 == 0) {
                // as many rows as the limit allows
                long limited = Math.min(50, answer.coldRows() + answer.hotRows());
                checks.add(new Check(predicate, "SELECT count(*) FROM (SELECT * FROM %s WHERE %s LIMIT 50)".formatted(table, predicate), List.of(new MaterializedRow(DEFAULT_PRECISION, limited))));
            }
        }
        return run(checks);
    }

    /** Runs the checks a few at a time: a query waits for the engine more than it computes. */
    private Checked run(List<Check> checks)
    {
        ExecutorService executor = Executors.newFixedThreadPool(PARALLEL_QUERIES);
        try {
            List<Future<Checked>> checked = new ArrayList<>();
            for (Check check : checks) {
                checked.add(executor.submit(() -> run(check)));
            }
            return checked.stream().map(Futures::getUnchecked).reduce(Checked.NONE, Checked::plus);
        }
        finally {
            executor.shutdownNow();
        }
    }

    private Checked run(Check check)
    {
        MaterializedResultWithPlan result;
        try {
            result = executeWithPlan(check.sql());
        }
        catch (RuntimeException e) {
            // a failure where the oracle answers is a difference too
            return new Checked(List.of(new Comparison(check, List.of(new MaterializedRow(DEFAULT_PRECISION, "failed: " + e.getMessage())))), 0, 0);
        }
        List<MeterstoreTableHandle> scans = scannedTables(result);
        return new Checked(
                List.of(new Comparison(check, result.result().getMaterializedRows())),
                (int) scans.stream().filter(handle -> !handle.constraint().isAll()).count(),
                (int) scans.stream().filter(handle -> handle.aggregation().isPresent()).count());
    }

    private static void assertSameAnswers(Checked checked)
    {
        SoftAssertions softly = new SoftAssertions();
        for (Comparison comparison : checked.comparisons()) {
            softly.assertThat(comparison.actual())
                    .as("%s%n  predicate: %s", comparison.check().sql(), comparison.check().predicate())
                    .containsExactlyInAnyOrderElementsOf(comparison.check().expected());
        }
        softly.assertAll();
    }

    private MaterializedResultWithPlan executeWithPlan(String sql)
    {
        return getDistributedQueryRunner().executeWithPlan(getSession(), sql);
    }

    /** The predicates, each naming values that occur (most of them in both tiers), values that do not, and edge cases. */
    private static List<String> predicates()
    {
        Instant w = WATERMARK;
        // Berlin midnight: the balancing day that W cuts in two starts an hour before it
        Instant berlinMidnight = MeteringCalendar.startOfLocalDay(LocalDate.of(2026, 11, 4));
        Duration quarter = Duration.ofMinutes(15);
        Duration day = Duration.ofDays(1);
        String manyMeters = IntStream.of(0, 2, 4, 6, 8, 10, METERS, METERS + 1, METERS + 2, METERS + 3, 999)
                .mapToObj(TestMeterstorePredicates::meter)
                .collect(joining(", "));
        String sourceDetail = literal("{\"message\":\"MSCONS_20261103_0000004\",\"sender\":\"9900000000003\"}");
        String meloId = literal("DE000562E%024d".formatted(9_000_000_000L + 7 * 7_919L));
        String strange = STRANGE_SOURCE_KINDS.stream().map(TestingInserts::literal).collect(joining(", "));
        String hot = "\"from\" >= " + timestamp(w);
        return ImmutableList.<String>builder()
                // malo_id
                .add("malo_id = " + meter(3))
                .add("malo_id IN (%s, %s)".formatted(meter(3), meter(11)))
                .add("malo_id IN (%s)".formatted(manyMeters))
                .add("malo_id NOT IN (%s, %s)".formatted(meter(3), meter(11)))
                .add("malo_id < " + meter(7))
                .add("malo_id >= " + meter(12))
                .add("malo_id BETWEEN %s AND %s".formatted(meter(4), meter(9)))
                .add("malo_id LIKE '%s%%'".formatted(ReadingsGenerator.maloId(10).substring(0, 7)))
                .add("malo_id IS NULL")
                .add("malo_id IS NOT NULL")
                .add("malo_id = " + literal(ReadingsGenerator.maloId(3) + " "))
                .add("malo_id = '\u00c4\u00d6'")
                .add("malo_id = ''")
                .add("malo_id IN (%s, '\u00c4\u00d6', '', %s)".formatted(meter(3), literal(ReadingsGenerator.maloId(4) + " ")))
                .add("malo_id = " + meter(999))
                .add("malo_id = chr(0)")
                // obis_code, sparte and the other identifiers
                .add("obis_code = '1-1:1.29.0'")
                .add("obis_code = '1-1:2.29.0'")
                .add("obis_code BETWEEN '1-1:2' AND '7'")
                .add("sparte = 'strom'")
                .add("sparte = 'STROM '")
                .add("sparte IN ('GAS', 'WAERME')")
                .add("melo_id IS NULL")
                .add("melo_id = " + meloId)
                .add("version_scope = '9900000000003:2026-11'")
                // "from": at W, one interval either side, at the Berlin day boundary, inside each tier, open, OR of ranges
                .add("\"from\" >= " + timestamp(w))
                .add("\"from\" > " + timestamp(w))
                .add("\"from\" < " + timestamp(w))
                .add("\"from\" <= " + timestamp(w))
                .add("\"from\" = " + timestamp(w))
                .add("\"from\" >= %s AND \"from\" < %s".formatted(timestamp(w.minus(quarter)), timestamp(w.plus(quarter))))
                .add("\"from\" > %s AND \"from\" <= %s".formatted(timestamp(w.minus(quarter)), timestamp(w.plus(quarter))))
                .add("\"from\" BETWEEN %s AND %s".formatted(timestamp(w.minus(quarter)), timestamp(w)))
                .add("\"from\" >= %s AND \"from\" < %s".formatted(timestamp(berlinMidnight), timestamp(berlinMidnight.plus(day))))
                .add("\"from\" < " + timestamp(berlinMidnight))
                .add("\"from\" >= %s AND \"from\" < %s".formatted(timestamp(w.minus(day).plusSeconds(3_600)), timestamp(w.minus(day).plusSeconds(6 * 3_600))))
                .add("\"from\" >= %s AND \"from\" < %s".formatted(timestamp(w.plus(day).plusSeconds(3_600)), timestamp(w.plus(day).plusSeconds(6 * 3_600))))
                .add("\"from\" >= " + timestamp(w.plus(day).plus(day)))
                .add("(\"from\" < %s OR \"from\" >= %s)".formatted(timestamp(w.minus(day)), timestamp(w.plus(day))))
                .add("(\"from\" BETWEEN %s AND %s OR \"from\" BETWEEN %s AND %s)".formatted(timestamp(w.minusSeconds(7_200)), timestamp(w.minusSeconds(3_600)), timestamp(w.plusSeconds(3_600)), timestamp(w.plusSeconds(7_200))))
                .add("NOT (\"from\" >= %s AND \"from\" < %s)".formatted(timestamp(w.minusSeconds(3_600)), timestamp(w.plusSeconds(3_600))))
                .add("\"from\" IN (%s, %s, %s)".formatted(timestamp(w.minus(quarter)), timestamp(w), timestamp(w.plus(quarter))))
                .add("\"from\" > " + timestamp(w.minusNanos(1_000)))
                .add("\"from\" <= " + timestamp(w.minusNanos(1_000)))
                .add("\"from\" < TIMESTAMP '2026-11-04 00:00:00.000000001 UTC'")
                .add("CAST(\"from\" AS date) = DATE '2026-11-04'")
                // the open end of a range as tools write it
                .add("\"from\" <= TIMESTAMP '9999-12-31 23:59:59.999999 UTC'")
                .add("\"from\" >= %s AND \"from\" <= TIMESTAMP '9999-12-31 23:59:59.999999 UTC'".formatted(timestamp(w.minus(day))))
                .add("\"from\" >= " + timestamp(w.plus(Duration.ofDays(100))))
                .add("\"from\" < TIMESTAMP '2000-01-01 00:00:00 UTC'")
                // "to"
                .add("\"to\" > %s AND \"to\" <= %s".formatted(timestamp(w), timestamp(w.plusSeconds(3_600))))
                // value
                .add("value = 0")
                .add("value < 0")
                .add("value = 0.0123456")
                .add("value > 0.0500001")
                .add("value BETWEEN -0.05 AND 0.05")
                .add("value IN (0, 0.021, 0.022, -0.03)")
                // version and recorded_at
                .add("version >= " + epochMicros(Instant.parse("2026-11-06T05:00:00Z")))
                .add("version = 1")
                .add("version BETWEEN %s AND %s".formatted(epochMicros(Instant.parse("2026-11-04T05:00:00Z")), epochMicros(Instant.parse("2026-11-05T05:00:10Z"))))
                .add("recorded_at < " + timestamp(w))
                .add("recorded_at > TIMESTAMP '2026-11-05 05:00:00 UTC' AND recorded_at < TIMESTAMP '2026-11-05 06:00:00 UTC'")
                .add("recorded_at = " + timestamp(LATE))
                // balancing_day
                .add("balancing_day = DATE '2026-11-04'")
                .add("balancing_day BETWEEN DATE '2026-11-03' AND DATE '2026-11-05'")
                .add("balancing_day IN (DATE '2026-11-02', DATE '2026-11-06')")
                .add("balancing_day > DATE '2026-11-05'")
                .add("balancing_day = DATE '2026-11-01'")
                // quality, provenance, source_detail, source_kind
                .add("quality = 'MEASURED'")
                .add("quality IN ('SUBSTITUTED', 'CORRECTED')")
                .add("provenance IS NULL")
                .add("provenance = ''")
                .add("source_detail IS NULL")
                .add("source_detail = " + sourceDetail)
                .add("source_kind = 'MSCONS '")
                .add("source_kind = ''")
                .add("source_kind IN (%s)".formatted(strange))
                .add("source_kind = 'a\"b\\c'")
                .add("source_kind > 'Z'")
                // across columns
                .add("malo_id = %s AND %s".formatted(meter(3), hot))
                .add("malo_id IN (%s, %s) AND %s AND \"from\" < %s".formatted(meter(3), meter(4), hot, timestamp(w.plus(day))))
                .add("malo_id = %s AND obis_code = '1-1:1.29.0' AND \"from\" >= %s AND \"from\" < %s".formatted(meter(3), timestamp(w.minusSeconds(3_600)), timestamp(w.plusSeconds(3_600))))
                .add("(malo_id = %s OR value > 0.2)".formatted(meter(3)))
                .add("(malo_id = %s OR \"from\" >= %s)".formatted(meter(3), timestamp(w.plus(day).plus(day))))
                .add("NOT (malo_id = %s) AND quality = 'MEASURED'".formatted(meter(3)))
                .add("((sparte = 'GAS' AND value > 0.01) OR (sparte = 'STROM' AND quality = 'CORRECTED'))")
                .add("malo_id = %s AND sparte = 'GAS'".formatted(meter(3)))
                .add(hot + " AND quality = 'MEASURED'")
                .add(hot + " AND malo_id = %s AND source_kind = 'MSCONS'".formatted(meter(3)))
                .add(hot + " AND malo_id NOT IN (%s)".formatted(meter(3)))
                .add("\"from\" > %s AND malo_id = %s".formatted(timestamp(w), meter(3)))
                .add("\"from\" = %s AND malo_id IN (%s)".formatted(timestamp(w.plus(quarter)), manyMeters))
                .add(hot + " AND source_kind IN (%s)".formatted(strange))
                .add(hot + " AND source_kind = ''")
                .add(hot + " AND source_kind IN ('MSCONS ', 'NULL', 'x,y')")
                .add(hot + " AND sparte = 'GAS' AND unit = 'M3'")
                .add(hot + " AND \"from\" <= " + timestamp(w.plusSeconds(3_600)))
                .add(hot + " AND \"from\" <= TIMESTAMP '9999-12-31 23:59:59.999999 UTC'")
                .add(hot + " AND source_kind IN ('MSCONS', chr(0))")
                .add(hot + " AND (malo_id = %s OR malo_id IS NULL)".formatted(meter(3)))
                .add("balancing_day = DATE '2026-11-04' AND malo_id = " + meter(METERS))
                .add("recorded_at = %s AND \"from\" >= %s".formatted(timestamp(LATE), timestamp(berlinMidnight)))
                .build();
    }

    private static String meter(int meter)
    {
        return literal(ReadingsGenerator.maloId(meter));
    }

    /**
     * Rows the generator never writes, on the same grid and days as meters 0 to 3, under four more MaLo-IDs: feed-in
     * with negative values, gas in m3 (balanced by gas day), heat with unusual source kinds (empty, non-ASCII, quotes,
     * a comma, braces, 'NULL') and no MeLo-ID, and faulty zeros with an empty provenance.
     */
    private static List<Reading> variants(ReadingsGenerator generator)
    {
        List<Reading> variants = new ArrayList<>();
        for (LocalDate day : generator.localDays()) {
            for (int kind = 0; kind < 4; kind++) {
                for (Reading reading : generator.readings(kind, day)) {
                    variants.add(variant(kind, reading));
                }
            }
        }
        return variants;
    }

    private static Reading variant(int kind, Reading reading)
    {
        int interval = Math.toIntExact(reading.from().getEpochSecond() / 900);
        String maloId = ReadingsGenerator.maloId(METERS + kind);
        return switch (kind) {
            case 0 -> new Reading(maloId, reading.meloId(), "1-1:2.29.0", Sparte.STROM, reading.from(), reading.to(), reading.value().negate(), MeasurementUnit.KWH,
                    reading.quality(), reading.resolution(), "VIRTUAL_METER", reading.sourceDetail(), reading.provenance(), reading.version(), reading.versionScope(), reading.recordedAt(), reading.balancingDay());
            case 1 -> new Reading(maloId, reading.meloId(), "7-20:99.33.17", Sparte.GAS, reading.from(), reading.to(), reading.value().divide(BigDecimal.TEN).setScale(Reading.VALUE_SCALE), MeasurementUnit.M3,
                    reading.quality(), reading.resolution(), "MSCONS ", reading.sourceDetail(), Optional.of("{\"note\":\"Gasz\u00e4hler \u00c4\u00d6\"}"), reading.version(),
                    Reading.versionScope(ReadingsGenerator.DEFAULT_OPERATOR_ID, Sparte.GAS, reading.from()), reading.recordedAt(), MeteringCalendar.balancingDay(Sparte.GAS, reading.from()));
            case 2 -> new Reading(maloId, Optional.empty(), "6-0:1.0.0", Sparte.WAERME, reading.from(), reading.to(), interval % 3 == 0 ? BigDecimal.ZERO.setScale(Reading.VALUE_SCALE) : reading.value(), MeasurementUnit.KWH,
                    Quality.PRELIMINARY, reading.resolution(), STRANGE_SOURCE_KINDS.get(interval % STRANGE_SOURCE_KINDS.size()), reading.sourceDetail(), reading.provenance(), reading.version(),
                    Reading.versionScope(ReadingsGenerator.DEFAULT_OPERATOR_ID, Sparte.WAERME, reading.from()), reading.recordedAt(), MeteringCalendar.balancingDay(Sparte.WAERME, reading.from()));
            case 3 -> new Reading(maloId, reading.meloId(), reading.obisCode(), Sparte.STROM, reading.from(), reading.to(), BigDecimal.ZERO.setScale(Reading.VALUE_SCALE), MeasurementUnit.KWH,
                    Quality.FAULTY, reading.resolution(), reading.sourceKind(), Optional.empty(), Optional.of(""), reading.version(), reading.versionScope(), reading.recordedAt(), reading.balancingDay());
            default -> throw new IllegalArgumentException("No variant " + kind);
        };
    }

    private record Aggregate(String sql, boolean count) {}

    /** A pushed query and the answer the oracle gives for it. */
    private record Check(String predicate, String sql, List<MaterializedRow> expected) {}

    /** A check and the pushed query's answer. */
    private record Comparison(Check check, List<MaterializedRow> actual) {}

    /** What checks found: the comparisons, and how many table scans took a predicate or an aggregation. */
    private record Checked(List<Comparison> comparisons, int constrainedScans, int aggregatedScans)
    {
        static final Checked NONE = new Checked(List.of(), 0, 0);

        Checked plus(Checked other)
        {
            return new Checked(ImmutableList.<Comparison>builder().addAll(comparisons).addAll(other.comparisons).build(), constrainedScans + other.constrainedScans, aggregatedScans + other.aggregatedScans);
        }
    }

    /**
     * The oracle's answer for one predicate.
     *
     * @param total every aggregate over the rows the predicate selects, the rows' checksum, and the rows below W and at or above it
     * @param groups per meter and balancing day: the keys and every aggregate
     */
    private record Answer(List<Object> total, List<MaterializedRow> groups)
    {
        // what the aggregates of no rows are: zero counts, everything else null
        static final List<Object> NONE = Stream.concat(
                        Stream.concat(AGGREGATES.stream().map(aggregate -> aggregate.count() ? (Object) 0L : null), Stream.of((Object) null)),
                        Stream.of(0L, 0L))
                .toList();

        Answer
        {
            total = Collections.unmodifiableList(new ArrayList<>(total));
            groups = ImmutableList.copyOf(groups);
        }

        MaterializedRow aggregates()
        {
            return new MaterializedRow(DEFAULT_PRECISION, total.subList(0, AGGREGATES.size()));
        }

        /** The count and the checksum of the rows. */
        MaterializedRow rows()
        {
            return new MaterializedRow(DEFAULT_PRECISION, Arrays.asList(total.getFirst(), total.get(AGGREGATES.size())));
        }

        long coldRows()
        {
            return (long) total.get(total.size() - 2);
        }

        long hotRows()
        {
            return (long) total.getLast();
        }
    }
}
