package io.meterstore.archiver.cycle;

import io.meterstore.archiver.cycle.ArchiveOutcome.Kind;
import io.meterstore.core.InvariantCheck;
import io.meterstore.core.InvariantReport;
import io.meterstore.core.HotPartition;
import io.meterstore.core.HotTier;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.Reading;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.ReadingsOracle;
import org.apache.iceberg.Snapshot;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;

import static io.meterstore.core.TieringWatermark.ARCHIVED_PARTITION_KEY;
import static io.meterstore.core.TieringWatermark.ARCHIVED_RANGE_KEY;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Archival by the partitions' catalogue bounds: a partition wider than the step, or bounded off the step's grid, is
 * archived whole and dropped only once its rows are in Iceberg. Every case ends with each row in exactly one tier.
 */
final class TestArchivalBounds
{
    private static final Duration HOUR = Duration.ofHours(1);
    private static final Duration DAY = Duration.ofDays(1);
    private static final Duration SETTLEMENT_LAG = Duration.ofDays(7);
    private static final Duration READER_GRACE = Duration.ofHours(1);
    private static final Instant MARCH_5 = Instant.parse("2024-03-05T00:00:00Z");

    @Test
    void testHourlyArchivalOfADayPartitionCreatedByAWriter()
            throws Exception
    {
        // the archiver runs by the hour, but a writer created the day's partition a day wide before any step was
        // recorded (as INSERT did, falling back to one day)
        try (TestingArchiverTable tables = TestingArchiverTable.create("bounds_day_partition", HOUR, Duration.ofSeconds(5))) {
            List<Reading> day = utcDay(MARCH_5, 6);
            HotTier daily = new HotTier(TestingArchiverTable.SCHEMA, new PartitionNaming(TestingArchiverTable.TABLE, DAY), Duration.ofSeconds(5));
            try (Connection connection = tables.connect()) {
                new ReadingsLoader(daily).load(connection, day);
            }
            ReadingsOracle oracle = ReadingsOracle.of(day);
            assertThat(tables.partitions()).containsExactly(new HotPartition("readings_2024_03_05_0000", MARCH_5, MARCH_5.plus(DAY), true));
            ArchivalCycle cycle = tables.cycle();

            // hour by hour through the day: the empty stretch before the partition is archived, the partition is not
            // closed while any hour of it is younger than the settlement lag
            for (Instant now = MARCH_5.plus(SETTLEMENT_LAG).plus(HOUR); now.isBefore(MARCH_5.plus(DAY).plus(SETTLEMENT_LAG)); now = now.plus(HOUR)) {
                tables.clock().set(now);
                cycle.archiveOnce();
                assertThat(WatermarkReader.current(tables.table()).watermark()).isEqualTo(TieringWatermark.of(MARCH_5));
                assertThat(tables.partitions()).extracting(HotPartition::attached).containsExactly(true);
                TieringAudit.assertConsistent(tables, oracle);
            }

            // once the whole day is closed it is one window, [W, the partition's end)
            tables.clock().set(MARCH_5.plus(DAY).plus(SETTLEMENT_LAG));
            ArchiveOutcome outcome = cycle.archiveOnce();
            assertThat(outcome.kind()).isEqualTo(Kind.ARCHIVED);
            assertThat(outcome.window().orElseThrow().start()).isEqualTo(MARCH_5);
            assertThat(outcome.window().orElseThrow().end()).isEqualTo(MARCH_5.plus(DAY));
            assertThat(outcome.rows()).isEqualTo(day.size());
            Snapshot snapshot = tables.table().currentSnapshot();
            assertThat(snapshot.summary())
                    .containsEntry(ARCHIVED_RANGE_KEY, "2024-03-05T00:00:00Z/2024-03-06T00:00:00Z")
                    .containsEntry(ARCHIVED_PARTITION_KEY, "readings_2024_03_05_0000");
            TieringAudit.assertConsistent(tables, oracle);

            // within the grace the partition stays; after it, it goes, its rows all in Iceberg
            tables.clock().advance(Duration.ofMinutes(59));
            assertThat(cycle.archiveOnce().droppedPartitions()).isEmpty();
            tables.clock().advance(Duration.ofMinutes(1));
            assertThat(cycle.archiveOnce().droppedPartitions()).containsExactly("readings_2024_03_05_0000");
            TieringAudit.assertConsistent(tables, oracle);
            assertThat(tables.hotRows(WatermarkReader.current(tables.table()).watermark())).isZero();
        }
    }

