package io.meterstore.trino;

import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingRules;
import io.meterstore.core.Sparte;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.trino.testing.MaterializedResult;
import io.trino.testing.AbstractTestQueryFramework;
import io.trino.testing.QueryRunner;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.meterstore.trino.TestingInserts.correction;
import static io.meterstore.trino.TestingInserts.insert;
import static io.meterstore.trino.TestingInserts.timestamp;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_INVALID_READING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * No instant is counted twice in {@code readings}, whatever an INSERT sends: a second network operator for a reading,
 * a correction on another grid, and two overlapping spans of one version are refused in both tiers and across W, and
 * nothing of the refused statement is written; {@code readings}, {@code readings_versions} and {@code FOR TIMESTAMP AS OF}
 * answer as before.
 */
final class TestMeterstoreReadingRules
        extends AbstractTestQueryFramework
{
    private static final String OTHER_OPERATOR = "9900000000010";

    private TestingWarehouse warehouse;
    private TieringWatermark watermark;

    @Override
    protected QueryRunner createQueryRunner()
            throws Exception
    {
        warehouse = TestingDeployment.SINGLE_NODE.warehouse(TestingPostgresServer.shared().createDatabase("reading_rules"));
        Table table = TestingMeterstoreTables.createTables(warehouse);
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(30)
                .meters(4)
                .startDay(LocalDate.of(2026, 3, 1))
                .days(5)
                .build();
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, generator);
        }
        TestingArchival.archiveWindows(warehouse, 2);
        table.refresh();
        watermark = WatermarkReader.current(table).watermark();
        return TestingDeployment.SINGLE_NODE.queryRunner(warehouse).build();
    }

    /** Noon of the day {@code days} after the watermark's (negative: before it), plus {@code quarters} quarter-hours. */
    private Instant noon(int days, int quarters)
    {
        return watermark.instant().plus(Duration.ofDays(days)).plus(Duration.ofHours(12)).plus(Duration.ofMinutes(15L * quarters));
    }

    @Test
    void testSecondOperatorIsRefusedInBothTiers()
    {
        for (int days : List.of(1, -1)) {
            Reading stored = storedWinner(0, noon(days, 0));
            Reading otherOperator = withOperator(correction(0, stored.from(), stored.version().longValue() + 5, "0.5"), OTHER_OPERATOR);
            assertRefusedChangingNothing(0, stored.from(), insert(otherOperator), ReadingRules.ONE_OPERATOR_PER_READING,
                    "belongs to network operator " + ReadingsGenerator.DEFAULT_OPERATOR_ID, "under operator " + OTHER_OPERATOR);
            // the same version number, which a conflicting redelivery check alone would have caught, is refused by the rule too
            Reading sameVersion = withOperator(correction(0, stored.from(), stored.version().longValue(), "0.5"), OTHER_OPERATOR);
            assertThat(query(insert(sameVersion))).failure().hasMessageContaining(OTHER_OPERATOR);
        }
    }

    @Test
    void testCorrectionOnAnotherGridIsRefusedInBothTiers()
    {
        for (int days : List.of(1, -1)) {
            Reading stored = storedWinner(1, noon(days, 0));
            Reading hour = hourly(correction(1, stored.from(), stored.version().longValue() + 1, "2.0"));
            assertRefusedChangingNothing(1, stored.from(), insert(hour), ReadingRules.ONE_GRID_PER_READING,
                    "spans [%s, %s) (PT1H)".formatted(TieringWatermark.formatInstant(hour.from()), TieringWatermark.formatInstant(hour.end())),
                    "send version %s on the grid of version".formatted(hour.version()));
        }
        // the same correction on the stored grid is taken, and wins
        Reading stored = storedWinner(1, noon(1, 1));
        assertUpdate(insert(correction(1, stored.from(), stored.version().longValue() + 1, "2.0")), 1);
        assertThat(sum(1, stored.from(), stored.end())).isEqualByComparingTo("2.0");
    }

    @Test
    void testOverlappingSpansOfOneVersionAreRefused()
    {
        for (int days : List.of(2, -1)) {
            Instant from = noon(days, 8);
            long version = TestingInserts.epochMicros(from).longValue() + 77;
            // a meter with nothing stored, so the two new rows meet nothing but each other
            Reading hour = hourly(correction(50, from, version, "2.0"));
            Reading quarter = correction(50, from.plus(Duration.ofMinutes(15)), version, "0.5");
            // a new hour and a quarter-hour inside it, in one statement, at one version
            assertThat(query(insert(hour, quarter)))
                    .failure()
                    .hasErrorCode(METERSTORE_INVALID_READING)
                    .hasMessageContaining(ReadingRules.SPANS_DO_NOT_OVERLAP)
                    .hasMessageContaining("both in this statement")
                    .hasMessageContaining("nothing of this statement was written");
        }
    }

    @Test
    void testOneStatementAcrossTheWatermarkIsRefusedWhole()
    {
        Reading cold = storedWinner(3, noon(-1, 4));
        Reading hot = storedWinner(3, noon(1, 4));
        Reading coldFine = correction(3, cold.from(), cold.version().longValue() + 1, "1.25");
        Reading hotBad = hourly(correction(3, hot.from(), hot.version().longValue() + 1, "3.0"));
        long versions = versionsRows();
        assertThat(query(insert(coldFine, hotBad)))
                .failure()
                .hasErrorCode(METERSTORE_INVALID_READING)
                .hasMessageContaining(ReadingRules.ONE_GRID_PER_READING);
        Reading coldBad = withOperator(correction(3, cold.from(), cold.version().longValue() + 2, "1.5"), OTHER_OPERATOR);
        Reading hotFine = correction(3, hot.from(), hot.version().longValue() + 1, "3.0");
        assertThat(query(insert(hotFine, coldBad)))
                .failure()
                .hasErrorCode(METERSTORE_INVALID_READING)
                .hasMessageContaining(ReadingRules.ONE_OPERATOR_PER_READING);
        assertThat(versionsRows()).isEqualTo(versions);
        assertThat(sum(3, cold.from(), cold.end())).isEqualByComparingTo(cold.value());
        assertThat(sum(3, hot.from(), hot.end())).isEqualByComparingTo(hot.value());
    }

    @Test
    void testRefusalThroughTheTrinoJdbcDriver()
            throws SQLException
    {
        Reading stored = storedWinner(2, noon(1, 20));
        Reading otherOperator = withOperator(correction(2, stored.from(), stored.version().longValue() + 3, "9"), OTHER_OPERATOR);
        String url = "jdbc:trino://%s/meterstore/metering".formatted(getDistributedQueryRunner().getCoordinator().getAddress());
        try (Connection connection = DriverManager.getConnection(url, "settlement", null);
                Statement statement = connection.createStatement()) {
            assertThatThrownBy(() -> statement.executeUpdate(insert(otherOperator)))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining(ReadingRules.ONE_OPERATOR_PER_READING)
                    .hasMessageContaining(OTHER_OPERATOR);
        }
        assertThat(sum(2, stored.from(), stored.end())).isEqualByComparingTo(stored.value());
    }

    @Test
    void testPlainJdbcWritesMeetTheRules()
            throws Exception
    {
        Reading stored = storedWinner(1, noon(2, 40));
        String partition = TestingMeterstoreTables.hotTier().qualifiedPartition(TestingMeterstoreTables.hotTier().naming().partitionName(TestingMeterstoreTables.hotTier().naming().alignDown(stored.from())));
        String parent = TestingMeterstoreTables.hotTier().qualifiedParent();
        long version = stored.version().longValue();
        // the rules between versions, through the parent and into the partition by name: PostgreSQL's trigger refuses them
        for (String table : List.of(parent, partition)) {
            assertRefusedByPostgres(table, withOperator(correction(1, stored.from(), version + 9, "0.5"), OTHER_OPERATOR), "23P01", ReadingRules.ONE_OPERATOR_PER_READING);
            assertRefusedByPostgres(table, hourly(correction(1, stored.from(), version + 9, "2")), "23P01", ReadingRules.ONE_GRID_PER_READING);
            // off the grid, which only the write path checks: a span of the stored version that starts inside the stored one
            assertRefusedByPostgres(table, hourly(correction(1, stored.from().plus(Duration.ofMinutes(1)), version, "2")), "23P01", ReadingRules.SPANS_DO_NOT_OVERLAP);
        }
        // the shapes, by CHECK constraints
        Reading fine = correction(1, stored.from(), version + 9, "0.5");
        assertRefusedByPostgres(parent, fine, "malo_id", "'5100000000X'", "23514", "malo_id_shape");
        assertRefusedByPostgres(parent, fine, "obis_code", "'1-1:1.29.0*255'", "23514", "obis_code_canonical");
        assertRefusedByPostgres(parent, fine, "obis_code", "'01-1:1.29.0'", "23514", "obis_code_canonical");
        assertRefusedByPostgres(parent, fine, "version_scope", "'9900000000003-2026-03'", "23514", "version_scope_canonical");
        assertRefusedByPostgres(parent, fine, "\"to\"", "'%s'::timestamptz".formatted(fine.from()), "23514", "interval_forward");
        assertRefusedByPostgres(partition, fine, "unit", "'GWH'", "23514", "unit_known");
        assertThat(sum(1, stored.from(), stored.end())).isEqualByComparingTo(stored.value());
        // the same row, well formed, is taken
        try (Connection connection = warehouse.database().connect(); Statement statement = connection.createStatement()) {
            assertThat(statement.executeUpdate(plainInsert(parent, fine))).isEqualTo(1);
        }
        assertThat(sum(1, stored.from(), stored.end())).isEqualByComparingTo(fine.value());
    }

    private void assertRefusedByPostgres(String table, Reading reading, String sqlState, String constraint)
            throws SQLException
    {
        assertRefusedByPostgres(table, reading, "value", reading.value().toPlainString(), sqlState, constraint);
    }

    /** Asserts that PostgreSQL refuses {@code reading} with {@code column} set to the SQL {@code expression}, naming {@code constraint}. */
    private void assertRefusedByPostgres(String table, Reading reading, String column, String expression, String sqlState, String constraint)
            throws SQLException
    {
        try (Connection connection = warehouse.database().connect(); Statement statement = connection.createStatement()) {
            assertThatThrownBy(() -> statement.executeUpdate(plainInsert(table, reading, column, expression)))
                    .isInstanceOfSatisfying(SQLException.class, e -> {
                        assertThat(e.getSQLState()).isEqualTo(sqlState);
                        assertThat(e.getMessage()).contains(constraint);
                    });
        }
    }

    /** A plain PostgreSQL INSERT of {@code reading}, recorded now, as a tool that is not MeterStore would write it. */
    private static String plainInsert(String table, Reading reading)
    {
        return plainInsert(table, reading, "value", reading.value().toPlainString());
    }

    /** As {@link #plainInsert(String, Reading)}, with {@code column} set to the SQL {@code expression}. */
    private static String plainInsert(String table, Reading reading, String column, String expression)
    {
        Map<String, String> values = new LinkedHashMap<>();
        values.put("malo_id", "'%s'".formatted(reading.maloId()));
        values.put("melo_id", "NULL");
        values.put("obis_code", "'%s'".formatted(reading.obisCode()));
        values.put("sparte", "'%s'".formatted(reading.sparte()));
        values.put("\"from\"", "'%s'::timestamptz".formatted(reading.from()));
        values.put("\"to\"", "'%s'::timestamptz".formatted(reading.end()));
        values.put("value", reading.value().toPlainString());
        values.put("unit", "'%s'".formatted(reading.unit()));
        values.put("quality", "'%s'".formatted(reading.quality()));
        values.put("resolution", "'%s'".formatted(reading.resolution()));
        values.put("source_kind", "'%s'".formatted(reading.sourceKind()));
        values.put("source_detail", "NULL");
        values.put("provenance", "NULL");
        values.put("version", reading.version().toString());
        values.put("version_scope", "'%s'".formatted(reading.versionScope()));
        values.put("recorded_at", "now()");
        values.put("balancing_day", "DATE '%s'".formatted(reading.balancingDay()));
        assertThat(values).containsKey(column);
        values.put(column, expression);
        return "INSERT INTO %s (%s) VALUES (%s)".formatted(table, String.join(", ", values.keySet()), String.join(", ", values.values()));
    }

    /**
     * Asserts that {@code sql} fails naming {@code rule} and each of {@code fragments}, and that the meter's hour from
     * {@code from} answers as before in readings, readings_versions, FOR TIMESTAMP AS OF now and completeness.
     */
    private void assertRefusedChangingNothing(int meter, Instant from, String sql, String rule, String... fragments)
    {
        Instant hourEnd = from.plus(Duration.ofHours(1));
        BigDecimal sumBefore = sum(meter, from, hourEnd);
        long versionsBefore = versionsRows();
        MaterializedResult asOfBefore = computeActual(asOf(meter, from, hourEnd));
        MaterializedResult completenessBefore = computeActual(completeness(meter, from));
        assertThat(query(sql))
                .failure()
                .hasErrorCode(METERSTORE_INVALID_READING)
                .hasMessageContaining(rule)
                .hasMessageContaining("nothing of this statement was written")
                .satisfies(failure -> List.of(fragments).forEach(fragment -> assertThat(failure).hasMessageContaining(fragment)));
        assertThat(sum(meter, from, hourEnd)).isEqualByComparingTo(sumBefore);
        assertThat(versionsRows()).isEqualTo(versionsBefore);
        assertThat(computeActual(asOf(meter, from, hourEnd)).getMaterializedRows()).isEqualTo(asOfBefore.getMaterializedRows());
        assertThat(computeActual(completeness(meter, from)).getMaterializedRows()).isEqualTo(completenessBefore.getMaterializedRows());
    }

    /** The completeness of meter {@code meter} over the day of {@code from}: expected, actual, missing and surplus per grid. */
    private static String completeness(int meter, Instant from)
    {
        Instant day = from.truncatedTo(ChronoUnit.DAYS);
        return """
                SELECT resolution, expected, actual, missing, surplus FROM TABLE(meterstore.system.meter_completeness(
                    range_start => %s, range_end => %s, malo_ids => ARRAY['%s'])) ORDER BY resolution"""
                .formatted(timestamp(day), timestamp(day.plus(Duration.ofDays(1))), ReadingsGenerator.maloId(meter));
    }

    private String asOf(int meter, Instant from, Instant to)
    {
        return "SELECT \"from\", value, version FROM readings FOR TIMESTAMP AS OF TIMESTAMP '2026-06-01 00:00:00 UTC' WHERE malo_id = '%s' AND \"from\" >= %s AND \"from\" < %s ORDER BY 1"
                .formatted(ReadingsGenerator.maloId(meter), timestamp(from), timestamp(to));
    }

    private BigDecimal sum(int meter, Instant from, Instant to)
    {
        return (BigDecimal) computeActual("SELECT coalesce(sum(value), 0) FROM readings WHERE malo_id = '%s' AND obis_code = '%s' AND \"from\" >= %s AND \"from\" < %s"
                .formatted(ReadingsGenerator.maloId(meter), ReadingsGenerator.OBIS_CODE, timestamp(from), timestamp(to))).getOnlyValue();
    }

    private long versionsRows()
    {
        return (long) computeActual("SELECT count(*) FROM readings_versions").getOnlyValue();
    }

    /** The winner {@code readings} holds for meter {@code meter} at {@code from}. */
    private Reading storedWinner(int meter, Instant from)
    {
        List<Object> row = computeActual("SELECT value, version FROM readings WHERE malo_id = '%s' AND obis_code = '%s' AND \"from\" = %s"
                .formatted(ReadingsGenerator.maloId(meter), ReadingsGenerator.OBIS_CODE, timestamp(from))).getMaterializedRows().getFirst().getFields();
        return correction(meter, from, ((BigDecimal) row.get(1)).longValueExact(), ((BigDecimal) row.get(0)).toPlainString());
    }

    private static Reading withOperator(Reading reading, String operatorId)
    {
        return new Reading(reading.maloId(), reading.meloId(), reading.obisCode(), reading.sparte(), reading.from(), reading.to(), reading.value(), reading.unit(),
                reading.quality(), reading.resolution(), reading.sourceKind(), reading.sourceDetail(), reading.provenance(), reading.version(),
                Reading.versionScope(operatorId, reading.sparte(), reading.from()), reading.recordedAt(), reading.balancingDay());
    }

    private static Reading hourly(Reading reading)
    {
        return new Reading(reading.maloId(), reading.meloId(), reading.obisCode(), reading.sparte(), reading.from(), reading.from().plus(Duration.ofHours(1)), reading.value(),
                reading.unit(), reading.quality(), "PT1H", reading.sourceKind(), reading.sourceDetail(), reading.provenance(), reading.version(), reading.versionScope(),
                reading.recordedAt(), MeteringCalendar.balancingDay(Sparte.STROM, reading.from()));
    }
}
