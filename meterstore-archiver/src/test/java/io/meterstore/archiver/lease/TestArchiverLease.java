package io.meterstore.archiver.lease;

import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.cycle.ArchiveOutcome.Kind;
import io.meterstore.archiver.cycle.TestingArchiverTable;
import io.meterstore.archiver.lease.ArchiverLease.LeaseHolder;
import io.meterstore.core.HotPartition;
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
        try (ArchiverLease lease = ArchiverLease.tryAcquire(first, "metering", "readings").orElseThrow()) {
            assertThat(lease.table()).isEqualTo("metering.readings");
            lease.verifyHeld();

            // a second session gets no lease, and its connection is closed: it holds nothing
            Connection second = database.connect();
            assertThat(ArchiverLease.tryAcquire(second, "metering", "readings")).isEmpty();
            assertThat(second.isClosed()).isTrue();

            try (Connection observer = database.connect()) {
                assertThat(ArchiverLease.holder(observer, "metering", "readings")).contains(new LeaseHolder(firstPid, Optional.of("PostgreSQL JDBC Driver")));
                assertThat(ArchiverLease.holder(observer, "metering", "other")).isEmpty();
            }

            // other tables are leased independently
            try (ArchiverLease other = ArchiverLease.tryAcquire(database.connect(), "metering", "other").orElseThrow()) {
                other.verifyHeld();
            }
        }
        assertThat(first.isClosed()).isTrue();
        try (Connection observer = database.connect()) {
            assertThat(ArchiverLease.holder(observer, "metering", "readings")).isEmpty();
        }
        try (ArchiverLease lease = ArchiverLease.tryAcquire(database.connect(), "metering", "readings").orElseThrow()) {
            lease.verifyHeld();
        }
    }

    @Test
    void testEndedSessionReleasesTheLease()
            throws Exception
    {
        Connection connection = database.connect();
        int pid = backendPid(connection);
        ArchiverLease lease = ArchiverLease.tryAcquire(connection, "metering", "ended").orElseThrow();
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
        try (ArchiverLease successor = ArchiverLease.tryAcquire(database.connect(), "metering", "ended").orElseThrow()) {
            successor.verifyHeld();
        }
        // releasing a lease whose session is gone is harmless
        lease.close();
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

            try (ArchiverLease other = ArchiverLease.tryAcquire(tables.connect(), TestingArchiverTable.SCHEMA, TestingArchiverTable.TABLE).orElseThrow()) {
                ArchiveOutcome outcome = cycle.archiveOnce();
                assertThat(outcome.kind()).isEqualTo(Kind.LEASE_CONTENDED);
                assertThat(outcome.window()).isEmpty();
                assertThat(outcome.snapshotId()).isEmpty();
                assertThat(outcome.watermark()).isEqualTo(TieringWatermark.EPOCH);
                assertThat(outcome.describe()).isEqualTo("metering.readings: lease contended, another archiver holds this table's lease; nothing changed, watermark 1970-01-01T00:00:00Z");
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
