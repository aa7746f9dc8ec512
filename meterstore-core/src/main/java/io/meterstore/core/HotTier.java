package io.meterstore.core;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static io.meterstore.core.Sql.qualified;
import static io.meterstore.core.Sql.quoteIdentifier;
import static java.util.Objects.requireNonNull;

/**
 * The hot tier's DDL and catalogue reads. Partitions are created standalone and then attached: CREATE TABLE ...
 * PARTITION OF takes ACCESS EXCLUSIVE on the parent, so one long query would stall every insert, while ATTACH takes
 * SHARE UPDATE EXCLUSIVE. Every DDL statement runs under a lock_timeout; a timeout surfaces as {@link LockTimeoutException}.
 */
public final class HotTier
{
    // SQLSTATE lock_not_available, raised when lock_timeout expires
    private static final String LOCK_NOT_AVAILABLE = "55P03";
    private static final String UNDEFINED_TABLE = "42P01";
    private static final String ARCHIVER_LEASE_PREFIX = "meterstore.archiver:";

    private final String schema;
    private final PartitionNaming naming;
    private final Duration lockTimeout;

    public HotTier(String schema, PartitionNaming naming, Duration lockTimeout)
    {
        this.schema = requireNonNull(schema, "schema is null");
        this.naming = requireNonNull(naming, "naming is null");
        this.lockTimeout = requireNonNull(lockTimeout, "lockTimeout is null");
        checkArgument(!lockTimeout.isNegative() && !lockTimeout.isZero(), "lockTimeout must be positive");
    }

    public String schema()
    {
        return schema;
    }

    public PartitionNaming naming()
    {
        return naming;
    }

    /** How long MeterStore's statements wait for a lock in PostgreSQL before they give up. */
    public Duration lockTimeout()
    {
        return lockTimeout;
    }

    public String qualifiedParent()
    {
        return qualified(schema, naming.table());
    }

    public String qualifiedPartition(String partition)
    {
        return qualified(schema, partition);
    }

    /** Creates the schema and the partitioned parent table if they do not exist. Needs no superuser. */
    public void createParent(Connection connection)
            throws SQLException
    {
        inTransaction(connection, () -> {
            try (Statement statement = connection.createStatement()) {
                statement.execute("SET LOCAL lock_timeout = '%dms'".formatted(lockTimeout.toMillis()));
                statement.execute("CREATE SCHEMA IF NOT EXISTS " + quoteIdentifier(schema));
                statement.execute("""
                        CREATE TABLE IF NOT EXISTS %s (
                            %s,
                            PRIMARY KEY (malo_id, obis_code, "from", version)
                        ) PARTITION BY RANGE ("from")""".formatted(qualifiedParent(), ReadingsSchema.postgresColumnDefinitions()));
            }
            return null;
        });
    }

