package io.meterstore.archiver.maintenance;

import com.google.common.collect.ImmutableList;
import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchivalSettings;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.cycle.TestingArchiverTable;
import io.meterstore.core.LocalFileIo;
import io.meterstore.core.SnapshotRetention;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.ReadingsOracle;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** Archived days to maintain: a few Berlin days of a few meters, each UTC day one archival commit. */
final class TestingMaintenance
{
    static final LocalDate FIRST_DAY = LocalDate.of(2024, 3, 4);
    static final Duration READER_GRACE = Duration.ofHours(1);

    private TestingMaintenance() {}

    /**
     * Loads {@code days} Berlin days of three meters and archives every partition, one commit each; with {@code drop},
     * also drops every archived partition once the reader grace has passed.
     */
    static ReadingsOracle archive(TestingArchiverTable tables, int days, boolean drop)
            throws Exception
    {
        return archive(tables, FIRST_DAY, days, drop);
    }

    static ReadingsOracle archive(TestingArchiverTable tables, LocalDate firstDay, int days, boolean drop)
            throws Exception
    {
        ReadingsGenerator generator = load(tables, firstDay, days);
        int partitions = tables.partitions().size();
        ArchivalCycle cycle = cycle(tables);
        for (int window = 0; window < partitions; window++) {
            ArchiveOutcome outcome = cycle.archiveOnce();
            assertThat(outcome.kind()).as(outcome.describe()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);
        }
        assertThat(history(tables.table())).hasSize(partitions);
        if (drop) {
            tables.clock().advance(READER_GRACE.plusMinutes(1));
            assertThat(cycle.archiveOnce().droppedPartitions()).hasSize(partitions);
        }
        return ReadingsOracle.of(generator.iterator());
    }

    /** Loads {@code days} Berlin days of three meters from {@code firstDay} and sets the clock past their settlement. */
    static ReadingsGenerator load(TestingArchiverTable tables, LocalDate firstDay, int days)
            throws Exception
    {
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(13)
                .meters(3)
                .startDay(firstDay)
                .days(days)
                .correctionsFraction(0.05)
                .build();
        try (Connection connection = tables.connect()) {
            new ReadingsLoader(tables.hotTier()).load(connection, generator);
        }
        // every partition the load created is closed, the last one too
        tables.clock().set(generator.end().plus(Duration.ofDays(9)));
        return generator;
    }

    static ArchivalCycle cycle(TestingArchiverTable tables)
    {
        return tables.cycle(new ArchivalSettings(ArchivalSettings.DEFAULT_SETTLEMENT_LAG, READER_GRACE, ArchivalSettings.DEFAULT_CHUNK_ROWS));
    }

    /** The main branch from the current snapshot back, newest first. */
    static List<Long> history(Table table)
    {
        return ImmutableList.copyOf(SnapshotUtil.ancestorIds(table.currentSnapshot(), table::snapshot));
    }

    static List<Long> snapshotIds(Table table)
    {
        return ImmutableList.copyOf(table.snapshots()).stream().map(Snapshot::snapshotId).toList();
    }

    /** The time of the table's newest commit plus {@code later}: snapshot times are the committing machine's clock. */
    static Instant afterNewestCommit(Table table, Duration later)
    {
        return Instant.ofEpochMilli(table.currentSnapshot().timestampMillis()).plus(later);
    }

    /** A copy of {@code file} under a new name beside it, as another engine's rewrite of it would write. */
    static DataFile copy(Table table, DataFile file)
            throws IOException
    {
        Path source = LocalFileIo.path(file.location());
        Path target = source.resolveSibling("copy-" + UUID.randomUUID() + ".parquet");
        Files.copy(source, target);
        return DataFiles.builder(table.specs().get(file.specId())).copy(file).withPath(target.toUri().toString()).build();
    }

    static MaintenanceSettings settings(Duration retention, int minSnapshotsToKeep, Duration orphanSafetyAge)
    {
        return new MaintenanceSettings(new SnapshotRetention(retention, minSnapshotsToKeep), orphanSafetyAge, READER_GRACE);
    }
}
