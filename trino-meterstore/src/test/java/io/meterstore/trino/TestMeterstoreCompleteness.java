package io.meterstore.trino;

import io.meterstore.archiver.cli.ArchiverCli;
import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.Sparte;
import io.meterstore.core.Sparte.MeasurementUnit;
import io.meterstore.core.StoredRuleViolations;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.ReadingsOracle;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.meterstore.trino.base.MeterstoreMetrics;
import io.trino.execution.QueryInfo;
import io.trino.operator.OperatorStats;
import io.trino.plugin.base.metrics.LongCount;
import io.trino.plugin.base.metrics.TDigestHistogram;
import io.trino.spi.metrics.Metrics;
import io.trino.testing.DistributedQueryRunner;
import io.trino.testing.QueryRunner.MaterializedResultWithPlan;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.InstantSource;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.YearMonth;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_INVALID_ARGUMENT;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS;

/**
 * {@code meter_completeness} over a generated month in both tiers, with corrections, holes, an hour stored under a second
 * network operator before the hot tier's rules refused that, a grid change, the spring DST day, a gas meter on gas days and a meter silent in the month; every
 * figure equals an oracle computed here from the generated rows: the winners by ReadingsOracle, the days and their
 * interval counts from java.time's Europe/Berlin rules, the charging of absent days as the report documents it.
 */
@TestInstance(PER_CLASS)
final class TestMeterstoreCompleteness
{
    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");
    private static final LocalDate FIRST_DAY = LocalDate.of(2026, 2, 25);
    private static final int DAYS = 35;
    private static final YearMonth MONTH = YearMonth.of(2026, 3);
    private static final String OTHER_OPERATOR = "9900000000010";
    private static final String GAS_OBIS = "7-20:3.1.0";
    private static final String GAS_MALO = ReadingsGenerator.maloId(900);

    private TestingWarehouse warehouse;
    private DistributedQueryRunner queryRunner;
    private List<Reading> rows;
    private List<Reading> winners;

