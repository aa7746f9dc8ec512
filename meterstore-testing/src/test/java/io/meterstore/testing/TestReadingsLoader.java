package io.meterstore.testing;

import io.meterstore.core.HotPartition;
import io.meterstore.core.HotTier;
import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.Sparte;
import io.meterstore.core.Sparte.MeasurementUnit;
import io.meterstore.testing.ReadingsOracle.MeterDay;
import io.meterstore.testing.ReadingsOracle.Totals;
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
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

import static io.meterstore.testing.ReadingsOracle.View.RESOLVED;
import static io.meterstore.testing.ReadingsOracle.View.VERSIONS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS;

@TestInstance(PER_CLASS)
final class TestReadingsLoader
{
    private TestingDatabase database;

    @BeforeAll
    void createDatabase()
    {
        database = TestingPostgresServer.shared().createDatabase("test_readings_loader");
    }

    @AfterAll
    void dropDatabase()
    {
        database.close();
    }

    @Test
    void testLoadDaysAcrossDaylightSaving()
            throws SQLException
    {
        HotTier hotTier = hotTier("load_days");
        ReadingsGenerator generator = ReadingsGenerator.builder().seed(1).meters(60).startDay(LocalDate.of(2026, 10, 24)).days(3).correctionsFraction(0.03).build();
        ReadingsOracle oracle = ReadingsOracle.of(generator);
        try (Connection connection = database.connect()) {
            hotTier.createParent(connection);
            long loaded = new ReadingsLoader(hotTier).load(connection, generator);
            assertThat(loaded).isEqualTo(oracle.size());

            // three Berlin days straddle four UTC days, and each partition holds exactly the rows of its UTC day
            List<HotPartition> partitions = hotTier.partitions(connection);
            assertThat(partitions).extracting(HotPartition::name)
                    .containsExactly("readings_2026_10_23_0000", "readings_2026_10_24_0000", "readings_2026_10_25_0000", "readings_2026_10_26_0000");
            SortedMap<String, Long> expected = new TreeMap<>();
            oracle.totalsBy(VERSIONS, ReadingsOracle.all(), reading -> hotTier.naming().partitionName(hotTier.naming().alignDown(reading.from())))
                    .forEach((partition, totals) -> expected.put(partition, totals.count()));
            SortedMap<String, Long> actual = new TreeMap<>();
            for (HotPartition partition : partitions) {
                actual.put(partition.name(), ((Number) scalar(connection, "SELECT count(*) FROM " + hotTier.qualifiedPartition(partition.name()))).longValue());
            }
            assertThat(actual).isEqualTo(expected);
            // 22:00-24:00 UTC of the 23rd is the start of the 24th in Berlin; the 26th ends at 23:00 UTC
            assertThat(actual.get("readings_2026_10_23_0000")).isEqualTo(oracle.count(VERSIONS, ReadingsOracle.fromRange(Instant.parse("2026-10-23T22:00:00Z"), Instant.parse("2026-10-24T00:00:00Z"))));
            assertThat(actual.get("readings_2026_10_26_0000")).isEqualTo(oracle.count(VERSIONS, ReadingsOracle.fromRange(Instant.parse("2026-10-26T00:00:00Z"), Instant.parse("2026-10-26T23:00:00Z"))));

            // per Berlin day and meter, resolved in SQL, as the oracle resolves it in Java
            Map<MeterDay, Totals> resolvedInSql = new TreeMap<>();
            try (Statement statement = connection.createStatement();
                    ResultSet result = statement.executeQuery("""
                            SELECT malo_id, ("from" AT TIME ZONE 'Europe/Berlin')::date AS day, count(*), sum(value)
                            FROM (SELECT DISTINCT ON (malo_id, obis_code, "from", version_scope) *
                                  FROM load_days.readings
                                  ORDER BY malo_id, obis_code, "from", version_scope, version DESC, recorded_at DESC) winners
                            GROUP BY 1, 2""")) {
                while (result.next()) {
                    resolvedInSql.put(new MeterDay(result.getString(1), result.getObject(2, LocalDate.class)), new Totals(result.getLong(3), result.getBigDecimal(4)));
                }
            }
            assertThat(resolvedInSql).hasSize(60 * 3).isEqualTo(oracle.totalsByMeterDay(RESOLVED, ReadingsOracle.all()));
            assertThat(resolvedInSql.get(new MeterDay(ReadingsGenerator.maloId(0), LocalDate.of(2026, 10, 25))).count()).isEqualTo(100);
            assertThat(scalar(connection, "SELECT sum(value) FROM load_days.readings")).isEqualTo(oracle.sum(VERSIONS, ReadingsOracle.all()));
        }
    }

