package io.meterstore.archiver.lease;

import io.airlift.log.Logger;
import io.meterstore.core.HotTier;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.base.Preconditions.checkState;
import static java.util.Objects.requireNonNull;

/**
 * The right to run one table's archival cycle: a session-level PostgreSQL advisory lock on
 * {@code hashtextextended('meterstore.archiver:' || schema.table, 0)}, taken on a connection of its own and held until
 * {@link #close()}. An advisory lock belongs to its session, not to the code that took it, so the connection must be
 * dedicated and never pooled: a pool resetting the session for its next user would release the lock mid-cycle, and an
 * idle pooled session would keep it after the cycle. When the process dies, PostgreSQL ends the session and releases
 * the lock with it, so a lease never outlives its owner.
 * <p>
 * Every replica can run the same schedule: one acquires, the others wait a bounded time, get no lease, report "lease
 * contended" and change nothing. Advisory locks are per database, so every archiver of a table must connect to the hot tier's database.
 */
public final class ArchiverLease
        implements AutoCloseable
{
    private static final Logger log = Logger.get(ArchiverLease.class);
    // a bigint advisory lock shows in pg_locks as classid = its high 32 bits, objid = its low 32 bits, objsubid = 1;
    // INSERTs hold it shared while they write the hot tier (HotTier.fenceArchival), which is not the lease
    private static final String LOCK_ROW = """
            locktype = 'advisory' AND granted AND objsubid = 1 AND mode = 'ExclusiveLock'
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
            AND classid = ((%1$s >> 32) & 4294967295)::oid AND objid = (%1$s & 4294967295)::oid""";

    private final Connection connection;
    private final String schema;
    private final String table;
    private final long key;
    private final Duration wait;
    private boolean closed;

    private ArchiverLease(Connection connection, String schema, String table, long key, Duration wait)
    {
        this.connection = requireNonNull(connection, "connection is null");
        this.schema = requireNonNull(schema, "schema is null");
        this.table = requireNonNull(table, "table is null");
        this.key = key;
        this.wait = requireNonNull(wait, "wait is null");
    }

    /**
     * Takes the lease of {@code schema.table} on {@code connection}, waiting at most {@code wait} for it (zero: not at all).
     * The lease owns the connection from here on: it is closed when the lease is, or right away when another session
     * holds the lease for longer than {@code wait} (or this call fails).
     * <p>
     * The wait is what makes the handshake with INSERTs fair. They hold the lease lock in shared mode while they write
     * ({@link HotTier#fenceArchival}), and PostgreSQL queues a lock request behind a waiting request it conflicts with:
     * once the archiver asks, new INSERTs wait behind it while the ones in flight finish, so it gets the lease within
     * the longest of those, however many writers keep INSERTing. An archiver that only tried would find some INSERT
     * holding the fence again and again. When {@code wait} passes first, the request leaves the queue and the INSERTs
     * waiting behind it proceed: a writer is never delayed by more than {@code wait} by an archiver that did not get in.
     */
    public static Optional<ArchiverLease> tryAcquire(Connection connection, String schema, String table, Duration wait)
            throws SQLException
    {
        requireNonNull(connection, "connection is null");
        requireNonNull(wait, "wait is null");
        checkArgument(!wait.isNegative(), "wait is negative");
        requireNonNull(schema, "schema is null");
        requireNonNull(table, "table is null");
        try {
            connection.setAutoCommit(true);
            try (Statement statement = connection.createStatement()) {
                // the session idles while the cycle works on other connections: a server-wide idle timeout must not end it
                statement.execute("SET idle_session_timeout = 0");
            }
            Optional<Long> key = wait.isZero() ? tryLock(connection, schema, table) : lock(connection, schema, table, wait);
            if (key.isEmpty()) {
                connection.close();
                return Optional.empty();
            }
            return Optional.of(new ArchiverLease(connection, schema, table, key.get(), wait));
        }
        catch (SQLException | RuntimeException e) {
            closeQuietly(connection, e);
            throw e;
        }
    }

    private static Optional<Long> tryLock(Connection connection, String schema, String table)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement("SELECT key, pg_try_advisory_lock(key) FROM (SELECT hashtextextended(?, 0) AS key) lease")) {
            statement.setString(1, HotTier.archiverLeaseName(schema, table));
            try (ResultSet result = statement.executeQuery()) {
                result.next();
                return result.getBoolean(2) ? Optional.of(result.getLong(1)) : Optional.empty();
            }
        }
    }

    private static Optional<Long> lock(Connection connection, String schema, String table, Duration wait)
            throws SQLException
    {
        try (Statement statement = connection.createStatement()) {
            statement.execute("SET lock_timeout = '%dms'".formatted(Math.max(1, wait.toMillis())));
        }
        try (PreparedStatement statement = connection.prepareStatement("SELECT key, pg_advisory_lock(key) FROM (SELECT hashtextextended(?, 0) AS key) lease")) {
            statement.setString(1, HotTier.archiverLeaseName(schema, table));
            try (ResultSet result = statement.executeQuery()) {
                result.next();
                return Optional.of(result.getLong(1));
            }
        }
        catch (SQLException e) {
            if (HotTier.isLockTimeout(e)) {
                return Optional.empty();
            }
            throw e;
        }
        finally {
            try (Statement statement = connection.createStatement()) {
                statement.execute("RESET lock_timeout");
            }
        }
    }

    /** The session holding the lease of {@code schema.table}, if one does; read on any connection to the hot tier's database. */
    public static Optional<LeaseHolder> holder(Connection connection, String schema, String table)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement("""
                SELECT l.pid, a.application_name
                FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
                WHERE %s""".formatted(LOCK_ROW.formatted("hashtextextended(?, 0)")))) {
            statement.setString(1, HotTier.archiverLeaseName(schema, table));
            statement.setString(2, HotTier.archiverLeaseName(schema, table));
            try (ResultSet result = statement.executeQuery()) {
                if (!result.next()) {
                    return Optional.empty();
                }
                return Optional.of(new LeaseHolder(result.getInt(1), Optional.ofNullable(result.getString(2)).filter(applicationName -> !applicationName.isEmpty())));
            }
        }
    }

    /** The table this lease is for, as {@code schema.table}. */
    public String table()
    {
        return qualifiedName(schema, table);
    }

    /**
     * Takes the table's cold-write lock ({@link HotTier#holdColdWrites}) on the lease's session until the lease is
     * closed, waiting as long as the lease was waited for; false when a MeterStore writer of the cold tier held it longer.
     * What a commit that replaces cold files takes, so that no late correction holding position deletes against them
     * commits after it.
     */
    public boolean holdColdWrites()
            throws SQLException
    {
        checkState(!closed, "lease is closed");
        try (Statement statement = connection.createStatement()) {
            statement.execute("SET lock_timeout = '%dms'".formatted(Math.max(1, wait.toMillis())));
        }
        try (PreparedStatement statement = connection.prepareStatement("SELECT pg_advisory_lock(hashtextextended(?, 0))")) {
            statement.setString(1, HotTier.coldWriteLockName(schema, table));
            statement.execute();
            return true;
        }
        catch (SQLException e) {
            if (HotTier.isLockTimeout(e)) {
                return false;
            }
            throw e;
        }
        finally {
            try (Statement statement = connection.createStatement()) {
                statement.execute("RESET lock_timeout");
            }
        }
    }

    /**
     * Confirms the lease's session is alive and still holds the lock. A session that died (a restarted server, a
     * terminated backend, a broken network) took the lock with it, and another archiver may own the table now.
     */
    public void verifyHeld()
    {
        checkState(!closed, "lease is closed");
        boolean held;
        try (PreparedStatement statement = connection.prepareStatement("SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = pg_backend_pid() AND %s)".formatted(LOCK_ROW.formatted("?::int8")))) {
            statement.setLong(1, key);
            statement.setLong(2, key);
            try (ResultSet result = statement.executeQuery()) {
                result.next();
                held = result.getBoolean(1);
            }
        }
        catch (SQLException e) {
            throw new LeaseLostException("The archiver lease of table '%s' is lost: its PostgreSQL session failed; another archiver may own the table now, so this cycle stops".formatted(table()), e);
        }
        if (!held) {
            throw new LeaseLostException("The archiver lease of table '%s' is lost: its PostgreSQL session no longer holds the lock; another archiver may own the table now, so this cycle stops".formatted(table()));
        }
    }

    /** Releases the cold-write lock taken by {@link #holdColdWrites}; the lease stays. */
    public void releaseColdWrites()
            throws SQLException
    {
        checkState(!closed, "lease is closed");
        try (PreparedStatement statement = connection.prepareStatement("SELECT pg_advisory_unlock(hashtextextended(?, 0))")) {
            statement.setString(1, HotTier.coldWriteLockName(schema, table));
            statement.execute();
        }
    }

    /** Releases the lease (and the cold-write lock, if taken) and closes the session; ending the session alone would release them too. */
    @Override
    public void close()
    {
        if (closed) {
            return;
        }
        closed = true;
        Connection session = connection;
        try (session; PreparedStatement statement = session.prepareStatement("SELECT pg_advisory_unlock_all()")) {
            statement.execute();
        }
        catch (SQLException e) {
            log.warn(e, "Cannot release the archiver lease of table '%s' cleanly; closing its session releases it", table());
        }
    }

    private static String qualifiedName(String schema, String table)
    {
        return schema + "." + table;
    }

    private static void closeQuietly(Connection connection, Exception failure)
    {
        try {
            connection.close();
        }
        catch (SQLException e) {
            failure.addSuppressed(e);
        }
    }

    /** A session holding a table's lease: its backend pid and the application name it connected with. */
    public record LeaseHolder(int pid, Optional<String> applicationName)
    {
        public LeaseHolder
        {
            requireNonNull(applicationName, "applicationName is null");
        }
    }
}
