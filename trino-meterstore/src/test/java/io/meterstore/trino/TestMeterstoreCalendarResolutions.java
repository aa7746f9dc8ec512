package io.meterstore.trino;

import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingRules;
import io.meterstore.core.Sparte;
import io.meterstore.core.Sparte.MeasurementUnit;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.trino.testing.AbstractTestQueryFramework;
import io.trino.testing.MaterializedRow;
import io.trino.testing.QueryRunner;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.LocalDate;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Optional;

import static io.meterstore.trino.TestingInserts.insert;
import static io.meterstore.trino.TestingInserts.timestamp;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_INVALID_READING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Daily and monthly values on the commodity's calendar: a P1D row is a balancing day (the Berlin day, 23 or 25 hours on
 * the days the clocks change; for gas 06:00 to 06:00), a P1M row a balancing month, each with its "to" as written,
 * in both tiers; a day from UTC midnight is refused naming the calendar and the ends that fit; completeness counts one
 * a day and one a month; and a span below W that reaches above it meets the rules against the other tier.
 */
final class TestMeterstoreCalendarResolutions
        extends AbstractTestQueryFramework
{
    private static final Instant MARCH_28 = Instant.parse("2026-03-28T00:00:00Z");
    private static final String ENERGY = "1-1:1.9.0";
    private static final String GAS_VOLUME = "7-20:3.1.0";

    private TestingWarehouse warehouse;
    private Table table;

    @Override
    protected QueryRunner createQueryRunner()
            throws Exception
    {
        warehouse = TestingDeployment.SINGLE_NODE.warehouse(TestingPostgresServer.shared().createDatabase("calendar_resolutions"));
        table = TestingMeterstoreTables.createTables(warehouse);
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(31)
                .meters(2)
                .startDay(LocalDate.of(2026, 3, 25))
                .days(6)
                .build();
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, generator);
        }
        // the first Berlin day starts on 24 March in UTC: W at the start of 28 March (UTC), so 29 March is hot
        TestingArchival.archiveWindows(warehouse, 4);
        table.refresh();
        assertThat(WatermarkReader.current(table).watermark().instant()).isEqualTo(MARCH_28);
        return TestingDeployment.SINGLE_NODE.queryRunner(warehouse).build();
    }

    @Test
    void testDailyAndMonthlyValuesInBothTiers()
            throws Exception
    {
        // 29 March has 23 hours, 25 October 25; the gas day from 06:00 on 28 March ends at 06:00 CEST; March's month
        // starts below W (a late write into the cold tier), April's above it
        Reading spring = row(60, Sparte.STROM, "P1D", "2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z", "12.5");
        Reading autumn = row(60, Sparte.STROM, "P1D", "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z", "13.25");
        Reading gasDay = row(61, Sparte.GAS, "P1D", "2026-03-28T05:00:00Z", "2026-03-29T04:00:00Z", "40.5");
        Reading march = row(62, Sparte.STROM, "P1M", "2026-02-28T23:00:00Z", "2026-03-31T22:00:00Z", "310");
        Reading april = row(62, Sparte.STROM, "P1M", "2026-03-31T22:00:00Z", "2026-04-30T22:00:00Z", "300");
        assertUpdate(insert(spring, autumn, gasDay, march, april), 5);

        // each row as written, read from the tier of its "from": the Berlin-day row from 23:00 UTC is hot, in the partition of its "from"
        assertRows(60, List.of(spring, autumn), "hot", "hot");
        assertRows(61, List.of(gasDay), "hot");
        assertRows(62, List.of(march, april), "cold", "hot");
        assertThat(computeActual("SELECT balancing_day FROM readings WHERE malo_id = '%s' ORDER BY \"from\"".formatted(ReadingsGenerator.maloId(60))).getOnlyColumnAsSet())
                .containsExactlyInAnyOrder(LocalDate.of(2026, 3, 29), LocalDate.of(2026, 10, 25));
        String partition = TestingMeterstoreTables.hotTier().naming().partitionName(TestingMeterstoreTables.hotTier().naming().alignDown(spring.from()));
        assertThat(partition).endsWith("_2026_03_28_0000");
        try (Connection connection = warehouse.database().connect()) {
            assertThat(TestingInserts.hotRows(connection, spring)).isEqualTo(1);
        }

        // one a balancing day, one a balancing month
        assertThat(completeness(60)).containsExactly(List.of(ENERGY, "P1D", 31L, 1L, 30L));
        assertThat(completeness(61)).containsExactly(List.of(GAS_VOLUME, "P1D", 31L, 1L, 30L));
        assertThat(completeness(62)).containsExactly(List.of(ENERGY, "P1M", 1L, 1L, 0L));
        assertThat(computeActual("""
                SELECT meterstore.system.meter_expected_intervals(DATE '2026-03-29', 'P1D'), meterstore.system.meter_expected_intervals(DATE '2026-10-25', 'P1D', 'GAS'),
                    meterstore.system.meter_expected_intervals(DATE '2026-03-01', 'P1M'), meterstore.system.meter_expected_intervals(DATE '2026-03-02', 'P1M'),
                    meterstore.system.meter_expected_intervals(DATE '2026-03-01', 'P1M', 'GAS')""")
                .getMaterializedRows().getFirst().getFields())
                .containsExactly(1L, 1L, 1L, 0L, 1L);

        // archived: every row cold, its "to" as written
        ArchivalCycle cycle = TestingArchival.cycle(warehouse, InstantSource.fixed(TestingArchival.LATER));
        while (WatermarkReader.current(table).watermark().instant().isBefore(autumn.from())) {
            ArchiveOutcome outcome = cycle.archiveOnce();
            assertThat(outcome.kind()).as(outcome.describe()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);
            table.refresh();
        }
        assertRows(60, List.of(spring, autumn), "cold", "cold");
        assertRows(61, List.of(gasDay), "cold");
        assertRows(62, List.of(march, april), "cold", "cold");
        assertThat(completeness(62)).containsExactly(List.of(ENERGY, "P1M", 1L, 1L, 0L));
    }

    @Test
    void testDayFromUtcMidnightIsRefusedNamingTheCalendar()
            throws SQLException
    {
        long versions = versionsRows();
        assertThat(query(insert(row(63, Sparte.STROM, "P1D", "2026-03-29T00:00:00Z", "2026-03-30T00:00:00Z", "1"))))
                .failure()
                .hasErrorCode(METERSTORE_INVALID_READING)
                .hasMessageContaining("is not a P1D interval of sparte STROM, whose day is the Berlin day, Europe/Berlin midnight to midnight")
                .hasMessageContaining("for balancing day 2026-03-29 write \"from\" 2026-03-28T23:00:00Z and \"to\" 2026-03-29T22:00:00Z");
        assertThat(query(insert(row(63, Sparte.STROM, "P1D", "2026-10-25T00:00:00Z", "2026-10-26T00:00:00Z", "1"))))
                .failure()
                .hasMessageContaining("for balancing day 2026-10-25 write \"from\" 2026-10-24T22:00:00Z and \"to\" 2026-10-25T23:00:00Z");
        // the right Berlin start with 24 hours: "to" is checked, not derived
        assertThat(query(insert(row(63, Sparte.STROM, "P1D", "2026-03-28T23:00:00Z", "2026-03-29T23:00:00Z", "1"))))
                .failure()
                .hasMessageContaining("write \"from\" 2026-03-28T23:00:00Z and \"to\" 2026-03-29T22:00:00Z");
        assertThat(query(insert(row(63, Sparte.GAS, "P1D", "2026-03-29T00:00:00Z", "2026-03-30T00:00:00Z", "1"))))
                .failure()
                .hasMessageContaining("whose day is the gas day, 06:00 to 06:00 Europe/Berlin: for balancing day 2026-03-28 write \"from\" 2026-03-28T05:00:00Z and \"to\" 2026-03-29T04:00:00Z");
        assertThat(query(insert(row(63, Sparte.STROM, "P1M", "2026-03-01T00:00:00Z", "2026-04-01T00:00:00Z", "1"))))
                .failure()
                .hasMessageContaining("is not a P1M interval of sparte STROM, whose month is the Berlin month")
                .hasMessageContaining("write \"from\" 2026-02-28T23:00:00Z and \"to\" 2026-03-31T22:00:00Z");
        // through the Trino JDBC driver, as a client sees it
        String url = "jdbc:trino://%s/meterstore/metering".formatted(getDistributedQueryRunner().getCoordinator().getAddress());
        try (Connection connection = DriverManager.getConnection(url, "settlement", null); Statement statement = connection.createStatement()) {
            assertThatThrownBy(() -> statement.executeUpdate(insert(row(63, Sparte.WAERME, "P1D", "2026-10-25T00:00:00Z", "2026-10-26T00:00:00Z", "1"))))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("the Berlin day")
                    .hasMessageContaining("write \"from\" 2026-10-24T22:00:00Z and \"to\" 2026-10-25T23:00:00Z");
        }
        assertThat(versionsRows()).isEqualTo(versions);
    }

    @Test
    void testSpanBelowWatermarkReachingAboveItMeetsTheOtherTier()
    {
        // the Berlin month holding W starts below it and ends above it, whichever test moved W
        table.refresh();
        Instant watermark = WatermarkReader.current(table).watermark().instant();
        String monthFrom = MeteringCalendar.startOfBalancingMonth(Sparte.STROM, MeteringCalendar.settlementMonth(Sparte.STROM, watermark)).toString();
        String monthTo = MeteringCalendar.startOfBalancingMonth(Sparte.STROM, MeteringCalendar.settlementMonth(Sparte.STROM, watermark).plusMonths(1)).toString();
        String quarterFrom = watermark.plus(Duration.ofHours(1)).toString();
        String quarterTo = watermark.plus(Duration.ofMinutes(75)).toString();

        // a hot quarter-hour, then the month's value below W over it: no trigger sees the pair, INSERT does
        Reading quarter = row(74, Sparte.STROM, "PT15M", quarterFrom, quarterTo, "0.25");
        assertUpdate(insert(quarter), 1);
        long versions = versionsRows();
        assertThat(query(insert(row(74, Sparte.STROM, "P1M", monthFrom, monthTo, "300", 2))))
                .failure()
                .hasErrorCode(METERSTORE_INVALID_READING)
                .hasMessageContaining(ReadingRules.ONE_GRID_PER_READING)
                .hasMessageContaining("the other stored in ")
                .hasMessageContaining("nothing of this statement was written");
        assertThat(versionsRows()).isEqualTo(versions);
        assertRows(74, List.of(quarter), "hot");

        // the reverse: the month's value stored cold, then a hot quarter-hour inside it
        Reading month = row(75, Sparte.STROM, "P1M", monthFrom, monthTo, "300");
        assertUpdate(insert(month), 1);
        versions = versionsRows();
        assertThat(query(insert(row(75, Sparte.STROM, "PT15M", quarterFrom, quarterTo, "0.25", 2))))
                .failure()
                .hasErrorCode(METERSTORE_INVALID_READING)
                .hasMessageContaining(ReadingRules.ONE_GRID_PER_READING)
                .hasMessageContaining("the other stored in Iceberg table")
                .hasMessageContaining("nothing of this statement was written");
        assertThat(versionsRows()).isEqualTo(versions);
        assertRows(75, List.of(month), "cold");
    }

    /** Asserts that meter {@code meter}'s rows in {@code readings} are {@code expected}, each with its "to" and read from {@code tiers}. */
    private void assertRows(int meter, List<Reading> expected, String... tiers)
    {
        List<MaterializedRow> rows = computeActual("SELECT \"from\", \"to\", resolution, value, \"$tier\" FROM readings WHERE malo_id = '%s' ORDER BY \"from\""
                .formatted(ReadingsGenerator.maloId(meter))).getMaterializedRows();
        assertThat(rows).hasSize(expected.size());
        for (int index = 0; index < rows.size(); index++) {
            List<Object> fields = rows.get(index).getFields();
            Reading reading = expected.get(index);
            assertThat(((ZonedDateTime) fields.get(0)).toInstant()).isEqualTo(reading.from());
            assertThat(((ZonedDateTime) fields.get(1)).toInstant()).isEqualTo(reading.end());
            assertThat(fields.get(2)).isEqualTo(reading.resolution());
            assertThat((BigDecimal) fields.get(3)).isEqualByComparingTo(reading.value());
            assertThat(fields.get(4)).as("tier of %s", reading.from()).isEqualTo(tiers[index]);
        }
    }

    /** The March completeness of meter {@code meter}: obis_code, resolution, expected, actual and missing per grid. */
    private List<List<Object>> completeness(int meter)
    {
        return computeActual("""
                SELECT obis_code, resolution, expected, actual, missing FROM TABLE(meterstore.system.meter_completeness(
                    settlement_month => '2026-03', malo_ids => ARRAY['%s'])) ORDER BY resolution""".formatted(ReadingsGenerator.maloId(meter)))
                .getMaterializedRows().stream().map(MaterializedRow::getFields).toList();
    }

    private long versionsRows()
    {
        return (long) computeActual("SELECT count(*) FROM readings_versions").getOnlyValue();
    }

    private static Reading row(int meter, Sparte sparte, String resolution, String from, String to, String value)
    {
        return row(meter, sparte, resolution, from, to, value, 1);
    }

    /** A value of meter {@code meter} on {@code resolution}; recorded_at and balancing_day are left for the INSERT to fill. */
    private static Reading row(int meter, Sparte sparte, String resolution, String from, String to, String value, long version)
    {
        Instant start = Instant.parse(from);
        return new Reading(
                ReadingsGenerator.maloId(meter),
                Optional.empty(),
                sparte == Sparte.GAS ? GAS_VOLUME : ENERGY,
                sparte,
                start,
                Instant.parse(to),
                new BigDecimal(value),
                sparte == Sparte.GAS ? MeasurementUnit.M3 : MeasurementUnit.KWH,
                Quality.MEASURED,
                resolution,
                "MSCONS",
                Optional.empty(),
                Optional.empty(),
                BigInteger.valueOf(20260401000000L + version),
                Reading.versionScope(ReadingsGenerator.DEFAULT_OPERATOR_ID, sparte, start),
                Instant.EPOCH,
                MeteringCalendar.balancingDay(sparte, start));
    }
}
