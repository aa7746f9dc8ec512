package io.meterstore.trino.write;

import io.meterstore.core.HotTier;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;

/**
 * The archival fence of an INSERT: the archiver's lease lock of the table, taken in shared mode in the transaction
 * that writes the statement. While it is held no archival cycle runs, so W cannot move, no partition is detached, and
 * no cycle plans a window over a partition the statement creates (a lock on the target partition alone would miss
 * that: a window planned before the partition existed extends over its range and moves W past it without a detach).
 * An archiver that asks for the lease meanwhile queues for it, and INSERTs that ask after it queue behind it, so a
 * stream of INSERTs cannot keep the archiver out.
 */
final class ArchivalFence
{
    // an archival cycle holds its lease for the whole cycle; an INSERT waits this long for one to finish
    static final Duration ARCHIVAL_WAIT = Duration.ofMinutes(10);

    private ArchivalFence() {}

    /** Takes the fence in the connection's open transaction; it holds until the transaction ends. */
    static void take(Connection connection, HotTier hotTier)
            throws SQLException
    {
        hotTier.fenceArchival(connection, ARCHIVAL_WAIT);
    }
}
