package io.meterstore.archiver.cycle;

import io.meterstore.archiver.cycle.ArchiveOutcome.Kind;
import io.meterstore.archiver.cycle.TestingArchiverProcess.PrintedOutcome;
import io.meterstore.archiver.cycle.TieringAudit.ArchivedRange;
import io.meterstore.core.HotPartition;
import io.meterstore.core.IcebergCatalogs;
import io.meterstore.core.IcebergCatalogs.JdbcCatalogSpec;
import io.meterstore.core.LocalFileIo;
import io.meterstore.core.TieringWatermark;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.ReadingsOracle;
import io.meterstore.testing.TestingLockHolder;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.Closeable;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import static io.meterstore.core.TieringWatermark.ARCHIVED_RANGE_KEY;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Faults around an archival cycle run by a real archiver process: PostgreSQL stopped and started while the cycle is in
 * flight, another writer committing between the cycle's base and its commit, and the server gone right after a swap.
 * Afterwards the watermark has moved exactly once per window and every row is in exactly one tier, as the oracle has it.
 */
final class TestArchivalFaults
{
    private static final Duration DAY = Duration.ofDays(1);
    private static final Duration SETTLEMENT_LAG = Duration.ofDays(7);
    private static final Duration READER_GRACE = Duration.ofHours(1);
    private static final ArchivalSettings SETTINGS = new ArchivalSettings(SETTLEMENT_LAG, READER_GRACE, ArchivalSettings.DEFAULT_CHUNK_ROWS);
    private static final Duration TIMEOUT = Duration.ofSeconds(90);

    @TempDir
    Path directory;

    @Test
    void testPostgresRestartDuringCycle()
            throws Exception
    {
        ReadingsGenerator generator = ReadingsGenerator.builder().seed(31).meters(4).startDay(LocalDate.of(2024, 5, 6)).days(2).correctionsFraction(0.05).build();
        ReadingsOracle oracle = ReadingsOracle.of(generator);
        // restarted here: a server of its own, not the one the other test classes of this JVM share
        try (TestingPostgresServer server = TestingPostgresServer.restartable(Files.createDirectory(directory.resolve("pgdata")));
                TestingArchiverTable tables = TestingArchiverTable.create(server, "restart_cycle", DAY, Duration.ofSeconds(5))) {
            try (Connection connection = tables.connect()) {
                new ReadingsLoader(tables.hotTier()).load(connection, generator);
            }
            List<HotPartition> loaded = tables.partitions();
            Instant firstEnd = loaded.getFirst().start().plus(DAY);
            Instant lastEnd = loaded.getLast().start().plus(DAY);
            tables.clock().set(firstEnd.plus(SETTLEMENT_LAG));

            // the cycle's commit waits on the catalogue's row: the partition is detached, its files written, W not yet moved
            try (TestingLockHolder pointer = TestingLockHolder.lockCatalogPointer(tables.database(), TestingArchiverTable.SCHEMA, TestingArchiverTable.TABLE);
                    TestingArchiverProcess archiver = TestingArchiverProcess.start("restart", tables, directory, tables.clock().instant(), READER_GRACE, false, Optional.empty(), false)) {
                pointer.awaitWaiter("UPDATE iceberg_tables", TIMEOUT);
                server.stop();
                server.start();
                assertThat(archiver.awaitExit(TIMEOUT)).as(archiver.output()).isEqualTo(1);
                assertThat(archiver.lines()).anyMatch(line -> line.startsWith("FAILED "));
            }
            // the catalogue opened before the restart, as the service keeps it, reconnects instead of failing its first use;
            // whether the swap was cut off or went through when the catalogue's pool reconnected, every row is in one tier
            TieringWatermark afterRestart = TieringAudit.assertConsistent(tables, oracle);
            assertThat(afterRestart).isIn(TieringWatermark.EPOCH, TieringWatermark.of(firstEnd));

            // the next cycles complete: W moves once per window, every row in exactly one tier
            tables.clock().set(lastEnd.plus(SETTLEMENT_LAG));
            TestArchivalCrashRecovery.archiveUntilIdle(tables.cycle(SETTINGS));
            assertThat(TieringAudit.assertConsistent(tables, oracle)).isEqualTo(TieringWatermark.of(lastEnd));
            assertThat(TieringAudit.assertWatermarkHistory(tables)).containsExactly(
                    new ArchivedRange(Instant.EPOCH, firstEnd),
                    new ArchivedRange(firstEnd, firstEnd.plus(DAY)),
                    new ArchivedRange(firstEnd.plus(DAY), lastEnd));
            assertThat(tables.dataFiles().stream().mapToLong(DataFile::recordCount).sum()).isEqualTo(oracle.size());
        }
    }

