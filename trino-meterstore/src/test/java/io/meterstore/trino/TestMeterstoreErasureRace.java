package io.meterstore.trino;

import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchivalSettings;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.maintenance.ColdTierLayout;
import io.meterstore.archiver.maintenance.CompactionSettings;
import io.meterstore.archiver.maintenance.MaintenanceSettings;
import io.meterstore.archiver.maintenance.MonthCompaction.Compacted;
import io.meterstore.archiver.maintenance.TableMaintenance;
import io.meterstore.core.ArchivalHistory;
import io.meterstore.core.ColdFileRole;
import io.meterstore.core.IcebergCatalogs;
import io.meterstore.core.LocalFileIo;
import io.meterstore.core.Reading;
import io.meterstore.core.SnapshotRetention;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.ReadingsOracle;
import io.meterstore.testing.ReadingsOracle.View;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.trino.testing.AbstractTestQueryFramework;
import io.trino.testing.QueryRunner;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.OutputFile;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.io.Closeable;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.LocalDate;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

import static com.google.common.collect.MoreCollectors.onlyElement;
import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;
import static io.meterstore.trino.TestingInserts.correction;
import static io.meterstore.trino.TestingInserts.insert;
import static io.meterstore.trino.TestingInserts.timestamp;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A DELETE racing the real archiver over the month it erases from: an archival cycle of the window holding part of
 * the range, stopped between its write and its commit (the DELETE waits for it, then erases the rows where the cycle put
 * them); a compaction of the month that wrote its files before the DELETE and commits after it (its commit fails
 * validation and it compacts the month again, without the erased rows); and a compaction holding the lease for its
 * commit (the DELETE waits, then erases from the compacted files). After each, the range is gone from both tiers and
 * every other row equals the oracle. Each pause is a latch, never a sleep.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
