package io.meterstore.trino;

import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchivalSettings;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.core.HotPartition;
import io.meterstore.core.HotTier;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.Reading;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.trino.testing.AbstractTestQueryFramework;
import io.trino.testing.MaterializedRow;
import io.trino.testing.QueryRunner;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;
import static io.meterstore.trino.TestingInserts.insert;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The archival that could lose rows, through Trino's INSERT: a table created before `create` recorded a step, a day
 * partition created by INSERT (which then fell back to one day), and an archiver running by the hour. The day is
 * archived whole, by its catalogue bounds, and every row stays in exactly one tier.
 */
final class TestMeterstoreInsertPartitions
        extends AbstractTestQueryFramework
{
    private static final Duration HOUR = Duration.ofHours(1);
    private static final Duration DAY = Duration.ofDays(1);
    private static final Duration SETTLEMENT_LAG = Duration.ofDays(7);
    private static final Instant MARCH_2 = Instant.parse("2026-03-02T00:00:00Z");

    private TestingWarehouse warehouse;
    private Table table;

    @Override
    protected QueryRunner createQueryRunner()
            throws Exception
    {
        warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("insert_partitions"));
        try (Connection connection = warehouse.database().connect()) {
            TestingMeterstoreTables.hotTier().createParent(connection);
        }
        // as tables were created before `create` recorded the archival step
        table = IcebergTableSpec.createIfMissing(warehouse.catalog(), TableIdentifier.of(SCHEMA, TestingMeterstoreTables.TABLE));
        return MeterstoreQueryRunner.builder(warehouse).withoutIceberg().build();
    }

    @Test
    void testHourlyArchivalOfADayPartitionCreatedByInsert()
            throws Exception
    {
        HotTier hourly = new HotTier(SCHEMA, new PartitionNaming(TestingMeterstoreTables.TABLE, HOUR), Duration.ofSeconds(5));
        List<Reading> first = utcDay(MARCH_2);
        assertUpdate(insert(first), first.size());
        // no step recorded: INSERT created the day's partition one day wide
        assertThat(partitions(hourly)).containsExactly(new HotPartition("readings_2026_03_02_0000", MARCH_2, MARCH_2.plus(DAY), true));

        AtomicReference<Instant> now = new AtomicReference<>(MARCH_2.plus(DAY).plus(SETTLEMENT_LAG));
        ArchivalCycle archiver = new ArchivalCycle(warehouse.catalog(), TableIdentifier.of(SCHEMA, TestingMeterstoreTables.TABLE), hourly,
                () -> warehouse.database().connect(), ArchivalSettings.DEFAULTS, now::get);
        ArchiveOutcome outcome = archiver.archiveOnce();
        // one window up to the partition's catalogue end: the empty stretch and the whole day, not its first hour
        assertThat(outcome.kind()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);
        assertThat(outcome.window().orElseThrow().end()).isEqualTo(MARCH_2.plus(DAY));
        assertThat(outcome.rows()).isEqualTo(first.size());
        assertTotals(first);

        // the archival recorded the hourly step: INSERT now creates hour partitions, each read and archived whole
        List<Reading> second = utcDay(MARCH_2.plus(DAY));
        assertUpdate(insert(second), second.size());
        assertThat(partitions(hourly)).filteredOn(HotPartition::attached).hasSize(24)
                .allSatisfy(partition -> assertThat(Duration.between(partition.start(), partition.end())).isEqualTo(HOUR));
        assertTotals(concat(first, second));

        // hour by hour, and once past the reader grace every partition is dropped: all rows cold, none lost
        now.set(MARCH_2.plus(Duration.ofDays(2)).plus(SETTLEMENT_LAG));
        for (int hour = 0; hour < 24; hour++) {
            assertThat(archiver.archiveOnce().rows()).isPositive();
            assertTotals(concat(first, second));
        }
        table.refresh();
        assertThat(WatermarkReader.current(table).watermark()).isEqualTo(TieringWatermark.of(MARCH_2.plus(Duration.ofDays(2))));
        now.set(now.get().plus(HOUR));
        archiver.archiveOnce();
        assertThat(partitions(hourly)).isEmpty();
        assertTotals(concat(first, second));
    }

    @Test
    void testInsertRoutesByTheBoundsOfPartitionsNarrowerThanTheStep()
            throws Exception
    {
        // half-day partitions created by hand, narrower than any step the table records: a partition one step wide
        // would overlap them, so each row must go to the partition whose catalogue bound holds it
        Instant june = Instant.parse("2026-06-01T00:00:00Z");
        Instant noon = june.plus(Duration.ofHours(12));
        try (Connection connection = warehouse.database().connect();
                Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE %s.readings_2026_06_01_0000 PARTITION OF %s.%s FOR VALUES FROM ('2026-06-01 00:00+00') TO ('2026-06-01 12:00+00')".formatted(SCHEMA, SCHEMA, TestingMeterstoreTables.TABLE));
            statement.execute("CREATE TABLE %s.readings_2026_06_01_1200 PARTITION OF %s.%s FOR VALUES FROM ('2026-06-01 12:00+00') TO ('2026-06-02 00:00+00')".formatted(SCHEMA, SCHEMA, TestingMeterstoreTables.TABLE));
        }
        try {
            List<Reading> day = utcDay(june);
            assertUpdate(insert(day), day.size());

            long morning = day.stream().filter(reading -> reading.from().isBefore(noon)).count();
            try (Connection connection = warehouse.database().connect();
                    Statement statement = connection.createStatement();
                    ResultSet result = statement.executeQuery("SELECT tableoid::regclass::text, count(*) FROM %s.%s WHERE \"from\" >= '2026-06-01 00:00+00' AND \"from\" < '2026-06-02 00:00+00' GROUP BY 1 ORDER BY 1"
                            .formatted(SCHEMA, TestingMeterstoreTables.TABLE))) {
                assertThat(result.next()).isTrue();
                assertThat(result.getString(1)).isEqualTo(SCHEMA + ".readings_2026_06_01_0000");
                assertThat(result.getLong(2)).isEqualTo(morning);
                assertThat(result.next()).isTrue();
                assertThat(result.getString(1)).isEqualTo(SCHEMA + ".readings_2026_06_01_1200");
                assertThat(result.getLong(2)).isEqualTo(day.size() - morning);
                assertThat(result.next()).isFalse();
            }
            // no partition of a step was created beside them
            assertThat(partitions(new HotTier(SCHEMA, new PartitionNaming(TestingMeterstoreTables.TABLE, HOUR), Duration.ofSeconds(5))))
                    .filteredOn(partition -> partition.overlaps(june, Optional.of(june.plus(DAY))))
                    .extracting(HotPartition::name)
                    .containsExactlyInAnyOrder("readings_2026_06_01_0000", "readings_2026_06_01_1200");
            assertThat(computeActual("SELECT count(*) FROM readings_versions WHERE \"from\" >= TIMESTAMP '2026-06-01 00:00 UTC' AND \"from\" < TIMESTAMP '2026-06-02 00:00 UTC'").getOnlyValue())
                    .isEqualTo((long) day.size());
        }
        finally {
            // the other test of this class counts the table's partitions
            try (Connection connection = warehouse.database().connect();
                    Statement statement = connection.createStatement()) {
                statement.execute("DROP TABLE %1$s.readings_2026_06_01_0000, %1$s.readings_2026_06_01_1200".formatted(SCHEMA));
            }
        }
    }

    /** Both tables through Trino: count, sum and the watermark-independent totals equal the inserted rows. */
    private void assertTotals(List<Reading> readings)
    {
        BigDecimal sum = readings.stream().map(Reading::value).reduce(BigDecimal.ZERO, BigDecimal::add);
        MaterializedRow versions = computeActual("SELECT count(*), sum(value) FROM readings_versions").getMaterializedRows().getFirst();
        assertThat(versions.getField(0)).isEqualTo((long) readings.size());
        assertThat(((BigDecimal) versions.getField(1)).compareTo(sum)).isZero();
        MaterializedRow resolved = computeActual("SELECT count(*), sum(value) FROM readings").getMaterializedRows().getFirst();
        assertThat(resolved.getField(0)).isEqualTo((long) readings.size());
    }

    private List<HotPartition> partitions(HotTier hotTier)
            throws Exception
    {
        try (Connection connection = warehouse.database().connect()) {
            return hotTier.partitions(connection);
        }
    }

    private static List<Reading> concat(List<Reading> left, List<Reading> right)
    {
        return Stream.concat(left.stream(), right.stream()).toList();
    }

    /** One version of every quarter-hour of one UTC day for three meters; INSERT fills recorded_at and balancing_day. */
    private static List<Reading> utcDay(Instant day)
    {
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(day.getEpochSecond())
                .meters(3)
                .startDay(LocalDate.ofInstant(day, ZoneOffset.UTC))
                .days(2)
                .correctionsFraction(0)
                .build();
        Instant end = day.plus(DAY);
        return generator.stream()
                .filter(reading -> !reading.from().isBefore(day) && reading.from().isBefore(end))
                .toList();
    }
}