    @Test
    void testCommitConflictWithAnotherWriter()
            throws Exception
    {
        ReadingsGenerator generator = ReadingsGenerator.builder().seed(32).meters(4).startDay(LocalDate.of(2024, 5, 6)).days(2).correctionsFraction(0.05).build();
        ReadingsOracle oracle = ReadingsOracle.of(generator);
        try (TestingArchiverTable tables = TestingArchiverTable.create("commit_conflict")) {
            try (Connection connection = tables.connect()) {
                new ReadingsLoader(tables.hotTier()).load(connection, generator);
            }
            List<HotPartition> loaded = tables.partitions();
            Instant firstEnd = loaded.getFirst().start().plus(DAY);
            Instant secondEnd = firstEnd.plus(DAY);
            tables.clock().set(firstEnd.plus(SETTLEMENT_LAG));
            assertThat(tables.cycle(SETTINGS).archiveOnce().kind()).isEqualTo(Kind.ARCHIVED);
            tables.clock().advance(DAY);

            Snapshot compaction;
            try (TestingArchiverProcess archiver = TestingArchiverProcess.start("conflict", tables, directory, tables.clock().instant(), READER_GRACE, false, Optional.empty(), false, true)) {
                archiver.awaitLine("PAUSED before-commit", TIMEOUT);
                // another tool compacts the archived day between the cycle's base and its commit: a snapshot without a watermark
                Table table = tables.table();
                DataFile original = TieringAudit.dataFilesWithStatistics(table).getFirst();
                String copyLocation = original.location().replace(".parquet", "-compacted.parquet");
                Files.copy(LocalFileIo.path(original.location()), LocalFileIo.path(copyLocation));
                DataFile copy = DataFiles.builder(table.spec()).copy(original).withPath(copyLocation).build();
                table.newRewrite().rewriteFiles(Set.of(original), Set.of(copy)).set("engine", "compaction").commit();
                compaction = table.currentSnapshot();

                archiver.resume();
                assertThat(archiver.awaitExit(TIMEOUT)).as(archiver.output()).isZero();
                // the swap lost against the compaction; the cycle retried on top of it, and W moved past the window once
                assertThat(archiver.outcomes()).extracting(PrintedOutcome::kind).containsExactly(Kind.ARCHIVED);
            }
            Table table = tables.table();
            assertThat(table.currentSnapshot().parentId()).isEqualTo(compaction.snapshotId());
            assertThat(table.currentSnapshot().summary()).containsEntry(ARCHIVED_RANGE_KEY, new ArchivalWindow(firstEnd, secondEnd, Optional.empty()).toProperty());
            assertThat(TieringAudit.assertConsistent(tables, oracle)).isEqualTo(TieringWatermark.of(secondEnd));
            assertThat(TieringAudit.assertWatermarkHistory(tables)).containsExactly(
                    new ArchivedRange(Instant.EPOCH, firstEnd),
                    new ArchivedRange(firstEnd, secondEnd));
        }
    }

