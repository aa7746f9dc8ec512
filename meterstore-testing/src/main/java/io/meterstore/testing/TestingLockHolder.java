package io.meterstore.testing;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;

import static java.util.Objects.requireNonNull;

/**
 * An open transaction holding a lock, so that a statement under test waits for it inside PostgreSQL: a fault test can
 * then stop the server while that statement is in flight, at exactly the step it chose, without a hook in the code.
 */
public final class TestingLockHolder
        implements AutoCloseable
{
    private static final Duration POLL = Duration.ofMillis(20);

    private final TestingDatabase database;
    private final Connection connection;

    private TestingLockHolder(TestingDatabase database, Connection connection)
    {
        this.database = requireNonNull(database, "database is null");
        this.connection = requireNonNull(connection, "connection is null");
    }

    /**
     * ACCESS EXCLUSIVE on every index of {@code schema.table} (REINDEX in an open transaction): PostgreSQL's planner
     * locks every index of a table it plans a query on, so each statement reading the table waits, while catalogue
     * reads of the table's size do not.
     */
    public static TestingLockHolder lockIndexesOf(TestingDatabase database, String schema, String table)
            throws SQLException
    {
        Connection connection = database.connect();
        try {
            connection.setAutoCommit(false);
            try (PreparedStatement indexes = connection.prepareStatement("""
                    SELECT i.indexrelid::regclass::text FROM pg_index i
                    JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE n.nspname = ? AND c.relname = ?""");
                    Statement statement = connection.createStatement()) {
                indexes.setString(1, schema);
                indexes.setString(2, table);
                try (ResultSet result = indexes.executeQuery()) {
                    while (result.next()) {
                        statement.execute("REINDEX INDEX " + result.getString(1));
                    }
                }
            }
            return new TestingLockHolder(database, connection);
        }
        catch (SQLException | RuntimeException e) {
            connection.close();
            throw e;
        }
    }

    /**
     * The row of an Iceberg table in the JDBC catalogue: every commit to the table, which swaps that row's metadata
     * pointer, waits; reads of the table go on.
     */
    public static TestingLockHolder lockCatalogPointer(TestingDatabase database, String namespace, String table)
            throws SQLException
    {
        return hold(database, "SELECT metadata_location FROM iceberg_tables WHERE table_namespace = '%s' AND table_name = '%s' FOR UPDATE".formatted(namespace, table));
    }

    private static TestingLockHolder hold(TestingDatabase database, String sql)
            throws SQLException
    {
        Connection connection = database.connect();
        try {
            connection.setAutoCommit(false);
            try (Statement statement = connection.createStatement()) {
                statement.execute(sql);
            }
            return new TestingLockHolder(database, connection);
        }
        catch (SQLException | RuntimeException e) {
            connection.close();
            throw e;
        }
    }

    /** Waits until a session whose statement starts with {@code statementPrefix} waits for a lock; fails after {@code timeout}. */
    public void awaitWaiter(String statementPrefix, Duration timeout)
            throws SQLException, InterruptedException
    {
        Instant deadline = Instant.now().plus(timeout);
        try (Connection observer = database.connect();
                PreparedStatement waiting = observer.prepareStatement("""
                        SELECT count(*) FROM pg_stat_activity
                        WHERE datname = current_database() AND wait_event_type = 'Lock' AND starts_with(query, ?)""")) {
            waiting.setString(1, statementPrefix);
            while (true) {
                try (ResultSet result = waiting.executeQuery()) {
                    result.next();
                    if (result.getLong(1) > 0) {
                        return;
                    }
                }
                if (Instant.now().isAfter(deadline)) {
                    throw new AssertionError("No statement starting with '%s' waited for a lock within %s".formatted(statementPrefix, timeout));
                }
                Thread.sleep(POLL.toMillis());
            }
        }
    }

    /** Releases the lock; after a server restart the session is gone already, and so is its lock. */
    @Override
    public void close()
    {
        try {
            connection.rollback();
        }
        catch (SQLException ignored) {
            // the session ended with the server
        }
        try {
            connection.close();
        }
        catch (SQLException ignored) {
            // nothing else to release
        }
    }
}
