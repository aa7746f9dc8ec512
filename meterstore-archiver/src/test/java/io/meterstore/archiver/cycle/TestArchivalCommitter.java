package io.meterstore.archiver.cycle;

import io.meterstore.archiver.cycle.ArchivalCommitter.CommitResult;
import io.meterstore.archiver.cycle.ArchiveOutcome.Kind;
import io.meterstore.core.IcebergCatalogs;
import io.meterstore.core.LocalFileIo;
import io.meterstore.core.Reading;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.io.OutputFile;
import org.junit.jupiter.api.Test;

import java.io.Closeable;
import java.nio.file.Files;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.meterstore.core.TieringWatermark.ROW_COUNT_KEY;
import static io.meterstore.core.TieringWatermark.WATERMARK_KEY;
import static org.assertj.core.api.Assertions.assertThat;

final class TestArchivalCommitter
{
    private static final Duration DAY = Duration.ofDays(1);
    private static final Instant MARCH_5 = Instant.parse("2024-03-05T00:00:00Z");

    @Test
    void testCommitLandsOnACorrectionThatKeptTheWatermark()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("committer_correction")) {
            tables.clock().set(MARCH_5.plus(Duration.ofDays(10)));
            ArchivalCommitter committer = new ArchivalCommitter(tables.clock(), DAY);
            Table stale = tables.table();

            // a late correction, committed after the archiver loaded the table, republishes the watermark unchanged
            Table other = tables.table();
            other.newAppend().set(WATERMARK_KEY, TieringWatermark.EPOCH.toProperty()).set(ROW_COUNT_KEY, "0").commit();
            long correction = other.currentSnapshot().snapshotId();

            CommitResult result = committer.commit(stale, new ArchivalWindow(Instant.EPOCH, MARCH_5, Optional.empty()), List.of(), 0);
            assertThat(result).isInstanceOf(CommitResult.Committed.class);
            Table table = tables.table();
            Snapshot snapshot = table.currentSnapshot();
            assertThat(snapshot.parentId()).isEqualTo(correction);
            assertThat(((CommitResult.Committed) result).snapshotId()).isEqualTo(snapshot.snapshotId());
            assertThat(WatermarkReader.current(table).watermark()).isEqualTo(TieringWatermark.of(MARCH_5));
        }
    }

    @Test
    void testCommitOnAMovedWatermarkIsSuperseded()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("committer_superseded")) {
            tables.clock().set(MARCH_5.plus(Duration.ofDays(10)));
            ArchivalCommitter committer = new ArchivalCommitter(tables.clock(), DAY);
            Table stale = tables.table();

            // another archiver moved W first
            CommitResult first = new ArchivalCommitter(tables.clock(), DAY).commit(tables.table(), new ArchivalWindow(Instant.EPOCH, MARCH_5, Optional.empty()), List.of(), 0);
            assertThat(first).isInstanceOf(CommitResult.Committed.class);

            CommitResult second = committer.commit(stale, new ArchivalWindow(Instant.EPOCH, MARCH_5.plus(DAY), Optional.empty()), List.of(), 0);
            assertThat(second).isEqualTo(new CommitResult.Superseded(TieringWatermark.of(MARCH_5)));
            assertThat(tables.table().snapshots()).hasSize(1);
        }
    }

    @Test
    void testRacingArchiverSupersedesTheCycleAndItsFilesAreDeleted()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("committer_race")) {
            List<Reading> readings = ReadingsGenerator.builder()
                    .meters(3)
                    .startDay(LocalDate.ofInstant(MARCH_5, ZoneOffset.UTC))
                    .days(2)
                    .build()
                    .stream()
                    .filter(reading -> !reading.from().isBefore(MARCH_5) && reading.from().isBefore(MARCH_5.plus(DAY)))
                    .toList();
            try (Connection connection = tables.connect()) {
                new ReadingsLoader(tables.hotTier()).load(connection, readings);
            }
            tables.clock().set(MARCH_5.plus(DAY).plus(Duration.ofDays(7)));

            // the moment this cycle writes its first data file, another archiver commits the same window
            List<String> written = new ArrayList<>();
            AtomicBoolean raced = new AtomicBoolean();
            LocalFileIo racingIo = new LocalFileIo()
            {
                @Override
                public OutputFile newOutputFile(String location)
                {
                    if (location.endsWith(".parquet")) {
                        written.add(location);
                        if (raced.compareAndSet(false, true)) {
                            new ArchivalCommitter(tables.clock(), DAY).commit(tables.table(), new ArchivalWindow(Instant.EPOCH, MARCH_5.plus(DAY), Optional.empty()), List.of(), 0);
                        }
                    }
                    return super.newOutputFile(location);
                }
            };
            Catalog catalog = IcebergCatalogs.jdbc(tables.warehouse().catalogSpec(), properties -> racingIo);
            try {
                ArchivalCycle cycle = new ArchivalCycle(catalog, TestingArchiverTable.identifier(), tables.hotTier(), tables.database()::connect, ArchivalSettings.DEFAULTS, tables.clock());
                ArchiveOutcome outcome = cycle.archiveOnce();
                assertThat(outcome.kind()).isEqualTo(Kind.SUPERSEDED);
                assertThat(outcome.watermark()).isEqualTo(TieringWatermark.of(MARCH_5.plus(DAY)));
                assertThat(outcome.rows()).isZero();
                assertThat(outcome.describe()).isEqualTo("metering.readings: superseded, another archiver moved the watermark to 2024-03-06T00:00:00Z first; nothing committed");
            }
            finally {
                ((Closeable) catalog).close();
            }
            // the day's winners file and superseded file: both deleted
            assertThat(written).hasSize(2);
            assertThat(written).allSatisfy(location -> assertThat(Files.exists(LocalFileIo.path(location))).isFalse());
            assertThat(tables.table().snapshots()).hasSize(1);
            assertThat(tables.dataFiles()).isEmpty();
        }
    }
}
