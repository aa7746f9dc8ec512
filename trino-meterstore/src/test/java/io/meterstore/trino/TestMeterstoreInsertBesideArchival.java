package io.meterstore.trino;

import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.cycle.Failpoints.Failpoint;
import io.meterstore.core.HotTier;
import io.meterstore.core.Reading;
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
import io.trino.testing.MaterializedRow;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static com.google.common.base.Preconditions.checkArgument;
import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;
import static io.meterstore.trino.TestingInserts.correction;
import static io.meterstore.trino.TestingInserts.hotRows;
import static io.meterstore.trino.TestingInserts.insert;
import static io.meterstore.trino.TestingInserts.keyPredicate;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

/**
 * INSERTs beside an archival cycle held at each of its failpoints in a process of its own: rows at or above the window
 * it archives (the next day, and a day no partition holds yet) are written while it holds, rows of the window wait for
 * it until its commit (and go to Iceberg after it), and after a SIGKILL and the next cycle every row is in exactly one
 * tier, once. Two streams of INSERTs run from the failpoint through the SIGKILL and the next cycle, one of a later
 * day's rows and one of the window's own rows, and every row either wrote is in exactly one tier, once, per meter and
 * day.
 */
// a guard against a hang, not a bound any assertion needs: whether a statement waits for the cycle is read from pg_locks
@Timeout(value = 15, unit = TimeUnit.MINUTES, threadMode = SEPARATE_THREAD)
final class TestMeterstoreInsertBesideArchival
{
    @Test
    void testInsertBesideACycleHeldAfterItsDetach()
            throws Exception
    {
        assertInsertsBesideACycleHeldAt(Failpoint.AFTER_DETACH);
    }

    @Test
    void testInsertBesideACycleHeldAfterItsWrite()
            throws Exception
    {
        assertInsertsBesideACycleHeldAt(Failpoint.AFTER_WRITE);
    }

    @Test
    void testInsertBesideACycleHeldAfterItsCommit()
            throws Exception
    {
        assertInsertsBesideACycleHeldAt(Failpoint.AFTER_COMMIT);
    }

