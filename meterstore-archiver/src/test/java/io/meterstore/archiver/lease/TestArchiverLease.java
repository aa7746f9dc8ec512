package io.meterstore.archiver.lease;

import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.cycle.ArchiveOutcome.Kind;
import io.meterstore.archiver.cycle.TestingArchiverTable;
import io.meterstore.archiver.lease.ArchiverLease.LeaseHolder;
import io.meterstore.core.HotPartition;
import io.meterstore.core.HotTier;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.TieringWatermark;
import io.meterstore.testing.TestingDatabase;
import io.meterstore.testing.TestingPostgresServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import static java.util.concurrent.TimeUnit.MINUTES;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class TestArchiverLease
{
    private static TestingDatabase database;

    @BeforeAll
    static void createDatabase()
    {
        database = TestingPostgresServer.shared().createDatabase("lease");
    }

    @AfterAll
    static void dropDatabase()
    {
        database.close();
    }

    @Test
    void testOneHolderPerTable()
            throws Exception
    {
        Connection first = database.connect();
        int firstPid = backendPid(first);
        try (ArchiverLease lease = ArchiverLease.tryAcquire(first, "metering", "readings", Duration.ZERO).orElseThrow()) {
            assertThat(lease.table()).isEqualTo("metering.readings");
            lease.verifyHeld();

            // a second session gets no lease, and its connection is closed: it holds nothing
            Connection second = database.connect();
            assertThat(ArchiverLease.tryAcquire(second, "metering", "readings", Duration.ZERO)).isEmpty();
            assertThat(second.isClosed()).isTrue();

            try (Connection observer = database.connect()) {
                assertThat(ArchiverLease.holder(observer, "metering", "readings")).contains(new LeaseHolder(firstPid, Optional.of("PostgreSQL JDBC Driver")));
                assertThat(ArchiverLease.holder(observer, "metering", "other")).isEmpty();
            }

            // other tables are leased independently
            try (ArchiverLease other = ArchiverLease.tryAcquire(database.connect(), "metering", "other", Duration.ZERO).orElseThrow()) {
                other.verifyHeld();
            }
        }
        assertThat(first.isClosed()).isTrue();
        try (Connection observer = database.connect()) {
            assertThat(ArchiverLease.holder(observer, "metering", "readings")).isEmpty();
        }
        try (ArchiverLease lease = ArchiverLease.tryAcquire(database.connect(), "metering", "readings", Duration.ZERO).orElseThrow()) {
            lease.verifyHeld();
        }
    }

    @Test
    void testEndedSessionReleasesTheLease()
            throws Exception
    {
        Connection connection = database.connect();
        int pid = backendPid(connection);
        ArchiverLease lease = ArchiverLease.tryAcquire(connection, "metering", "ended", Duration.ZERO).orElseThrow();
        try (Connection admin = database.connect(); PreparedStatement terminate = admin.prepareStatement("SELECT pg_terminate_backend(?, 10000)")) {
            // what PostgreSQL does when the archiver process dies: the session ends, and its locks with it
            terminate.setInt(1, pid);
            try (ResultSet result = terminate.executeQuery()) {
                result.next();
                assertThat(result.getBoolean(1)).isTrue();
            }
        }
        assertThatThrownBy(lease::verifyHeld)
                .isInstanceOf(LeaseLostException.class)
                .hasMessage("The archiver lease of table 'metering.ended' is lost: its PostgreSQL session failed; another archiver may own the table now, so this cycle stops");
        try (ArchiverLease successor = ArchiverLease.tryAcquire(database.connect(), "metering", "ended", Duration.ZERO).orElseThrow()) {
            successor.verifyHeld();
        }
        // releasing a lease whose session is gone is harmless
        lease.close();
    }

    @Test
    void testWaitingArchiverGetsTheLeaseBeforeLaterWriters()
            throws Exception
    {
        HotTier hotTier = new HotTier("metering", new PartitionNaming("fenced", PartitionNaming.DEFAULT_STEP), Duration.ofSeconds(5));
        try (Connection writer = database.connect(); Connection laterWriter = database.connect(); Connection observer = database.connect()) {
            // an INSERT in flight holds the fence
            writer.setAutoCommit(false);
            hotTier.fenceArchival(writer, Duration.ofSeconds(5));

            CompletableFuture<Optional<ArchiverLease>> archiver = CompletableFuture.supplyAsync(() -> {
                try {
                    return ArchiverLease.tryAcquire(database.connect(), "metering", "fenced", Duration.ofMinutes(1));
                }
                catch (SQLException e) {
                    throw new RuntimeException(e);
                }
            });
            waitUntilLeaseRequested(observer, "fenced");

            // an INSERT that asks after the archiver waits behind it: a stream of writers cannot keep the archiver out
            laterWriter.setAutoCommit(false);
            assertThatThrownBy(() -> hotTier.fenceArchival(laterWriter, Duration.ofMillis(300)))
                    .isInstanceOf(HotTier.LockTimeoutException.class);
            laterWriter.rollback();
            assertThat(archiver).isNotDone();

            // the INSERT in flight finishes: the archiver holds the lease, and the next INSERT waits for its cycle
            writer.commit();
            try (ArchiverLease lease = archiver.get(1, MINUTES).orElseThrow()) {
                lease.verifyHeld();
                assertThatThrownBy(() -> hotTier.fenceArchival(laterWriter, Duration.ofMillis(300)))
                        .isInstanceOf(HotTier.LockTimeoutException.class);
                laterWriter.rollback();
            }
            hotTier.fenceArchival(laterWriter, Duration.ofSeconds(5));
            laterWriter.commit();
        }
    }

    @Test
    void testArchiverWaitsBoundedThenLetsWritersGo()
            throws Exception
    {
        HotTier hotTier = new HotTier("metering", new PartitionNaming("long_insert", PartitionNaming.DEFAULT_STEP), Duration.ofSeconds(5));
        try (Connection writer = database.connect(); Connection laterWriter = database.connect()) {
            // an INSERT that holds the fence for longer than the archiver waits
            writer.setAutoCommit(false);
            hotTier.fenceArchival(writer, Duration.ofSeconds(5));
            Connection archiver = database.connect();
            assertThat(ArchiverLease.tryAcquire(archiver, "metering", "long_insert", Duration.ofMillis(500))).isEmpty();
            assertThat(archiver.isClosed()).isTrue();
            // it left the queue: writers are not held up by it
            laterWriter.setAutoCommit(false);
            hotTier.fenceArchival(laterWriter, Duration.ofMillis(300));
            laterWriter.commit();
            writer.commit();
        }
    }

    /** Waits until a session waits for the lease of {@code table} (a lock request not granted yet). */
    private static void waitUntilLeaseRequested(Connection observer, String table)
            throws Exception
    {
        try (PreparedStatement statement = observer.prepareStatement("""
                SELECT count(*) FROM pg_locks
                WHERE locktype = 'advisory' AND NOT granted AND mode = 'ExclusiveLock'
                AND classid = ((hashtextextended(?, 0) >> 32) & 4294967295)::oid AND objid = (hashtextextended(?, 0) & 4294967295)::oid""")) {
            statement.setString(1, HotTier.archiverLeaseName("metering", table));
            statement.setString(2, HotTier.archiverLeaseName("metering", table));
            for (int attempt = 0; attempt < 600; attempt++) {
                try (ResultSet result = statement.executeQuery()) {
                    result.next();
                    if (result.getLong(1) > 0) {
                        return;
                    }
                }
                Thread.sleep(50);
            }
        }
        throw new AssertionError("The archiver never asked for the lease of " + table);
    }

    @Test
    void testCycleWithoutTheLeaseChangesNothing()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("lease_cycle")) {
            Instant day = Instant.parse("2024-03-05T00:00:00Z");
            try (Connection connection = tables.connect()) {
                tables.hotTier().ensurePartition(connection, day);
            }
            tables.clock().set(day.plus(Duration.ofDays(8)));
            ArchivalCycle cycle = tables.cycle();

            try (ArchiverLease other = ArchiverLease.tryAcquire(tables.connect(), TestingArchiverTable.SCHEMA, TestingArchiverTable.TABLE, Duration.ZERO).orElseThrow()) {
                ArchiveOutcome outcome = cycle.archiveOnce();
                assertThat(outcome.kind()).isEqualTo(Kind.LEASE_CONTENDED);
                assertThat(outcome.window()).isEmpty();
                assertThat(outcome.snapshotId()).isEmpty();
                assertThat(outcome.watermark()).isEqualTo(TieringWatermark.EPOCH);
                assertThat(outcome.describe()).isEqualTo("metering.readings: lease contended, another archiver (or a DELETE, or INSERTs of rows of an archived window, longer than meterstore.postgresql.lock-timeout) held this table's lease; nothing changed, watermark 1970-01-01T00:00:00Z");
                assertThat(tables.table().currentSnapshot()).isNull();
                assertThat(tables.partitions()).extracting(HotPartition::attached).containsExactly(true);
                other.verifyHeld();
            }

            // the lease is free: the cycle runs, and releases the lease when it ends
            assertThat(cycle.archiveOnce().kind()).isEqualTo(Kind.ARCHIVED);
            try (Connection observer = tables.connect()) {
                assertThat(ArchiverLease.holder(observer, TestingArchiverTable.SCHEMA, TestingArchiverTable.TABLE)).isEmpty();
            }
            assertThat(cycle.archiveOnce().kind()).isEqualTo(Kind.IDLE);
        }
    }

    private static int backendPid(Connection connection)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement("SELECT pg_backend_pid()"); ResultSet result = statement.executeQuery()) {
            result.next();
            return result.getInt(1);
        }
    }
}