    @BeforeAll
    void setUp()
            throws Exception
    {
        warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("completeness"));
        Table table = TestingMeterstoreTables.createTables(warehouse);
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(20260301)
                .meters(10)
                .startDay(FIRST_DAY)
                .days(DAYS)
                .correctionsFraction(0.03)
                .build();
        rows = new ArrayList<>();
        for (Reading reading : generator) {
            shape(reading, rows);
        }
        rows.addAll(gasMeter());
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, rows);
        }
        // the first window runs to the end of the UTC day of the first interval, then one UTC day each: W is 15 March 00:00 UTC
        TestingArchival.archiveWindows(warehouse, 19);
        table.refresh();
        assertThat(WatermarkReader.current(table).watermark().instant()).isEqualTo(Instant.parse("2026-03-15T00:00:00Z"));
        queryRunner = MeterstoreQueryRunner.builder(warehouse).withoutIceberg().build();

        // late deliveries through INSERT once the days are archived: the cold winners they supersede are position-deleted
        List<Reading> late = lateDeliveries(ReadingsOracle.of(rows).resolved(ReadingsOracle.all()));
        queryRunner.execute(TestingInserts.insertAsRecorded(late));
        rows.addAll(late);
        // the rules' triggers held off, as for rows stored before them: a second operator's hour, the one way to a surplus
        List<Reading> secondOperator = secondOperator(ReadingsOracle.of(rows).resolved(ReadingsOracle.all()));
        try (Connection connection = warehouse.database().connect(); Statement statement = connection.createStatement()) {
            // the rules' alone: the supersession marks are kept, as for any writer
            statement.execute("ALTER TABLE %s DISABLE TRIGGER meterstore_reading_rules_insert".formatted(TestingMeterstoreTables.hotTier().qualifiedParent()));
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, secondOperator);
            statement.execute("ALTER TABLE %s ENABLE TRIGGER meterstore_reading_rules_insert".formatted(TestingMeterstoreTables.hotTier().qualifiedParent()));
        }
        rows.addAll(secondOperator);
        winners = ReadingsOracle.of(rows).resolved(ReadingsOracle.all());
        table.refresh();
        assertThat(Long.parseLong(table.currentSnapshot().summary().get("total-position-deletes"))).isPositive();
    }

    /**
     * Corrections and deliveries after archival, in both tiers: an hour of meter 1's missing day (cold), meter 9's
     * morning of 5 March corrected to substitutes (cold, superseding archived winners) and its morning of 16 March (hot).
     */
    private static List<Reading> lateDeliveries(List<Reading> winners)
    {
        Instant recordedAt = Instant.parse("2026-04-02T00:00:00Z");
        List<Reading> late = new ArrayList<>();
        for (Reading winner : winners) {
            int meter = meterOf(winner.maloId());
            LocalDate day = winner.balancingDay();
            int hour = LocalDateTime.ofInstant(winner.from(), BERLIN).getHour();
            if (meter == 9 && (day.equals(LocalDate.of(2026, 3, 5)) || day.equals(LocalDate.of(2026, 3, 16))) && hour < 3) {
                late.add(copy(winner, winner.resolution(), winner.end(), Quality.SUBSTITUTED, winner.version().add(BigInteger.valueOf(1_000)), winner.versionScope(), recordedAt));
            }
            // the hour of 10 March that meter 1 missed, taken from meter 0's winners of that hour
            if (meter == 0 && day.equals(LocalDate.of(2026, 3, 10)) && hour == 10) {
                late.add(new Reading(ReadingsGenerator.maloId(1), winner.meloId(), winner.obisCode(), winner.sparte(), winner.from(), winner.to(), winner.value(), winner.unit(), Quality.MEASURED,
                        winner.resolution(), winner.sourceKind(), winner.sourceDetail(), winner.provenance(), winner.version(), winner.versionScope(), recordedAt, winner.balancingDay()));
            }
        }
        return late;
    }

    /**
     * An hour of meter 5 on 17 March (hot) under a second network operator, delivered twice there, as rows stored before
     * the hot tier's rules (which refuse a second operator now) may hold it: each version scope keeps its highest version.
     */
    private static List<Reading> secondOperator(List<Reading> winners)
    {
        Instant recordedAt = Instant.parse("2026-04-02T00:00:00Z");
        List<Reading> stored = new ArrayList<>();
        for (Reading winner : winners) {
            if (meterOf(winner.maloId()) == 5 && winner.balancingDay().equals(LocalDate.of(2026, 3, 17)) && LocalDateTime.ofInstant(winner.from(), BERLIN).getHour() == 8) {
                String otherScope = Reading.versionScope(OTHER_OPERATOR, winner.sparte(), winner.from());
                stored.add(copy(winner, winner.resolution(), winner.end(), Quality.ESTIMATED, winner.version().add(BigInteger.ONE), otherScope, recordedAt));
                stored.add(copy(winner, winner.resolution(), winner.end(), Quality.SUBSTITUTED, winner.version().add(BigInteger.TWO), otherScope, recordedAt));
            }
        }
        return stored;
    }

    @AfterAll
    void tearDown()
    {
        if (queryRunner != null) {
            queryRunner.close();
        }
    }

    /** What each generated meter does in the month, so that every rule of the report has a reading to show it. */
    private static void shape(Reading reading, List<Reading> shaped)
    {
        int meter = meterOf(reading.maloId());
        LocalDate day = reading.balancingDay();
        LocalDateTime wallClock = LocalDateTime.ofInstant(reading.from(), BERLIN);
        switch (meter) {
            // a whole day missing
            case 1 -> {
                if (!day.equals(LocalDate.of(2026, 3, 10))) {
                    shaped.add(reading);
                }
            }
            // two hours missing on the 15th (in the hot tier) and one on the spring DST day
            case 2 -> {
                boolean hole = (day.equals(LocalDate.of(2026, 3, 15)) && wallClock.getHour() >= 10 && wallClock.getHour() < 12)
                        || (day.equals(LocalDate.of(2026, 3, 29)) && wallClock.getHour() == 20);
                if (!hole) {
                    shaped.add(reading);
                }
            }
            // stops delivering after the 25th
            case 3 -> {
                if (day.isBefore(LocalDate.of(2026, 3, 26))) {
                    shaped.add(reading);
                }
            }
            // silent in March: only the roster window knows it
            case 4 -> {
                if (day.isBefore(MONTH.atDay(1))) {
                    shaped.add(reading);
                }
            }
            // hourly from the 16th (the quarter-hours of an hour summed into one interval), nothing on the 20th
            case 6 -> {
                if (day.isBefore(LocalDate.of(2026, 3, 16))) {
                    shaped.add(reading);
                }
                else if (!day.equals(LocalDate.of(2026, 3, 20)) && reading.from().getEpochSecond() % 3600 == 0 && isOriginal(reading)) {
                    shaped.add(copy(reading, "PT1H", reading.from().plus(Duration.ofHours(1)), reading.quality(), reading.version(), reading.versionScope()));
                }
            }
            // delivers again from the 5th only: a leading gap in the month, charged to the grid of February
            case 7 -> {
                if (day.isBefore(MONTH.atDay(1)) || !day.isBefore(LocalDate.of(2026, 3, 5))) {
                    shaped.add(reading);
                }
            }
            // the night of the 3rd flagged faulty: not billable
            case 8 -> shaped.add(day.equals(LocalDate.of(2026, 3, 3)) && wallClock.getHour() < 6 && isOriginal(reading)
                    ? copy(reading, reading.resolution(), reading.end(), Quality.FAULTY, reading.version(), reading.versionScope())
                    : reading);
            default -> shaped.add(reading);
        }
    }

    // the generator's originals carry the versions of the first delivery; corrections come later with higher ones
    private static boolean isOriginal(Reading reading)
    {
        return !reading.sourceDetail().orElse("").contains("_K\"");
    }

    /** An hourly gas meter in m³, balanced on gas days; the hour from 06:00 on gas day 28 March (the 23-hour one) is missing. */
    private static List<Reading> gasMeter()
    {
        List<Reading> gas = new ArrayList<>();
        Instant end = LocalDate.of(2026, 4, 1).atTime(6, 0).atZone(BERLIN).toInstant();
        for (Instant from = FIRST_DAY.atTime(6, 0).atZone(BERLIN).toInstant(); from.isBefore(end); from = from.plus(Duration.ofHours(1))) {
            if (from.equals(LocalDate.of(2026, 3, 28).atTime(6, 0).atZone(BERLIN).toInstant())) {
                continue;
            }
            gas.add(new Reading(GAS_MALO, Optional.empty(), GAS_OBIS, Sparte.GAS, from, from.plus(Duration.ofHours(1)), new BigDecimal("1.250000"),
                    MeasurementUnit.M3, Quality.MEASURED, "PT1H", "MSCONS", Optional.empty(), Optional.empty(), BigInteger.valueOf(20260401000000L),
                    Reading.versionScope(ReadingsGenerator.DEFAULT_OPERATOR_ID, Sparte.GAS, from), from.plus(Duration.ofDays(1)),
                    MeteringCalendar.balancingDay(Sparte.GAS, from)).validate());
        }
        return gas;
    }

    @Test
    void testSettlementMonthWithRoster()
            throws SQLException
    {
        SortedMap<List<String>, List<Object>> report = report("table_name => 'readings', settlement_month => '2026-03', seen_since => TIMESTAMP '2026-02-25 00:00:00 Europe/Berlin'");
        assertThat(report).isEqualTo(oracle(Period.month(MONTH), Optional.of(FIRST_DAY.atStartOfDay(BERLIN).toInstant()), _ -> true));

        // the figures that show each rule, for the record: March 2026 holds 2972 quarter-hours (92 on the 29th)
        assertThat(report.get(channel(0, "PT15M"))).startsWith(2972L, 2972L, 0L, 0L, null);
        // an hour of the missing day delivered late, into the cold tier
        assertThat(report.get(channel(1, "PT15M"))).startsWith(2972L, 2880L, 92L, 0L, "2026-03-10");
        assertThat(report.get(channel(2, "PT15M"))).startsWith(2972L, 2960L, 12L, 0L, "2026-03-15");
        // silent: only with a roster, the whole month missing from its first day
        assertThat(report.get(channel(4, "PT15M"))).startsWith(2972L, 0L, 2972L, 0L, "2026-03-01");
        // on the 17th (hot), an hour stored before the rules under a second operator, twice: one winner more each
        assertThat(report.get(channel(5, "PT15M"))).startsWith(2972L, 2976L, 0L, 4L, null);
        // late substitutes: 12 cold (each a position delete of an archived winner) and 12 hot, counted once each
        assertThat(report.get(channel(9, "PT15M"))).startsWith(2972L, 2972L, 0L, 0L, null);
        assertThat((long) report.get(channel(9, "PT15M")).get(5)).isGreaterThanOrEqualTo(24L);
        // the grid change: quarter-hours up to the 15th, then hours (23 on the 29th), the 20th charged to the hours
        assertThat(report.get(channel(6, "PT1H"))).startsWith(16L * 24 - 1, 15L * 24 - 1, 24L, 0L, "2026-03-20");
        assertThat(report.get(channel(6, "PT15M"))).startsWith(15L * 96, 15L * 96, 0L, 0L, null);
        // the leading gap goes to February's grid
        assertThat(report.get(channel(7, "PT15M"))).startsWith(2972L, 2972L - 4 * 96, 4L * 96, 0L, "2026-03-01");
        // gas days: 1 March 06:00 to 1 April 06:00, the 23-hour one on Saturday 28 March, one hour of it missing
        assertThat(report.get(List.of(GAS_MALO, GAS_OBIS, "GAS", "PT1H"))).startsWith(31L * 24 - 1, 31L * 24 - 2, 1L, 0L, "2026-03-28");
        // faulty values are not billable
        assertThat((long) report.get(channel(8, "PT15M")).get(6)).isPositive();
        // the corrections count once: winners, not versions
        long versions = rows.stream().filter(reading -> meterOf(reading.maloId()) == 0 && YearMonth.from(reading.balancingDay()).equals(MONTH)).count();
        assertThat(versions).isGreaterThan(2972);
    }

    @Test
    void testCountsPushedIntoBothTiers()
    {
        MaterializedResultWithPlan result = queryRunner.executeWithPlan(queryRunner.getDefaultSession(),
                "SELECT * FROM TABLE(meterstore.system.meter_completeness(table_name => 'readings', settlement_month => '2026-03'))");
        QueryInfo query = queryRunner.getCoordinator().getQueryManager().getFullQueryInfo(result.queryId());
        Map<String, Long> metrics = new HashMap<>();
        Metrics connectorMetrics = query.getQueryStats().getOperatorSummaries().stream()
                .map(OperatorStats::getConnectorMetrics)
                .reduce(Metrics.EMPTY, Metrics::mergeWith);
        connectorMetrics.getMetrics().forEach((name, metric) -> {
            if (metric instanceof LongCount count) {
                metrics.put(name, count.getTotal());
            }
        });
        // each hot partition counted in PostgreSQL waited its turn at the node's pool of 10
        TDigestHistogram poolSize = (TDigestHistogram) connectorMetrics.getMetrics().get(MeterstoreMetrics.POSTGRESQL_CONNECTIONS);
        assertThat(poolSize.getTotal()).isPositive();
        assertThat(poolSize.getMax()).isEqualTo(10);
        assertThat(((TDigestHistogram) connectorMetrics.getMetrics().get(MeterstoreMetrics.POSTGRESQL_CONNECTION_WAIT_MILLIS)).getTotal()).isEqualTo(poolSize.getTotal());

        // every winner of the month is counted once, from both tiers, each commodity on its own days
        Period month = Period.month(MONTH);
        assertThat(metrics.get(MeterstoreMetrics.COMPLETENESS_ROWS_COUNTED))
                .isEqualTo(winners.stream().filter(winner -> !winner.from().isBefore(month.start(winner.sparte())) && winner.from().isBefore(month.end(winner.sparte()))).count());
        // the read spans both commodities' periods: electricity from 1 March 00:00, gas to 1 April 06:00
        Instant end = MONTH.plusMonths(1).atDay(1).atTime(6, 0).atZone(BERLIN).toInstant();
        Instant watermark = Instant.parse("2026-03-15T00:00:00Z");
        // the hot winners never leave PostgreSQL: each partition (a UTC day, so parts of two Berlin days) returns one count
        // per reading, grid, balancing day and placement, about 40 times fewer rows than the winners
        long hotWinners = winners.stream().filter(winner -> !winner.from().isBefore(watermark) && winner.from().isBefore(end)).count();
        long hotDays = winners.stream()
                .filter(winner -> !winner.from().isBefore(watermark) && winner.from().isBefore(end))
                .map(winner -> List.of(LocalDate.ofInstant(winner.from(), ZoneOffset.UTC).toString(), winner.maloId(), winner.obisCode(), winner.resolution(), winner.balancingDay().toString(), Boolean.toString(winner.from().isBefore(Period.month(MONTH).end(winner.sparte())))))
                .distinct()
                .count();
        assertThat(metrics.get(MeterstoreMetrics.COMPLETENESS_HOT_COUNTS_READ)).isEqualTo(hotDays).isLessThan(hotWinners / 20);
    }

    @Test
    void testRangeWithPartialDaysWithoutRoster()
            throws SQLException
    {
        Instant start = ZonedDateTime.of(2026, 3, 10, 12, 7, 0, 0, BERLIN).toInstant();
        Instant end = ZonedDateTime.of(2026, 3, 20, 6, 30, 0, 0, BERLIN).toInstant();
        SortedMap<List<String>, List<Object>> report = report("range_start => TIMESTAMP '2026-03-10 12:07:00 Europe/Berlin', range_end => TIMESTAMP '2026-03-20 06:30:00 Europe/Berlin'");
        assertThat(report).isEqualTo(oracle(Period.range(start, end), Optional.empty(), _ -> true));
        // without a roster the silent meter is not reported
        assertThat(report.keySet()).noneMatch(key -> key.getFirst().equals(ReadingsGenerator.maloId(4)));
        // 12:15 to 24:00 is 47 quarter-hours; 9 whole days; 00:00 to 06:30 is 26
        assertThat(report.get(channel(0, "PT15M")).getFirst()).isEqualTo(47L + 9 * 96 + 26);
    }

    @Test
    void testMetersAndObisCodes()
            throws SQLException
    {
        String meters = "ARRAY['%s', '%s', '%s']".formatted(ReadingsGenerator.maloId(6), ReadingsGenerator.maloId(7), GAS_MALO);
        SortedMap<List<String>, List<Object>> report = report("settlement_month => '2026-03', malo_ids => %s, obis_codes => ARRAY['7-20:3.1.0*255', '1-1:1.29.0']".formatted(meters));
        Predicate<Reading> listed = reading -> List.of(ReadingsGenerator.maloId(6), ReadingsGenerator.maloId(7), GAS_MALO).contains(reading.maloId());
        assertThat(report).isEqualTo(oracle(Period.month(MONTH), Optional.empty(), listed));
        assertThat(report.keySet().stream().map(List::getFirst).distinct().count()).isEqualTo(3);
        // no roster: the leading gap of meter 7 goes to the first grid delivered
        assertThat(report.get(channel(7, "PT15M")).get(2)).isEqualTo(4L * 96);

        SortedMap<List<String>, List<Object>> gasOnly = report("settlement_month => '2026-03', obis_codes => ARRAY['7-20:3.1.0']");
        assertThat(gasOnly.keySet()).containsExactly(List.of(GAS_MALO, GAS_OBIS, "GAS", "PT1H"));
    }

    @Test
    void testCommandLine()
            throws Exception
    {
        Path config = archiverConfig();
        try {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int exitCode = new ArchiverCli(new PrintStream(out, true, UTF_8), new PrintStream(err, true, UTF_8), InstantSource.system()).run(new String[] {
                    "completeness", "--config", config.toString(), "--month", "2026-03", "--seen-since", "4d", "--gaps-only",
                    "--trino", "jdbc:trino://%s/meterstore".formatted(queryRunner.getCoordinator().getAddress())});
            assertThat(err.toString(UTF_8)).isEmpty();
            assertThat(exitCode).isEqualTo(ArchiverCli.EXIT_OK);

            // the roster window of four days before 1 March reaches back to 25 February
            SortedMap<List<String>, List<Object>> expected = oracle(Period.month(MONTH), Optional.of(FIRST_DAY.atStartOfDay(BERLIN).toInstant()), _ -> true);
            List<String> incomplete = expected.entrySet().stream().filter(entry -> !(boolean) entry.getValue().get(7)).map(entry -> entry.getKey().getFirst() + " " + entry.getKey().get(3)).toList();
            long missing = expected.values().stream().filter(values -> !(boolean) values.get(7)).mapToLong(values -> (long) values.get(2)).sum();
            List<String> lines = out.toString(UTF_8).lines().toList();
            assertThat(lines.getFirst().split(" +")).containsExactly("TABLE", "MALO", "OBIS", "SPARTE", "RES", "EXPECTED", "ACTUAL", "MISSING", "SURPLUS", "FIRST", "GAP", "NOTE");
            assertThat(lines.subList(1, lines.size() - 1).stream().map(line -> line.split(" +")).map(fields -> fields[1] + " " + fields[4]).toList())
                    .containsExactlyElementsOf(incomplete);
            assertThat(lines).anySatisfy(line -> assertThat(line).startsWith("readings     " + ReadingsGenerator.maloId(4)).endsWith("2026-03-01  delivered nothing in the period"));
            assertThat(lines.getLast()).isEqualTo("readings: %s reading(s) and grid(s) over settlement month 2026-03: %s incomplete, 1 silent, %s interval(s) missing".formatted(incomplete.size(), incomplete.size(), missing));
        }
        finally {
            Files.delete(config);
        }
    }

    /**
     * The second operator's hour, stored before the rules, is listed once the table gets them: by {@code create} run
     * again (as a table created before the rules is upgraded), then by {@code status} and {@code "readings$invariant"}
     * for as long as its rows still break the rule; and the query docs/operations.md gives finds it over both tiers.
     */
    @Test
    void testRowsBreakingARuleAreListed()
            throws Exception
    {
        Path config = archiverConfig();
        try {
            // the hour of 17 March 08:00 Berlin (07:00 UTC): each quarter-hour's first operator's version meets the other operator's
            List<String> created = archiver(config, "create");
            assertThat(created.stream().filter(line -> line.contains("rule one_operator_per_reading")).toList())
                    .hasSize(4)
                    .allSatisfy(line -> assertThat(line).contains("malo_id '%s'".formatted(ReadingsGenerator.maloId(5)), "under scope '%s:2026-03'".formatted(OTHER_OPERATOR)))
                    .anySatisfy(line -> assertThat(line).contains("over [2026-03-17T07:00:00Z, 2026-03-17T07:15:00Z)"));
            assertThat(archiver(config, "status").stream().filter(line -> line.contains("rule one_operator_per_reading")).toList()).hasSize(4);
            assertThat(queryRunner.execute("SELECT violation FROM \"readings$invariant\" WHERE \"check\" = 'fresh'").getOnlyColumnAsSet())
                    .filteredOn(violation -> violation != null && violation.toString().contains("rule one_operator_per_reading"))
                    .hasSize(4);
            // the query docs/operations.md gives for both tiers: per channel by "from" and version, a span its predecessor reaches into
            assertThat(queryRunner.execute("""
                    SELECT malo_id, "from", previous_version, version FROM (
                        SELECT malo_id, obis_code, "from", "to", version, version_scope,
                            lag("from") OVER w AS previous_from, lag("to") OVER w AS previous_to, lag(version) OVER w AS previous_version, lag(version_scope) OVER w AS previous_scope
                        FROM readings_versions
                        WINDOW w AS (PARTITION BY malo_id, obis_code ORDER BY "from", version))
                    WHERE previous_to > "from" AND (previous_from <> "from" OR previous_to <> "to" OR split_part(previous_scope, ':', 1) <> split_part(version_scope, ':', 1))""")
                    .getMaterializedRows().stream().map(row -> row.getField(0) + " " + row.getField(1)).toList())
                    .hasSize(4)
                    .allSatisfy(pair -> assertThat(pair).startsWith(ReadingsGenerator.maloId(5) + " 2026-03-17T07:"));
        }
        finally {
            // the listing is this test's: other tests see the table's invariant as the fixture leaves it
            try (Connection connection = warehouse.database().connect(); Statement statement = connection.createStatement()) {
                statement.execute("DROP TABLE IF EXISTS %s.%s".formatted(TestingMeterstoreTables.hotTier().schema(), StoredRuleViolations.TABLE));
            }
            Files.delete(config);
        }
    }

    /** A configuration of the archiver command line for this test's warehouse, in a file the caller deletes. */
    private Path archiverConfig()
            throws IOException
    {
        Path config = Files.createTempFile("archiver", ".properties");
        Files.writeString(config, """
                meterstore.postgresql.url=%s
                meterstore.postgresql.user=%s
                meterstore.iceberg.warehouse=%s
                """.formatted(warehouse.database().jdbcUrl(), warehouse.database().user(), warehouse.location()));
        return config;
    }

    private List<String> archiver(Path config, String command)
    {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        new ArchiverCli(new PrintStream(out, true, UTF_8), new PrintStream(err, true, UTF_8), InstantSource.system()).run(new String[] {command, "--config", config.toString()});
        return out.toString(UTF_8).lines().toList();
    }

    @Test
    void testBadArguments()
    {
        assertFails("settlement_month => '2026-03', range_start => TIMESTAMP '2026-03-01 00:00:00 UTC'", "Give either SETTLEMENT_MONTH or RANGE_START and RANGE_END, not both");
        assertFails("malo_ids => ARRAY['41373559241']", "Give the period: RANGE_START and RANGE_END (timestamps with time zone), or SETTLEMENT_MONTH ('YYYY-MM')");
        assertFails("settlement_month => 'March'", "SETTLEMENT_MONTH 'March' is not a month: write it as 'YYYY-MM', e.g. '2026-03'");
        assertFails("range_start => TIMESTAMP '2026-03-02 00:00:00 UTC', range_end => TIMESTAMP '2026-03-01 00:00:00 UTC'", "is empty: its end must be after its start");
        assertFails("settlement_month => '2026-03', seen_since => TIMESTAMP '2026-03-05 00:00:00 UTC'", "must lie before the period");
        assertFails("table_name => 'nope', settlement_month => '2026-03'", "Table 'nope' is not a MeterStore table of this catalog: use one of [readings]");
        assertFails("settlement_month => '2026-03', malo_ids => ARRAY['41373559242']", "Invalid MaLo-ID '41373559242': check digit is 2, expected 1");
        assertFails("settlement_month => '2026-03', obis_codes => ARRAY['1-1:1.29']", "Invalid OBIS code '1-1:1.29'");
    }

    private void assertFails(String arguments, String message)
    {
        assertThatThrownBy(() -> report(arguments))
                .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(METERSTORE_INVALID_ARGUMENT.toErrorCode().getCode()))
                .hasMessageContaining(message);
    }

    /** The report keyed by (malo_id, obis_code, sparte, resolution): expected, actual, missing, surplus, first_gap, substituted, not_billable, complete, measurable. */
    private SortedMap<List<String>, List<Object>> report(String arguments)
            throws SQLException
    {
        SortedMap<List<String>, List<Object>> report = new TreeMap<>(Comparator.comparing(Object::toString));
        try (Connection connection = DriverManager.getConnection("jdbc:trino://%s/meterstore/metering".formatted(queryRunner.getCoordinator().getAddress()), "completeness", null);
                Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SELECT malo_id, obis_code, sparte, resolution, expected, actual, missing, surplus, CAST(first_gap AS varchar), substituted, not_billable, complete, measurable "
                        + "FROM TABLE(meterstore.system.meter_completeness(" + arguments + "))")) {
            while (result.next()) {
                List<String> key = List.of(result.getString(1), result.getString(2), result.getString(3), result.getString(4));
                List<Object> values = new ArrayList<>();
                values.add(result.getLong(5));
                values.add(result.getLong(6));
                values.add(result.getLong(7));
                values.add(result.getLong(8));
                values.add(result.getString(9));
                values.add(result.getLong(10));
                values.add(result.getLong(11));
                values.add(result.getBoolean(12));
                values.add(result.getBoolean(13));
                assertThat(report.put(key, values)).as("one row per reading and grid: %s", key).isNull();
            }
        }
        return report;
    }

    private record Period(Optional<Instant> start, Optional<Instant> end, Optional<YearMonth> month)
    {
        static Period month(YearMonth month)
        {
            return new Period(Optional.empty(), Optional.empty(), Optional.of(month));
        }

        static Period range(Instant start, Instant end)
        {
            return new Period(Optional.of(start), Optional.of(end), Optional.empty());
        }

        Instant start(Sparte sparte)
        {
            return start.orElseGet(() -> dayStart(month.orElseThrow().atDay(1), sparte));
        }

        Instant end(Sparte sparte)
        {
            return end.orElseGet(() -> dayStart(month.orElseThrow().plusMonths(1).atDay(1), sparte));
        }
    }

    private record Oracle(String resolution, TreeMap<LocalDate, long[]> days) {}

    /**
     * The report, computed from the winners alone: each balancing day of the period is charged to the grids that
     * delivered on it, an empty day to the grid of the latest winner before it (the roster window included), a leading
     * empty day to the grid of the first winner after it.
     */
    private SortedMap<List<String>, List<Object>> oracle(Period period, Optional<Instant> seenSince, Predicate<Reading> filter)
    {
        Map<List<String>, List<Reading>> byReading = winners.stream()
                .filter(filter)
                .collect(Collectors.groupingBy(reading -> List.of(reading.maloId(), reading.obisCode(), reading.sparte().name())));
        SortedMap<List<String>, List<Object>> report = new TreeMap<>(Comparator.comparing(Object::toString));
        byReading.forEach((reading, all) -> {
            Sparte sparte = Sparte.valueOf(reading.get(2));
            Instant start = period.start(sparte);
            Instant end = period.end(sparte);
            List<Reading> inside = all.stream().filter(row -> !row.from().isBefore(start) && row.from().isBefore(end)).sorted(Comparator.comparing(Reading::from)).toList();
            List<Reading> before = all.stream().filter(row -> seenSince.isPresent() && !row.from().isBefore(seenSince.get()) && row.from().isBefore(start))
                    .sorted(Comparator.comparing(Reading::from)).toList();
            if (inside.isEmpty() && before.isEmpty()) {
                return;
            }
            Map<String, TreeMap<LocalDate, long[]>> grids = new TreeMap<>();
            for (LocalDate day = dayOf(start, sparte); dayStart(day, sparte).isBefore(end); day = day.plusDays(1)) {
                LocalDate current = day;
                List<Reading> delivered = inside.stream().filter(row -> dayOf(row.from(), sparte).equals(current)).toList();
                List<String> present = delivered.stream().map(Reading::resolution).distinct().toList();
                if (present.isEmpty()) {
                    Optional<Reading> last = inside.stream().filter(row -> dayOf(row.from(), sparte).isBefore(current)).reduce((first, second) -> second).or(() -> before.isEmpty() ? Optional.empty() : Optional.of(before.getLast()));
                    String grid = last.or(() -> inside.stream().findFirst()).orElseThrow().resolution();
                    present = List.of(grid);
                }
                for (String grid : present) {
                    long[] counts = grids.computeIfAbsent(grid, _ -> new TreeMap<>()).computeIfAbsent(day, _ -> new long[4]);
                    List<Reading> onGrid = delivered.stream().filter(row -> row.resolution().equals(grid)).toList();
                    counts[0] = expected(day, sparte, Duration.parse(grid), start, end);
                    counts[1] = onGrid.size();
                    counts[2] = onGrid.stream().filter(row -> row.quality() == Quality.SUBSTITUTED).count();
                    counts[3] = onGrid.stream().filter(row -> !row.quality().billable()).count();
                }
            }
            grids.forEach((grid, days) -> {
                long expected = days.values().stream().mapToLong(counts -> counts[0]).sum();
                long actual = days.values().stream().mapToLong(counts -> counts[1]).sum();
                long missing = days.values().stream().mapToLong(counts -> Math.max(counts[0] - counts[1], 0)).sum();
                long surplus = days.values().stream().mapToLong(counts -> Math.max(counts[1] - counts[0], 0)).sum();
                String firstGap = days.entrySet().stream().filter(entry -> entry.getValue()[1] < entry.getValue()[0]).map(entry -> entry.getKey().toString()).findFirst().orElse(null);
                List<Object> values = new ArrayList<>(List.of(expected, actual, missing, surplus));
                values.add(firstGap);
                values.add(days.values().stream().mapToLong(counts -> counts[2]).sum());
                values.add(days.values().stream().mapToLong(counts -> counts[3]).sum());
                values.add(missing == 0 && surplus == 0);
                values.add(expected > 0);
                report.put(List.of(reading.get(0), reading.get(1), reading.get(2), grid), values);
            });
        });
        return report;
    }

    // the intervals of a step that start on a balancing day inside [start, end), counted one by one
    private static long expected(LocalDate day, Sparte sparte, Duration step, Instant start, Instant end)
    {
        long count = 0;
        for (Instant instant = dayStart(day, sparte); instant.isBefore(dayStart(day.plusDays(1), sparte)); instant = instant.plus(step)) {
            if (!instant.isBefore(start) && instant.isBefore(end)) {
                count++;
            }
        }
        return count;
    }

    private static Instant dayStart(LocalDate day, Sparte sparte)
    {
        return (sparte == Sparte.GAS ? day.atTime(6, 0) : day.atStartOfDay()).atZone(BERLIN).toInstant();
    }

    private static LocalDate dayOf(Instant instant, Sparte sparte)
    {
        ZonedDateTime wallClock = instant.atZone(BERLIN);
        return sparte == Sparte.GAS && wallClock.getHour() < 6 ? wallClock.toLocalDate().minusDays(1) : wallClock.toLocalDate();
    }

    private static List<String> channel(int meter, String resolution)
    {
        return List.of(ReadingsGenerator.maloId(meter), ReadingsGenerator.OBIS_CODE, "STROM", resolution);
    }

    private static int meterOf(String maloId)
    {
        Map<String, Integer> meters = new HashMap<>();
        for (int meter = 0; meter < 10; meter++) {
            meters.put(ReadingsGenerator.maloId(meter), meter);
        }
        return meters.getOrDefault(maloId, -1);
    }

    private static Reading copy(Reading reading, String resolution, Instant to, Quality quality, BigInteger version, String versionScope)
    {
        return copy(reading, resolution, to, quality, version, versionScope, reading.recordedAt());
    }

    private static Reading copy(Reading reading, String resolution, Instant to, Quality quality, BigInteger version, String versionScope, Instant recordedAt)
    {
        return new Reading(reading.maloId(), reading.meloId(), reading.obisCode(), reading.sparte(), reading.from(), to, reading.value(), reading.unit(), quality,
                resolution, reading.sourceKind(), reading.sourceDetail(), reading.provenance(), version, versionScope, recordedAt, reading.balancingDay());
    }
}