final class TestMeterstoreErasureRace
        extends AbstractTestQueryFramework
{
    private static final Duration TIMEOUT = Duration.ofMinutes(2);
    // a thread of its own for each statement or step that blocks: the common pool has one thread on a two-core machine
    private static final Executor OWN_THREAD = task -> Thread.ofPlatform().daemon().start(task);
    private static final Instant APRIL_START = Instant.parse("2026-04-01T00:00:00Z");
    private static final Instant APRIL_SECOND = Instant.parse("2026-04-02T00:00:00Z");
    private static final YearMonth MARCH = YearMonth.of(2026, 3);
    // past March's end plus the compaction delay
    private static final Instant COMPACTION_TIME = Instant.parse("2026-05-01T00:00:00Z");

    private TestingWarehouse warehouse;
    private Table table;
    private final List<Reading> delivered = new ArrayList<>();
    private final List<Predicate<Reading>> erased = new ArrayList<>();

    @Override
    protected QueryRunner createQueryRunner()
            throws Exception
    {
        warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("erasure_race"));
        table = TestingMeterstoreTables.createTables(warehouse);
        // the last Berlin days of March and the first of April: March lies whole below W, April's first day is hot
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(1717)
                .meters(3)
                .startDay(LocalDate.of(2026, 3, 29))
                .days(5)
                .correctionsFraction(0.03)
                .build();
        generator.forEach(delivered::add);
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, generator);
        }
        while (watermark().instant().isBefore(APRIL_START)) {
            TestingArchival.archiveWindows(warehouse, 1);
        }
        return MeterstoreQueryRunner.builder(warehouse)
                .withCatalogOverrides(Map.of("meterstore.erasure.hmac-key", TestMeterstoreErasure.HMAC_KEY))
                .build();
    }

    @Test
    @Order(1)
    void testDeleteWaitsForTheArchivalCycleOfItsWindow()
            throws Exception
    {
        assertThat(watermark().instant()).isEqualTo(APRIL_START);
        // half a day below W, half a day in the window [APRIL_START, APRIL_SECOND) the cycle archives
        Instant lower = APRIL_START.minus(Duration.ofHours(12));
        Instant upper = APRIL_START.plus(Duration.ofHours(12));
        String range = erase(0, lower, upper);
        long hot = count("readings_versions WHERE %s AND \"from\" >= %s".formatted(range, timestamp(APRIL_START)));
        long cold = count("readings_versions WHERE %s AND \"from\" < %s".formatted(range, timestamp(APRIL_START)));
        assertThat(hot).isPositive();
        assertThat(cold).isPositive();

        PausingFileIo fileIo = new PausingFileIo();
        CompletableFuture<ArchiveOutcome> archival;
        CompletableFuture<Long> delete;
        boolean waited;
        Catalog catalog = pausingCatalog(fileIo);
        try {
            ArchivalCycle cycle = new ArchivalCycle(catalog, identifier(), TestingMeterstoreTables.hotTier(), () -> warehouse.database().connect(),
                    ArchivalSettings.DEFAULTS, InstantSource.fixed(TestingArchival.LATER));
            fileIo.arm();
            archival = CompletableFuture.supplyAsync(() -> {
                try {
                    return cycle.archiveOnce();
                }
                catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }, OWN_THREAD);
            // detached, streamed and written: the cycle holds its lease and is about to commit the window
            fileIo.awaitPaused();
            assertThat(archival).isNotDone();
            delete = deleteAsync(range);
            waited = awaitBlockedOnTheFence(delete);
            fileIo.resume();
            ArchiveOutcome outcome = archival.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            assertThat(outcome.kind()).as(outcome.describe()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);
            assertThat(outcome.watermark().instant()).isEqualTo(APRIL_SECOND);
        }
        finally {
            ((Closeable) catalog).close();
        }

        assertThat(delete.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(hot + cold);
        assertErasedAndOthersMatchTheOracle();
        // the DELETE ran after the commit: every row of the range was cold by then, and erased there
        assertThat(computeActual("SELECT rows_removed_hot, rows_removed_cold FROM \"readings$erasures\" ORDER BY erasure_id DESC LIMIT 1").getMaterializedRows().getFirst().getFields())
                .containsExactly(0L, hot + cold);
        // W moved exactly once for the window
        table.refresh();
        assertThat(ArchivalHistory.archivalCommits(table))
                .filteredOn(commit -> commit.to().isAfter(APRIL_START) && commit.from().isBefore(APRIL_SECOND))
                .singleElement()
                .satisfies(commit -> assertThat(List.of(commit.from(), commit.to())).containsExactly(APRIL_START, APRIL_SECOND));
        assertThat(waited).as("the DELETE waited for the archival cycle's lease").isTrue();
    }

    @Test
    @Order(2)
    void testCompactionWrittenBeforeADeleteDoesNotResurrectItsRows()
            throws Exception
    {
        String range = erase(1, Instant.parse("2026-03-30T00:00:00Z"), Instant.parse("2026-03-31T00:00:00Z"));
        long rows = count("readings_versions WHERE " + range);
        assertThat(rows).isPositive();
        AtomicLong deleted = new AtomicLong(-1);
        // March is read and written from the snapshot before the DELETE; the DELETE commits before the compaction's commit
        TableMaintenance maintenance = maintenance(warehouse.catalog(), CompactionSettings.DEFAULTS, () -> {
            if (deleted.get() < 0) {
                deleted.set(getQueryRunner().execute("DELETE FROM readings_versions WHERE " + range).getUpdateCount().orElseThrow());
            }
        });
        Compacted compacted = maintenance.compact().compaction().orElseThrow().compacted().stream().collect(onlyElement());
        assertThat(deleted.get()).isEqualTo(rows);
        assertThat(compacted.month()).isEqualTo(MARCH);
        assertErasedAndOthersMatchTheOracle();
        assertMonthCompacted(MARCH);
        // the first attempt replaced files the DELETE had removed: its commit failed, and the second read the month again
        assertThat(compacted.attempts()).isEqualTo(2);

        // nothing is left to compact, and the next compaction brings nothing back
        assertThat(maintenance(warehouse.catalog(), CompactionSettings.DEFAULTS, () -> {}).compact().compaction().orElseThrow().compacted()).isEmpty();
        assertMonthCompacted(MARCH);
        assertErasedAndOthersMatchTheOracle();
    }

    @Test
    @Order(3)
    void testDeleteWaitsForACompactionHoldingTheLeaseForItsCommit()
            throws Exception
    {
        // a late correction gives the compacted March a file to compact again (threshold one)
        Reading late = correction(2, Instant.parse("2026-03-29T10:00:00Z"), 1_000_000, "7.25");
        assertUpdate(insert(late), 1);
        delivered.add(late);
        String range = erase(2, Instant.parse("2026-03-29T00:00:00Z"), Instant.parse("2026-03-31T00:00:00Z"));
        long rows = count("readings_versions WHERE " + range);
        assertThat(rows).isPositive();

        PausingFileIo fileIo = new PausingFileIo();
        CompletableFuture<Compacted> compaction;
        CompletableFuture<Long> delete;
        boolean waited;
        Compacted compacted;
        Catalog catalog = pausingCatalog(fileIo);
        try {
            // armed once the month is written: the next metadata file is the month's commit, written under the lease
            TableMaintenance maintenance = maintenance(catalog, new CompactionSettings(CompactionSettings.DEFAULT_DELAY, CompactionSettings.DEFAULT_TARGET_FILE_SIZE_BYTES, 1), fileIo::arm);
            compaction = CompletableFuture.supplyAsync(() -> {
                try {
                    return maintenance.compact().compaction().orElseThrow().compacted().stream().collect(onlyElement());
                }
                catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }, OWN_THREAD);
            fileIo.awaitPaused();
            delete = deleteAsync(range);
            waited = awaitBlockedOnTheFence(delete);
            fileIo.resume();
            compacted = compaction.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        }
        finally {
            ((Closeable) catalog).close();
        }
        assertThat(compacted.month()).isEqualTo(MARCH);
        // then the DELETE erased the rows from the compacted files
        assertThat(delete.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(rows);
        assertErasedAndOthersMatchTheOracle();
        // the compaction committed while the DELETE waited, from the base it had read
        assertThat(compacted.attempts()).isEqualTo(1);
        assertThat(waited).as("the DELETE waited for the compaction's lease").isTrue();
    }

    /** Records that meter {@code meter}'s readings in ["from" {@code lower}, {@code upper}) are erased; returns them as a predicate. */
    private String erase(int meter, Instant lower, Instant upper)
    {
        String malo = ReadingsGenerator.maloId(meter);
        erased.add(reading -> reading.maloId().equals(malo) && !reading.from().isBefore(lower) && reading.from().isBefore(upper));
        return "malo_id = '%s' AND \"from\" >= %s AND \"from\" < %s".formatted(malo, timestamp(lower), timestamp(upper));
    }

    private CompletableFuture<Long> deleteAsync(String range)
    {
        return CompletableFuture.supplyAsync(() -> getQueryRunner().execute("DELETE FROM readings_versions WHERE " + range).getUpdateCount().orElseThrow(), OWN_THREAD);
    }

    /**
     * Waits until the DELETE queues for the table's fence (an advisory lock request PostgreSQL has not granted) or
     * completes; whether it queued. No timing: the wait ends on one of the two states.
     */
    private boolean awaitBlockedOnTheFence(CompletableFuture<Long> delete)
            throws Exception
    {
        Instant deadline = Instant.now().plus(TIMEOUT);
        try (Connection connection = warehouse.database().connect();
                Statement statement = connection.createStatement()) {
            while (!delete.isDone()) {
                try (ResultSet result = statement.executeQuery("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")) {
                    result.next();
                    if (result.getLong(1) > 0) {
                        return true;
                    }
                }
                assertThat(Instant.now()).as("the DELETE queued for the fence or completed").isBefore(deadline);
                Thread.sleep(20);
            }
        }
        return false;
    }

    /** Both tables, AS OF and Trino's Iceberg connector show no erased row; every other row equals the oracle. */
    private void assertErasedAndOthersMatchTheOracle()
    {
        Predicate<Reading> kept = reading -> erased.stream().noneMatch(range -> range.test(reading));
        ReadingsOracle oracle = ReadingsOracle.of(delivered);
        assertThat(TestingTotals.totalsByMeterDay(getQueryRunner(), "readings_versions")).isEqualTo(oracle.totalsByMeterDay(View.VERSIONS, kept));
        assertThat(TestingTotals.totalsByMeterDay(getQueryRunner(), "readings")).isEqualTo(oracle.totalsByMeterDay(View.RESOLVED, kept));
        assertThat(TestingTotals.totalsByMeterDay(getQueryRunner(), "readings FOR TIMESTAMP AS OF " + timestamp(Instant.now().minusSeconds(1))))
                .isEqualTo(oracle.totalsByMeterDay(View.RESOLVED, kept));
        Instant watermark = watermark().instant();
        assertThat(TestingTotals.totalsByMeterDay(getQueryRunner(), "iceberg.metering.readings"))
                .isEqualTo(oracle.totalsByMeterDay(View.VERSIONS, kept.and(ReadingsOracle.fromBefore(watermark))));
    }

    /** The month's live files are one winners and one superseded file, or the erasure's rewrites of them: no delete file. */
    private void assertMonthCompacted(YearMonth month)
            throws Exception
    {
        table.refresh();
        try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
            for (FileScanTask task : tasks) {
                if (!ColdTierLayout.month(task.file()).equals(month)) {
                    continue;
                }
                assertThat(ColdFileRole.of(task.file().location())).hasValueSatisfying(role -> assertThat(role).isIn(ColdFileRole.WINNERS, ColdFileRole.SUPERSEDED));
                assertThat(task.deletes()).isEmpty();
            }
        }
        assertThat(ColdTierLayout.of(table).months().get(month).compactedFiles()).isPositive();
    }

    private TableMaintenance maintenance(Catalog catalog, CompactionSettings compaction, Runnable beforeCompactionCommit)
    {
        return new TableMaintenance(catalog, identifier(), TestingMeterstoreTables.hotTier(), () -> warehouse.database().connect(),
                new MaintenanceSettings(SnapshotRetention.DEFAULT, Duration.ofDays(3), Duration.ofHours(1), compaction), InstantSource.fixed(COMPACTION_TIME), beforeCompactionCommit);
    }

    /** The warehouse's catalogue, whose commits write their new metadata through {@code fileIo}. */
    private Catalog pausingCatalog(PausingFileIo fileIo)
    {
        return IcebergCatalogs.jdbc(warehouse.catalogSpec(), properties -> fileIo);
    }

    private static TableIdentifier identifier()
    {
        return TableIdentifier.of(SCHEMA, TestingMeterstoreTables.TABLE);
    }

    private TieringWatermark watermark()
    {
        table.refresh();
        return WatermarkReader.current(table).watermark();
    }

    private long count(String from)
    {
        return (long) computeActual("SELECT count(*) FROM " + from).getOnlyValue();
    }

    /**
     * Stops the first commit after {@link #arm()} where it writes its new metadata file: after the base it validated and
     * before the pointer swap, with everything the committer holds still held, until {@link #resume()}.
     */
    private static final class PausingFileIo
            extends LocalFileIo
    {
        private final AtomicBoolean armed = new AtomicBoolean();
        private final CountDownLatch paused = new CountDownLatch(1);
        private final CountDownLatch resumed = new CountDownLatch(1);

        void arm()
        {
            armed.set(true);
        }

        void awaitPaused()
                throws InterruptedException
        {
            assertThat(paused.await(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).as("a commit reached its metadata write").isTrue();
        }

        void resume()
        {
            resumed.countDown();
        }

        @Override
        public OutputFile newOutputFile(String location)
        {
            if (location.endsWith(".metadata.json") && armed.compareAndSet(true, false)) {
                paused.countDown();
                try {
                    if (!resumed.await(TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                        throw new IllegalStateException("The paused commit was never resumed");
                    }
                }
                catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            }
            return super.newOutputFile(location);
        }
    }
}
