package io.meterstore.trino;

import io.meterstore.core.Reading;
import io.meterstore.core.Sparte;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.trino.testing.DistributedQueryRunner;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.math.BigInteger;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.time.temporal.TemporalAdjusters;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_INVALID_ARGUMENT;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_INVALID_READING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS;

/**
 * The calendar and identifier functions of {@code meterstore.system}, through the Trino JDBC driver, against rules
 * written here from their definitions rather than from the connector's code: the EU summer-time rule (last Sunday of
 * March and of October, 01:00 UTC), the gas day from 06:00 wall-clock time, the MaLo-ID check digit and the OBIS value
 * groups of the EDI@Energy code list.
 */
@TestInstance(PER_CLASS)
final class TestMeterstoreFunctions
{
    private static final int FIRST_YEAR = 2020;
    private static final int LAST_YEAR = 2035;
    private static final String OPERATOR = "9900000000003";
    private static final DateTimeFormatter UTC_LITERAL = DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss 'UTC'").withZone(ZoneOffset.UTC);

    private TestingWarehouse warehouse;
    private DistributedQueryRunner queryRunner;

    @BeforeAll
    void setUp()
            throws Exception
    {
        warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("functions"));
        TestingMeterstoreTables.createTables(warehouse);
        queryRunner = MeterstoreQueryRunner.builder(warehouse).withoutIceberg().build();
    }

    @AfterAll
    void tearDown()
    {
        if (queryRunner != null) {
            queryRunner.close();
        }
    }

    @Test
    void testDaysAndMonthsAroundEveryTransitionAndLeapDay()
            throws SQLException
    {
        // every quarter-hour of the 60 hours around each clock change of 2020-2035 and around each leap day and the
        // month change that follows it (where the gas month ends at 06:00 on the 1st)
        List<Instant> windowStarts = new ArrayList<>();
        for (int year = FIRST_YEAR; year <= LAST_YEAR; year++) {
            windowStarts.add(springForward(year).minus(Duration.ofHours(30)));
            windowStarts.add(fallBack(year).minus(Duration.ofHours(30)));
            if (YearMonth.of(year, 2).isLeapYear()) {
                windowStarts.add(LocalDate.of(year, 2, 28).atStartOfDay(ZoneOffset.UTC).toInstant());
            }
        }
        String windows = windowStarts.stream().map(start -> "(TIMESTAMP '%s')".formatted(UTC_LITERAL.format(start))).collect(Collectors.joining(", "));
        String sql = """
                SELECT
                    CAST(to_unixtime(t) AS bigint),
                    CAST(meter_local_day(t) AS varchar),
                    CAST(meter_local_day(CAST(t AS timestamp(6) with time zone)) AS varchar),
                    CAST(meter_gas_day(t) AS varchar),
                    CAST(meter_gas_day(CAST(t AS timestamp(9) with time zone)) AS varchar),
                    CAST(meter_balancing_day(t, 'STROM') AS varchar),
                    CAST(meter_balancing_day(CAST(t AS timestamp(6) with time zone), 'GAS') AS varchar),
                    CAST(meter_balancing_day(t, 'WAERME') AS varchar),
                    CAST(meter_local_month(t) AS varchar),
                    CAST(meter_balancing_month(t, 'GAS') AS varchar),
                    CAST(meter_balancing_month(CAST(t AS timestamp(6) with time zone), 'WASSER') AS varchar),
                    meter_version_scope('%s', t, 'GAS'),
                    meter_version_scope('%s', CAST(t AS timestamp(6) with time zone), 'STROM')
                FROM (VALUES %s) w(start)
                CROSS JOIN UNNEST(sequence(0, 239)) AS s(quarter)
                CROSS JOIN UNNEST(ARRAY[w.start + quarter * INTERVAL '15' MINUTE]) AS i(t)
                """.formatted(OPERATOR, OPERATOR, windows);

        int rows = 0;
        try (Connection connection = connect(); Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            while (result.next()) {
                Instant instant = Instant.ofEpochSecond(result.getLong(1));
                LocalDateTime wallClock = wallClock(instant);
                LocalDate calendarDay = wallClock.toLocalDate();
                // the gas day is named after the day its 06:00 start falls on
                LocalDate gasDay = wallClock.getHour() < 6 ? calendarDay.minusDays(1) : calendarDay;
                String at = "at " + instant + " (" + wallClock + " in Berlin)";
                assertThat(result.getString(2)).as("meter_local_day " + at).isEqualTo(calendarDay.toString());
                assertThat(result.getString(3)).as("meter_local_day(timestamp(6)) " + at).isEqualTo(calendarDay.toString());
                assertThat(result.getString(4)).as("meter_gas_day " + at).isEqualTo(gasDay.toString());
                assertThat(result.getString(5)).as("meter_gas_day(timestamp(9)) " + at).isEqualTo(gasDay.toString());
                assertThat(result.getString(6)).as("meter_balancing_day STROM " + at).isEqualTo(calendarDay.toString());
                assertThat(result.getString(7)).as("meter_balancing_day GAS " + at).isEqualTo(gasDay.toString());
                assertThat(result.getString(8)).as("meter_balancing_day WAERME " + at).isEqualTo(calendarDay.toString());
                assertThat(result.getString(9)).as("meter_local_month " + at).isEqualTo(calendarDay.withDayOfMonth(1).toString());
                assertThat(result.getString(10)).as("meter_balancing_month GAS " + at).isEqualTo(gasDay.withDayOfMonth(1).toString());
                assertThat(result.getString(11)).as("meter_balancing_month WASSER " + at).isEqualTo(calendarDay.withDayOfMonth(1).toString());
                assertThat(result.getString(12)).as("meter_version_scope GAS " + at).isEqualTo(OPERATOR + ":" + YearMonth.from(gasDay));
                assertThat(result.getString(13)).as("meter_version_scope STROM " + at).isEqualTo(OPERATOR + ":" + YearMonth.from(calendarDay));
                rows++;
            }
        }
        assertThat(rows).isEqualTo(windowStarts.size() * 240);
    }

    @Test
    void testExpectedIntervalsOfEveryDay()
            throws SQLException
    {
        String sql = """
                SELECT
                    CAST(d AS varchar),
                    meter_expected_intervals(d, 'PT15M'),
                    meter_expected_intervals(d, 'PT1M'),
                    meter_expected_intervals(d, 'PT1H', 'WAERME'),
                    meter_expected_intervals(d, 'PT15M', 'GAS'),
                    meter_expected_intervals(d, 'PT60S', 'GAS'),
                    meter_expected_intervals(d, 'PT15M', 'STROM'),
                    meter_expected_intervals(d, 'P1D', 'GAS'),
                    meter_expected_intervals(d, 'P1M')
                FROM UNNEST(sequence(DATE '%s-01-01', DATE '%s-12-31')) AS x(d)
                """.formatted(FIRST_YEAR, LAST_YEAR);
        Map<Long, Integer> calendarDays = new TreeMap<>();
        Map<Long, Integer> gasDays = new TreeMap<>();
        Map<LocalDate, Long> calendarQuarterHours = new TreeMap<>();
        Map<LocalDate, Long> gasQuarterHours = new TreeMap<>();
        int days = 0;
        try (Connection connection = connect(); Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            while (result.next()) {
                LocalDate day = LocalDate.parse(result.getString(1));
                // the length of the day in hours, from the instants that start it and the next one
                long calendarHours = Duration.between(startOfCalendarDay(day), startOfCalendarDay(day.plusDays(1))).toHours();
                long gasHours = Duration.between(startOfGasDay(day), startOfGasDay(day.plusDays(1))).toHours();
                assertThat(result.getLong(2)).as("quarter-hours of %s", day).isEqualTo(calendarHours * 4);
                assertThat(result.getLong(3)).as("minutes of %s", day).isEqualTo(calendarHours * 60);
                assertThat(result.getLong(4)).as("hours of %s", day).isEqualTo(calendarHours);
                assertThat(result.getLong(5)).as("quarter-hours of gas day %s", day).isEqualTo(gasHours * 4);
                assertThat(result.getLong(6)).as("minutes of gas day %s", day).isEqualTo(gasHours * 60);
                assertThat(result.getLong(7)).as("quarter-hours of %s for STROM", day).isEqualTo(calendarHours * 4);
                assertThat(result.getLong(8)).as("daily values of gas day %s", day).isEqualTo(1);
                // a month's value is one interval, starting on its first balancing day
                assertThat(result.getLong(9)).as("P1M on %s", day).isEqualTo(day.getDayOfMonth() == 1 ? 1 : 0);
                calendarDays.merge(result.getLong(2), 1, Integer::sum);
                gasDays.merge(result.getLong(5), 1, Integer::sum);
                calendarQuarterHours.put(day, result.getLong(2));
                gasQuarterHours.put(day, result.getLong(5));
                days++;
            }
        }
        int years = LAST_YEAR - FIRST_YEAR + 1;
        assertThat(days).isEqualTo(ChronoUnit.DAYS.between(LocalDate.of(FIRST_YEAR, 1, 1), LocalDate.of(LAST_YEAR + 1, 1, 1)));
        // one short and one long day a year, for electricity the Sundays, for gas the Saturdays before them
        assertThat(calendarDays).containsEntry(92L, years).containsEntry(100L, years).containsEntry(96L, days - 2 * years);
        assertThat(gasDays).containsEntry(92L, years).containsEntry(100L, years).containsEntry(96L, days - 2 * years);
        for (int year = FIRST_YEAR; year <= LAST_YEAR; year++) {
            LocalDate spring = lastSunday(year, 3);
            LocalDate autumn = lastSunday(year, 10);
            assertThat(spring.minusDays(1).getDayOfWeek()).isEqualTo(DayOfWeek.SATURDAY);
            assertThat(calendarQuarterHours.get(spring)).isEqualTo(92);
            assertThat(gasQuarterHours.get(spring.minusDays(1))).isEqualTo(92);
            assertThat(gasQuarterHours.get(spring)).isEqualTo(96);
            assertThat(calendarQuarterHours.get(autumn)).isEqualTo(100);
            assertThat(gasQuarterHours.get(autumn.minusDays(1))).isEqualTo(100);
            assertThat(calendarQuarterHours.get(autumn.minusDays(1))).isEqualTo(96);
        }
    }

    @Test
    void testMaloAndMeloIds()
            throws SQLException
    {
        List<String> valid = new ArrayList<>(List.of("41373559241"));
        IntStream.range(0, 200).mapToObj(ReadingsGenerator::maloId).forEach(valid::add);
        for (String maloId : valid) {
            assertThat(maloId.charAt(10) - '0').as("test's check digit of %s", maloId).isEqualTo(maloCheckDigit(maloId));
        }
        List<String> invalid = new ArrayList<>();
        for (String maloId : valid) {
            invalid.add(maloId.substring(0, 10) + (char) ('0' + (maloCheckDigit(maloId) + 1) % 10));
        }
        invalid.addAll(List.of("01373559241", "4137355924", "413735592411", "4137355924X", " 41373559241", ""));

        assertThat(booleans("malo_is_valid", valid)).containsOnly(true).hasSize(valid.size());
        assertThat(booleans("malo_is_valid", invalid)).containsOnly(false).hasSize(invalid.size());

        String melo = "DE0005620000000000000000000000001";
        assertThat(booleans("melo_is_valid", List.of(melo, "DE000562E000000000000009000000000"))).containsExactly(true, true);
        assertThat(booleans("melo_is_valid", List.of(melo.toLowerCase(Locale.ROOT), melo.substring(1), melo + "0", "D10005620000000000000000000000001", "DE00056A0000000000000000000000001")))
                .containsOnly(false);
    }

    @Test
    void testObisCodes()
            throws SQLException
    {
        // code: normalised, direction, import, export, reactive, lastgang, zaehlerstand, vorschub, maximum, fehlerregister, total, tariff
        record Expected(String code, String normalised, String direction, boolean reactive, int measurementType, int tariff) {}
        List<Expected> codes = List.of(
                new Expected("1-0:1.8.0*255", "1-0:1.8.0", "IMPORT", false, 8, 0),
                new Expected(" 1-0:01.8.1 ", "1-0:1.8.1", "IMPORT", false, 8, 1),
                new Expected("1-1:1.29.0", "1-1:1.29.0", "IMPORT", false, 29, 0),
                new Expected("1-0:1.6.0", "1-0:1.6.0", "IMPORT", false, 6, 0),
                new Expected("1-0:1.9.0", "1-0:1.9.0", "IMPORT", false, 9, 0),
                new Expected("1-0:2.29.0", "1-0:2.29.0", "EXPORT", false, 29, 0),
                new Expected("1-0:2.8.2*1", "1-0:2.8.2*1", "EXPORT", false, 8, 2),
                new Expected("1-0:3.9.0", "1-0:3.9.0", null, true, 9, 0),
                new Expected("1-0:8.8.0", "1-0:8.8.0", null, true, 8, 0),
                new Expected("1-0:1.8.63", "1-0:1.8.63", "IMPORT", false, 8, 63),
                new Expected("1-0:1.8.62", "1-0:1.8.62", "IMPORT", false, 8, 62),
                new Expected("7-0:3.0.0", "7-0:3.0.0", null, false, 0, 0),
                new Expected("7-20:3.1.0", "7-20:3.1.0", null, false, 1, 0),
                new Expected("6-0:1.0.0", "6-0:1.0.0", null, false, 0, 0));
        String values = codes.stream().map(code -> "('" + code.code() + "')").collect(Collectors.joining(", "));
        String sql = """
                SELECT code, obis_normalise(code), obis_direction(code), obis_is_import(code), obis_is_export(code), obis_is_reactive(code),
                       obis_is_lastgang(code), obis_is_zaehlerstand(code), obis_is_vorschub(code), obis_is_maximum(code),
                       obis_is_fehlerregister(code), obis_is_total_register(code), obis_tariff_register(code)
                FROM (VALUES %s) c(code)
                """.formatted(values);
        int rows = 0;
        try (Connection connection = connect(); Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            while (result.next()) {
                String spelled = result.getString(1);
                Expected expected = codes.stream().filter(code -> code.code().equals(spelled)).findFirst().orElseThrow();
                String code = expected.code();
                assertThat(result.getString(2)).as("obis_normalise(%s)", code).isEqualTo(expected.normalised());
                assertThat(result.getString(3)).as("obis_direction(%s)", code).isEqualTo(expected.direction());
                assertThat(result.getBoolean(4)).as("obis_is_import(%s)", code).isEqualTo("IMPORT".equals(expected.direction()));
                assertThat(result.getBoolean(5)).as("obis_is_export(%s)", code).isEqualTo("EXPORT".equals(expected.direction()));
                assertThat(result.getBoolean(6)).as("obis_is_reactive(%s)", code).isEqualTo(expected.reactive());
                assertThat(result.getBoolean(7)).as("obis_is_lastgang(%s)", code).isEqualTo(expected.measurementType() == 29);
                assertThat(result.getBoolean(8)).as("obis_is_zaehlerstand(%s)", code).isEqualTo(expected.measurementType() == 8);
                assertThat(result.getBoolean(9)).as("obis_is_vorschub(%s)", code).isEqualTo(expected.measurementType() == 9);
                assertThat(result.getBoolean(10)).as("obis_is_maximum(%s)", code).isEqualTo(expected.measurementType() == 6);
                assertThat(result.getBoolean(11)).as("obis_is_fehlerregister(%s)", code).isEqualTo(expected.tariff() == 63);
                assertThat(result.getBoolean(12)).as("obis_is_total_register(%s)", code).isEqualTo(expected.tariff() == 0);
                Integer tariff = expected.tariff() == 0 || expected.tariff() == 63 ? null : expected.tariff();
                assertThat((Integer) result.getObject(13)).as("obis_tariff_register(%s)", code).isEqualTo(tariff);
                rows++;
            }
        }
        assertThat(rows).isEqualTo(codes.size());
    }

    @Test
    void testBadArgumentsNameTheRule()
    {
        assertFails("SELECT obis_normalise('1-0:1.8')", "Invalid OBIS code '1-0:1.8': an OBIS code has the form A-B:C.D.E or A-B:C.D.E*F with each group 0 to 255");
        assertFails("SELECT obis_is_lastgang('1-0:256.29.0')", "Invalid OBIS code '1-0:256.29.0': value group C is 256, an OBIS code has the form A-B:C.D.E or A-B:C.D.E*F with each group 0 to 255");
        assertFails("SELECT meter_balancing_day(TIMESTAMP '2026-07-15 03:00:00 UTC', 'OEL')", "Invalid sparte 'OEL': use one of STROM, GAS, WAERME, WASSER");
        assertFails("SELECT meter_expected_intervals(DATE '2026-07-20', 'fortnightly')", "Resolution 'fortnightly' is not an ISO-8601 duration such as PT15M");
        assertFails("SELECT meter_expected_intervals(DATE '2026-07-20', 'PT7M')", "Resolution 'PT7M' must divide a day");
        assertFails("SELECT meter_version_scope('990000000003', TIMESTAMP '2026-07-15 03:00:00 UTC', 'GAS')",
                "Invalid network operator id '990000000003': it has exactly 13 digits (a BDEW or DVGW market partner id)");
    }

    @Test
    void testQualifiedAndListed()
            throws SQLException
    {
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            // qualified, without SET PATH
            try (ResultSet result = statement.executeQuery("SELECT CAST(meterstore.system.meter_gas_day(TIMESTAMP '2026-03-01 04:45:00 UTC') AS varchar)")) {
                assertThat(result.next()).isTrue();
                assertThat(result.getString(1)).isEqualTo("2026-02-28");
            }
            List<String> functions = new ArrayList<>();
            try (ResultSet result = statement.executeQuery("SHOW FUNCTIONS FROM meterstore.system")) {
                while (result.next()) {
                    functions.add(result.getString(1));
                }
            }
            assertThat(functions).contains(
                    "meter_local_day", "meter_gas_day", "meter_balancing_day", "meter_local_month", "meter_balancing_month",
                    "meter_expected_intervals", "meter_version_scope", "malo_is_valid", "melo_is_valid", "obis_normalise",
                    "obis_direction", "obis_is_import", "obis_is_export", "obis_is_reactive", "obis_is_lastgang",
                    "obis_is_zaehlerstand", "obis_is_vorschub", "obis_is_maximum", "obis_is_fehlerregister",
                    "obis_is_total_register", "obis_tariff_register");
        }
    }

    @Test
    void testInsertDerivesWhatTheFunctionsCompute()
            throws SQLException
    {
        // a gas reading at 05:45 Berlin time on 1 March belongs to February's gas day and settlement month
        Instant gasFrom = Instant.parse("2026-03-01T04:45:00Z");
        Reading gas = TestingInserts.correction(5, gasFrom, 20260301044500L, "1.5");
        gas = new Reading(gas.maloId(), gas.meloId(), "7-0:3.1.0", Sparte.GAS, gas.from(), gas.to(), gas.value(), Sparte.MeasurementUnit.M3, gas.quality(),
                gas.resolution(), gas.sourceKind(), gas.sourceDetail(), gas.provenance(), gas.version(), OPERATOR + ":2026-02", gas.recordedAt(), gas.balancingDay());
        Reading power = TestingInserts.correction(6, gasFrom, 20260301044500L, "2.5");
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            statement.executeUpdate(TestingInserts.insert(gas, power));
            // qualified names work without SET PATH
            try (ResultSet result = statement.executeQuery("""
                    SELECT sparte, CAST(balancing_day AS varchar),
                           count_if(balancing_day <> meterstore.system.meter_balancing_day("from", sparte)),
                           count_if(version_scope <> meterstore.system.meter_version_scope(split_part(version_scope, ':', 1), "from", sparte))
                    FROM readings_versions GROUP BY 1, 2 ORDER BY 1""")) {
                assertThat(result.next()).isTrue();
                assertThat(List.of(result.getString(1), result.getString(2), result.getLong(3), result.getLong(4))).containsExactly("GAS", "2026-02-28", 0L, 0L);
                assertThat(result.next()).isTrue();
                assertThat(List.of(result.getString(1), result.getString(2), result.getLong(3), result.getLong(4))).containsExactly("STROM", "2026-03-01", 0L, 0L);
                assertThat(result.next()).isFalse();
            }
            // a version scope of the delivery month (March) is refused for the gas reading of February
            Reading wrongScope = new Reading(gas.maloId(), gas.meloId(), gas.obisCode(), gas.sparte(), gas.from(), gas.to(), gas.value(), gas.unit(), gas.quality(),
                    gas.resolution(), gas.sourceKind(), gas.sourceDetail(), gas.provenance(), gas.version().add(BigInteger.ONE), OPERATOR + ":2026-03", gas.recordedAt(), gas.balancingDay());
            assertThatThrownBy(() -> statement.executeUpdate(TestingInserts.insert(wrongScope)))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(METERSTORE_INVALID_READING.toErrorCode().getCode()))
                    .hasMessageContaining("whose settlement month is 2026-02");
        }
    }

    private List<Boolean> booleans(String function, List<String> arguments)
            throws SQLException
    {
        String values = arguments.stream().map(argument -> "(" + TestingInserts.literal(argument) + ")").collect(Collectors.joining(", "));
        List<Boolean> answers = new ArrayList<>();
        try (Connection connection = connect(); Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SELECT meterstore.system.%s(a) FROM (VALUES %s) v(a)".formatted(function, values))) {
            while (result.next()) {
                answers.add(result.getBoolean(1));
            }
        }
        return answers;
    }

    private void assertFails(String sql, String message)
    {
        assertThatThrownBy(() -> {
            try (Connection connection = connect(); Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
                result.next();
            }
        })
                .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(METERSTORE_INVALID_ARGUMENT.toErrorCode().getCode()))
                .hasMessageContaining(message);
    }

    /** A connection whose path is {@code meterstore.system}, so statements name the functions unqualified. */
    private Connection connect()
            throws SQLException
    {
        Connection connection = DriverManager.getConnection("jdbc:trino://%s/meterstore/metering".formatted(queryRunner.getCoordinator().getAddress()), "functions", null);
        try (Statement statement = connection.createStatement()) {
            statement.execute("SET PATH meterstore.system");
        }
        return connection;
    }

    // the EU rule (Directive 2000/84/EC): summer time from 01:00 UTC on the last Sunday of March to 01:00 UTC on the last Sunday of October
    private static Instant springForward(int year)
    {
        return lastSunday(year, 3).atTime(1, 0).toInstant(ZoneOffset.UTC);
    }

    private static Instant fallBack(int year)
    {
        return lastSunday(year, 10).atTime(1, 0).toInstant(ZoneOffset.UTC);
    }

    private static LocalDate lastSunday(int year, int month)
    {
        return YearMonth.of(year, month).atEndOfMonth().with(TemporalAdjusters.previousOrSame(DayOfWeek.SUNDAY));
    }

    private static LocalDateTime wallClock(Instant instant)
    {
        int year = instant.atOffset(ZoneOffset.UTC).getYear();
        boolean summer = !instant.isBefore(springForward(year)) && instant.isBefore(fallBack(year));
        return LocalDateTime.ofInstant(instant, ZoneOffset.ofHours(summer ? 2 : 1));
    }

    // the instant whose wall clock reads the given time: clocks change at 02:00 and 03:00, never at midnight or 06:00
    private static Instant atWallClock(LocalDateTime wallClock)
    {
        Instant winter = wallClock.toInstant(ZoneOffset.ofHours(1));
        return Objects.equals(wallClock(winter), wallClock) ? winter : wallClock.toInstant(ZoneOffset.ofHours(2));
    }

    private static Instant startOfCalendarDay(LocalDate day)
    {
        return atWallClock(day.atStartOfDay());
    }

    private static Instant startOfGasDay(LocalDate day)
    {
        return atWallClock(day.atTime(6, 0));
    }

    // BDEW: the digits at odd positions (from 1) once, those at even positions twice; the check digit tops the sum up to a multiple of 10
    private static int maloCheckDigit(String maloId)
    {
        int odd = 0;
        int even = 0;
        for (int position = 1; position <= 10; position++) {
            int digit = Character.digit(maloId.charAt(position - 1), 10);
            if (position % 2 == 1) {
                odd += digit;
            }
            else {
                even += digit;
            }
        }
        int sum = odd + 2 * even;
        return sum % 10 == 0 ? 0 : 10 - sum % 10;
    }
}