    private static void assertInsertsBesideACycleHeldAt(Failpoint failpoint)
            throws Exception
    {
        TestingWarehouse warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("beside_" + failpoint.pointName().replace('-', '_')));
        Table table = TestingMeterstoreTables.createTables(warehouse);
        ReadingsGenerator generator = ReadingsGenerator.builder().seed(23).meters(3).startDay(LocalDate.of(2026, 5, 10)).days(3).build();
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, generator);
        }
        TestingArchival.archiveWindows(warehouse, 1);
        table.refresh();
        Instant windowStart = WatermarkReader.current(table).watermark().instant();
        Instant windowEnd = windowStart.plus(Duration.ofDays(1));

        // the day after the window (its partition exists) and a later day (no partition yet: the INSERT creates it)
        List<Reading> later = new ArrayList<>();
        for (int meter = 0; meter < 3; meter++) {
            later.add(correction(meter, windowEnd.plus(Duration.ofHours(2 + meter)), 7, "1.%03d".formatted(meter)));
            later.add(correction(meter, windowEnd.plus(Duration.ofDays(20)).plus(Duration.ofHours(meter)), 7, "2.%03d".formatted(meter)));
        }
        Reading windowRow = correction(1, windowStart.plus(Duration.ofHours(5)), 8, "12.5");

        try (DistributedQueryRunner queryRunner = MeterstoreQueryRunner.builder(warehouse).build();
                Connection observer = warehouse.database().connect()) {
            TestingArchiveOnce archiver = TestingArchiveOnce.start(warehouse, TestingArchival.LATER, Optional.of(failpoint));
            CompletableFuture<Long> windowInsert;
            InsertStream todayStream;
            InsertStream windowStream;
            try {
                archiver.awaitLine("FAILPOINT " + failpoint.pointName(), Duration.ofMinutes(3));

                // the cycle holds its lease at the failpoint: the later days go ahead, hot, without asking for it. Asked
                // before the streams start, so that a request for the lease seen meanwhile is this statement's
                CompletableFuture<Long> laterInsert = CompletableFuture.supplyAsync(() -> queryRunner.execute(insert(later)).getUpdateCount().orElseThrow());
                assertThat(awaitWithoutTheLease(observer, laterInsert, "The INSERT of later days")).isEqualTo(later.size());
                for (Reading reading : later) {
                    assertThat(hotRows(observer, reading)).as("hot copy of %s", reading.from()).isEqualTo(1);
                }

                windowInsert = CompletableFuture.supplyAsync(() -> queryRunner.execute(insert(windowRow)).getUpdateCount().orElseThrow());
                if (failpoint == Failpoint.AFTER_COMMIT) {
                    // the window is committed, W moved past it: its row is a late correction now, and goes to Iceberg at once
                    assertThat(awaitWithoutTheLease(observer, windowInsert, "The INSERT of the committed window's row")).isEqualTo(1L);
                }
                else {
                    // a row of the window being archived waits for the cycle: its statement asks for the lease, which the held cycle has
                    awaitLeaseRequested(observer, windowInsert);
                    assertThat(windowInsert).isNotDone();
                }

                // from here through the SIGKILL and the next cycle: a later day's rows, three meters a statement, and new
                // versions of the window's own rows of meter 2, one a statement
                Instant today = windowEnd.plus(Duration.ofDays(1));
                todayStream = InsertStream.start(queryRunner, 48, slot -> IntStream.range(0, 3)
                        .mapToObj(meter -> correction(meter, today.plus(Duration.ofMinutes(15L * slot)), 7, "3.%03d".formatted(slot)))
                        .toList());
                // few: after the commit each is a late correction, an Iceberg commit of its own
                windowStream = InsertStream.start(queryRunner, 6, slot -> List.of(correction(2, windowStart.plus(Duration.ofMinutes(15L * slot)), 9, "4.%03d".formatted(slot))));
                // today's stream writes beside the held cycle before the SIGKILL, and goes on through it
                todayStream.awaitStatement();
            }
            finally {
                archiver.kill();
            }
            // the killed cycle's session released the lease: the waiting statement writes its row where W says now
            assertThat(windowInsert.get()).isEqualTo(1L);

            // restart: the next cycle completes the window the killed one left, if it did not commit
            table.refresh();
            if (!WatermarkReader.current(table).watermark().instant().isAfter(windowStart)) {
                ArchiveOutcome outcome = TestingArchival.cycle(warehouse, InstantSource.fixed(TestingArchival.LATER)).archiveOnce();
                assertThat(outcome.kind()).as(outcome.describe()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);
            }
            // the streams stop after the next cycle: every statement of theirs completed, beside it too
            List<Reading> streamed = Stream.concat(todayStream.stop(), windowStream.stop()).toList();
            assertThat(todayStream.statements()).as("statements of today's stream").isPositive();
            assertThat(windowStream.statements()).as("statements of the window's stream").isPositive();

            table.refresh();
            TieringWatermark watermark = WatermarkReader.current(table).watermark();
            assertThat(watermark.instant()).isEqualTo(windowEnd);

            // the window's row is cold, once; the later days are hot, once
            assertThat(queryRunner.execute("SELECT count(*) FROM iceberg.metering.readings WHERE " + keyPredicate(windowRow)).getOnlyValue()).isEqualTo(1L);
            assertThat(queryRunner.execute("SELECT count(*), sum(value) FROM readings_versions WHERE " + keyPredicate(windowRow)).getMaterializedRows().getFirst().getFields())
                    .containsExactly(1L, new BigDecimal("12.500000"));
            if (failpoint == Failpoint.AFTER_COMMIT) {
                // W had moved past it: straight to Iceberg, as a late correction
                assertThat(hotRows(observer, windowRow)).isZero();
            }
            for (Reading reading : later) {
                assertThat(queryRunner.execute("SELECT count(*) FROM readings_versions WHERE " + keyPredicate(reading)).getOnlyValue()).isEqualTo(1L);
                assertThat(hotRows(observer, reading)).isEqualTo(1);
            }

            // every version exactly once, with its value, per meter and day: in readings_versions, and in the two tiers
            // counted apart (a row in both, or in neither, changes its day's count)
            ReadingsOracle oracle = ReadingsOracle.of(Stream.of(generator.stream(), later.stream(), Stream.of(windowRow), streamed.stream()).flatMap(rows -> rows).iterator());
            ReadingsOracle.Summary expected = oracle.summary(View.VERSIONS, ReadingsOracle.all());
            MaterializedRow total = queryRunner.execute("SELECT count(*), sum(value) FROM readings_versions").getMaterializedRows().getFirst();
            assertThat(total.getField(0)).isEqualTo(expected.count());
            assertThat((BigDecimal) total.getField(1)).isEqualByComparingTo(expected.sum());
            SortedMap<MeterDay, Totals> expectedByMeterDay = oracle.totalsByMeterDay(View.VERSIONS, ReadingsOracle.all());
            assertThat(totalsByMeterDay(queryRunner, "readings_versions")).isEqualTo(expectedByMeterDay);
            SortedMap<MeterDay, Totals> tiers = new TreeMap<>(totalsByMeterDay(queryRunner, "iceberg.metering.readings"));
            hotTotalsByMeterDay(observer).forEach((meterDay, hot) -> tiers.merge(meterDay, hot,
                    (cold, more) -> new Totals(cold.count() + more.count(), cold.sum().add(more.sum()))));
            assertThat(tiers).isEqualTo(expectedByMeterDay);

            // the invariant: nothing in Iceberg at or above W, nothing in PostgreSQL's attached partitions below it
            assertThat(queryRunner.execute("SELECT count(*) FROM iceberg.metering.readings WHERE \"from\" >= " + TestingInserts.timestamp(watermark.instant())).getOnlyValue()).isEqualTo(0L);
            try (PreparedStatement statement = observer.prepareStatement("SELECT count(*) FROM %s.readings WHERE \"from\" < ?".formatted(SCHEMA))) {
                statement.setObject(1, watermark.instant().atOffset(ZoneOffset.UTC));
                try (ResultSet result = statement.executeQuery()) {
                    result.next();
                    assertThat(result.getLong(1)).isZero();
                }
            }
        }
    }

    /** count(*) and sum(value) per meter and Berlin day of {@code relation}, read through the engine. */
    private static SortedMap<MeterDay, Totals> totalsByMeterDay(DistributedQueryRunner queryRunner, String relation)
    {
        SortedMap<MeterDay, Totals> totals = new TreeMap<>();
        for (MaterializedRow row : queryRunner.execute("""
                SELECT malo_id, CAST(date("from" AT TIME ZONE 'Europe/Berlin') AS varchar), count(*), sum(value)
                FROM %s
                GROUP BY 1, 2""".formatted(relation)).getMaterializedRows()) {
            totals.put(new MeterDay((String) row.getField(0), LocalDate.parse((String) row.getField(1))),
                    new Totals((long) row.getField(2), ((BigDecimal) row.getField(3)).setScale(Reading.VALUE_SCALE)));
        }
        return totals;
    }

    /** As above, of PostgreSQL's attached partitions alone. */
    private static SortedMap<MeterDay, Totals> hotTotalsByMeterDay(Connection observer)
            throws Exception
    {
        SortedMap<MeterDay, Totals> totals = new TreeMap<>();
        try (PreparedStatement select = observer.prepareStatement("""
                SELECT malo_id, (("from" AT TIME ZONE 'Europe/Berlin')::date)::text, count(*), sum(value)
                FROM %s.readings
                GROUP BY 1, 2""".formatted(SCHEMA));
                ResultSet result = select.executeQuery()) {
            while (result.next()) {
                totals.put(new MeterDay(result.getString(1), LocalDate.parse(result.getString(2))), new Totals(result.getLong(3), result.getBigDecimal(4).setScale(Reading.VALUE_SCALE)));
            }
        }
        return totals;
    }

    /**
     * INSERT statements one after another on a thread of their own, statement {@code slot} writing the rows {@code rows}
     * gives it, a fifth of a second apart, until stopped or {@code statements} ran (at most a day of quarter-hours).
     */
    private static final class InsertStream
    {
        private static final long PAUSE_MILLIS = 200;

        private final AtomicBoolean stopped = new AtomicBoolean();
        private final List<Reading> written = new CopyOnWriteArrayList<>();
        private final AtomicInteger statements = new AtomicInteger();
        private final CompletableFuture<Void> running;

        private InsertStream(DistributedQueryRunner queryRunner, int slots, IntFunction<List<Reading>> rows)
        {
            ExecutorService thread = Executors.newSingleThreadExecutor(Thread.ofPlatform().daemon().factory());
            running = CompletableFuture.runAsync(() -> {
                for (int slot = 0; slot < slots && !stopped.get(); slot++) {
                    List<Reading> statement = rows.apply(slot);
                    // a statement that fails fails the stream, and the test with it
                    assertThat(queryRunner.execute(insert(statement)).getUpdateCount()).hasValue((long) statement.size());
                    written.addAll(statement);
                    statements.incrementAndGet();
                    try {
                        Thread.sleep(PAUSE_MILLIS);
                    }
                    catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
            }, thread);
            running.whenComplete((_, _) -> thread.shutdown());
        }

        static InsertStream start(DistributedQueryRunner queryRunner, int statements, IntFunction<List<Reading>> rows)
        {
            checkArgument(statements > 0 && statements <= 96, "statements must be a day of quarter-hours or fewer");
            return new InsertStream(queryRunner, statements, rows);
        }

        /** Stops the stream after its statement in flight and returns every row it wrote. */
        Stream<Reading> stop()
                throws Exception
        {
            stopped.set(true);
            running.get();
            return List.copyOf(written).stream();
        }

        /** Waits until the stream has completed a statement; fails with the stream's failure if it ended first. */
        void awaitStatement()
                throws Exception
        {
            while (statements.get() == 0 && !running.isDone()) {
                Thread.sleep(20);
            }
            if (running.isCompletedExceptionally()) {
                running.get();
            }
        }

        int statements()
        {
            return statements.get();
        }
    }

    /** Waits until a session asks for the table's lease in shared mode and is not granted it, while {@code statement} runs. */
    private static void awaitLeaseRequested(Connection observer, CompletableFuture<?> statement)
            throws Exception
    {
        while (!leaseRequested(observer)) {
            if (statement.isDone()) {
                throw new AssertionError("The INSERT of the window's row ended without waiting for the cycle: " + statement.handle((value, failure) -> failure == null ? value : failure).join());
            }
            Thread.sleep(20);
        }
    }

    /**
     * The outcome of {@code statement}, which must complete without asking for the lease the held cycle has: a request
     * for it seen while the statement runs fails at once, where the statement would wait for the cycle.
     */
    private static <T> T awaitWithoutTheLease(Connection observer, CompletableFuture<T> statement, String what)
            throws Exception
    {
        while (!statement.isDone()) {
            if (leaseRequested(observer)) {
                throw new AssertionError(what + " waits for the archival cycle's lease: it was fenced off by a cycle archiving days it does not write");
            }
            Thread.sleep(20);
        }
        return statement.get();
    }

    /** Whether a session asks for the table's lease in shared mode and is not granted it. */
    private static boolean leaseRequested(Connection observer)
            throws SQLException
    {
        String lease = HotTier.archiverLeaseName(SCHEMA, TestingMeterstoreTables.TABLE);
        try (PreparedStatement select = observer.prepareStatement("""
                SELECT count(*) FROM pg_locks
                WHERE locktype = 'advisory' AND NOT granted AND mode = 'ShareLock'
                AND classid = ((hashtextextended(?, 0) >> 32) & 4294967295)::oid AND objid = (hashtextextended(?, 0) & 4294967295)::oid""")) {
            select.setString(1, lease);
            select.setString(2, lease);
            try (ResultSet result = select.executeQuery()) {
                result.next();
                return result.getLong(1) > 0;
            }
        }
    }
}
