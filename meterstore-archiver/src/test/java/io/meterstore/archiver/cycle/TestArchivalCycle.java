package io.meterstore.archiver.cycle;

import io.meterstore.archiver.cycle.ArchiveOutcome.Kind;
import io.meterstore.core.ColdFileRole;
import io.meterstore.core.HotPartition;
import io.meterstore.core.HotTier;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.parquet.ReadingsParquetSchema;
import io.meterstore.testing.Readings;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.ReadingsOracle;
import io.meterstore.testing.ReadingsOracle.View;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.types.Comparators;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.util.UnicodeUtil;
import org.apache.parquet.schema.MessageType;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import static io.meterstore.core.TieringWatermark.ARCHIVAL_STEP_KEY;
import static io.meterstore.core.TieringWatermark.ARCHIVED_AT_KEY;
import static io.meterstore.core.TieringWatermark.ARCHIVED_RANGE_KEY;
import static io.meterstore.core.TieringWatermark.ROW_COUNT_KEY;
import static io.meterstore.core.TieringWatermark.WATERMARK_KEY;
import static io.meterstore.testing.ReadingsOracle.fromAtOrAfter;
import static io.meterstore.testing.ReadingsOracle.fromBefore;
import static io.meterstore.testing.ReadingsOracle.fromRange;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class TestArchivalCycle
{
    private static final Duration DAY = Duration.ofDays(1);
    private static final Duration SETTLEMENT_LAG = Duration.ofDays(7);
    // Iceberg's default metrics mode: strings bounds truncated to 16 characters
    private static final int TRUNCATE_LENGTH = 16;

    @Test
    void testArchivesClosedDaysOneAtATime()
            throws Exception
    {
        // four Berlin days in winter: UTC partitions 02-26 (its last hour only) to 03-01, across the February/March boundary
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(7)
                .meters(20)
                .startDay(LocalDate.of(2024, 2, 27))
                .days(4)
                .correctionsFraction(0.05)
                .build();
        ReadingsOracle oracle = ReadingsOracle.of(generator);
        try (TestingArchiverTable tables = TestingArchiverTable.create("archives_days")) {
            load(tables, generator);
            List<HotPartition> loaded = tables.partitions();
            assertThat(loaded).extracting(HotPartition::name).containsExactly(
                    "readings_2024_02_26_0000", "readings_2024_02_27_0000", "readings_2024_02_28_0000", "readings_2024_02_29_0000", "readings_2024_03_01_0000");
            Instant first = loaded.getFirst().start();
            ArchivalCycle cycle = tables.cycle();
            TestingClock clock = tables.clock();

            // the first day is closed once it ends 7 days before now
            clock.set(first.plus(DAY).plus(SETTLEMENT_LAG));
            ArchiveOutcome outcome = cycle.archiveOnce();
            // first run: the empty stretch since the epoch and the first partition are one commit
            assertArchived(tables, oracle, outcome, Instant.EPOCH, first.plus(DAY));
            Table table = tables.table();
            assertThat(table.snapshots()).hasSize(1);
            assertThat(table.currentSnapshot().parentId()).isNull();
            assertThat(table.currentSnapshot().summary().get(ARCHIVED_RANGE_KEY)).isEqualTo("1970-01-01T00:00:00Z/2024-02-27T00:00:00Z");
            assertThat(detached(tables)).containsExactly("readings_2024_02_26_0000");

            // nothing closed: idle, and the archived partition stays readable by name within the reader grace
            outcome = cycle.archiveOnce();
            assertThat(outcome.kind()).isEqualTo(Kind.IDLE);
            assertThat(outcome.droppedPartitions()).isEmpty();
            assertThat(outcome.watermark()).isEqualTo(TieringWatermark.of(first.plus(DAY)));
            clock.advance(Duration.ofMinutes(59));
            assertThat(cycle.archiveOnce().droppedPartitions()).isEmpty();
            assertThat(detached(tables)).containsExactly("readings_2024_02_26_0000");

            // once the commit is an hour old the partition goes
            clock.advance(Duration.ofMinutes(1));
            outcome = cycle.archiveOnce();
            assertThat(outcome.kind()).isEqualTo(Kind.IDLE);
            assertThat(outcome.droppedPartitions()).containsExactly("readings_2024_02_26_0000");
            assertThat(tables.partitions()).extracting(HotPartition::name).doesNotContain("readings_2024_02_26_0000");
            assertTiers(tables, oracle);

            // one closed day per cycle; each cycle drops the partition the previous one archived
            Instant previousWatermark = first.plus(DAY);
            for (int day = 1; day < loaded.size(); day++) {
                clock.advance(DAY);
                outcome = cycle.archiveOnce();
                Instant start = loaded.get(day).start();
                assertThat(start).isEqualTo(previousWatermark);
                assertArchived(tables, oracle, outcome, start, start.plus(DAY));
                // the partition archived by the previous cycle is a day old now, past its grace (the first one went above)
                assertThat(outcome.droppedPartitions()).isEqualTo(day == 1 ? List.of() : List.of(loaded.get(day - 1).name()));
                assertThat(detached(tables)).containsExactly(loaded.get(day).name());
                previousWatermark = start.plus(DAY);
            }
            assertThat(tables.hotRows(WatermarkReader.current(tables.table()).watermark())).isZero();
            assertThat(tables.dataFiles().stream().mapToLong(DataFile::recordCount).sum()).isEqualTo(oracle.size());

            // the March day and the February days live in their own month partitions
            assertThat(tables.dataFiles().stream().map(file -> file.partition().get(0, Integer.class)).distinct().sorted())
                    .containsExactly(months(YearMonth.of(2024, 2)), months(YearMonth.of(2024, 3)));

            // no partition left: the next cycle advances over the empty stretch up to the horizon, with no data
            clock.advance(DAY);
            outcome = cycle.archiveOnce();
            assertThat(outcome.kind()).isEqualTo(Kind.ARCHIVED);
            assertThat(outcome.rows()).isZero();
            assertThat(outcome.files()).isZero();
            assertThat(outcome.window().orElseThrow().start()).isEqualTo(previousWatermark);
            assertThat(outcome.watermark().instant()).isEqualTo(tables.hotTier().naming().alignDown(clock.instant().minus(SETTLEMENT_LAG)));
            assertThat(outcome.droppedPartitions()).containsExactly("readings_2024_03_01_0000");
            assertThat(tables.partitions()).isEmpty();
            assertThat(tables.table().currentSnapshot().summary()).containsEntry(ROW_COUNT_KEY, "0");
            assertTiers(tables, oracle);
        }
    }

    @Test
    void testGapBetweenPartitionsIsOneCommit()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("archives_gap")) {
            Instant march5 = Instant.parse("2024-03-05T00:00:00Z");
            Instant march9 = Instant.parse("2024-03-09T00:00:00Z");
            List<Reading> readings = new ArrayList<>();
            readings.addAll(utcDay(march5, 3));
            readings.addAll(utcDay(march9, 3));
            ReadingsOracle oracle = ReadingsOracle.of(readings);
            try (Connection connection = tables.connect()) {
                new ReadingsLoader(tables.hotTier()).load(connection, readings);
            }
            tables.clock().set(march9.plus(DAY).plus(SETTLEMENT_LAG));
            ArchivalCycle cycle = tables.cycle();

            assertArchived(tables, oracle, cycle.archiveOnce(), Instant.EPOCH, march5.plus(DAY));
            // 03-06 to 03-08 have no partition: the window runs on to the end of the next partition that exists
            assertArchived(tables, oracle, cycle.archiveOnce(), march5.plus(DAY), march9.plus(DAY));
            assertThat(tables.table().snapshots()).hasSize(2);
            assertThat(cycle.archiveOnce().kind()).isEqualTo(Kind.IDLE);
        }
    }

    @Test
    void testEmptyTableAdvancesToHorizonThenIdles()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("archives_empty")) {
            Instant now = Instant.parse("2024-03-10T12:00:00Z");
            tables.clock().set(now);
            ArchivalCycle cycle = tables.cycle();

            ArchiveOutcome outcome = cycle.archiveOnce();
            assertThat(outcome.kind()).isEqualTo(Kind.ARCHIVED);
            assertThat(outcome.window()).contains(new ArchivalWindow(Instant.EPOCH, Instant.parse("2024-03-03T00:00:00Z"), Optional.empty()));
            assertThat(outcome.rows()).isZero();
            assertThat(tables.dataFiles()).isEmpty();
            Map<String, String> summary = tables.table().currentSnapshot().summary();
            assertThat(summary)
                    .containsEntry(WATERMARK_KEY, "2024-03-03T00:00:00Z")
                    .containsEntry(ROW_COUNT_KEY, "0")
                    .containsEntry(ARCHIVED_RANGE_KEY, "1970-01-01T00:00:00Z/2024-03-03T00:00:00Z")
                    .containsEntry(ARCHIVAL_STEP_KEY, "86400")
                    .containsEntry(ARCHIVED_AT_KEY, "2024-03-10T12:00:00Z");

            // a partition of a day that is not closed yet: nothing to do
            try (Connection connection = tables.connect()) {
                tables.hotTier().ensurePartition(connection, Instant.parse("2024-03-09T00:00:00Z"));
            }
            long snapshot = tables.table().currentSnapshot().snapshotId();
            outcome = cycle.archiveOnce();
            assertThat(outcome.kind()).isEqualTo(Kind.IDLE);
            assertThat(outcome.window()).isEmpty();
            assertThat(outcome.watermark()).isEqualTo(TieringWatermark.of(Instant.parse("2024-03-03T00:00:00Z")));
            assertThat(outcome.describe()).isEqualTo("metering.readings: idle, nothing closed to archive, watermark 2024-03-03T00:00:00Z");
            assertThat(tables.table().currentSnapshot().snapshotId()).isEqualTo(snapshot);
            assertThat(tables.partitions()).extracting(HotPartition::attached).containsExactly(true);
        }
    }

    @Test
    void testDeferredWhileParentIsLocked()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("archives_deferred", DAY, Duration.ofMillis(200))) {
            Instant day = Instant.parse("2024-03-05T00:00:00Z");
            List<Reading> readings = utcDay(day, 2);
            try (Connection connection = tables.connect()) {
                new ReadingsLoader(tables.hotTier()).load(connection, readings);
            }
            tables.clock().set(day.plus(DAY).plus(SETTLEMENT_LAG));
            ArchivalCycle cycle = tables.cycle();

            try (Connection locker = tables.connect()) {
                locker.setAutoCommit(false);
                try (Statement statement = locker.createStatement()) {
                    statement.execute("LOCK TABLE " + tables.hotTier().qualifiedParent() + " IN ACCESS EXCLUSIVE MODE");
                }
                ArchiveOutcome outcome = cycle.archiveOnce();
                assertThat(outcome.kind()).isEqualTo(Kind.DEFERRED);
                assertThat(outcome.window()).contains(new ArchivalWindow(Instant.EPOCH, day.plus(DAY), Optional.of(tables.partitions().getFirst())));
                assertThat(outcome.watermark()).isEqualTo(TieringWatermark.EPOCH);
                assertThat(outcome.describe()).isEqualTo("metering.readings: deferred, detaching 'readings_2024_03_05_0000' timed out waiting for a lock another session holds; the next cycle retries, watermark 1970-01-01T00:00:00Z");
                locker.rollback();
            }
            assertThat(tables.table().currentSnapshot()).isNull();
            assertThat(tables.partitions()).extracting(HotPartition::attached).containsExactly(true);
            assertThat(tables.hotRows(TieringWatermark.EPOCH)).isEqualTo(readings.size());

            // the lock is gone: the next cycle archives
            ArchiveOutcome outcome = cycle.archiveOnce();
            assertThat(outcome.kind()).isEqualTo(Kind.ARCHIVED);
            assertThat(outcome.rows()).isEqualTo(readings.size());
        }
    }

    @Test
    void testAttachedPartitionBelowWatermarkIsRefused()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("archives_violation")) {
            Instant day = Instant.parse("2024-03-05T00:00:00Z");
            try (Connection connection = tables.connect()) {
                new ReadingsLoader(tables.hotTier()).load(connection, utcDay(day, 2));
            }
            tables.clock().set(day.plus(DAY).plus(SETTLEMENT_LAG));
            ArchivalCycle cycle = tables.cycle();
            assertThat(cycle.archiveOnce().kind()).isEqualTo(Kind.ARCHIVED);

            // a partition below W, attached, with a row no query will ever see
            List<Reading> stray = utcDay(day.minus(DAY), 1).subList(0, 1);
            try (Connection connection = tables.connect()) {
                new ReadingsLoader(tables.hotTier()).load(connection, stray);
            }
            Table before = tables.table();
            long snapshot = before.currentSnapshot().snapshotId();
            List<HotPartition> partitions = tables.partitions();

            tables.clock().advance(Duration.ofDays(2));
            assertThatThrownBy(cycle::archiveOnce)
                    .isInstanceOfSatisfying(ArchivalException.class, exception -> assertThat(exception.reason()).isEqualTo(ArchivalException.Reason.INVARIANT_VIOLATED))
                    .hasMessageContaining("Partition 'readings_2024_03_04_0000' of table 'metering.readings' is attached but lies below the watermark 2024-03-06T00:00:00Z (it ends at 2024-03-05T00:00:00Z)");
            assertThat(tables.table().currentSnapshot().snapshotId()).isEqualTo(snapshot);
            // nothing detached, nothing dropped, although the archived partition is past its grace
            assertThat(tables.partitions()).isEqualTo(partitions);
            assertThat(tables.hotRows(TieringWatermark.EPOCH)).isEqualTo(2 * 96 + 1);
        }
    }

    @Test
    void testDifferentStepIsRefused()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("archives_step")) {
            Instant day = Instant.parse("2024-03-05T00:00:00Z");
            try (Connection connection = tables.connect()) {
                new ReadingsLoader(tables.hotTier()).load(connection, utcDay(day, 2));
                tables.hotTier().ensurePartition(connection, day.plus(DAY));
            }
            tables.clock().set(day.plus(Duration.ofDays(3)).plus(SETTLEMENT_LAG));
            assertThat(tables.cycle().archiveOnce().kind()).isEqualTo(Kind.ARCHIVED);
            List<HotPartition> partitions = tables.partitions();

            HotTier halfDays = new HotTier(TestingArchiverTable.SCHEMA, new PartitionNaming(TestingArchiverTable.TABLE, Duration.ofHours(12)), Duration.ofSeconds(5));
            ArchivalCycle cycle = new ArchivalCycle(tables.catalog(), TestingArchiverTable.identifier(), halfDays, tables.database()::connect, ArchivalSettings.DEFAULTS, tables.clock());
            assertThatThrownBy(cycle::archiveOnce)
                    .isInstanceOfSatisfying(ArchivalException.class, exception -> assertThat(exception.reason()).isEqualTo(ArchivalException.Reason.STEP_MISMATCH))
                    .hasMessage("Table 'metering.readings' is archived with a step of 86400 seconds, but the archiver is configured with 43200 seconds: set meterstore.archival-step to 86400s");
            assertThat(tables.partitions()).isEqualTo(partitions);
        }
    }

    @Test
    void testInterruptedRunIsResumed()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("archives_resume")) {
            Instant day = Instant.parse("2024-03-05T00:00:00Z");
            List<Reading> readings = utcDay(day, 3);
            ReadingsOracle oracle = ReadingsOracle.of(readings);
            try (Connection connection = tables.connect()) {
                new ReadingsLoader(tables.hotTier()).load(connection, readings);
                // a run that detached the partition and died before its commit
                tables.hotTier().detach(connection, "readings_2024_03_05_0000");
            }
            tables.clock().set(day.plus(DAY).plus(SETTLEMENT_LAG).plus(Duration.ofDays(3)));
            // an orphan at or above W is read by name, archived next, and never dropped before its commit
            assertTiers(tables, oracle);
            ArchiveOutcome outcome = tables.cycle().archiveOnce();
            assertArchived(tables, oracle, outcome, Instant.EPOCH, day.plus(DAY));
            assertThat(outcome.droppedPartitions()).isEmpty();
            assertThat(detached(tables)).containsExactly("readings_2024_03_05_0000");
        }
    }

    @Test
    void testRollsOverAtTargetFileSize()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("archives_rollover")) {
            Instant day = Instant.parse("2024-03-05T00:00:00Z");
            List<Reading> readings = utcDay(day, 250);
            ReadingsOracle oracle = ReadingsOracle.of(readings);
            try (Connection connection = tables.connect()) {
                new ReadingsLoader(tables.hotTier()).load(connection, readings);
            }
            // every write fills a file: at least one per page (chunk-rows, 10,000 rows: three for 24,000 rows)
            tables.table().updateProperties().set(TableProperties.WRITE_TARGET_FILE_SIZE_BYTES, "1").commit();
            tables.clock().set(day.plus(DAY).plus(SETTLEMENT_LAG));

            ArchiveOutcome outcome = tables.cycle().archiveOnce();
            assertArchived(tables, oracle, outcome, Instant.EPOCH, day.plus(DAY));
            assertThat(outcome.files()).isGreaterThanOrEqualTo(3);
            // the files follow each other in sort order: together they are one sorted run
            List<Reading> concatenated = new ArrayList<>();
            for (DataFile file : tables.dataFiles().stream().sorted(Comparator.comparing(DataFile::location)).toList()) {
                concatenated.addAll(ParquetReadings.read(file.location()));
            }
            assertThat(concatenated).isSortedAccordingTo(Readings.SORT_ORDER).hasSize(readings.size());
        }
    }

    @Test
    void testSplitsWindowByMonth()
            throws Exception
    {
        // two-day partitions aligned to the epoch: [2024-02-29, 2024-03-02) spans two months of "from"
        Duration step = Duration.ofDays(2);
        try (TestingArchiverTable tables = TestingArchiverTable.create("archives_months", step, Duration.ofSeconds(5))) {
            Instant start = Instant.parse("2024-02-29T00:00:00Z");
            List<Reading> readings = new ArrayList<>();
            readings.addAll(utcDay(start, 4));
            readings.addAll(utcDay(start.plus(DAY), 4));
            ReadingsOracle oracle = ReadingsOracle.of(readings);
            try (Connection connection = tables.connect()) {
                new ReadingsLoader(tables.hotTier()).load(connection, readings);
            }
            assertThat(tables.partitions()).extracting(HotPartition::name).containsExactly("readings_2024_02_29_0000");
            tables.clock().set(start.plus(step).plus(SETTLEMENT_LAG));

            ArchiveOutcome outcome = tables.cycle().archiveOnce();
            assertArchived(tables, oracle, outcome, Instant.EPOCH, start.plus(step));
            assertThat(outcome.files()).isEqualTo(2);
            assertThat(tables.table().currentSnapshot().summary()).containsEntry(ARCHIVAL_STEP_KEY, "172800");
            for (DataFile file : tables.dataFiles()) {
                List<Reading> rows = ParquetReadings.read(file.location());
                assertThat(rows).hasSize(4 * 96);
                YearMonth month = YearMonth.from(rows.getFirst().from().atOffset(ZoneOffset.UTC));
                assertThat(rows).allMatch(row -> YearMonth.from(row.from().atOffset(ZoneOffset.UTC)).equals(month));
                assertThat(file.partition().get(0, Integer.class)).isEqualTo(months(month));
            }
        }
    }

    @Test
    void testWritesWinnersApartFromTheVersionsTheySupersede()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("archives_winners")) {
            Instant day = Instant.parse("2024-03-05T00:00:00Z");
            List<Reading> originals = utcDay(day, 6);
            List<Reading> readings = new ArrayList<>(originals);
            for (int index = 0; index < originals.size(); index += 7) {
                Reading original = originals.get(index);
                BigInteger version = original.version();
                Instant recordedAt = original.recordedAt();
                switch (index % 4) {
                    // a correction: the higher version wins, whenever it was recorded
                    case 0 -> readings.add(version(original, version.add(BigInteger.TWO), original.versionScope(), recordedAt.minusSeconds(60)));
                    // two corrections, the last one delivered first
                    case 1 -> {
                        readings.add(version(original, version.add(BigInteger.valueOf(3)), original.versionScope(), recordedAt.plusSeconds(60)));
                        readings.add(version(original, version.add(BigInteger.ONE), original.versionScope(), recordedAt.plusSeconds(120)));
                    }
                    // three corrections recorded together: the highest wins (a reading has one network operator, so one scope)
                    case 2 -> {
                        readings.add(version(original, version.add(BigInteger.ONE), original.versionScope(), recordedAt));
                        readings.add(version(original, version.add(BigInteger.TWO), original.versionScope(), recordedAt));
                        readings.add(version(original, version.add(BigInteger.valueOf(5)), original.versionScope(), recordedAt));
                    }
                    // an older version, recorded with it: superseded
                    default -> readings.add(version(original, version.subtract(BigInteger.ONE), original.versionScope(), recordedAt));
                }
            }
            ReadingsOracle oracle = ReadingsOracle.of(readings);
            assertThat(oracle.count(View.RESOLVED, ReadingsOracle.all())).isLessThan(oracle.count(View.VERSIONS, ReadingsOracle.all()));
            try (Connection connection = tables.connect()) {
                new ReadingsLoader(tables.hotTier()).load(connection, readings);
            }
            tables.clock().set(day.plus(DAY).plus(SETTLEMENT_LAG));

            // pages of five rows: the versions of many keys straddle two or three pages
            ArchiveOutcome outcome = tables.cycle(new ArchivalSettings(SETTLEMENT_LAG, ArchivalSettings.DEFAULT_READER_GRACE, 5)).archiveOnce();
            assertArchived(tables, oracle, outcome, Instant.EPOCH, day.plus(DAY));
            assertThat(tables.dataFiles()).extracting(file -> ColdFileRole.of(file.location()).orElseThrow())
                    .containsExactlyInAnyOrder(ColdFileRole.WINNERS, ColdFileRole.SUPERSEDED);
        }
    }

    private static Reading version(Reading reading, BigInteger version, String versionScope, Instant recordedAt)
    {
        return new Reading(reading.maloId(), reading.meloId(), reading.obisCode(), reading.sparte(), reading.from(), reading.to(),
                reading.value().add(BigDecimal.valueOf(version.longValue() % 1000, 3)), reading.unit(), reading.quality(), reading.resolution(),
                reading.sourceKind(), reading.sourceDetail(), reading.provenance(), version, versionScope, recordedAt, reading.balancingDay());
    }

    @Test
    void testParquetSchemaCarriesIcebergFieldIds()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("archives_schema")) {
            Instant day = Instant.parse("2024-03-05T00:00:00Z");
            try (Connection connection = tables.connect()) {
                new ReadingsLoader(tables.hotTier()).load(connection, utcDay(day, 1));
            }
            tables.clock().set(day.plus(DAY).plus(SETTLEMENT_LAG));
            tables.cycle().archiveOnce();

            DataFile file = tables.dataFiles().getFirst();
            MessageType schema = ParquetReadings.schema(file.location());
            assertThat(schema).isEqualTo(ReadingsParquetSchema.messageType());
            for (ReadingsColumn column : ReadingsColumn.values()) {
                assertThat(schema.getType(column.columnName()).getId().intValue()).isEqualTo(column.fieldId());
            }
            assertThat(file.sortOrderId()).isEqualTo(tables.table().sortOrder().orderId());
            // and so does the Parquet footer, in every row group, for readers that know no Iceberg
            assertThat(ParquetReadings.sortingColumns(file.location()))
                    .singleElement()
                    .isEqualTo(List.of("malo_id ASC NULLS FIRST", "obis_code ASC NULLS FIRST", "from ASC NULLS FIRST", "version ASC NULLS FIRST"));
            assertThat(file.splitOffsets()).hasSize(1).allMatch(offset -> offset == 4);
        }
    }

    private static void assertArchived(TestingArchiverTable tables, ReadingsOracle oracle, ArchiveOutcome outcome, Instant start, Instant end)
            throws SQLException, IOException
    {
        List<Reading> expected = sorted(oracle.versions(fromRange(start, end)));
        assertThat(outcome.kind()).isEqualTo(Kind.ARCHIVED);
        assertThat(outcome.window().orElseThrow().start()).isEqualTo(start);
        assertThat(outcome.window().orElseThrow().end()).isEqualTo(end);
        assertThat(outcome.rows()).isEqualTo(expected.size());
        assertThat(outcome.watermark()).isEqualTo(TieringWatermark.of(end));

        Table table = tables.table();
        Snapshot snapshot = table.currentSnapshot();
        assertThat(outcome.snapshotId()).contains(snapshot.snapshotId());
        assertThat(snapshot.summary())
                .containsEntry(WATERMARK_KEY, TieringWatermark.formatInstant(end))
                .containsEntry(ROW_COUNT_KEY, String.valueOf(expected.size()))
                .containsEntry(ARCHIVED_RANGE_KEY, TieringWatermark.formatInstant(start) + "/" + TieringWatermark.formatInstant(end))
                .containsEntry(ARCHIVAL_STEP_KEY, String.valueOf(tables.hotTier().naming().step().toSeconds()))
                .containsEntry(ARCHIVED_AT_KEY, TieringWatermark.formatInstant(tables.clock().instant()));

        // what the commit added is exactly the window's rows, each file sorted and described by correct metrics
        List<Reading> archived = new ArrayList<>();
        List<Reading> winners = new ArrayList<>();
        long bytes = 0;
        int files = 0;
        for (DataFile file : snapshot.addedDataFiles(table.io())) {
            List<Reading> rows = ParquetReadings.read(file.location());
            assertThat(rows).isSortedAccordingTo(Readings.SORT_ORDER);
            assertThat(file.recordCount()).isEqualTo(rows.size());
            assertMetrics(file, rows);
            // the resolved layout: each file's role in its name and, for plain Parquet readers, in its footer
            ColdFileRole role = ColdFileRole.of(file.location()).orElseThrow();
            assertThat(role).isIn(ColdFileRole.WINNERS, ColdFileRole.SUPERSEDED);
            assertThat(ParquetReadings.keyValueMetadata(file.location())).containsEntry(ColdFileRole.FOOTER_KEY, role.label());
            if (role == ColdFileRole.WINNERS) {
                winners.addAll(rows);
            }
            archived.addAll(rows);
            bytes += file.fileSizeInBytes();
            files++;
        }
        assertThat(sorted(archived)).isEqualTo(expected);
        // the winners files hold exactly the winning version of every key, the superseded files the rest
        assertThat(sorted(winners)).isEqualTo(sorted(oracle.resolved(fromRange(start, end))));
        assertThat(outcome.files()).isEqualTo(files);
        assertThat(outcome.bytes()).isEqualTo(bytes);
        assertTiers(tables, oracle);
    }

    /** PostgreSQL holds exactly the rows at or above W, Iceberg exactly the rows below it. */
    private static void assertTiers(TestingArchiverTable tables, ReadingsOracle oracle)
            throws SQLException
    {
        TieringWatermark watermark = WatermarkReader.current(tables.table()).watermark();
        long cold = tables.dataFiles().stream().mapToLong(DataFile::recordCount).sum();
        assertThat(cold).isEqualTo(oracle.count(View.VERSIONS, fromBefore(watermark.instant())));
        assertThat(tables.hotRows(watermark)).isEqualTo(oracle.count(View.VERSIONS, fromAtOrAfter(watermark.instant())));
    }

    private static void assertMetrics(DataFile file, List<Reading> rows)
    {
        for (ReadingsColumn column : ReadingsColumn.values()) {
            int fieldId = column.fieldId();
            Type type = column.icebergType();
            List<Object> values = rows.stream().map(row -> icebergValue(row, column)).filter(Objects::nonNull).toList();
            assertThat(file.valueCounts()).containsEntry(fieldId, (long) rows.size());
            assertThat(file.nullValueCounts()).containsEntry(fieldId, (long) (rows.size() - values.size()));
            if (values.isEmpty()) {
                assertThat(file.lowerBounds()).doesNotContainKey(fieldId);
                assertThat(file.upperBounds()).doesNotContainKey(fieldId);
                continue;
            }
            Comparator<Object> comparator = Comparators.forType(type.asPrimitiveType());
            Object min = values.stream().min(comparator).orElseThrow();
            Object max = values.stream().max(comparator).orElseThrow();
            Object lower = Conversions.fromByteBuffer(type, file.lowerBounds().get(fieldId));
            Optional<Object> upper = Optional.ofNullable(file.upperBounds().get(fieldId)).map(bound -> Conversions.fromByteBuffer(type, bound));
            if (column.kind() == ReadingsColumn.ColumnKind.STRING) {
                assertThat(lower.toString()).as(column.columnName()).isEqualTo(UnicodeUtil.truncateStringMin((String) min, TRUNCATE_LENGTH));
                assertThat(upper.map(Object::toString)).as(column.columnName()).contains(UnicodeUtil.truncateStringMax((String) max, TRUNCATE_LENGTH));
                assertThat(comparator.compare(lower, min)).isLessThanOrEqualTo(0);
                assertThat(comparator.compare(upper.orElseThrow(), max)).isGreaterThanOrEqualTo(0);
            }
            else {
                assertThat(lower).as(column.columnName()).isEqualTo(min);
                assertThat(upper).as(column.columnName()).contains(max);
            }
        }
    }

    private static Object icebergValue(Reading reading, ReadingsColumn column)
    {
        return switch (column) {
            case MALO_ID -> reading.maloId();
            case MELO_ID -> reading.meloId().orElse(null);
            case OBIS_CODE -> reading.obisCode();
            case SPARTE -> reading.sparte().name();
            case FROM -> micros(reading.from());
            case TO -> micros(reading.end());
            case VALUE -> reading.value();
            case UNIT -> reading.unit().name();
            case QUALITY -> reading.quality().name();
            case RESOLUTION -> reading.resolution();
            case SOURCE_KIND -> reading.sourceKind();
            case SOURCE_DETAIL -> reading.sourceDetail().orElse(null);
            case PROVENANCE -> reading.provenance().orElse(null);
            case VERSION -> new BigDecimal(reading.version());
            case VERSION_SCOPE -> reading.versionScope();
            case RECORDED_AT -> micros(reading.recordedAt());
            case BALANCING_DAY -> (int) reading.balancingDay().toEpochDay();
        };
    }

    private static long micros(Instant instant)
    {
        return instant.getEpochSecond() * 1_000_000 + instant.getNano() / 1_000;
    }

    private static List<Reading> sorted(List<Reading> readings)
    {
        return readings.stream().sorted(Readings.SORT_ORDER).toList();
    }

    private static List<String> detached(TestingArchiverTable tables)
            throws SQLException
    {
        return tables.partitions().stream().filter(partition -> !partition.attached()).map(HotPartition::name).toList();
    }

    private static int months(YearMonth month)
    {
        return (month.getYear() - 1970) * 12 + month.getMonthValue() - 1;
    }

    private static void load(TestingArchiverTable tables, ReadingsGenerator generator)
            throws SQLException
    {
        try (Connection connection = tables.connect()) {
            new ReadingsLoader(tables.hotTier()).load(connection, generator);
        }
    }

    /**
     * The 96 quarter-hours of one UTC day for {@code meters} meters, taken from the generator's Berlin days, which
     * straddle UTC days; every meter's partition is then exactly this day's.
     */
    private static List<Reading> utcDay(Instant day, int meters)
    {
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(day.getEpochSecond())
                .meters(meters)
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