    @Test
    void testPartitionsBoundedOffTheStepByHand()
            throws Exception
    {
        // daily step, but the partitions were made by hand: a day and a half, then half a day, then a gap and one day
        try (TestingArchiverTable tables = TestingArchiverTable.create("bounds_by_hand")) {
            try (Connection connection = tables.connect(); Statement statement = connection.createStatement()) {
                statement.execute("CREATE TABLE metering.readings_2024_03_05_0000 PARTITION OF metering.readings FOR VALUES FROM ('2024-03-05 00:00:00+00') TO ('2024-03-06 12:00:00+00')");
                statement.execute("CREATE TABLE metering.readings_2024_03_06_1200 PARTITION OF metering.readings FOR VALUES FROM ('2024-03-06 12:00:00+00') TO ('2024-03-07 00:00:00+00')");
            }
            List<Reading> readings = utcDays(MARCH_5, 3, 4);
            try (Connection connection = tables.connect()) {
                // the third day gets an ordinary day partition; the first two are held by the hand-made ones
                new ReadingsLoader(tables.hotTier()).load(connection, readings);
            }
            assertThat(tables.partitions()).extracting(HotPartition::name)
                    .containsExactly("readings_2024_03_05_0000", "readings_2024_03_06_1200", "readings_2024_03_07_0000");
            ReadingsOracle oracle = ReadingsOracle.of(readings);
            ArchivalCycle cycle = tables.cycle();

            tables.clock().set(MARCH_5.plus(Duration.ofDays(4)).plus(SETTLEMENT_LAG).plus(READER_GRACE));
            List<Instant> ends = List.of(MARCH_5.plus(Duration.ofHours(36)), MARCH_5.plus(Duration.ofDays(2)), MARCH_5.plus(Duration.ofDays(3)));
            for (Instant end : ends) {
                ArchiveOutcome outcome = cycle.archiveOnce();
                assertThat(outcome.kind()).isEqualTo(Kind.ARCHIVED);
                assertThat(outcome.window().orElseThrow().end()).isEqualTo(end);
                TieringAudit.assertConsistent(tables, oracle);
            }
            // past the grace each partition went, covered by its commit
            tables.clock().advance(READER_GRACE);
            cycle.archiveOnce();
            assertThat(tables.partitions()).isEmpty();
            TieringAudit.assertConsistent(tables, oracle);
            assertThat(tables.dataFiles().stream().mapToLong(file -> file.recordCount()).sum()).isEqualTo(readings.size());
        }
    }