    @Test
    void testEveryColumnRoundTrips()
            throws SQLException
    {
        HotTier hotTier = hotTier("round_trip");
        ReadingsGenerator generator = ReadingsGenerator.builder().seed(2).meters(25).startDay(LocalDate.of(2026, 3, 29)).days(1).correctionsFraction(0.2).build();
        List<Reading> generated = new ArrayList<>(generator.readings(LocalDate.of(2026, 3, 29)));
        try (Connection connection = database.connect()) {
            hotTier.createParent(connection);
            assertThat(new ReadingsLoader(hotTier).loadDay(connection, generator, LocalDate.of(2026, 3, 29))).isEqualTo(generated.size());
            List<Reading> stored = Readings.query(connection, "SELECT %s FROM round_trip.readings".formatted(Readings.selectList()));
            generated.sort(Readings.SORT_ORDER);
            stored.sort(Readings.SORT_ORDER);
            // equal as records: every column, NULLs, microseconds, the JSON with its quotes, backslashes and umlauts
            assertThat(stored).isEqualTo(generated);
            assertThat(stored).anySatisfy(reading -> assertThat(reading.meloId()).isEmpty());
            assertThat(stored).anySatisfy(reading -> assertThat(reading.provenance()).isEmpty());
            assertThat(stored).anySatisfy(reading -> assertThat(reading.sourceDetail()).hasValueSatisfying(detail -> assertThat(detail).contains("Z\u00e4hlerwechsel \\\"Ger\u00e4t 2\\\"")));
            assertThat(stored).anySatisfy(reading -> assertThat(reading.recordedAt().getNano() % 1_000_000_000).isNotZero());
        }
    }

    @Test
    void testAnyReadingsRoundTrip()
            throws SQLException
    {
        HotTier hotTier = hotTier("any_readings");
        Instant from = Instant.parse("2026-08-20T10:00:00Z");
        List<Reading> readings = new ArrayList<>();
        String[] values = {"0", "0.000001", "-0.000001", "1", "-1", "10000", "9999.9999", "0.0001", "0.00001", "123456789012.345678", "-999999999999.999999", "999999999999.999999", "100000000", "42.5"};
        for (int index = 0; index < values.length; index++) {
            Instant start = from.plus(Duration.ofMinutes(15L * index));
            readings.add(reading(start, new BigDecimal(values[index]), BigInteger.valueOf(index).multiply(BigInteger.TEN.pow(index)),
                    Optional.of("tab\there, newline\nthere, backslash \\ and \"quotes\", \u00e4\u00f6\u00fc\u00df \u20ac \ud83d\udd0c"), Optional.empty()));
        }
        // the largest version decimal(20,0) holds
        readings.add(reading(from.plus(Duration.ofDays(1)), BigDecimal.ONE, BigInteger.TEN.pow(20).subtract(BigInteger.ONE), Optional.empty(), Optional.of("{}")));
        try (Connection connection = database.connect()) {
            hotTier.createParent(connection);
            assertThat(new ReadingsLoader(hotTier).load(connection, readings)).isEqualTo(readings.size());
            assertThat(hotTier.partitions(connection)).extracting(HotPartition::name).containsExactly("readings_2026_08_20_0000", "readings_2026_08_21_0000");
            List<Reading> stored = Readings.query(connection, "SELECT %s FROM any_readings.readings ORDER BY \"from\"".formatted(Readings.selectList()));
            assertThat(stored).hasSize(readings.size());
            for (int index = 0; index < readings.size(); index++) {
                Reading expected = readings.get(index);
                Reading actual = stored.get(index);
                assertThat(actual.value()).as("value %s", expected.value()).isEqualByComparingTo(expected.value());
                assertThat(actual.value().scale()).isEqualTo(6);
                assertThat(actual.version()).isEqualTo(expected.version());
                assertThat(actual.sourceDetail()).isEqualTo(expected.sourceDetail());
                assertThat(actual.provenance()).isEqualTo(expected.provenance());
                assertThat(actual.from()).isEqualTo(expected.from());
                assertThat(actual.recordedAt()).isEqualTo(expected.recordedAt());
                assertThat(actual.balancingDay()).isEqualTo(expected.balancingDay());
            }
            // the value as PostgreSQL sees it, not only as it comes back
            assertThat(scalar(connection, "SELECT value::text FROM any_readings.readings WHERE \"from\" = '2026-08-20 12:15:00+00'")).isEqualTo("123456789012.345678");
            assertThat(scalar(connection, "SELECT sum(value) FROM any_readings.readings")).isEqualTo(readings.stream().map(Reading::value).reduce(BigDecimal.ZERO, BigDecimal::add).setScale(6));
        }
    }

