package io.meterstore.trino;

import com.google.common.collect.ImmutableMap;
import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchivalSettings;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.maintenance.CompactionSettings;
import io.meterstore.archiver.maintenance.MaintenanceOutcome;
import io.meterstore.archiver.maintenance.MaintenanceSettings;
import io.meterstore.archiver.maintenance.MonthCompaction;
import io.meterstore.archiver.maintenance.TableMaintenance;
import io.meterstore.core.HotTier;
import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.Sparte;
import io.meterstore.core.Sparte.MeasurementUnit;
import io.meterstore.core.SnapshotRetention;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsInserts;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.meterstore.trino.base.MeterstoreErrorCode;
import io.trino.testing.DistributedQueryRunner;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.InstantSource;
import java.time.LocalDate;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS;

/**
 * A point table (Zählerstandsgang) through the Trino JDBC driver: created WITH (time_model = 'point', reading_id =
 * 'malo_id'), daily register readings ("to" NULL) written, corrected and redelivered, read hot, archived, read cold, as
 * versions and AS OF, counted by meter_completeness (a missing reading listed), corrected below W, consumption per day
 * and month derived as docs/sql.md shows it, erased, its month compacted, and joined with a load profile of the interval table; a row of the other model refused in either table, nothing written.
 */
@TestInstance(PER_CLASS)
final class TestMeterstorePointTable
{
    private static final String TABLE = "zaehlerstaende";
    // register_consumption's registers, in a point table of their own so that the other tests' counts stay theirs
    private static final String CONSUMPTION_TABLE = "zaehlerstaende_verbrauch";
    private static final String GAS_REGISTER = "7-0:3.0.0";
    private static final java.time.ZoneId BERLIN = java.time.ZoneId.of("Europe/Berlin");
    private static final String REGISTER = "1-1:1.8.0";
    // the Berlin days 27 March to 1 April 2026, across the spring DST change (29 March, 23 hours)
    private static final LocalDate FIRST_DAY = LocalDate.of(2026, 3, 27);
    private static final int DAYS = 6;

    private TestingWarehouse warehouse;
    private DistributedQueryRunner queryRunner;
    private TestingClient client;