    @Test
    void testPartitionReachingPastItsBoundIsNotCommitted()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("bounds_guard_commit")) {
            List<Reading> readings = utcDays(MARCH_5, 2, 3);
            try (Connection connection = tables.connect()) {
                new ReadingsLoader(tables.hotTier()).load(connection, readings);
                try (Statement statement = connection.createStatement()) {
                    // a partition detached before bounds were kept, to which someone moved the next day's rows by hand
                    statement.execute("ALTER TABLE metering.readings DETACH PARTITION metering.readings_2024_03_06_0000");
                    statement.execute("ALTER TABLE metering.readings DETACH PARTITION metering.readings_2024_03_05_0000");
                    statement.execute("INSERT INTO metering.readings_2024_03_05_0000 SELECT * FROM metering.readings_2024_03_06_0000");
                    statement.execute("DROP TABLE metering.readings_2024_03_06_0000");
                }
            }
            // its bound is unknown, so taken as one step: the stream finds the rows beyond it and commits nothing
            assertThat(tables.partitions()).containsExactly(new HotPartition("readings_2024_03_05_0000", MARCH_5, MARCH_5.plus(DAY), false, false));
            tables.clock().set(MARCH_5.plus(Duration.ofDays(3)).plus(SETTLEMENT_LAG));
            assertThatThrownBy(() -> tables.cycle().archiveOnce())
                    .isInstanceOfSatisfying(ArchivalException.class, e -> assertThat(e.reason()).isEqualTo(ArchivalException.Reason.PARTITION_NOT_COVERED))
                    .hasMessageStartingWith("Partition 'readings_2024_03_05_0000' of table '\"metering\".\"readings\"' holds a row from 2024-03-06T")
                    .hasMessageContaining("at or after the end 2024-03-06T00:00:00Z of the window archived from it");
            assertThat(tables.table().currentSnapshot()).isNull();
            assertThat(tables.dataFiles()).isEmpty();
            assertThat(TieringAudit.parquetFilesOnDisk(tables)).as("files of the failed window are deleted").isEmpty();
            assertThat(tables.partitions()).extracting(HotPartition::name).containsExactly("readings_2024_03_05_0000");
        }
    }

    @Test
    void testPartitionTheCommitsDoNotCoverIsNeverDropped()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("bounds_guard_drop")) {
            List<Reading> readings = utcDays(MARCH_5, 2, 3);
            try (Connection connection = tables.connect()) {
                new ReadingsLoader(tables.hotTier()).load(connection, readings);
            }
            ReadingsOracle oracle = ReadingsOracle.of(readings);
            ArchivalCycle cycle = tables.cycle();
            tables.clock().set(MARCH_5.plus(Duration.ofDays(2)).plus(SETTLEMENT_LAG));
            assertThat(cycle.archiveOnce().window().orElseThrow().end()).isEqualTo(MARCH_5.plus(DAY));
            // a row appears in the detached partition after its commit: below W, read by no query, not in Iceberg
            try (Connection connection = tables.connect(); Statement statement = connection.createStatement()) {
                statement.execute("""
                        INSERT INTO metering.readings_2024_03_05_0000
                        SELECT malo_id, melo_id, obis_code, sparte, "from", "to", value + 1, unit, quality, resolution, source_kind, source_detail, provenance,
                               version + 1, version_scope, recorded_at, balancing_day
                        FROM metering.readings_2024_03_05_0000 LIMIT 1""");
            }
            tables.clock().advance(Duration.ofDays(1));
            ArchiveOutcome outcome = cycle.archiveOnce();
            assertThat(outcome.kind()).isEqualTo(Kind.ARCHIVED);
            // the next day's partition is archived, the uncovered one is kept, and named by the invariant check
            assertThat(outcome.droppedPartitions()).isEmpty();
            tables.clock().advance(Duration.ofDays(1));
            assertThat(cycle.archiveOnce().droppedPartitions()).containsExactly("readings_2024_03_06_0000");
            assertThat(tables.partitions()).extracting(HotPartition::name).containsExactly("readings_2024_03_05_0000");
            InvariantReport report;
            try (Connection connection = tables.connect()) {
                report = InvariantCheck.check(tables.table(), tables.hotTier(), connection);
            }
            assertThat(report.holds()).isFalse();
            assertThat(report.violations()).containsExactly(
                    "Detached partition 'readings_2024_03_05_0000' of table 'metering.readings' lies below the watermark %s and holds %s rows, but the archival commits that streamed it hold %s: the cold tier lacks its rows, and it is not dropped; INSERT its rows through MeterStore (rows below the watermark go to Iceberg), then drop it by hand"
                            .formatted(report.watermark(), oracle.count(ReadingsOracle.View.VERSIONS, ReadingsOracle.fromBefore(MARCH_5.plus(DAY))) + 1, oracle.count(ReadingsOracle.View.VERSIONS, ReadingsOracle.fromBefore(MARCH_5.plus(DAY)))));
        }
    }

    @Test
    void testInvariantNamesADetachedPartitionNoCycleWillArchive()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("bounds_overlap")) {
            try (Connection connection = tables.connect()) {
                new ReadingsLoader(tables.hotTier()).load(connection, utcDays(MARCH_5, 1, 2));
                // an interrupted run left the day detached, then someone attached a partition for its second half
                tables.hotTier().detach(connection, "readings_2024_03_05_0000");
                try (Statement statement = connection.createStatement()) {
                    statement.execute("CREATE TABLE metering.readings_2024_03_05_1200 PARTITION OF metering.readings FOR VALUES FROM ('2024-03-05 12:00:00+00') TO ('2024-03-06 00:00:00+00')");
                }
                InvariantReport report = InvariantCheck.check(tables.table(), tables.hotTier(), connection);
                assertThat(report.violations()).containsExactly(
                        "Detached partition 'readings_2024_03_05_0000' of table 'metering.readings' [2024-03-05T00:00:00Z, 2024-03-06T00:00:00Z) overlaps partition 'readings_2024_03_05_1200' [2024-03-05T12:00:00Z, 2024-03-06T00:00:00Z): no cycle will archive its rows at or above the watermark 1970-01-01T00:00:00Z; move its rows into 'readings_2024_03_05_1200' and drop it");
            }
            tables.clock().set(MARCH_5.plus(DAY).plus(SETTLEMENT_LAG));
            // the planner refuses too, rather than move W over either partition's rows
            assertThatThrownBy(() -> tables.cycle().archiveOnce())
                    .isInstanceOfSatisfying(ArchivalException.class, e -> assertThat(e.reason()).isEqualTo(ArchivalException.Reason.PARTITION_OVERLAP));
        }
    }

    /** The 96 quarter-hours of {@code days} UTC days from {@code start} for {@code meters} meters. */
    private static List<Reading> utcDays(Instant start, int days, int meters)
    {
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(start.getEpochSecond())
                .meters(meters)
                .startDay(LocalDate.ofInstant(start, ZoneOffset.UTC))
                .days(days + 1)
                .correctionsFraction(0.05)
                .build();
        Instant end = start.plus(Duration.ofDays(days));
        return generator.stream()
                .filter(reading -> !reading.from().isBefore(start) && reading.from().isBefore(end))
                .toList();
    }

    private static List<Reading> utcDay(Instant day, int meters)
    {
        return utcDays(day, 1, meters);
    }
}
