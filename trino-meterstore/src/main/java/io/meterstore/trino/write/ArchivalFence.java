package io.meterstore.trino.write;

import io.airlift.log.Logger;
import io.meterstore.core.ArchivalWindows;
import io.meterstore.core.ArchivalWindows.Published;
import io.meterstore.core.HotTier;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.core.WatermarkReader.PinnedWatermark;
import org.apache.iceberg.Table;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Optional;

/**
 * The archival fence of an INSERT: what its transaction holds so that W, read once, routes every staged row to the
 * tier that holds it when the statement commits, and what it waits for, which is only what its rows touch.
 * <p>
 * Every statement holds the table's boundary lock in shared mode ({@link HotTier#holdBoundaryShared}) from reading W
 * and the window an archival cycle published ({@link ArchivalWindows}) to its commit. A cycle plans and publishes its
 * window [W, end) under the same lock in exclusive mode, before it detaches anything, so a statement either committed
 * before (its hot rows are in the partition the cycle detaches, and every partition it created was planned with) or
 * reads the window. Its rows at or above the window's end go to PostgreSQL during the cycle, into partitions the
 * cycle never touches, and stay at or above W when the cycle's commit moves W to that end; its rows below W go to
 * Iceberg, whose commit republishes whatever W it lands on. A statement with rows inside the window, read while W is
 * still its start, waits for the whole cycle instead: it starts its transaction again under the archiver's lease in
 * shared mode ({@link HotTier#fenceArchival}), where no cycle runs and W cannot move, and then those rows lie below
 * W, going to Iceberg as late corrections, or, after a cycle that did not commit, to the window's partition.
 * <p>
 * Rows below W take the cold-write lock ({@link HotTier#holdColdWrites}) before the boundary lock and before the
 * snapshot is pinned, so the redelivery lookup's answer holds until the commit. Which rows are cold is known from a W
 * read before any lock (W only moves forward); a cycle that commits between that read and the boundary lock turns
 * rows cold without that lock, and the statement then starts again under the lease as well. The locks are taken in one
 * order by every party (the lease, the cold-write lock, the boundary lock), so no two of them wait for each other.
 */
final class ArchivalFence
{
    private static final Logger log = Logger.get(ArchivalFence.class);
    // a writer waits this long for an archival cycle whose window its rows meet, and for a lock an erasure holds
    static final Duration ARCHIVAL_WAIT = Duration.ofMinutes(10);

    /** Takes the cold-write lock in the statement's transaction. */
    interface ColdWriteLock
    {
        void take()
                throws SQLException;
    }

    private ArchivalFence() {}

    /**
     * Takes the fence in the connection's open transaction (it holds until the transaction ends) and returns the W the
     * statement routes by, pinned under it. {@code firstFrom} is the earliest "from" the statement staged; nothing may
     * have been written in the transaction yet, since it may be rolled back and started again here.
     */
    static PinnedWatermark take(Connection connection, HotTier hotTier, Table table, InsertStaging staging, Instant firstFrom, ColdWriteLock coldWriteLock)
            throws SQLException
    {
        table.refresh();
        boolean coldLocked = !WatermarkReader.current(table).watermark().isHot(firstFrom);
        if (coldLocked) {
            coldWriteLock.take();
        }
        hotTier.holdBoundaryShared(connection, ARCHIVAL_WAIT);
        Published published = ArchivalWindows.published(connection, hotTier);
        table.refresh();
        PinnedWatermark pinned = WatermarkReader.current(table);
        Optional<String> wait = reasonToWait(connection, staging, published, pinned.watermark(), firstFrom, coldLocked);
        if (wait.isEmpty()) {
            return pinned;
        }
        log.debug("INSERT into %s waits for the archival cycle of table %s: %s", staging.qualifiedName(), hotTier.qualifiedParent(), wait.get());
        connection.rollback();
        // under the lease no cycle runs: the W read next holds until this transaction ends
        hotTier.fenceArchival(connection, ARCHIVAL_WAIT);
        table.refresh();
        pinned = WatermarkReader.current(table);
        if (!pinned.watermark().isHot(firstFrom)) {
            coldWriteLock.take();
        }
        hotTier.holdBoundaryShared(connection, ARCHIVAL_WAIT);
        return pinned;
    }

    private static Optional<String> reasonToWait(Connection connection, InsertStaging staging, Published published, TieringWatermark watermark, Instant firstFrom, boolean coldLocked)
            throws SQLException
    {
        if (!published.known()) {
            return Optional.of("no archiver of this release publishes the windows it archives");
        }
        if (!coldLocked && !watermark.isHot(firstFrom)) {
            return Optional.of("a cycle moved the watermark to %s, and rows below it were planned hot".formatted(watermark));
        }
        if (published.window().isPresent() && stagedBetween(connection, staging, watermark.instant(), published.window().get().end())) {
            return Optional.of("rows lie in the window [%s, %s) being archived".formatted(watermark, TieringWatermark.formatInstant(published.window().get().end())));
        }
        return Optional.empty();
    }

    /** Whether the statement staged a row with "from" in [lower, upper). */
    private static boolean stagedBetween(Connection connection, InsertStaging staging, Instant lower, Instant upper)
            throws SQLException
    {
        if (!upper.isAfter(lower)) {
            return false;
        }
        try (PreparedStatement select = connection.prepareStatement("SELECT EXISTS (SELECT 1 FROM %s WHERE \"from\" >= ? AND \"from\" < ?)".formatted(staging.qualifiedName()))) {
            select.setObject(1, OffsetDateTime.ofInstant(lower, ZoneOffset.UTC));
            select.setObject(2, OffsetDateTime.ofInstant(upper, ZoneOffset.UTC));
            try (ResultSet result = select.executeQuery()) {
                result.next();
                return result.getBoolean(1);
            }
        }
    }
}