    @BeforeAll
    void setUp()
            throws Exception
    {
        warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("point_table"));
        TestingMeterstoreTables.createDeclaredTables(warehouse);
        queryRunner = MeterstoreQueryRunner.builder(warehouse)
                .withoutIceberg()
                .withCatalogOverrides(ImmutableMap.of("meterstore.tables", "readings," + TABLE + "," + CONSUMPTION_TABLE, "meterstore.erasure.hmac-key", TestMeterstoreErasure.HMAC_KEY))
                .build();
        client = new TestingClient(queryRunner, warehouse, "point_table");
        client.execute("CREATE TABLE %s (LIKE readings) WITH (time_model = 'point', reading_id = 'malo_id')".formatted(TABLE));
        client.execute("CREATE TABLE %s (LIKE readings) WITH (time_model = 'point', reading_id = 'malo_id')".formatted(CONSUMPTION_TABLE));
    }

    @AfterAll
    void tearDown()
    {
        if (queryRunner != null) {
            queryRunner.close();
        }
    }

    @Test
    void testRegisterReadingsThroughBothTiers()
            throws Exception
    {
        // both tiers store a "to" that may be NULL, and PostgreSQL requires it to be
        assertThat(warehouse.catalog().loadTable(TableIdentifier.of(SCHEMA, TABLE)).schema().findField("to").isOptional()).isTrue();
        assertThat(client.postgres("SELECT attnotnull FROM pg_attribute WHERE attrelid = 'metering.zaehlerstaende'::regclass AND attname = 'to'")).isEqualTo(false);
        assertThat(client.postgres("SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'metering.zaehlerstaende'::regclass AND conname = 'point_reading_has_no_to'"))
                .isEqualTo("CHECK ((\"to\" IS NULL))");

        List<Reading> delivered = new ArrayList<>();
        for (int meter = 1; meter <= 2; meter++) {
            for (int day = 0; day < DAYS; day++) {
                delivered.add(register(meter, FIRST_DAY.plusDays(day), new BigDecimal(1000 * meter + 10 * day * day + day), 1));
            }
        }
        // meter 3 misses its reading of 29 March
        List<Reading> gappy = new ArrayList<>();
        for (int day : List.of(0, 1, 3, 4)) {
            gappy.add(register(3, FIRST_DAY.plusDays(day), new BigDecimal(3000 + 7 * day), 1));
        }
        insert(delivered);
        insert(gappy);
        Instant beforeCorrection = Instant.now();
        // a correction of meter 1's reading of 29 March, and meter 2's day delivered again unchanged
        Reading correction = register(1, FIRST_DAY.plusDays(2), new BigDecimal("1050.500000"), 2);
        insert(List.of(correction));
        insert(delivered.subList(DAYS, 2 * DAYS));
        List<Reading> versions = new ArrayList<>(delivered);
        versions.addAll(gappy);
        versions.add(correction);
        BigDecimal beforeCorrectionTotal = delivered.stream().map(Reading::value).reduce(BigDecimal.ZERO, BigDecimal::add)
                .add(gappy.stream().map(Reading::value).reduce(BigDecimal.ZERO, BigDecimal::add));

        assertThat(client.value("SELECT count(*) FROM zaehlerstaende_versions")).isEqualTo(17L);
        assertWinners(versions, "hot");
        // the planner is told that "to" is NULL in every row of a point table (it was unknown before the table handle knew the time model)
        assertThat(toNullsFraction("zaehlerstaende_versions")).isEqualTo(1.0);
        assertThat(sum("SELECT sum(value) FROM zaehlerstaende FOR TIMESTAMP AS OF TIMESTAMP '%s UTC'".formatted(timestamp(beforeCorrection))))
                .isEqualByComparingTo(beforeCorrectionTotal);

        // the first three UTC days archived: W at 29 March 00:00 UTC, the readings of 27, 28 and 29 March cold
        archiveWindows(3);
        assertThat(client.value("SELECT count(*) FROM zaehlerstaende_versions WHERE \"$tier\" = 'cold' AND \"to\" IS NULL")).isEqualTo(9L);
        assertThat(client.value("SELECT count(*) FROM zaehlerstaende_versions")).isEqualTo(17L);
        assertWinners(versions, "cold");
        assertThat(sum("SELECT sum(value) FROM zaehlerstaende FOR TIMESTAMP AS OF TIMESTAMP '%s UTC'".formatted(timestamp(beforeCorrection))))
                .isEqualByComparingTo(beforeCorrectionTotal);

        // completeness over both tiers: one reading a Berlin day at P1D, meter 3's of 29 March (the 23-hour day) missing
        Map<String, List<Object>> completeness = new HashMap<>();
        try (Connection connection = client.connect(); Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery("""
                SELECT malo_id, resolution, expected, actual, missing, CAST(first_gap AS varchar) FROM TABLE(meterstore.system.meter_completeness(
                    table_name => 'zaehlerstaende',
                    range_start => TIMESTAMP '2026-03-27 00:00:00 Europe/Berlin',
                    range_end => TIMESTAMP '2026-04-01 00:00:00 Europe/Berlin'))""")) {
            while (result.next()) {
                completeness.put(result.getString(1), java.util.Arrays.asList(result.getString(2), result.getLong(3), result.getLong(4), result.getLong(5), result.getString(6)));
            }
        }
        assertThat(completeness).containsOnly(
                Map.entry(ReadingsGenerator.maloId(1), java.util.Arrays.asList("P1D", 5L, 5L, 0L, null)),
                Map.entry(ReadingsGenerator.maloId(2), java.util.Arrays.asList("P1D", 5L, 5L, 0L, null)),
                Map.entry(ReadingsGenerator.maloId(3), java.util.Arrays.asList("P1D", 5L, 4L, 1L, "2026-03-29")));

        // a late correction below W, and a redelivery of a cold reading
        Reading late = register(2, FIRST_DAY.plusDays(1), new BigDecimal("2011.250000"), 3);
        insert(List.of(late, delivered.get(DAYS)));
        versions.add(late);
        assertThat(client.value("SELECT count(*) FROM zaehlerstaende_versions")).isEqualTo(18L);
        assertThat(client.value("SELECT \"$tier\" FROM zaehlerstaende WHERE malo_id = '%s' AND \"from\" = TIMESTAMP '%s UTC'".formatted(late.maloId(), timestamp(late.from())))).isEqualTo("cold");
        assertWinners(versions, "cold");

        // consumption per Berlin day and per month as docs/sql.md derives it, across both tiers and the 23-hour 29 March
        assertConsumption(versions);

        // erasure of meter 1: every version, in both tiers
        client.execute("DELETE FROM zaehlerstaende_versions WHERE malo_id = '%s'".formatted(ReadingsGenerator.maloId(1)));
        versions.removeIf(reading -> reading.maloId().equals(ReadingsGenerator.maloId(1)));
        assertThat(client.value("SELECT count(*) FROM zaehlerstaende_versions")).isEqualTo(11L);
        assertWinners(versions, "cold");

        // the rest of March archived, then the month compacted: the same versions and winners, from files whose "to" is NULL
        archiveWindows(3);
        TableMaintenance maintenance = new TableMaintenance(warehouse.catalog(), TableIdentifier.of(SCHEMA, TABLE), hotTier(), () -> warehouse.database().connect(),
                new MaintenanceSettings(SnapshotRetention.DEFAULT, java.time.Duration.ofDays(3), java.time.Duration.ofHours(1), CompactionSettings.DEFAULTS),
                InstantSource.fixed(Instant.parse("2026-06-01T00:00:00Z")));
        MaintenanceOutcome outcome = maintenance.compact();
        assertThat(outcome.compaction().orElseThrow().compacted()).extracting(MonthCompaction.Compacted::month).containsExactly(YearMonth.of(2026, 3));
        assertThat(client.value("SELECT count(*) FROM zaehlerstaende_versions WHERE \"to\" IS NULL")).isEqualTo(11L);
        assertWinners(versions, "cold");

        assertRegisterAgainstLoadProfile();
    }

    /**
     * Meter 4's register, written below W (cold), joined with its hourly load profile in the interval table (hot): each
     * Berlin day's register difference equals the sum of the day's intervals, 23 of them on 29 March.
     */
    private void assertRegisterAgainstLoadProfile()
            throws SQLException
    {
        String maloId = ReadingsGenerator.maloId(4);
        List<Reading> profile = new ArrayList<>();
        List<Reading> registers = new ArrayList<>();
        Map<LocalDate, BigDecimal> expected = new HashMap<>();
        BigDecimal register = new BigDecimal("4000.000000");
        for (int day = 0; day <= DAYS - 1; day++) {
            LocalDate balancingDay = FIRST_DAY.plusDays(day);
            registers.add(register(4, balancingDay, register, 1));
            if (day == DAYS - 1) {
                break;
            }
            BigDecimal dayTotal = BigDecimal.ZERO;
            Instant end = MeteringCalendar.startOfBalancingDay(Sparte.STROM, balancingDay.plusDays(1));
            int hour = 0;
            for (Instant from = MeteringCalendar.startOfBalancingDay(Sparte.STROM, balancingDay); from.isBefore(end); from = from.plusSeconds(3600)) {
                BigDecimal kwh = new BigDecimal("0.250000").multiply(BigDecimal.valueOf(++hour + day));
                profile.add(new Reading(maloId, Optional.empty(), ReadingsGenerator.OBIS_CODE, Sparte.STROM, from, from.plusSeconds(3600), kwh, MeasurementUnit.KWH,
                        Quality.MEASURED, "PT1H", "MSCONS", Optional.empty(), Optional.empty(), BigInteger.ONE,
                        Reading.versionScope(ReadingsGenerator.DEFAULT_OPERATOR_ID, Sparte.STROM, from), Instant.EPOCH, balancingDay));
                dayTotal = dayTotal.add(kwh);
            }
            expected.put(balancingDay, dayTotal);
            register = register.add(dayTotal);
        }
        insert(registers);
        client.execute(ReadingsInserts.insert(profile));

        Map<LocalDate, List<Object>> actual = new HashMap<>();
        try (Connection connection = client.connect(); Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery("""
                WITH register AS (
                    SELECT malo_id, balancing_day, "$tier" AS tier, lead(value) OVER (PARTITION BY malo_id, obis_code ORDER BY "from") - value AS kwh
                    FROM zaehlerstaende WHERE malo_id = '%1$s'),
                profile AS (
                    SELECT malo_id, balancing_day, sum(value) AS kwh, count(*) AS intervals, max("$tier") AS tier
                    FROM readings WHERE malo_id = '%1$s' GROUP BY 1, 2)
                SELECT CAST(r.balancing_day AS varchar), r.kwh, p.kwh, p.intervals, r.tier, p.tier
                FROM register r JOIN profile p ON p.malo_id = r.malo_id AND p.balancing_day = r.balancing_day""".formatted(maloId))) {
            while (result.next()) {
                actual.put(LocalDate.parse(result.getString(1)), List.of(result.getBigDecimal(2), result.getBigDecimal(3), result.getLong(4), result.getString(5), result.getString(6)));
            }
        }
        assertThat(actual.keySet()).isEqualTo(expected.keySet());
        expected.forEach((day, kwh) -> {
            assertThat((BigDecimal) actual.get(day).get(0)).as("register %s", day).isEqualByComparingTo(kwh);
            assertThat((BigDecimal) actual.get(day).get(1)).as("profile %s", day).isEqualByComparingTo(kwh);
            assertThat(actual.get(day).subList(3, 5)).isEqualTo(List.of("cold", "hot"));
        });
        assertThat(actual.get(LocalDate.of(2026, 3, 29)).get(2)).isEqualTo(23L);
        assertThat(actual.get(LocalDate.of(2026, 3, 30)).get(2)).isEqualTo(24L);
    }

    private static HotTier hotTier()
    {
        return hotTier(TABLE);
    }

    private static HotTier hotTier(String table)
    {
        return new HotTier(SCHEMA, new PartitionNaming(table, PartitionNaming.DEFAULT_STEP), java.time.Duration.ofSeconds(5));
    }

    /**
     * register_consumption against differences computed here from the written readings, per balancing day and month:
     * meter 5 read daily at Berlin midnight (the 23-hour 29 March and 25-hour 25 October, a missing 31 March, a month
     * without the next month's first reading), meter 6 read every quarter-hour across 29 March, meter 7 a gas register read
     * daily at 06:00 across the gas day of 28 March (23 hours). The readings of March up to 28 March 00:00 UTC are
     * archived first, so periods straddle the watermark. Each register consumes a constant rate per hour, so a day's
     * consumption is also its length in hours times the rate.
     */
    @Test
    void testRegisterConsumption()
            throws Exception
    {
        List<Reading> readings = new ArrayList<>();
        List<LocalDate> meter5Days = new ArrayList<>(List.of(LocalDate.of(2026, 3, 1), LocalDate.of(2026, 10, 1), LocalDate.of(2026, 11, 1)));
        for (LocalDate day = LocalDate.of(2026, 3, 27); day.isBefore(LocalDate.of(2026, 4, 2)); day = day.plusDays(1)) {
            if (!day.equals(LocalDate.of(2026, 3, 31))) {
                meter5Days.add(day);
            }
        }
        meter5Days.addAll(List.of(LocalDate.of(2026, 10, 25), LocalDate.of(2026, 10, 26)));
        for (LocalDate day : meter5Days) {
            readings.add(consumed(5, REGISTER, Sparte.STROM, day.atStartOfDay(BERLIN).toInstant(), "P1D", new BigDecimal("0.5")));
        }
        Instant quarterHoursEnd = LocalDate.of(2026, 3, 30).atStartOfDay(BERLIN).toInstant();
        for (Instant from = LocalDate.of(2026, 3, 29).atStartOfDay(BERLIN).toInstant(); !from.isAfter(quarterHoursEnd); from = from.plusSeconds(900)) {
            readings.add(consumed(6, REGISTER, Sparte.STROM, from, "PT15M", new BigDecimal("0.25")));
        }
        for (LocalDate day : List.of(LocalDate.of(2026, 3, 1), LocalDate.of(2026, 3, 27), LocalDate.of(2026, 3, 28), LocalDate.of(2026, 3, 29), LocalDate.of(2026, 3, 30), LocalDate.of(2026, 3, 31), LocalDate.of(2026, 4, 1))) {
            readings.add(consumed(7, GAS_REGISTER, Sparte.GAS, day.atTime(6, 0).atZone(BERLIN).toInstant(), "P1D", new BigDecimal("1.2")));
        }
        client.execute(ReadingsInserts.insert(readings).replaceFirst("INSERT INTO readings_versions", "INSERT INTO " + CONSUMPTION_TABLE + "_versions"));

        // archived up to 28 March 00:00 UTC: some readings cold, the rest hot
        ArchivalCycle cycle = new ArchivalCycle(warehouse.catalog(), TableIdentifier.of(SCHEMA, CONSUMPTION_TABLE), hotTier(CONSUMPTION_TABLE), () -> warehouse.database().connect(),
                ArchivalSettings.DEFAULTS, InstantSource.fixed(TestingArchival.LATER));
        Instant watermark = Instant.EPOCH;
        for (int window = 0; window < 10 && watermark.isBefore(Instant.parse("2026-03-28T00:00:00Z")); window++) {
            ArchiveOutcome outcome = cycle.archiveOnce();
            assertThat(outcome.kind()).as(outcome.describe()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);
            watermark = Instant.ofEpochSecond((long) client.value("SELECT CAST(to_unixtime(\"$watermark\") AS bigint) FROM %s LIMIT 1".formatted(CONSUMPTION_TABLE)));
        }
        assertThat(watermark).isBetween(Instant.parse("2026-03-28T00:00:00Z"), Instant.parse("2026-03-28T05:00:00Z"));
        assertThat(client.value("SELECT count(*) FROM %s WHERE \"$tier\" = 'cold'".formatted(CONSUMPTION_TABLE))).isNotEqualTo(0L);
        assertThat(client.value("SELECT count(*) FROM %s WHERE \"$tier\" = 'hot'".formatted(CONSUMPTION_TABLE))).isNotEqualTo(0L);

        Map<String, BigDecimal> daily = expectedConsumption(readings, false);
        Map<String, BigDecimal> monthly = expectedConsumption(readings, true);
        String meter5 = ReadingsGenerator.maloId(5) + " " + REGISTER + " ";
        String meter6 = ReadingsGenerator.maloId(6) + " " + REGISTER + " ";
        String meter7 = ReadingsGenerator.maloId(7) + " " + GAS_REGISTER + " ";
        // the oracle's own sense: 23 and 25 hours at 0.5 kWh, the gas day of 28 March 23 hours at 1.2 m³, March 743 hours
        assertThat(daily.get(meter5 + "2026-03-29")).isEqualByComparingTo("11.5");
        assertThat(daily.get(meter5 + "2026-10-25")).isEqualByComparingTo("12.5");
        assertThat(daily.get(meter6 + "2026-03-29")).isEqualByComparingTo("5.75");
        assertThat(daily.get(meter7 + "2026-03-28")).isEqualByComparingTo("27.6");
        assertThat(daily.get(meter7 + "2026-03-29")).isEqualByComparingTo("28.8");
        assertThat(monthly.get(meter5 + "2026-03-01")).isEqualByComparingTo("371.5");
        assertThat(monthly.get(meter5 + "2026-10-01")).isEqualByComparingTo("372.5");
        // a missing reading gives no row to either side of it, nor a month without its first reading
        assertThat(daily).doesNotContainKeys(meter5 + "2026-03-30", meter5 + "2026-03-31", meter5 + "2026-03-01", meter7 + "2026-03-01");
        assertThat(monthly).doesNotContainKeys(meter5 + "2026-04-01", meter6 + "2026-03-01");
        // the gas day of 27 March starts below W (05:00 UTC on the 27th) and ends above it (05:00 UTC on the 28th), as does
        // meter 5's 27 March (from 23:00 UTC on the 26th to 23:00 UTC on the 27th)
        assertThat(daily).containsKey(meter7 + "2026-03-27").containsKey(meter5 + "2026-03-27");

        String call = """
                SELECT malo_id, obis_code, CAST(period_start AS varchar), consumption FROM TABLE(meterstore.system.register_consumption(
                    input => TABLE(SELECT malo_id, obis_code, sparte, "from", value FROM %s) PARTITION BY (malo_id, obis_code) ORDER BY "from",
                    period => '%s'))""";
        assertThat(consumption(call.formatted(CONSUMPTION_TABLE, "day"))).isEqualTo(daily);
        assertThat(consumption(call.formatted(CONSUMPTION_TABLE, "month"))).isEqualTo(monthly);
        // the whole table as the input, sparte among the partition columns: the same answer
        assertThat(consumption("""
                SELECT malo_id, obis_code, CAST(period_start AS varchar), consumption FROM TABLE(meterstore.system.register_consumption(
                    input => TABLE(%s) PARTITION BY (malo_id, sparte, obis_code) ORDER BY "from", period => 'MONTH'))""".formatted(CONSUMPTION_TABLE))).isEqualTo(monthly);

        try (Connection connection = client.connect(); Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SHOW FUNCTIONS FROM meterstore.system LIKE 'register_consumption'")) {
            assertThat(result.next()).isTrue();
            assertThat(result.getString("Function Type")).isEqualTo("table");
        }

        String input = "TABLE(SELECT malo_id, obis_code, sparte, \"from\", value FROM %s) PARTITION BY (malo_id, obis_code) ORDER BY \"from\"".formatted(CONSUMPTION_TABLE);
        assertConsumptionRefused(MeterstoreErrorCode.METERSTORE_INVALID_ARGUMENT, input, "'week'",
                "Period 'week' is not one register_consumption derives: write period => 'day' (the balancing day: the Berlin day, the gas day from 06:00 for GAS) or period => 'month'");
        assertConsumptionRefused(MeterstoreErrorCode.METERSTORE_INVALID_ARGUMENT, "TABLE(SELECT malo_id, obis_code, \"from\", value FROM %s) PARTITION BY (malo_id, obis_code) ORDER BY \"from\"".formatted(CONSUMPTION_TABLE), "'day'",
                "The input has no column sparte: pass the register's readings with the columns that identify the register, \"from\", value and sparte");
        assertConsumptionRefused(MeterstoreErrorCode.METERSTORE_INVALID_ARGUMENT, "TABLE(SELECT malo_id, obis_code, sparte, \"from\", CAST(value AS varchar) AS value FROM %s) PARTITION BY (malo_id, obis_code) ORDER BY \"from\"".formatted(CONSUMPTION_TABLE), "'day'",
                "Column value of the input is varchar: it must be a decimal");
        assertConsumptionRefused(MeterstoreErrorCode.METERSTORE_INVALID_ARGUMENT, "TABLE(SELECT malo_id, obis_code, sparte, CAST(\"from\" AS timestamp(6)) AS \"from\", value FROM %s) PARTITION BY (malo_id, obis_code) ORDER BY \"from\"".formatted(CONSUMPTION_TABLE), "'day'",
                "Column \"from\" of the input is timestamp(6): it must be a timestamp with time zone");
        assertConsumptionRefused(MeterstoreErrorCode.METERSTORE_INVALID_ARGUMENT, "TABLE(%s) ORDER BY \"from\"".formatted(CONSUMPTION_TABLE), "'day'",
                "Partition the input by the columns that identify one register, e.g. input => TABLE(SELECT malo_id, obis_code, sparte, \"from\", value FROM zaehlerstaende) PARTITION BY (malo_id, obis_code) ORDER BY \"from\"");
        assertConsumptionRefused(MeterstoreErrorCode.METERSTORE_INVALID_ARGUMENT, "TABLE(%s) PARTITION BY (malo_id, obis_code)".formatted(CONSUMPTION_TABLE), "'day'",
                "Order the input by \"from\" alone");
        // readings in descending order, a register that runs backwards, and a register given twice
        assertConsumptionRefused(MeterstoreErrorCode.METERSTORE_INVALID_READING, "TABLE(%s) PARTITION BY (malo_id, obis_code) ORDER BY \"from\" DESC".formatted(CONSUMPTION_TABLE), "'day'",
                "order the input by \"from\" ascending (ORDER BY \"from\")");
        assertConsumptionRefused(MeterstoreErrorCode.METERSTORE_INVALID_READING,
                "TABLE(SELECT malo_id, obis_code, sparte, \"from\", IF(\"from\" = TIMESTAMP '2026-03-30 00:00:00 Europe/Berlin', value - 100, value) AS value FROM %s WHERE malo_id = '%s') PARTITION BY (malo_id, obis_code) ORDER BY \"from\""
                        .formatted(CONSUMPTION_TABLE, ReadingsGenerator.maloId(5)), "'day'",
                "Register malo_id '%s', obis_code '1-1:1.8.0' runs backwards: ".formatted(ReadingsGenerator.maloId(5)), "at 2026-03-29T22:00:00Z after ", "A meter exchange or register reset starts a new register");
        assertConsumptionRefused(MeterstoreErrorCode.METERSTORE_INVALID_READING,
                "TABLE(SELECT malo_id, sparte, \"from\", value FROM %1$s UNION ALL SELECT malo_id, sparte, \"from\", value FROM %1$s WHERE malo_id = '%2$s') PARTITION BY malo_id ORDER BY \"from\""
                        .formatted(CONSUMPTION_TABLE, ReadingsGenerator.maloId(7)), "'month'",
                "Register malo_id '%s' has two readings at 2026-03-01T05:00:00Z: read the winners".formatted(ReadingsGenerator.maloId(7)));
    }

    /** The register of {@code meter} at {@code from}: 1000 plus {@code ratePerHour} for each hour since 2026-01-01 UTC. */
    private static Reading consumed(int meter, String obisCode, Sparte sparte, Instant from, String resolution, BigDecimal ratePerHour)
    {
        BigDecimal hours = BigDecimal.valueOf(java.time.Duration.between(Instant.parse("2026-01-01T00:00:00Z"), from).toSeconds()).divide(BigDecimal.valueOf(3600));
        return new Reading(ReadingsGenerator.maloId(meter), Optional.empty(), obisCode, sparte, from, Optional.empty(),
                new BigDecimal(1000).add(ratePerHour.multiply(hours)).setScale(6), sparte == Sparte.GAS ? MeasurementUnit.M3 : MeasurementUnit.KWH,
                Quality.MEASURED, resolution, "MSCONS", Optional.empty(), Optional.empty(), BigInteger.ONE,
                Reading.versionScope(ReadingsGenerator.DEFAULT_OPERATOR_ID, sparte, from), Instant.EPOCH, MeteringCalendar.balancingDay(sparte, from));
    }

    /**
     * The oracle: per register and balancing day (or month), keyed "malo_id obis_code first-day", the reading at the next
     * period's start minus the reading at this one's, where both were written; the periods' starts computed here with
     * java.time (Berlin midnight, 06:00 for gas), not with MeteringCalendar.
     */
    private static Map<String, BigDecimal> expectedConsumption(List<Reading> readings, boolean monthly)
    {
        Map<String, BigDecimal> written = new HashMap<>();
        readings.forEach(reading -> written.put(reading.maloId() + " " + reading.obisCode() + " " + reading.from(), reading.value()));
        Map<String, BigDecimal> expected = new HashMap<>();
        for (Reading reading : readings) {
            java.time.LocalTime start = reading.sparte() == Sparte.GAS ? java.time.LocalTime.of(6, 0) : java.time.LocalTime.MIDNIGHT;
            java.time.LocalDateTime local = reading.from().atZone(BERLIN).toLocalDateTime();
            if (!local.toLocalTime().equals(start) || (monthly && local.getDayOfMonth() != 1)) {
                continue;
            }
            LocalDate next = monthly ? local.toLocalDate().plusMonths(1) : local.toLocalDate().plusDays(1);
            BigDecimal end = written.get(reading.maloId() + " " + reading.obisCode() + " " + next.atTime(start).atZone(BERLIN).toInstant());
            if (end != null) {
                expected.put(reading.maloId() + " " + reading.obisCode() + " " + local.toLocalDate(), end.subtract(reading.value()));
            }
        }
        return expected;
    }

    /** {@code sql}'s rows, keyed as {@link #expectedConsumption} keys them. */
    private Map<String, BigDecimal> consumption(String sql)
            throws SQLException
    {
        Map<String, BigDecimal> actual = new HashMap<>();
        try (Connection connection = client.connect(); Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            while (result.next()) {
                assertThat(actual.put(result.getString(1) + " " + result.getString(2) + " " + result.getString(3), result.getBigDecimal(4))).as("one row a period").isNull();
            }
        }
        return actual;
    }

    private void assertConsumptionRefused(MeterstoreErrorCode code, String input, String period, String... messages)
    {
        String sql = "SELECT * FROM TABLE(meterstore.system.register_consumption(input => %s, period => %s))".formatted(input, period);
        // a refusal of the readings comes while the rows stream: read them all
        assertThatThrownBy(() -> {
            try (Connection connection = client.connect(); Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
                while (result.next()) {
                    assertThat(result.getObject(1)).isNotNull();
                }
            }
        })
                .as(sql)
                .isInstanceOfSatisfying(SQLException.class, e -> {
                    assertThat(e.getErrorCode()).as(e.getMessage()).isEqualTo(code.toErrorCode().getCode());
                    for (String message : messages) {
                        assertThat(e.getMessage()).contains(message);
                    }
                });
    }

    @Test
    void testReadingOfTheOtherModelIsRefused()
            throws Exception
    {
        long points = (long) client.value("SELECT count(*) FROM zaehlerstaende_versions");
        long intervals = (long) client.value("SELECT count(*) FROM readings_versions");
        Reading register = register(3, FIRST_DAY, BigDecimal.TEN, 1);
        Instant from = register.from();
        Reading interval = new Reading(register.maloId(), register.meloId(), ReadingsGenerator.OBIS_CODE, register.sparte(), from, from.plusSeconds(900), BigDecimal.ONE,
                register.unit(), register.quality(), "PT15M", register.sourceKind(), register.sourceDetail(), register.provenance(), register.version(), register.versionScope(),
                register.recordedAt(), register.balancingDay());

        assertRefused(ReadingsInserts.insert(List.of(interval)).replaceFirst("INSERT INTO readings_versions", "INSERT INTO zaehlerstaende_versions"),
                "has a \"to\", but table 'metering.zaehlerstaende_versions' has time_model 'point', whose value is the register at \"from\": write \"to\" NULL");
        assertRefused(ReadingsInserts.insert(List.of(register)),
                "has \"to\" NULL, a register reading, but table 'metering.readings_versions' has time_model 'interval': write the interval's end into \"to\"");
        // a daily register reading is read at the start of the balancing day, not at UTC midnight
        Reading utcMidnight = register(3, FIRST_DAY, BigDecimal.TEN, 1);
        utcMidnight = new Reading(utcMidnight.maloId(), utcMidnight.meloId(), utcMidnight.obisCode(), utcMidnight.sparte(), Instant.parse("2026-03-29T00:00:00Z"), Optional.empty(),
                utcMidnight.value(), utcMidnight.unit(), utcMidnight.quality(), utcMidnight.resolution(), utcMidnight.sourceKind(), utcMidnight.sourceDetail(), utcMidnight.provenance(),
                utcMidnight.version(), "9900000000003:2026-03", utcMidnight.recordedAt(), LocalDate.of(2026, 3, 29));
        assertRefused(ReadingsInserts.insert(List.of(utcMidnight)).replaceFirst("INSERT INTO readings_versions", "INSERT INTO zaehlerstaende_versions"),
                "is not on its P1D cadence: a daily register reading of sparte STROM is read at the start of the balancing day");
        assertThat(client.value("SELECT count(*) FROM zaehlerstaende_versions")).isEqualTo(points);
        assertThat(client.value("SELECT count(*) FROM readings_versions")).isEqualTo(intervals);
    }

    /** The winners read from {@code zaehlerstaende}, per reading, equal the highest version of each key among {@code versions}. */
    private void assertWinners(List<Reading> versions, String tierOfFirstDay)
            throws SQLException
    {
        Map<String, BigDecimal> expected = new HashMap<>();
        Map<String, BigInteger> winning = new HashMap<>();
        for (Reading reading : versions) {
            String key = reading.maloId() + " " + reading.from().getEpochSecond();
            if (winning.getOrDefault(key, BigInteger.valueOf(-1)).compareTo(reading.version()) < 0) {
                winning.put(key, reading.version());
                expected.put(key, reading.value());
            }
        }
        Map<String, BigDecimal> actual = new HashMap<>();
        try (Connection connection = client.connect(); Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SELECT malo_id, CAST(to_unixtime(\"from\") AS bigint), \"to\", value, \"$tier\" FROM zaehlerstaende ORDER BY 2")) {
            boolean first = true;
            while (result.next()) {
                assertThat(result.getObject(3)).isNull();
                if (first) {
                    assertThat(result.getString(5)).isEqualTo(tierOfFirstDay);
                    first = false;
                }
                actual.put(result.getString(1) + " " + result.getLong(2), result.getBigDecimal(4));
            }
        }
        assertThat(actual).hasSameSizeAs(expected);
        expected.forEach((key, value) -> assertThat(actual.get(key)).as(key).isEqualByComparingTo(value));
    }

    /**
     * The daily and monthly consumption statements of docs/sql.md equal the differences between consecutive winners of
     * {@code versions}, per meter: each day's the next day's reading minus its own, each month's the next month's first
     * reading minus its own first.
     */
    private void assertConsumption(List<Reading> versions)
            throws SQLException
    {
        Map<String, Reading> winners = new HashMap<>();
        for (Reading reading : versions) {
            winners.merge(reading.maloId() + " " + reading.from(), reading, (left, right) -> left.version().compareTo(right.version()) >= 0 ? left : right);
        }
        Map<String, BigDecimal> daily = new HashMap<>();
        Map<String, BigDecimal> monthly = new HashMap<>();
        Map<String, List<Reading>> byMeter = new HashMap<>();
        winners.values().forEach(reading -> byMeter.computeIfAbsent(reading.maloId(), _ -> new ArrayList<>()).add(reading));
        byMeter.forEach((maloId, readings) -> {
            readings.sort(java.util.Comparator.comparing(Reading::from));
            for (int index = 0; index + 1 < readings.size(); index++) {
                // a day's energy is known where the next reading is the next day's
                if (readings.get(index + 1).balancingDay().equals(readings.get(index).balancingDay().plusDays(1))) {
                    daily.put(maloId + " " + readings.get(index).balancingDay(), readings.get(index + 1).value().subtract(readings.get(index).value()));
                }
            }
            // March's first reading is 27 March's, April's 1 April's
            Reading march = readings.getFirst();
            readings.stream().filter(reading -> reading.balancingDay().getMonthValue() == 4).findFirst()
                    .ifPresent(april -> monthly.put(maloId + " 2026-03-01", april.value().subtract(march.value())));
        });
        assertThat(daily.keySet()).contains(ReadingsGenerator.maloId(2) + " 2026-03-29");

        Map<String, BigDecimal> actualDaily = new HashMap<>();
        try (Connection connection = client.connect(); Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery("""
                SELECT malo_id, obis_code, balancing_day,
                       IF(lead(balancing_day) OVER w = balancing_day + INTERVAL '1' DAY, lead(value) OVER w - value) AS kwh
                FROM zaehlerstaende
                WINDOW w AS (PARTITION BY malo_id, obis_code ORDER BY "from")
                ORDER BY 1, 2, 3""")) {
            while (result.next()) {
                if (result.getBigDecimal(4) != null) {
                    actualDaily.put(result.getString(1) + " " + result.getObject(3), result.getBigDecimal(4));
                }
            }
        }
        assertThat(actualDaily).hasSameSizeAs(daily);
        daily.forEach((key, kwh) -> assertThat(actualDaily.get(key)).as(key).isEqualByComparingTo(kwh));

        Map<String, BigDecimal> actualMonthly = new HashMap<>();
        try (Connection connection = client.connect(); Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery("""
                SELECT malo_id, obis_code, month,
                       lead(first_reading) OVER (PARTITION BY malo_id, obis_code ORDER BY month) - first_reading AS kwh
                FROM (SELECT malo_id, obis_code, meterstore.system.meter_balancing_month("from", sparte) AS month,
                             min_by(value, "from") AS first_reading
                      FROM zaehlerstaende GROUP BY 1, 2, 3)
                ORDER BY 1, 2, 3""")) {
            while (result.next()) {
                if (result.getBigDecimal(4) != null) {
                    actualMonthly.put(result.getString(1) + " " + result.getObject(3), result.getBigDecimal(4));
                }
            }
        }
        assertThat(actualMonthly).isNotEmpty().hasSameSizeAs(monthly);
        monthly.forEach((key, kwh) -> assertThat(actualMonthly.get(key)).as(key).isEqualByComparingTo(kwh));
    }

    private void archiveWindows(int windows)
            throws Exception
    {
        ArchivalCycle cycle = new ArchivalCycle(
                warehouse.catalog(),
                TableIdentifier.of(SCHEMA, TABLE),
                hotTier(),
                () -> warehouse.database().connect(),
                ArchivalSettings.DEFAULTS,
                InstantSource.fixed(TestingArchival.LATER));
        for (int window = 0; window < windows; window++) {
            ArchiveOutcome outcome = cycle.archiveOnce();
            assertThat(outcome.kind()).as(outcome.describe()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);
        }
    }

    /** The register of meter {@code meter} at the start of Berlin day {@code day}, read daily. */
    private static Reading register(int meter, LocalDate day, BigDecimal value, long version)
    {
        Instant from = MeteringCalendar.startOfBalancingDay(Sparte.STROM, day);
        return new Reading(
                ReadingsGenerator.maloId(meter),
                Optional.empty(),
                REGISTER,
                Sparte.STROM,
                from,
                Optional.empty(),
                value.setScale(6),
                MeasurementUnit.KWH,
                Quality.MEASURED,
                "P1D",
                "MSCONS",
                Optional.empty(),
                Optional.empty(),
                BigInteger.valueOf(version),
                Reading.versionScope(ReadingsGenerator.DEFAULT_OPERATOR_ID, Sparte.STROM, from),
                Instant.EPOCH,
                day);
    }

    private void insert(List<Reading> readings)
            throws SQLException
    {
        client.execute(ReadingsInserts.insert(readings).replaceFirst("INSERT INTO readings_versions", "INSERT INTO zaehlerstaende_versions"));
    }

    private static String timestamp(Instant instant)
    {
        return instant.toString().replace('T', ' ').replace("Z", "");
    }

    private void assertRefused(String sql, String message)
    {
        assertThatThrownBy(() -> client.execute(sql))
                .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).as(e.getMessage())
                        .isEqualTo(MeterstoreErrorCode.METERSTORE_INVALID_READING.toErrorCode().getCode()))
                .hasMessageContaining(message)
                .hasMessageContaining("nothing was written");
    }

    private BigDecimal sum(String sql)
            throws SQLException
    {
        return (BigDecimal) client.value(sql);
    }





    private double toNullsFraction(String table)
            throws SQLException
    {
        try (Connection connection = client.connect(); Statement statement = connection.createStatement(); ResultSet stats = statement.executeQuery("SHOW STATS FOR " + table)) {
            while (stats.next()) {
                if ("to".equals(stats.getString("column_name"))) {
                    return stats.getDouble("nulls_fraction");
                }
            }
        }
        throw new AssertionError("SHOW STATS FOR %s has no row for \"to\"".formatted(table));
    }
}
