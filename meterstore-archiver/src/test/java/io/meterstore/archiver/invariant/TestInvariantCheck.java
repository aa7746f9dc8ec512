package io.meterstore.archiver.invariant;

import com.google.common.collect.ImmutableMap;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.cycle.TestingArchiverTable;
import io.meterstore.core.HotPartition;
import io.meterstore.core.InvariantCheck;
import io.meterstore.core.InvariantReport;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.TieringWatermark;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.PartitionData;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.DateTimeUtil;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

final class TestInvariantCheck
{
    private static final Instant MARCH_5 = Instant.parse("2024-03-05T00:00:00Z");
    private static final Duration DAY = Duration.ofDays(1);

    @Test
    void testEmptyTableHolds()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("invariant_empty")) {
            InvariantReport report = check(tables);
            assertThat(report.table()).isEqualTo("metering.readings");
            assertThat(report.watermark()).isEqualTo(TieringWatermark.EPOCH);
            assertThat(report.snapshotId()).isEmpty();
            assertThat(report.partitions()).isEmpty();
            assertThat(report.holds()).isTrue();
        }
    }

    @Test
    void testArchivedTableHolds()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("invariant_archived")) {
            load(tables, utcDay(MARCH_5), utcDay(MARCH_5.plus(DAY)));
            tables.clock().set(MARCH_5.plus(Duration.ofDays(8)));
            assertThat(tables.cycle().archiveOnce().kind()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);

            InvariantReport report = check(tables);
            assertThat(report.watermark()).isEqualTo(TieringWatermark.of(MARCH_5.plus(DAY)));
            assertThat(report.snapshotId()).contains(tables.table().currentSnapshot().snapshotId());
            assertThat(report.violations()).isEmpty();
            assertThat(report.holds()).isTrue();
            // the archived day waits for its reader grace, detached; the next day is still hot
            assertThat(report.partitionsAwaitingDrop()).extracting(HotPartition::name).containsExactly("readings_2024_03_05_0000");
            assertThat(report.attachedPartitions()).extracting(HotPartition::name).containsExactly("readings_2024_03_06_0000");
            assertThat(report.partitionsAwaitingArchival()).isEmpty();
        }
    }

    @Test
    void testDetachedPartitionAtWatermarkAwaitsArchival()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("invariant_interrupted")) {
            load(tables, utcDay(MARCH_5));
            // what a cycle interrupted after its DETACH leaves: a detached partition at W, archived by the next cycle
            try (Connection connection = tables.connect()) {
                tables.hotTier().detach(connection, "readings_2024_03_05_0000");
            }
            InvariantReport report = check(tables);
            assertThat(report.holds()).isTrue();
            assertThat(report.partitionsAwaitingArchival()).extracting(HotPartition::name).containsExactly("readings_2024_03_05_0000");
            assertThat(report.partitionsAwaitingDrop()).isEmpty();
        }
    }

    @Test
    void testAttachedPartitionBelowWatermarkIsViolation()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("invariant_hot_violation")) {
            load(tables, utcDay(MARCH_5));
            tables.clock().set(MARCH_5.plus(Duration.ofDays(8)));
            assertThat(tables.cycle().archiveOnce().kind()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);
            // a day below W attached again: its rows are in neither tier for any query
            load(tables, utcDay(MARCH_5.minus(DAY)));

            InvariantReport report = check(tables);
            assertThat(report.holds()).isFalse();
            assertThat(report.violations()).containsExactly(
                    "Partition 'readings_2024_03_04_0000' of table 'metering.readings' is attached but starts at 2024-03-04T00:00:00Z, below the watermark 2024-03-06T00:00:00Z: its rows below the watermark are read by neither tier");
        }
    }

    @Test
    void testDataFileAtOrAboveWatermarkIsViolation()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("invariant_cold_violation")) {
            load(tables, utcDay(MARCH_5));
            tables.clock().set(MARCH_5.plus(Duration.ofDays(8)));
            assertThat(tables.cycle().archiveOnce().kind()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);
            Instant watermark = MARCH_5.plus(DAY);

            // files are judged by their statistics alone: none of these needs to exist
            Table table = tables.table();
            table.newAppend()
                    .appendFile(dataFile(tables, table, "below.parquet", Optional.of(watermark.minusSeconds(900))))
                    .appendFile(dataFile(tables, table, "above.parquet", Optional.of(watermark)))
                    .appendFile(dataFile(tables, table, "unbounded.parquet", Optional.empty()))
                    .commit();

            InvariantReport report = check(tables);
            assertThat(report.watermark()).isEqualTo(TieringWatermark.of(watermark));
            assertThat(report.violations()).containsExactlyInAnyOrder(
                    "Data file '%s' of table 'metering.readings' holds rows up to 2024-03-06T00:00:00Z, at or above the watermark 2024-03-06T00:00:00Z: they are read from both tiers"
                            .formatted(location(tables, "above.parquet")),
                    "Data file '%s' of table 'metering.readings' has no upper bound of \"from\" in its statistics, so nothing shows its rows lie below the watermark 2024-03-06T00:00:00Z"
                            .formatted(location(tables, "unbounded.parquet")));
        }
    }

    private static InvariantReport check(TestingArchiverTable tables)
            throws Exception
    {
        try (Connection connection = tables.connect()) {
            return InvariantCheck.check(tables.table(), tables.hotTier(), connection);
        }
    }

    @SafeVarargs
    private static void load(TestingArchiverTable tables, List<Reading>... days)
            throws Exception
    {
        try (Connection connection = tables.connect()) {
            for (List<Reading> day : days) {
                new ReadingsLoader(tables.hotTier()).load(connection, day);
            }
        }
    }

    /** The readings of two meters whose interval starts on the UTC day starting at {@code day}. */
    private static List<Reading> utcDay(Instant day)
    {
        return ReadingsGenerator.builder()
                .meters(2)
                .startDay(LocalDate.ofInstant(day, ZoneOffset.UTC))
                .days(2)
                .build()
                .stream()
                .filter(reading -> !reading.from().isBefore(day) && reading.from().isBefore(day.plus(DAY)))
                .toList();
    }

    private static String location(TestingArchiverTable tables, String name)
    {
        return tables.warehouse().location() + name;
    }

    private static PartitionData march(Table table)
    {
        // month("from") counts months since 1970-01
        PartitionData partition = new PartitionData(table.spec().partitionType());
        partition.set(0, (2024 - 1970) * 12 + 2);
        return partition;
    }

    private static DataFile dataFile(TestingArchiverTable tables, Table table, String name, Optional<Instant> upperBound)
    {
        int from = ReadingsColumn.FROM.fieldId();
        Map<Integer, ByteBuffer> lower = ImmutableMap.of(from, Conversions.toByteBuffer(Types.TimestampType.withZone(), DateTimeUtil.microsFromInstant(Instant.parse("2024-03-01T00:00:00Z"))));
        Metrics metrics = upperBound
                .map(upper -> new Metrics(1L, null, null, null, null, lower, ImmutableMap.of(from, Conversions.toByteBuffer(Types.TimestampType.withZone(), DateTimeUtil.microsFromInstant(upper)))))
                .orElseGet(() -> new Metrics(1L, null, null, null, null));
        return DataFiles.builder(table.spec())
                .withPath(location(tables, name))
                .withFormat(FileFormat.PARQUET)
                .withPartition(march(table))
                .withRecordCount(1)
                .withFileSizeInBytes(1024)
                .withMetrics(metrics)
                .build();
    }
}
