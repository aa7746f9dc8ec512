package io.meterstore.trino;

import io.meterstore.core.HotTier;
import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingRules;
import io.meterstore.core.ReadingsSchema;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.ReadingsOracle;
import io.meterstore.testing.ReadingsOracle.MeterDay;
import io.meterstore.testing.ReadingsOracle.Totals;
import io.meterstore.testing.ReadingsOracle.View;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.trino.testing.DistributedQueryRunner;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Predicate;

import static io.meterstore.testing.ReadingsOracle.fromRange;
import static io.meterstore.testing.ReadingsOracle.maloId;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS;

/**
 * A generated workload with corrections, archived in several steps; after each step every query through the Trino
 * JDBC driver equals an independent computation over the same generated rows, on both tables.
 */
@TestInstance(PER_CLASS)
class TestMeterstoreOracle
{
    private static final LocalDate START = LocalDate.of(2026, 3, 10);
    private static final int DAYS = 40;
    // the Trino JDBC driver binds no java.time values: instants go in as text and are cast in the statement
    private static final String TIMESTAMP = "CAST(? AS timestamp(6) with time zone)";
    private static final DateTimeFormatter TIMESTAMP_FORMAT = DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss.SSSSSS 'UTC'");

    private TestingWarehouse warehouse;
    private Table table;
    private ReadingsGenerator generator;
    private ReadingsOracle oracle;
    private DistributedQueryRunner queryRunner;