    @Test
    void testServerGoneRightAfterTheSwap()
            throws Exception
    {
        ReadingsGenerator generator = ReadingsGenerator.builder().seed(33).meters(4).startDay(LocalDate.of(2024, 5, 6)).days(2).build();
        ReadingsOracle oracle = ReadingsOracle.of(generator);
        try (TestingArchiverTable tables = TestingArchiverTable.create("lost_reply")) {
            try (Connection connection = tables.connect()) {
                new ReadingsLoader(tables.hotTier()).load(connection, generator);
            }
            List<HotPartition> loaded = tables.partitions();
            Instant firstEnd = loaded.getFirst().start().plus(DAY);
            Instant lastEnd = loaded.getLast().start().plus(DAY);
            tables.clock().set(firstEnd.plus(SETTLEMENT_LAG));
            Catalog catalog = IcebergCatalogs.jdbc(new JdbcCatalogSpec(TestingWarehouse.CATALOG_NAME, LostReplyDriver.url(tables.database().jdbcUrl()), tables.database().user(), Optional.empty(), tables.warehouse().location()));
            try {
                ArchivalCycle cycle = new ArchivalCycle(catalog, TestingArchiverTable.identifier(), tables.hotTier(), tables.database()::connect, SETTINGS, tables.clock());
                LostReplyDriver.arm();
                // the swap ran, then the catalogue's database went away: the cycle cannot tell, and keeps its files
                assertThatThrownBy(cycle::archiveOnce).isInstanceOf(CommitStateUnknownException.class);
                assertThat(LostReplyDriver.armed()).isFalse();
            }
            finally {
                ((Closeable) catalog).close();
            }
            // the swap had landed: W moved, and every file the table references is there
            assertThat(TieringAudit.assertConsistent(tables, oracle)).isEqualTo(TieringWatermark.of(firstEnd));

            // the next cycles go on from there, each window once
            tables.clock().set(lastEnd.plus(SETTLEMENT_LAG));
            TestArchivalCrashRecovery.archiveUntilIdle(tables.cycle(SETTINGS));
            assertThat(TieringAudit.assertConsistent(tables, oracle)).isEqualTo(TieringWatermark.of(lastEnd));
            assertThat(TieringAudit.assertWatermarkHistory(tables)).containsExactly(
                    new ArchivedRange(Instant.EPOCH, firstEnd),
                    new ArchivedRange(firstEnd, firstEnd.plus(DAY)),
                    new ArchivedRange(firstEnd.plus(DAY), lastEnd));
        }
    }

    @Test
    void testServerBackRightAfterTheSwap()
            throws Exception
    {
        ReadingsGenerator generator = ReadingsGenerator.builder().seed(33).meters(4).startDay(LocalDate.of(2024, 5, 6)).days(2).build();
        ReadingsOracle oracle = ReadingsOracle.of(generator);
        try (TestingArchiverTable tables = TestingArchiverTable.create("lost_reply_back")) {
            try (Connection connection = tables.connect()) {
                new ReadingsLoader(tables.hotTier()).load(connection, generator);
            }
            List<HotPartition> loaded = tables.partitions();
            Instant firstEnd = loaded.getFirst().start().plus(DAY);
            Instant lastEnd = loaded.getLast().start().plus(DAY);
            tables.clock().set(firstEnd.plus(SETTLEMENT_LAG));
            Catalog catalog = IcebergCatalogs.jdbc(new JdbcCatalogSpec(TestingWarehouse.CATALOG_NAME, LostReplyDriver.url(tables.database().jdbcUrl()), tables.database().user(), Optional.empty(), tables.warehouse().location()));
            try {
                ArchivalCycle cycle = new ArchivalCycle(catalog, TestingArchiverTable.identifier(), tables.hotTier(), tables.database()::connect, SETTINGS, tables.clock());
                LostReplyDriver.armWithServerBack();
                // the swap ran and its reply was lost, and the pool could reconnect at once: the swap is not run again (it would find its
                // pointer moved, report the commit failed, and Iceberg would delete the manifests of the commit that landed)
                assertThatThrownBy(cycle::archiveOnce).isInstanceOf(CommitStateUnknownException.class);
                assertThat(LostReplyDriver.armed()).isFalse();
            }
            finally {
                ((Closeable) catalog).close();
            }
            // the swap had landed: W moved, and every file the table references is there
            assertThat(TieringAudit.assertConsistent(tables, oracle)).isEqualTo(TieringWatermark.of(firstEnd));

            // the next cycles go on from there, each window once
            tables.clock().set(lastEnd.plus(SETTLEMENT_LAG));
            TestArchivalCrashRecovery.archiveUntilIdle(tables.cycle(SETTINGS));
            assertThat(TieringAudit.assertConsistent(tables, oracle)).isEqualTo(TieringWatermark.of(lastEnd));
            assertThat(TieringAudit.assertWatermarkHistory(tables)).containsExactly(
                    new ArchivedRange(Instant.EPOCH, firstEnd),
                    new ArchivedRange(firstEnd, firstEnd.plus(DAY)),
                    new ArchivedRange(firstEnd.plus(DAY), lastEnd));
        }
    }
}
