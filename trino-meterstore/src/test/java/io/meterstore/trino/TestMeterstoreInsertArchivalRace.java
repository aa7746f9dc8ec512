package io.meterstore.trino;

import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchivalSettings;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.core.HotTier;
import io.meterstore.core.Reading;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.ReadingsOracle;
import io.meterstore.testing.ReadingsOracle.View;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.meterstore.trino.write.InsertFailpoints;
import io.trino.testing.DistributedQueryRunner;
import io.trino.testing.MaterializedRow;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;
import static io.meterstore.trino.TestingInserts.correction;
import static io.meterstore.trino.TestingInserts.hotRows;
import static io.meterstore.trino.TestingInserts.insert;
import static io.meterstore.trino.TestingInserts.keyPredicate;
import static org.assertj.core.api.Assertions.assertThat;

/** INSERTs racing the real archiver: a correction for a day being archived lands in Iceberg once; nothing is lost or doubled. */
final class TestMeterstoreInsertArchivalRace
{
    @Test
    void testCorrectionForADayBeingArchivedLandsInIcebergOnce()
            throws Exception
    {
        TestingWarehouse warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("insert_race"));
        Table table = TestingMeterstoreTables.createTables(warehouse);
        ReadingsGenerator generator = ReadingsGenerator.builder().seed(7).meters(3).startDay(LocalDate.of(2026, 5, 10)).days(3).build();
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, generator);
        }
        TestingArchival.archiveWindows(warehouse, 1);
        table.refresh();
        TieringWatermark before = WatermarkReader.current(table).watermark();
        // the next window's day: hot when the INSERT is planned, archived before it writes
        Reading reading = correction(1, before.instant().plus(Duration.ofHours(5)), 1, "12.5");
        String partition = TestingMeterstoreTables.hotTier().naming().partitionName(before.instant());

        ArchivalCycle archival = TestingArchival.cycle(warehouse, InstantSource.fixed(TestingArchival.LATER));
        CompletableFuture<ArchiveOutcome> cycle = new CompletableFuture<>();
        try (DistributedQueryRunner queryRunner = MeterstoreQueryRunner.builder(warehouse).build()) {
            InsertFailpoints.setBeforeFence(() -> {
                // planned at the old watermark; now the archiver detaches the row's partition and archives it
                Thread.ofPlatform().start(() -> {
                    try {
                        cycle.complete(archival.archiveOnce());
                    }
                    catch (Throwable e) {
                        cycle.completeExceptionally(e);
                    }
                });
                try (Connection connection = warehouse.database().connect()) {
                    while (attached(connection, partition) && !cycle.isDone()) {
                        Thread.sleep(5);
                    }
                }
                catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            try {
                assertThat(queryRunner.execute(insert(reading)).getUpdateCount()).hasValue(1);
            }
            finally {
                InsertFailpoints.setBeforeFence(() -> {});
            }
            ArchiveOutcome outcome = cycle.get();
            assertThat(outcome.kind()).as(outcome.describe()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);
            assertThat(outcome.watermark().instant()).isAfter(reading.from());

            // in Iceberg exactly once; not in the detached partition, and no partition was re-created for the day
            assertThat(queryRunner.execute("SELECT count(*) FROM iceberg.metering.readings WHERE " + keyPredicate(reading)).getOnlyValue()).isEqualTo(1L);
            assertThat(queryRunner.execute("SELECT count(*), sum(value) FROM readings_versions WHERE " + keyPredicate(reading)).getMaterializedRows().getFirst().getFields())
                    .containsExactly(1L, new BigDecimal("12.500000"));
            try (Connection connection = warehouse.database().connect()) {
                assertThat(hotRows(connection, reading)).isZero();
                assertThat(attached(connection, partition)).isFalse();
            }
        }
    }

    @Test
    void testInsertsDuringArchivalCyclesLoseAndDoubleNothing()
            throws Exception
    {
        TestingWarehouse warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("insert_cycles"));
        Table table = TestingMeterstoreTables.createTables(warehouse);
        ReadingsGenerator generator = ReadingsGenerator.builder().seed(9).meters(3).startDay(LocalDate.of(2026, 6, 25)).days(9).build();
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, generator);
        }
        TestingArchival.archiveWindows(warehouse, 1);
        int writers = 3;
        int statements = 8;
        Queue<Reading> inserted = new ConcurrentLinkedQueue<>();
        Queue<String> failures = new ConcurrentLinkedQueue<>();
        try (DistributedQueryRunner queryRunner = MeterstoreQueryRunner.builder(warehouse).build()) {
            AtomicBoolean archiving = new AtomicBoolean(true);
            ExecutorService executor = Executors.newFixedThreadPool(writers);
            List<Future<?>> futures = new ArrayList<>();
            for (int writer = 0; writer < writers; writer++) {
                int id = writer;
                futures.add(executor.submit(() -> {
                    Random random = new Random(id);
                    for (int statement = 0; statement < statements; statement++) {
                        List<Reading> rows = new ArrayList<>();
                        for (int row = 0; row < 4; row++) {
                            // any day of the workload: cold, hot, or the one being archived right now
                            Instant from = generator.start().plus(Duration.ofMinutes(15L * random.nextInt(9 * 96)));
                            rows.add(correction(random.nextInt(3), from, 1 + id * 1000L + statement * 10L + row, "%d.%03d".formatted(random.nextInt(100), random.nextInt(1000))));
                        }
                        String sql = insert(rows);
                        try {
                            queryRunner.execute(sql);
                            inserted.addAll(rows);
                            // a redelivery of the same statement, maybe after W moved past some of its rows: a no-op
                            if (statement % 3 == 0) {
                                queryRunner.execute(sql);
                            }
                        }
                        catch (RuntimeException e) {
                            failures.add(sql + " failed: " + e.getMessage());
                        }
                        if (!archiving.get() && statement >= statements / 2) {
                            break;
                        }
                    }
                    return null;
                }));
            }
            ArchivalCycle archival = TestingArchival.cycle(warehouse, InstantSource.fixed(TestingArchival.LATER));
            int archived = 0;
            while (archived < 5) {
                ArchiveOutcome outcome = archival.archiveOnce();
                // an INSERT writing under the archival fence makes a cycle contended, never wrong
                assertThat(outcome.kind()).as(outcome.describe()).isIn(ArchiveOutcome.Kind.ARCHIVED, ArchiveOutcome.Kind.LEASE_CONTENDED);
                if (outcome.kind() == ArchiveOutcome.Kind.ARCHIVED) {
                    archived++;
                }
            }
            archiving.set(false);
            for (Future<?> future : futures) {
                future.get();
            }
            executor.shutdownNow();
            assertThat(failures).isEmpty();
            assertThat(inserted).isNotEmpty();

            // every inserted version exactly once, with its value; the workload untouched
            ReadingsOracle oracle = ReadingsOracle.of(Stream.concat(generator.stream(), inserted.stream()).iterator());
            ReadingsOracle.Summary expected = oracle.summary(View.VERSIONS, ReadingsOracle.all());
            MaterializedRow total = queryRunner.execute("SELECT count(*), sum(value) FROM readings_versions").getMaterializedRows().getFirst();
            assertThat(total.getField(0)).isEqualTo(expected.count());
            assertThat((BigDecimal) total.getField(1)).isEqualByComparingTo(expected.sum());
            BigDecimal insertedSum = inserted.stream().map(Reading::value).reduce(BigDecimal.ZERO, BigDecimal::add);
            MaterializedRow corrections = queryRunner.execute("SELECT count(*), sum(value), count(DISTINCT (malo_id, \"from\", version)) FROM readings_versions WHERE version < 100000").getMaterializedRows().getFirst();
            assertThat(corrections.getField(0)).isEqualTo((long) inserted.size());
            assertThat(corrections.getField(2)).isEqualTo((long) inserted.size());
            assertThat((BigDecimal) corrections.getField(1)).isEqualByComparingTo(insertedSum);

            // the invariant: nothing attached below W in PostgreSQL, nothing at or above W in Iceberg
            table.refresh();
            TieringWatermark watermark = WatermarkReader.current(table).watermark();
            assertThat(queryRunner.execute("SELECT count(*) FROM iceberg.metering.readings WHERE \"from\" >= " + TestingInserts.timestamp(watermark.instant())).getOnlyValue()).isEqualTo(0L);
            try (Connection connection = warehouse.database().connect();
                    PreparedStatement statement = connection.prepareStatement("SELECT count(*) FROM %s.readings WHERE \"from\" < ?".formatted(SCHEMA))) {
                statement.setObject(1, watermark.instant().atOffset(ZoneOffset.UTC));
                try (ResultSet result = statement.executeQuery()) {
                    result.next();
                    assertThat(result.getLong(1)).isZero();
                }
            }
        }
    }

    @Test
    void testContinuousWritersNeverKeepTheArchiverFromItsLease()
            throws Exception
    {
        TestingWarehouse warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("insert_fairness"));
        Table table = TestingMeterstoreTables.createTables(warehouse);
        ReadingsGenerator generator = ReadingsGenerator.builder().seed(17).meters(3).startDay(LocalDate.of(2026, 7, 10)).days(8).build();
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, generator);
        }
        TestingArchival.archiveWindows(warehouse, 1);
        int writers = 4;
        int cycles = 4;
        Queue<Reading> inserted = new ConcurrentLinkedQueue<>();
        Queue<String> failures = new ConcurrentLinkedQueue<>();
        try (DistributedQueryRunner queryRunner = MeterstoreQueryRunner.builder(warehouse).build()) {
            AtomicBoolean writing = new AtomicBoolean(true);
            ExecutorService executor = Executors.newFixedThreadPool(writers);
            List<Future<?>> futures = new ArrayList<>();
            for (int writer = 0; writer < writers; writer++) {
                int id = writer;
                futures.add(executor.submit(() -> {
                    Random random = new Random(100 + id);
                    // INSERTs one after another, each holding the archival fence while it writes: some writer nearly always does
                    for (int statement = 0; writing.get(); statement++) {
                        List<Reading> rows = new ArrayList<>();
                        for (int row = 0; row < 4; row++) {
                            Instant from = generator.start().plus(Duration.ofMinutes(15L * random.nextInt(8 * 96)));
                            rows.add(correction(random.nextInt(3), from, 1 + id * 100_000L + statement * 10L + row, "%d.%03d".formatted(random.nextInt(100), random.nextInt(1000))));
                        }
                        try {
                            queryRunner.execute(insert(rows));
                            inserted.addAll(rows);
                        }
                        catch (RuntimeException e) {
                            failures.add(e.getMessage());
                        }
                    }
                    return null;
                }));
            }
            while (inserted.size() < writers * 4 && failures.isEmpty()) {
                Thread.sleep(10);
            }

            // the archiver asks for its lease and waits: the INSERTs in flight finish, the next ones queue behind it
            ArchivalCycle archival = new ArchivalCycle(
                    warehouse.catalog(),
                    TableIdentifier.of(SCHEMA, TestingMeterstoreTables.TABLE),
                    // a bound no single small INSERT reaches, even on a loaded machine
                    new HotTier(SCHEMA, TestingMeterstoreTables.hotTier().naming(), Duration.ofMinutes(1)),
                    () -> warehouse.database().connect(),
                    ArchivalSettings.DEFAULTS,
                    InstantSource.fixed(TestingArchival.LATER));
            table.refresh();
            TieringWatermark previous = WatermarkReader.current(table).watermark();
            for (int cycle = 0; cycle < cycles; cycle++) {
                ArchiveOutcome outcome = archival.archiveOnce();
                // every cycle gets the lease and moves W, while the writers keep writing
                assertThat(outcome.kind()).as(outcome.describe()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);
                assertThat(outcome.watermark().instant()).isAfter(previous.instant());
                previous = outcome.watermark();
            }
            long insertedWhileArchiving = inserted.size();
            writing.set(false);
            for (Future<?> future : futures) {
                future.get();
            }
            executor.shutdownNow();
            assertThat(failures).isEmpty();
            assertThat(insertedWhileArchiving).isGreaterThan(writers * 4L);

            // every version exactly once, with its value
            ReadingsOracle.Summary expected = ReadingsOracle.of(Stream.concat(generator.stream(), inserted.stream()).iterator()).summary(View.VERSIONS, ReadingsOracle.all());
            MaterializedRow total = queryRunner.execute("SELECT count(*), sum(value) FROM readings_versions").getMaterializedRows().getFirst();
            assertThat(total.getField(0)).isEqualTo(expected.count());
            assertThat((BigDecimal) total.getField(1)).isEqualByComparingTo(expected.sum());
            MaterializedRow corrections = queryRunner.execute("SELECT count(*), count(DISTINCT (malo_id, \"from\", version)) FROM readings_versions WHERE version < 1000000").getMaterializedRows().getFirst();
            assertThat(corrections.getFields()).containsExactly((long) inserted.size(), (long) inserted.size());
        }
    }

    private static boolean attached(Connection connection, String partition)
            throws Exception
    {
        try (PreparedStatement statement = connection.prepareStatement("""
                SELECT c.relispartition FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = ? AND c.relname = ?""")) {
            statement.setString(1, SCHEMA);
            statement.setString(2, partition);
            try (ResultSet result = statement.executeQuery()) {
                return result.next() && result.getBoolean(1);
            }
        }
    }
}