    @BeforeAll
    void setUp()
            throws Exception
    {
        warehouse = deployment().warehouse(TestingPostgresServer.shared().createDatabase("oracle"));
        table = TestingMeterstoreTables.createTables(warehouse);
        // meters() (120 here) x 40 Berlin days from 2026-03-10: spans the spring DST day (92 quarter-hours), 3 % corrections
        generator = ReadingsGenerator.builder()
                .seed(20260310)
                .meters(meters())
                .startDay(START)
                .days(DAYS)
                .correctionsFraction(0.03)
                .build();
        List<Reading> written = new ArrayList<>();
        generator.iterator().forEachRemaining(written::add);
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, generator);
        }
        queryRunner = deployment().queryRunner(warehouse).build();
        // versions out of order, written while every day is hot: a higher version by INSERT, then a lower one than the
        // original, recorded after both, by plain JDBC straight into the partition (a redelivery, which never wins)
        List<Reading> higher = new ArrayList<>();
        List<Reading> redelivered = new ArrayList<>();
        // meters the re-grid attempts below leave alone, within the cluster variant's 24 too
        for (int meter = 8; meter < 12; meter++) {
            for (int day : new int[] {2, 20, 38}) {
                String maloId = generator.maloIds().get(meter);
                Instant from = MeteringCalendar.startOfLocalDay(START.plusDays(day)).plus(Duration.ofHours(10));
                Reading original = written.stream().filter(reading -> reading.maloId().equals(maloId) && reading.from().equals(from)).min(Comparator.comparing(Reading::version)).orElseThrow();
                higher.add(version(original, original.version().add(BigInteger.valueOf(1_000)), original.value().add(BigDecimal.ONE), original.recordedAt().plus(Duration.ofDays(2))));
                redelivered.add(version(original, original.version().subtract(BigInteger.ONE), original.value().add(BigDecimal.valueOf(7)), original.recordedAt().plus(Duration.ofDays(3))));
            }
        }
        queryRunner.execute(TestingInserts.insertAsRecorded(higher));
        try (Connection connection = warehouse.database().connect()) {
            for (Reading reading : redelivered) {
                insertIntoPartition(connection, reading);
            }
        }
        written.addAll(higher);
        written.addAll(redelivered);
        oracle = ReadingsOracle.of(written);
    }

    private static Reading version(Reading original, BigInteger version, BigDecimal value, Instant recordedAt)
    {
        return new Reading(original.maloId(), original.meloId(), original.obisCode(), original.sparte(), original.from(), original.to(), value, original.unit(),
                Quality.CORRECTED, original.resolution(), "MANUAL_ENTRY", Optional.empty(), Optional.empty(), version, original.versionScope(), recordedAt, original.balancingDay());
    }

    private static void insertIntoPartition(Connection connection, Reading reading)
            throws SQLException
    {
        HotTier hotTier = TestingMeterstoreTables.hotTier();
        String partition = hotTier.qualifiedPartition(hotTier.naming().partitionName(hotTier.naming().alignDown(reading.from())));
        try (PreparedStatement insert = connection.prepareStatement("INSERT INTO %s (%s) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                .formatted(partition, ReadingsSchema.postgresColumnList()))) {
            insert.setString(1, reading.maloId());
            insert.setString(2, reading.meloId().orElse(null));
            insert.setString(3, reading.obisCode());
            insert.setString(4, reading.sparte().name());
            insert.setObject(5, reading.from().atOffset(ZoneOffset.UTC));
            insert.setObject(6, reading.end().atOffset(ZoneOffset.UTC));
            insert.setBigDecimal(7, reading.value());
            insert.setString(8, reading.unit().name());
            insert.setString(9, reading.quality().name());
            insert.setString(10, reading.resolution());
            insert.setString(11, reading.sourceKind());
            insert.setString(12, reading.sourceDetail().orElse(null));
            insert.setString(13, reading.provenance().orElse(null));
            insert.setBigDecimal(14, new BigDecimal(reading.version()));
            insert.setString(15, reading.versionScope());
            insert.setObject(16, reading.recordedAt().atOffset(ZoneOffset.UTC));
            insert.setObject(17, reading.balancingDay());
            assertThat(insert.executeUpdate()).isEqualTo(1);
        }
    }

    protected TestingDeployment deployment()
    {
        return TestingDeployment.SINGLE_NODE;
    }

    protected int meters()
    {
        return 120;
    }

    /** The windows each archival step archives, checked against the oracle after each: first day, then days at a time. */
    protected int[] archivalSteps()
    {
        return new int[] {1, 14, 22};
    }

    protected DistributedQueryRunner queryRunner()
    {
        return queryRunner;
    }

    protected TestingWarehouse warehouse()
    {
        return warehouse;
    }

    @AfterAll
    void tearDown()
    {
        if (queryRunner != null) {
            queryRunner.close();
        }
    }

    @Test
    void testEveryQueryEqualsTheOracleAfterEachArchivalStep()
            throws Exception
    {
        assertThat(oracle.count(View.VERSIONS, ReadingsOracle.all())).isGreaterThan(oracle.count(View.RESOLVED, ReadingsOracle.all()));

        // step 0: everything hot
        assertWatermark(Instant.EPOCH);
        assertQueriesMatchOracle();

        int archivedDays = 0;
        for (int windows : archivalSteps()) {
            archivedDays += windows;
            TestingArchival.archiveWindows(warehouse, windows);
            table.refresh();
            // the first window runs from the epoch to the end of the first day: W is always a day boundary here
            Instant expected = generator.start().plus(Duration.ofDays(archivedDays));
            assertThat(WatermarkReader.current(table).watermark().instant()).isEqualTo(TestingArchival.alignedToUtcDay(expected));
            assertQueriesMatchOracle();
        }
    }

    private void assertQueriesMatchOracle()
            throws SQLException
    {
        table.refresh();
        Instant watermark = WatermarkReader.current(table).watermark().instant();
        // corrections on another grid, below W and at or above it: refused, so the oracle, which never saw them, holds
        attemptRegrid(generator.maloIds().get(23), watermark.minus(Duration.ofHours(30)));
        attemptRegrid(generator.maloIds().get(23), watermark.plus(Duration.ofHours(30)));
        String meter = generator.maloIds().get(17);
        Instant straddleLower = watermark.minus(Duration.ofHours(49));
        Instant straddleUpper = watermark.plus(Duration.ofHours(27));

        for (View view : View.values()) {
            String relation = view == View.VERSIONS ? "readings_versions" : "readings";
            // whole table
            assertSummary(view, relation, "", List.of(), ReadingsOracle.all());
            // one meter
            assertSummary(view, relation, "WHERE malo_id = ?", List.of(meter), maloId(meter));
            // a range straddling W, with the identifier columns
            assertSummary(view, relation, "WHERE obis_code = '1-1:1.29.0' AND \"from\" >= %s AND \"from\" < %s".formatted(TIMESTAMP, TIMESTAMP),
                    List.of(straddleLower, straddleUpper), fromRange(straddleLower, straddleUpper));
            // a range entirely below W and one entirely at or above it
            assertSummary(view, relation, "WHERE \"from\" < " + TIMESTAMP, List.of(watermark), ReadingsOracle.fromBefore(watermark));
            assertSummary(view, relation, "WHERE \"from\" >= " + TIMESTAMP, List.of(watermark), ReadingsOracle.fromAtOrAfter(watermark));
            // a single meter in a range straddling W
            assertSummary(view, relation, "WHERE malo_id = ? AND \"from\" >= %s AND \"from\" <= %s".formatted(TIMESTAMP, TIMESTAMP),
                    List.of(meter, straddleLower, straddleUpper), maloId(meter).and(reading -> !reading.from().isBefore(straddleLower) && !reading.from().isAfter(straddleUpper)));
            // sum and count per meter per Berlin day
            assertThat(totalsByMeterDay(relation)).isEqualTo(oracle.totalsByMeterDay(view, ReadingsOracle.all()));
        }
        // as known at instants before, between and after the out-of-order versions and the corrections
        for (int day : new int[] {5, 21, 39, 46}) {
            Instant knownAt = MeteringCalendar.startOfLocalDay(START.plusDays(day)).plus(Duration.ofHours(13));
            String relation = "readings FOR TIMESTAMP AS OF TIMESTAMP '%s'".formatted(TIMESTAMP_FORMAT.format(knownAt.atOffset(ZoneOffset.UTC)));
            assertThat(totalsByMeterDay(relation)).as(relation).isEqualTo(oracle.asKnownAt(knownAt).totalsByMeterDay(View.RESOLVED, ReadingsOracle.all()));
        }
    }

    private void assertSummary(View view, String relation, String where, List<Object> parameters, Predicate<Reading> filter)
            throws SQLException
    {
        ReadingsOracle.Summary expected = oracle.summary(view, filter);
        String sql = "SELECT count(*), sum(value), min(\"from\"), max(\"from\") FROM " + relation + " " + where;
        try (Connection connection = connect();
                PreparedStatement statement = prepare(connection, sql, parameters);
                ResultSet result = statement.executeQuery()) {
            assertThat(result.next()).isTrue();
            assertThat(result.getLong(1)).as("count of %s %s", relation, where).isEqualTo(expected.count());
            assertThat(decimal(result.getBigDecimal(2))).as("sum of %s %s", relation, where).isEqualTo(decimal(expected.sum()));
            assertThat(instant(result, 3)).as("min from of %s %s", relation, where).isEqualTo(expected.minFrom());
            assertThat(instant(result, 4)).as("max from of %s %s", relation, where).isEqualTo(expected.maxFrom());
        }
    }

    /**
     * INSERTs an hour of {@code maloId} from the whole hour before {@code instant} at a version above every stored one, over
     * the stored quarter-hours (the generator's grid), and asserts that it is refused by rule one_grid_per_reading;
     * nothing when no quarter-hour is stored there (before the generated days).
     */
    private void attemptRegrid(String maloId, Instant instant)
            throws SQLException
    {
        Instant from = instant.truncatedTo(ChronoUnit.HOURS);
        Optional<Reading> stored = oracle.resolved(reading -> reading.maloId().equals(maloId) && reading.from().equals(from)).stream().findFirst();
        if (stored.isEmpty()) {
            return;
        }
        Reading quarter = stored.get();
        Reading hour = new Reading(quarter.maloId(), quarter.meloId(), quarter.obisCode(), quarter.sparte(), quarter.from(), quarter.from().plus(Duration.ofHours(1)),
                quarter.value().multiply(BigDecimal.valueOf(4)), quarter.unit(), quarter.quality(), "PT1H", "MANUAL_ENTRY", Optional.empty(), Optional.empty(),
                quarter.version().add(BigInteger.valueOf(1_000_000)), quarter.versionScope(), quarter.recordedAt(), quarter.balancingDay());
        try (Connection connection = connect();
                Statement statement = connection.createStatement()) {
            assertThatThrownBy(() -> statement.executeUpdate(TestingInserts.insert(hour)))
                    .hasMessageContaining(ReadingRules.ONE_GRID_PER_READING);
        }
    }

    private SortedMap<MeterDay, Totals> totalsByMeterDay(String relation)
            throws SQLException
    {
        String sql = """
                SELECT malo_id, CAST(date("from" AT TIME ZONE 'Europe/Berlin') AS varchar), count(*), sum(value)
                FROM %s
                GROUP BY 1, 2""".formatted(relation);
        SortedMap<MeterDay, Totals> totals = new TreeMap<>();
        try (Connection connection = connect();
                PreparedStatement statement = connection.prepareStatement(sql);
                ResultSet result = statement.executeQuery()) {
            while (result.next()) {
                totals.put(new MeterDay(result.getString(1), LocalDate.parse(result.getString(2))), new Totals(result.getLong(3), decimal(result.getBigDecimal(4))));
            }
        }
        return totals;
    }

    private Connection connect()
            throws SQLException
    {
        return DriverManager.getConnection("jdbc:trino://%s/meterstore/metering".formatted(queryRunner.getCoordinator().getAddress()), "oracle", null);
    }

    private static PreparedStatement prepare(Connection connection, String sql, List<Object> parameters)
            throws SQLException
    {
        PreparedStatement statement = connection.prepareStatement(sql);
        for (int index = 0; index < parameters.size(); index++) {
            Object parameter = parameters.get(index);
            if (parameter instanceof Instant instant) {
                // bound as text and cast in the statement (see TIMESTAMP), exact to the microsecond
                statement.setString(index + 1, TIMESTAMP_FORMAT.format(instant.atOffset(ZoneOffset.UTC)));
            }
            else {
                statement.setObject(index + 1, parameter);
            }
        }
        return statement;
    }

    private static Optional<Instant> instant(ResultSet result, int column)
            throws SQLException
    {
        Timestamp timestamp = result.getTimestamp(column);
        return Optional.ofNullable(timestamp).map(Timestamp::toInstant);
    }

    private static BigDecimal decimal(BigDecimal value)
    {
        return value == null ? new BigDecimal("0.000000") : value.setScale(6);
    }

    private void assertWatermark(Instant expected)
    {
        table.refresh();
        assertThat(WatermarkReader.current(table).watermark()).isEqualTo(TieringWatermark.of(expected));
    }
}