    @Test
    void testParallelLoad()
            throws SQLException
    {
        HotTier hotTier = hotTier("parallel_load");
        ReadingsGenerator generator = ReadingsGenerator.builder().seed(4).meters(20).startDay(LocalDate.of(2026, 8, 20)).days(4).build();
        try (Connection connection = database.connect()) {
            hotTier.createParent(connection);
            long loaded = new ReadingsLoader(hotTier).load(database::connect, generator, 2);
            long generated = generator.stream().count();
            assertThat(loaded).isEqualTo(generated);
            assertThat(scalar(connection, "SELECT count(*) FROM parallel_load.readings")).isEqualTo(generated);
            assertThat(hotTier.partitions(connection)).hasSize(5);
        }
    }

    @Test
    void testFailedCopyLoadsNothing()
            throws SQLException
    {
        HotTier hotTier = hotTier("failed_copy");
        ReadingsGenerator generator = ReadingsGenerator.builder().seed(5).meters(5).startDay(LocalDate.of(2026, 8, 20)).days(1).build();
        List<Reading> readings = new ArrayList<>(generator.readings(LocalDate.of(2026, 8, 20)));
        // the same key and version twice breaks the primary key
        readings.add(readings.getFirst());
        try (Connection connection = database.connect()) {
            hotTier.createParent(connection);
            ReadingsLoader loader = new ReadingsLoader(hotTier);
            assertThatThrownBy(() -> loader.load(connection, readings))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("duplicate key value violates unique constraint");
            assertThat(scalar(connection, "SELECT count(*) FROM failed_copy.readings")).isEqualTo(0L);
            // the connection is usable afterwards
            assertThat(loader.load(connection, readings.subList(0, readings.size() - 1))).isEqualTo(readings.size() - 1);
        }
    }

    private static HotTier hotTier(String schema)
    {
        return new HotTier(schema, new PartitionNaming("readings", PartitionNaming.DEFAULT_STEP), Duration.ofSeconds(5));
    }

    private static Reading reading(Instant from, BigDecimal value, BigInteger version, Optional<String> sourceDetail, Optional<String> provenance)
    {
        Instant recordedAt = Instant.parse("2026-08-21T05:00:00.123456Z");
        return new Reading(
                "41373559241",
                Optional.of("DE0005620000000000000000000000042"),
                "1-1:1.29.0",
                Sparte.STROM,
                from,
                from.plus(Duration.ofMinutes(15)),
                value,
                MeasurementUnit.KWH,
                Quality.MEASURED,
                "PT15M",
                "MSCONS",
                sourceDetail,
                provenance,
                version,
                Reading.versionScope(ReadingsGenerator.DEFAULT_OPERATOR_ID, Sparte.STROM, from),
                recordedAt,
                MeteringCalendar.balancingDay(Sparte.STROM, from)).validate();
    }

    private static Object scalar(Connection connection, String sql)
            throws SQLException
    {
        try (Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            assertThat(result.next()).isTrue();
            return result.getObject(1);
        }
    }
}