    public boolean parentExists(Connection connection)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement("""
                SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = ? AND c.relname = ? AND c.relkind = 'p'""")) {
            statement.setString(1, schema);
            statement.setString(2, naming.table());
            try (ResultSet result = statement.executeQuery()) {
                return result.next();
            }
        }
    }

    /**
     * Creates the partition holding {@code instant} unless a relation of its name exists (attached or detached).
     * Returns whether this call created it.
     */
    public boolean ensurePartition(Connection connection, Instant instant)
            throws SQLException
    {
        return inTransaction(connection, () -> createIfMissing(connection, instant));
    }

    /**
     * As {@link #ensurePartition(Connection, Instant)}, but inside the caller's open transaction, and never for a
     * partition that lies entirely below {@code watermark}: its rows belong to Iceberg, and a partition re-created
     * there after archival dropped or detached the old one would hold rows no query reads. The caller holds the
     * archival fence ({@link #fenceArchival}), so the watermark it passes cannot move before it commits.
     */
    public boolean ensurePartitionInTransaction(Connection connection, Instant instant, TieringWatermark watermark)
            throws SQLException
    {
        checkArgument(!connection.getAutoCommit(), "ensurePartitionInTransaction needs an open transaction");
        Instant end = naming.alignDown(instant).plus(naming.step());
        if (!end.isAfter(watermark.instant())) {
            throw new IllegalStateException("Partition '%s' of table '%s' would lie entirely below the tiering watermark %s: its rows belong to Iceberg"
                    .formatted(naming.partitionName(naming.alignDown(instant)), qualifiedParent(), watermark));
        }
        return createIfMissing(connection, instant);
    }

    private boolean createIfMissing(Connection connection, Instant instant)
            throws SQLException
    {
        Instant start = naming.alignDown(instant);
        Instant end = start.plus(naming.step());
        String name = naming.partitionName(start);
        try (Statement statement = connection.createStatement()) {
            statement.execute("SET LOCAL lock_timeout = '%dms'".formatted(lockTimeout.toMillis()));
        }
        // serialize creators of this table's partitions; the existence check below then cannot race
        try (PreparedStatement lock = connection.prepareStatement("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))")) {
            lock.setString(1, "meterstore.ddl:" + schema + "." + naming.table());
            lock.execute();
        }
        if (relationExists(connection, name)) {
            return false;
        }
        String partition = qualifiedPartition(name);
        String lower = literal(start);
        String upper = literal(end);
        try (Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE %s (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS)".formatted(partition, qualifiedParent()));
            // a CHECK that implies the bound lets ATTACH skip its validation scan
            statement.execute("ALTER TABLE %s ADD CONSTRAINT %s CHECK (\"from\" >= %s AND \"from\" < %s)".formatted(partition, quoteIdentifier(name + "_bound"), lower, upper));
            statement.execute("ALTER TABLE %s ATTACH PARTITION %s FOR VALUES FROM (%s) TO (%s)".formatted(qualifiedParent(), partition, lower, upper));
            statement.execute("ALTER TABLE %s DROP CONSTRAINT %s".formatted(partition, quoteIdentifier(name + "_bound")));
        }
        return true;
    }

    /** The name of the advisory lock that is the archiver's lease of {@code schema.table}: one place for both sides of the fence. */
    public static String archiverLeaseName(String schema, String table)
    {
        return ARCHIVER_LEASE_PREFIX + schema + "." + table;
    }

    /**
     * Inside the caller's open transaction: takes the archiver's lease lock of this table in shared mode, waiting at
     * most {@code wait} for a running archival cycle to end, or for an archiver that asked for the lease first. Until
     * the transaction ends no cycle can start (an archiver that asks queues for the lease, and INSERTs that ask after
     * it queue behind it), so the watermark cannot move, no partition is detached, and no cycle can be planning a
     * window over a partition this transaction creates.
     */
    public void fenceArchival(Connection connection, Duration wait)
            throws SQLException
    {
        checkArgument(!connection.getAutoCommit(), "fenceArchival needs an open transaction");
        try (Statement statement = connection.createStatement()) {
            statement.execute("SET LOCAL lock_timeout = '%dms'".formatted(wait.toMillis()));
        }
        try (PreparedStatement lock = connection.prepareStatement("SELECT pg_advisory_xact_lock_shared(hashtextextended(?, 0))")) {
            lock.setString(1, archiverLeaseName(schema, naming.table()));
            lock.execute();
        }
        catch (SQLException e) {
            if (isLockTimeout(e)) {
                throw new LockTimeoutException("An archival cycle of table '%s' held its lease for longer than %s: try again once it has finished".formatted(qualifiedParent(), wait), e);
            }
            throw e;
        }
        try (Statement statement = connection.createStatement()) {
            statement.execute("SET LOCAL lock_timeout = '%dms'".formatted(lockTimeout.toMillis()));
        }
    }

    /**
     * Every partition of the table, attached and detached alike, in one catalogue read, ordered by start.
     * Detached partitions keep their names, rows and identity; only their parentage changes.
     */
    public List<HotPartition> partitions(Connection connection)
            throws SQLException
    {
        record Found(String name, Instant start, boolean attached) {}
        List<Found> found = new ArrayList<>();
        try (PreparedStatement statement = connection.prepareStatement("""
                SELECT c.relname, c.relispartition
                FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = ? AND c.relkind = 'r' AND c.relname LIKE ?""")) {
            statement.setString(1, schema);
            statement.setString(2, naming.likePattern());
            try (ResultSet result = statement.executeQuery()) {
                while (result.next()) {
                    String name = result.getString(1);
                    boolean attached = result.getBoolean(2);
                    naming.partitionStart(name).ifPresent(start -> found.add(new Found(name, start, attached)));
                }
            }
        }
        found.sort(Comparator.comparing(Found::start));
        List<HotPartition> partitions = new ArrayList<>(found.size());
        for (int index = 0; index < found.size(); index++) {
            Optional<Instant> upper = index + 1 < found.size() ? Optional.of(found.get(index + 1).start()) : Optional.empty();
            Found partition = found.get(index);
            partitions.add(new HotPartition(partition.name(), partition.start(), upper, partition.attached()));
        }
        return List.copyOf(partitions);
    }

    /** Detaches a partition (O(1)); a partition already detached is left alone. */
    public void detach(Connection connection, String partition)
            throws SQLException
    {
        inTransaction(connection, () -> {
            try (Statement statement = connection.createStatement()) {
                statement.execute("SET LOCAL lock_timeout = '%dms'".formatted(lockTimeout.toMillis()));
                if (isAttached(connection, partition)) {
                    statement.execute("ALTER TABLE %s DETACH PARTITION %s".formatted(qualifiedParent(), qualifiedPartition(partition)));
                }
            }
            return null;
        });
    }

    /** Drops a detached partition: O(1), no dead tuples, unlike DELETE. */
    public void drop(Connection connection, String partition)
            throws SQLException
    {
        inTransaction(connection, () -> {
            try (Statement statement = connection.createStatement()) {
                statement.execute("SET LOCAL lock_timeout = '%dms'".formatted(lockTimeout.toMillis()));
                checkArgument(!isAttached(connection, partition), "Partition '%s' is attached; only detached partitions are dropped", partition);
                statement.execute("DROP TABLE IF EXISTS %s".formatted(qualifiedPartition(partition)));
            }
            return null;
        });
    }

    public boolean relationExists(Connection connection, String name)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement("""
                SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = ? AND c.relname = ?""")) {
            statement.setString(1, schema);
            statement.setString(2, name);
            try (ResultSet result = statement.executeQuery()) {
                return result.next();
            }
        }
    }

    private boolean isAttached(Connection connection, String partition)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement("""
                SELECT c.relispartition FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = ? AND c.relname = ?""")) {
            statement.setString(1, schema);
            statement.setString(2, partition);
            try (ResultSet result = statement.executeQuery()) {
                if (!result.next()) {
                    throw new MeterstoreException(MeterstoreException.Reason.PARTITION_MISSING,
                            "Partition '%s' of table '%s' does not exist".formatted(partition, qualifiedParent()));
                }
                return result.getBoolean(1);
            }
        }
    }

    public static boolean isLockTimeout(SQLException e)
    {
        return LOCK_NOT_AVAILABLE.equals(e.getSQLState());
    }

    public static boolean isUndefinedTable(SQLException e)
    {
        return UNDEFINED_TABLE.equals(e.getSQLState());
    }

    // DDL bounds cannot be bind parameters; an Instant formatted by java.time is the only thing ever inlined
    private static String literal(Instant instant)
    {
        return "'" + OffsetDateTime.ofInstant(instant, ZoneOffset.UTC) + "'::timestamptz";
    }

    private interface SqlWork<T>
    {
        T run()
                throws SQLException;
    }

    private <T> T inTransaction(Connection connection, SqlWork<T> work)
            throws SQLException
    {
        boolean autoCommit = connection.getAutoCommit();
        connection.setAutoCommit(false);
        try {
            T result = work.run();
            connection.commit();
            return result;
        }
        catch (SQLException | RuntimeException e) {
            connection.rollback();
            if (e instanceof SQLException sqlException && isLockTimeout(sqlException)) {
                throw new LockTimeoutException("Lock timeout on table '%s': another session holds a conflicting lock; try again later".formatted(qualifiedParent()), sqlException);
            }
            throw e;
        }
        finally {
            connection.setAutoCommit(autoCommit);
        }
    }

    /** DDL could not get its lock within the lock_timeout: the outcome is "deferred", not a failure. */
    public static class LockTimeoutException
            extends SQLException
    {
        public LockTimeoutException(String message, SQLException cause)
        {
            super(message, LOCK_NOT_AVAILABLE, cause);
        }
    }
}
