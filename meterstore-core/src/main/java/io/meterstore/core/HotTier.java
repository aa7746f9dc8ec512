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
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

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
    private static final String BOUNDARY_PREFIX = "meterstore.boundary:";
    private static final String COLD_WRITE_PREFIX = "meterstore.cold-write:";
    // the name of the CHECK that carries a partition's bound while it is created and after it is detached
    private static final String BOUND_CONSTRAINT = "meterstore_partition_bound";

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

    /**
     * Creates the schema, the partitioned parent table and the table of archival windows ({@link ArchivalWindows}) if
     * they do not exist, and gives the table and every partition the rules PostgreSQL keeps ({@link HotTierRules}),
     * which a table created before them lacks. Needs no superuser.
     * Returns the CHECK constraints that rows stored before them break, with what PostgreSQL said: those stay NOT VALID,
     * new rows are checked, and the old ones are for the operator to repair. A constraint whose body MeterStore changed
     * since (a unit added to {@code unit_known}) is replaced under its name ({@link HotTierRules#replaceChangedChecks}).
     */
    public List<String> createParent(Connection connection)
            throws SQLException
    {
        return createParent(connection, TableShape.DEFAULT);
    }

    /**
     * As {@link #createParent(Connection)}, a new parent created with the columns of {@code shape}: the readings columns, then the
     * attribute columns of the table's shape, which every partition inherits (an existing parent keeps its columns); in
     * a point table "to" may be NULL and must be ({@link HotTierRules#checks}), and the rules' span checks pass its rows,
     * which span nothing. Each checked column's shape is a CHECK of its own.
     */
    public List<String> createParent(Connection connection, TableShape shape)
            throws SQLException
    {
        TableColumns columns = TableColumns.of(shape);
        Map<String, String> checks = HotTierRules.checks(shape);
        inTransaction(connection, () -> {
            try (Statement statement = connection.createStatement()) {
                statement.execute("SET LOCAL lock_timeout = '%dms'".formatted(lockTimeout.toMillis()));
                statement.execute("CREATE SCHEMA IF NOT EXISTS " + quoteIdentifier(schema));
                statement.execute("""
                        CREATE TABLE IF NOT EXISTS %s (
                            %s,
                            %s,
                            PRIMARY KEY (%s)
                        ) PARTITION BY RANGE ("from")""".formatted(qualifiedParent(), columns.postgresColumnDefinitions(), HotTierSupersession.columnDefinition(), primaryKey(columns)));
                // a table created before the marks: the parent passes the column on to its attached partitions; a
                // detached one gets it too, so that it can be attached again
                statement.execute(HotTierSupersession.addColumn(qualifiedParent()));
                String rules = HotTierRules.function(naming.table(), columns.keyNames());
                statement.execute(HotTierRules.createFunction(schema, naming.table(), columns.keyNames()));
                ArchivalWindows.create(connection, schema);
                List<HotPartition> partitions = partitions(connection);
                for (String sql : HotTierRules.replaceChangedChecks(connection, schema, naming.table(), qualifiedParent(),
                        partitions.stream().filter(HotPartition::attached).map(partition -> qualifiedPartition(partition.name())).toList(),
                        partitions.stream().filter(partition -> !partition.attached()).map(partition -> qualifiedPartition(partition.name())).toList(), checks)) {
                    statement.execute(sql);
                }
                String supersession = HotTierSupersession.function(naming.table(), columns.keyNames());
                statement.execute(HotTierSupersession.createFunction(schema, naming.table(), columns.keyNames()));
                for (String sql : HotTierRules.addMissingChecks(connection, schema, naming.table(), qualifiedParent(), checks)) {
                    statement.execute(sql);
                }
                for (String sql : HotTierRules.createTriggers(schema, rules, qualifiedParent(), qualifiedParent())) {
                    statement.execute(sql);
                }
                for (String sql : HotTierSupersession.createTriggers(schema, supersession, qualifiedParent(), qualifiedParent())) {
                    statement.execute(sql);
                }
                for (HotPartition partition : partitions(connection)) {
                    if (!partition.attached()) {
                        statement.execute(HotTierSupersession.addColumn(qualifiedPartition(partition.name())));
                    }
                    for (String sql : HotTierRules.createTriggers(schema, rules, qualifiedPartition(partition.name()), qualifiedParent())) {
                        statement.execute(sql);
                    }
                    for (String sql : HotTierSupersession.createTriggers(schema, supersession, qualifiedPartition(partition.name()), qualifiedParent())) {
                        statement.execute(sql);
                    }
                }
            }
            return null;
        });
        // each in a transaction of its own, after the constraints hold for new rows: a scan of every partition
        List<String> broken = new ArrayList<>(HotTierRules.validate(connection, qualifiedParent(), schema, naming.table(), checks));
        // a detached partition's constraints too: ATTACH refuses one NOT VALID where the parent's is validated
        for (HotPartition partition : partitions(connection)) {
            if (!partition.attached()) {
                broken.addAll(HotTierRules.validate(connection, qualifiedPartition(partition.name()), schema, partition.name(), checks));
            }
        }
        // after the triggers mark what is written from now on: the rows stored before, in bounded batches
        markPartitions(connection);
        return List.copyOf(broken);
    }

    /**
     * The primary key of a parent of {@code columns}, quoted: (malo_id, obis_code, "from", the key's other columns, version),
     * the order the cold tier's files sort in, so that an ordered read of a partition walks its index.
     */
    public static String primaryKey(TableColumns columns)
    {
        return Stream.of(Stream.of(ReadingsColumn.MALO_ID.columnName(), ReadingsColumn.OBIS_CODE.columnName(), ReadingsColumn.FROM.columnName()),
                        columns.keyNames().stream(), Stream.of(ReadingsColumn.VERSION.columnName()))
                .flatMap(names -> names)
                .map(Sql::quoteIdentifier)
                .collect(Collectors.joining(", "));
    }

    /**
     * Marks the rows every partition without {@link HotTierSupersession#MARKED_COMMENT} held before its triggers were
     * installed, a batch of about {@value HotTierSupersession#MARK_BATCH_ROWS} rows per transaction, and then gives the partition the comment:
     * until then it is read with resolution. Writers wait for a batch at most, readers never. Returns the partitions marked.
     */
    public List<String> markPartitions(Connection connection)
            throws SQLException
    {
        return markPartitions(connection, HotTierSupersession.MARK_BATCH_ROWS);
    }

    /** As {@link #markPartitions(Connection)}, at most {@code batchRows} rows a transaction. */
    public List<String> markPartitions(Connection connection, int batchRows)
            throws SQLException
    {
        checkArgument(batchRows > 0, "batchRows must be positive");
        List<String> marked = new ArrayList<>();
        Set<String> markedBefore = HotTierSupersession.markedPartitions(connection, schema);
        for (HotPartition partition : partitions(connection)) {
            if (!markedBefore.contains(partition.name())) {
                HotTierSupersession.markPartition(connection, qualifiedParent(), qualifiedPartition(partition.name()), batchRows, lockTimeout);
                marked.add(partition.name());
            }
        }
        return List.copyOf(marked);
    }

    /**
     * The shape the parent table's comment stores ({@link TableShape#comment()}); empty for a table created before
     * shapes were declared, or one that does not exist.
     */
    public Optional<TableShape> storedShape(Connection connection)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement("""
                SELECT obj_description(c.oid, 'pg_class') FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = ? AND c.relname = ? AND c.relkind = 'p'""")) {
            statement.setString(1, schema);
            statement.setString(2, naming.table());
            try (ResultSet result = statement.executeQuery()) {
                return TableShape.ofComment(result.next() ? Optional.ofNullable(result.getString(1)) : Optional.empty());
            }
        }
    }

    /** Stores {@code shape} as the parent table's comment, replacing any comment it had. */
    public void recordShape(Connection connection, TableShape shape)
            throws SQLException
    {
        // COMMENT takes no bind parameter: the literal is quoted by the one helper
        try (Statement statement = connection.createStatement()) {
            statement.execute("COMMENT ON TABLE %s IS %s".formatted(qualifiedParent(), Sql.quoteLiteral(shape.comment())));
        }
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
     * Creates the partition holding {@code instant} unless one holds it already (attached or detached). Returns whether
     * this call created it.
     */
    public boolean ensurePartition(Connection connection, Instant instant)
            throws SQLException
    {
        return inTransaction(connection, () -> routeOrCreate(connection, instant).created());
    }

    /**
     * The partition an interval starting at {@code from} is written to, inside the caller's open transaction: the one
     * whose catalogue bounds hold it (attached, or detached at or above W by an interrupted archival, which archives it
     * whole), else a new one of one step, cut short where a neighbour begins or ends. Never for an instant below
     * {@code watermark}: its rows belong to Iceberg, and a partition re-created there after archival dropped or detached
     * the old one would hold rows no query reads. The caller holds the boundary lock ({@link #holdBoundaryShared}) and
     * writes no row of a window being archived, so the watermark it passes is not moved past its rows before it commits.
     */
    public HotPartition partitionFor(Connection connection, Instant from, TieringWatermark watermark)
            throws SQLException
    {
        checkArgument(!connection.getAutoCommit(), "partitionFor needs an open transaction");
        if (!watermark.isHot(from)) {
            throw new IllegalStateException("An interval starting at %s of table '%s' lies below the tiering watermark %s: its rows belong to Iceberg"
                    .formatted(TieringWatermark.formatInstant(from), qualifiedParent(), watermark));
        }
        try {
            return routeOrCreate(connection, from).partition();
        }
        catch (SQLException e) {
            if (isLockTimeout(e)) {
                throw lockTimeout(e);
            }
            throw e;
        }
    }

    private record Routed(HotPartition partition, boolean created) {}

    private Routed routeOrCreate(Connection connection, Instant instant)
            throws SQLException
    {
        try (Statement statement = connection.createStatement()) {
            statement.execute("SET LOCAL lock_timeout = '%dms'".formatted(lockTimeout.toMillis()));
        }
        // serialize creators of this table's partitions; the catalogue read below then cannot race
        try (PreparedStatement lock = connection.prepareStatement("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))")) {
            lock.setString(1, "meterstore.ddl:" + schema + "." + naming.table());
            lock.execute();
        }
        List<HotPartition> partitions = partitions(connection);
        Instant start = naming.alignDown(instant);
        Instant end = start.plus(naming.step());
        for (HotPartition partition : partitions) {
            if (partition.contains(instant)) {
                return new Routed(partition, false);
            }
            // one step, cut short by its neighbours: a partition wider or narrower than the step may be there already
            if (partition.start().isAfter(instant) && partition.start().isBefore(end)) {
                end = partition.start();
            }
            if (!partition.end().isAfter(instant) && partition.end().isAfter(start)) {
                start = partition.end();
            }
        }
        if (!naming.isAligned(start)) {
            throw new MeterstoreException(MeterstoreException.Reason.PARTITION_BOUNDS_UNSUPPORTED,
                    "No partition of table '%s' holds %s, and the step partition %s would overlap a partition ending at %s, off the step's grid: create a partition for it by hand, bounded as its neighbours are"
                            .formatted(qualifiedParent(), TieringWatermark.formatInstant(instant), naming.step(), TieringWatermark.formatInstant(start)));
        }
        String name = naming.partitionName(start);
        if (relationExists(connection, name)) {
            throw new MeterstoreException(MeterstoreException.Reason.PARTITION_BOUNDS_UNSUPPORTED,
                    "No partition of table '%s' holds %s, but a relation named '%s' exists: rename or drop it, or attach it with the bounds its name says"
                            .formatted(qualifiedParent(), TieringWatermark.formatInstant(instant), name));
        }
        String partition = qualifiedPartition(name);
        // the parent's functions: the schema's for the default key, the table's own for a key with more columns
        Optional<String> rules = Optional.empty();
        for (String function : List.of(HotTierRules.FUNCTION, HotTierRules.tableFunction(naming.table()))) {
            if (rules.isEmpty() && hasTriggerFunction(connection, function)) {
                rules = Optional.of(function);
            }
        }
        Optional<String> supersession = Optional.empty();
        for (String function : List.of(HotTierSupersession.FUNCTION, HotTierSupersession.tableFunction(naming.table()))) {
            if (supersession.isEmpty() && hasTriggerFunction(connection, function)) {
                supersession = Optional.of(function);
            }
        }
        try (Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE %s (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS)".formatted(partition, qualifiedParent()));
            // a partition is written by name too (a tool, an interrupted archival's detached partition): its own triggers;
            // a table created before the rules gets them from create, run again
            if (rules.isPresent()) {
                for (String sql : HotTierRules.createTriggers(schema, rules.get(), partition, qualifiedParent())) {
                    statement.execute(sql);
                }
            }
            // marked from its first row: read without resolution from the start
            if (supersession.isPresent()) {
                for (String sql : HotTierSupersession.createTriggers(schema, supersession.get(), partition, qualifiedParent())) {
                    statement.execute(sql);
                }
                statement.execute(HotTierSupersession.markedComment(partition));
            }
            // a CHECK that implies the bound lets ATTACH skip its validation scan
            statement.execute("ALTER TABLE %s ADD CONSTRAINT %s CHECK (%s)".formatted(partition, quoteIdentifier(BOUND_CONSTRAINT), boundCondition(start, end)));
            statement.execute("ALTER TABLE %s ATTACH PARTITION %s FOR VALUES FROM (%s) TO (%s)".formatted(qualifiedParent(), partition, literal(start), literal(end)));
            statement.execute("ALTER TABLE %s DROP CONSTRAINT %s".formatted(partition, quoteIdentifier(BOUND_CONSTRAINT)));
        }
        return new Routed(new HotPartition(name, start, end, true), true);
    }

    /** The name of the advisory lock that is the archiver's lease of {@code schema.table}: one place for both sides of the fence. */
    public static String archiverLeaseName(String schema, String table)
    {
        return ARCHIVER_LEASE_PREFIX + schema + "." + table;
    }

    /**
     * Inside the caller's open transaction: takes the archiver's lease lock of this table in shared mode, waiting at
     * most {@code wait} for a running archival cycle to end, or for an archiver that asked for the lease first. Until
     * the transaction ends no cycle can start (an archiver that asks queues for the lease, and writers that ask after
     * it queue behind it), so the watermark cannot move and no partition is detached. What an INSERT whose rows meet the
     * window of a cycle takes, to write them once the cycle has ended, and what an erasure takes for all of its run.
     */
    public void fenceArchival(Connection connection, Duration wait)
            throws SQLException
    {
        lock(connection, wait, "pg_advisory_xact_lock_shared", archiverLeaseName(schema, naming.table()),
                "An archival cycle of table '%s' held its lease for longer than %s: try again once it has finished");
    }

    /** The name of the advisory lock that orders writers against the moves of {@code schema.table}'s boundary. */
    public static String boundaryLockName(String schema, String table)
    {
        return BOUNDARY_PREFIX + schema + "." + table;
    }

    /**
     * Inside the caller's open transaction: takes this table's boundary lock in shared mode, waiting at most {@code wait}.
     * A writer holds it from reading W and the window an archival cycle published ({@link ArchivalWindows}) to its
     * commit: no cycle publishes a window meanwhile, so a window planned later never holds a row this transaction writes
     * hot, nor a partition it creates. Writers hold it together; a cycle takes it exclusively only to plan and publish
     * its window, an erasure only for its hot rows and its audit row.
     */
    public void holdBoundaryShared(Connection connection, Duration wait)
            throws SQLException
    {
        lock(connection, wait, "pg_advisory_xact_lock_shared", boundaryLockName(schema, naming.table()),
                "An archival cycle or erasure of table '%s' held its boundary for longer than %s: try again");
    }

    /**
     * As {@link #holdBoundaryShared}, in exclusive mode: waits for the writers in flight, and writers that ask after it
     * wait behind it until the transaction ends. An archival cycle plans and publishes its window under it; an erasure
     * deletes its hot rows and records its audit row under it.
     */
    public void holdBoundaryExclusive(Connection connection, Duration wait)
            throws SQLException
    {
        lock(connection, wait, "pg_advisory_xact_lock", boundaryLockName(schema, naming.table()),
                "Writers of table '%s' held its boundary for longer than %s: try again once they have finished");
    }

    /** The name of the advisory lock that serializes MeterStore's writers of {@code schema.table}'s cold tier. */
    public static String coldWriteLockName(String schema, String table)
    {
        return COLD_WRITE_PREFIX + schema + "." + table;
    }

    /**
     * Inside the caller's open transaction: takes this table's cold-write lock, waiting at most {@code wait}. Held by a
     * writer of Iceberg rows (an INSERT's rows below W, an erasure) from before it reads the snapshot it writes against
     * to its commit, so no two statements both find a key absent and both append it, and by month compaction, on its
     * lease's session, for its commit: a late correction's position deletes are never computed against files that a
     * compaction replaces before the correction commits.
     */
    public void holdColdWrites(Connection connection, Duration wait)
            throws SQLException
    {
        lock(connection, wait, "pg_advisory_xact_lock", coldWriteLockName(schema, naming.table()),
                "Another writer of table '%s' held its cold tier for longer than %s: try again once it has finished");
    }

    private void lock(Connection connection, Duration wait, String lockFunction, String name, String timeoutMessage)
            throws SQLException
    {
        checkArgument(!connection.getAutoCommit(), "the lock '%s' needs an open transaction", name);
        try (Statement statement = connection.createStatement()) {
            statement.execute("SET LOCAL lock_timeout = '%dms'".formatted(Math.max(1, wait.toMillis())));
        }
        try (PreparedStatement lock = connection.prepareStatement("SELECT %s(hashtextextended(?, 0))".formatted(lockFunction))) {
            lock.setString(1, name);
            lock.execute();
        }
        catch (SQLException e) {
            if (isLockTimeout(e)) {
                throw new LockTimeoutException(timeoutMessage.formatted(qualifiedParent(), wait), e);
            }
            throw e;
        }
        try (Statement statement = connection.createStatement()) {
            statement.execute("SET LOCAL lock_timeout = '%dms'".formatted(lockTimeout.toMillis()));
        }
    }

    /**
     * Every partition of the table, attached and detached alike, in one catalogue read, ordered by start, each with the
     * extent the catalogue records: the range bound of an attached partition, the CHECK constraint a detached one got
     * at its detach. Detached partitions keep their names, rows and identity; only their parentage changes.
     */
    public List<HotPartition> partitions(Connection connection)
            throws SQLException
    {
        record Found(String name, Instant nameStart, boolean attached, Optional<Instant> lower, Optional<Instant> upper, String bound) {}
        List<Found> found = new ArrayList<>();
        // the bound's text is in the session's time zone and date style, so its literals are cast back in the same
        // session; deparsed without a relation (a bound holds constants only), so the read takes no lock and never waits
        // behind a DETACH or a long-held lock on the table, as a catalogue read must not
        try (PreparedStatement statement = connection.prepareStatement("""
                SELECT c.relname, c.relispartition, (b.literals)[1]::timestamptz, (b.literals)[2]::timestamptz, b.bound
                FROM pg_class c
                JOIN pg_namespace n ON n.oid = c.relnamespace
                CROSS JOIN LATERAL (
                    SELECT t.bound, regexp_match(t.bound, '^[^'']*''([^'']*)''[^'']*''([^'']*)''[^'']*$') AS literals
                    FROM (SELECT CASE WHEN c.relispartition THEN pg_get_expr(c.relpartbound, 0)
                            ELSE (SELECT pg_get_constraintdef(k.oid) FROM pg_constraint k WHERE k.conrelid = c.oid AND k.contype = 'c' AND k.conname = ?)
                          END AS bound) t) b
                WHERE n.nspname = ? AND c.relkind = 'r' AND c.relname LIKE ?""")) {
            statement.setString(1, BOUND_CONSTRAINT);
            statement.setString(2, schema);
            statement.setString(3, naming.likePattern());
            try (ResultSet result = statement.executeQuery()) {
                while (result.next()) {
                    String name = result.getString(1);
                    boolean attached = result.getBoolean(2);
                    Optional<Instant> lower = Optional.ofNullable(result.getObject(3, OffsetDateTime.class)).map(OffsetDateTime::toInstant);
                    Optional<Instant> upper = Optional.ofNullable(result.getObject(4, OffsetDateTime.class)).map(OffsetDateTime::toInstant);
                    String bound = result.getString(5);
                    naming.partitionStart(name).ifPresent(start -> found.add(new Found(name, start, attached, lower, upper, bound)));
                }
            }
        }
        List<HotPartition> partitions = new ArrayList<>(found.size());
        found.sort(Comparator.comparing(partition -> partition.lower().orElse(partition.nameStart())));
        for (int index = 0; index < found.size(); index++) {
            Found partition = found.get(index);
            if (partition.lower().isPresent() && partition.upper().isPresent()) {
                partitions.add(new HotPartition(partition.name(), partition.lower().get(), partition.upper().get(), partition.attached(), true));
                continue;
            }
            if (partition.attached()) {
                // MINVALUE, MAXVALUE or DEFAULT: no finite range to tier by
                throw new MeterstoreException(MeterstoreException.Reason.PARTITION_BOUNDS_UNSUPPORTED,
                        "Partition '%s' of table '%s' is attached %s: MeterStore tiers partitions with finite timestamp bounds only; detach it and attach it FOR VALUES FROM (<start>) TO (<end>)"
                                .formatted(partition.name(), qualifiedParent(), partition.bound() == null ? "without a range bound" : "as '" + partition.bound() + "'"));
            }
            // detached before bounds were kept: the older rule, up to the next partition and at most one step
            Instant start = partition.nameStart();
            Instant end = start.plus(naming.step());
            if (index + 1 < found.size()) {
                Found next = found.get(index + 1);
                Instant nextStart = next.lower().orElse(next.nameStart());
                if (nextStart.isAfter(start) && nextStart.isBefore(end)) {
                    end = nextStart;
                }
            }
            partitions.add(new HotPartition(partition.name(), start, end, false, false));
        }
        return List.copyOf(partitions);
    }

    /**
     * Detaches a partition (O(1)); a partition already detached is left alone. The detached partition keeps its
     * catalogue bound as a CHECK constraint (NOT VALID: O(1), its rows came from within the bound), so its extent is
     * still known to the archival that streams it, the drop that follows and the invariant check.
     */
    public void detach(Connection connection, String partition)
            throws SQLException
    {
        inTransaction(connection, () -> {
            try (Statement statement = connection.createStatement()) {
                statement.execute("SET LOCAL lock_timeout = '%dms'".formatted(lockTimeout.toMillis()));
                if (isAttached(connection, partition)) {
                    HotPartition bounds = partitions(connection).stream()
                            .filter(candidate -> candidate.name().equals(partition))
                            .findFirst()
                            .orElseThrow(() -> new MeterstoreException(MeterstoreException.Reason.PARTITION_MISSING,
                                    "Partition '%s' of table '%s' does not exist".formatted(partition, qualifiedParent())));
                    statement.execute("ALTER TABLE %s DETACH PARTITION %s".formatted(qualifiedParent(), qualifiedPartition(partition)));
                    statement.execute("ALTER TABLE %s DROP CONSTRAINT IF EXISTS %s".formatted(qualifiedPartition(partition), quoteIdentifier(BOUND_CONSTRAINT)));
                    statement.execute("ALTER TABLE %s ADD CONSTRAINT %s CHECK (%s) NOT VALID"
                            .formatted(qualifiedPartition(partition), quoteIdentifier(BOUND_CONSTRAINT), boundCondition(bounds.start(), bounds.end())));
                }
            }
            return null;
        });
    }

    /**
     * Attaches a detached partition again with the bounds it was detached with, undoing {@link #detach}: what an archival
     * that refused its window leaves, as it found it. A partition already attached is left alone.
     */
    public void reattach(Connection connection, String partition)
            throws SQLException
    {
        inTransaction(connection, () -> {
            try (Statement statement = connection.createStatement()) {
                statement.execute("SET LOCAL lock_timeout = '%dms'".formatted(lockTimeout.toMillis()));
                if (!isAttached(connection, partition)) {
                    HotPartition bounds = partitions(connection).stream()
                            .filter(candidate -> candidate.name().equals(partition))
                            .findFirst()
                            .orElseThrow(() -> new MeterstoreException(MeterstoreException.Reason.PARTITION_MISSING,
                                    "Partition '%s' of table '%s' does not exist".formatted(partition, qualifiedParent())));
                    // the bound kept at the detach is NOT VALID; validated (a scan that blocks no reader and not the
                    // parent), it lets ATTACH skip its own scan under the parent's lock
                    statement.execute("ALTER TABLE %s DROP CONSTRAINT IF EXISTS %s".formatted(qualifiedPartition(partition), quoteIdentifier(BOUND_CONSTRAINT)));
                    statement.execute("ALTER TABLE %s ADD CONSTRAINT %s CHECK (%s) NOT VALID"
                            .formatted(qualifiedPartition(partition), quoteIdentifier(BOUND_CONSTRAINT), boundCondition(bounds.start(), bounds.end())));
                    statement.execute("ALTER TABLE %s VALIDATE CONSTRAINT %s".formatted(qualifiedPartition(partition), quoteIdentifier(BOUND_CONSTRAINT)));
                    statement.execute("ALTER TABLE %s ATTACH PARTITION %s FOR VALUES FROM (%s) TO (%s)"
                            .formatted(qualifiedParent(), qualifiedPartition(partition), literal(bounds.start()), literal(bounds.end())));
                    statement.execute("ALTER TABLE %s DROP CONSTRAINT %s".formatted(qualifiedPartition(partition), quoteIdentifier(BOUND_CONSTRAINT)));
                }
            }
            return null;
        });
    }

    /**
     * Drops the whole hot tier of the table in one transaction: the partitions archival left detached, the parent with
     * its attached partitions, and the table's row of archival windows. Takes the archiver's lease, the boundary lock and
     * the cold-write lock exclusively first, waiting at most the lock timeout: no archival cycle, INSERT or erasure of
     * the table runs meanwhile. Returns what it dropped, by name.
     */
    public List<String> dropTable(Connection connection)
            throws SQLException
    {
        return inTransaction(connection, () -> {
            lock(connection, lockTimeout, "pg_advisory_xact_lock", archiverLeaseName(schema, naming.table()),
                    "An archival cycle or erasure of table '%s' held its lease for longer than %s: try again once it has finished");
            holdBoundaryExclusive(connection, lockTimeout);
            holdColdWrites(connection, lockTimeout);
            List<String> dropped = new ArrayList<>();
            try (Statement statement = connection.createStatement()) {
                statement.execute("SET LOCAL lock_timeout = '%dms'".formatted(lockTimeout.toMillis()));
                List<HotPartition> partitions = partitions(connection);
                for (HotPartition partition : partitions) {
                    if (!partition.attached()) {
                        statement.execute("DROP TABLE %s".formatted(qualifiedPartition(partition.name())));
                        dropped.add("detached partition %s".formatted(qualifiedPartition(partition.name())));
                    }
                }
                if (parentExists(connection)) {
                    long attached = partitions.stream().filter(HotPartition::attached).count();
                    // without CASCADE: a view or foreign key someone built on the table fails the drop instead of going with it
                    statement.execute("DROP TABLE %s".formatted(qualifiedParent()));
                    dropped.add("PostgreSQL table %s with its %s attached partitions".formatted(qualifiedParent(), attached));
                }
                if (relationExists(connection, ArchivalWindows.TABLE)) {
                    try (PreparedStatement delete = connection.prepareStatement("DELETE FROM %s WHERE \"table\" = ?".formatted(qualified(schema, ArchivalWindows.TABLE)))) {
                        delete.setString(1, naming.table());
                        delete.executeUpdate();
                    }
                }
            }
            return List.copyOf(dropped);
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

    /** The rows a partition holds, counted: what its drop checks against the archival commits that streamed it. */
    public long rowCount(Connection connection, String partition)
            throws SQLException
    {
        try (Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SELECT count(*) FROM " + qualifiedPartition(partition))) {
            result.next();
            return result.getLong(1);
        }
    }

    /** The rows of a partition with "from" below {@code instant}, counted. */
    public long rowCountBelow(Connection connection, String partition, Instant instant)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement("SELECT count(*) FROM %s WHERE %s".formatted(qualifiedPartition(partition), Tier.COLD.sql("?")))) {
            statement.setObject(1, OffsetDateTime.ofInstant(instant, ZoneOffset.UTC));
            try (ResultSet result = statement.executeQuery()) {
                result.next();
                return result.getLong(1);
            }
        }
    }

    /** Whether the parent has triggers running {@code function}: a table created before them has not until create runs again. */
    private boolean hasTriggerFunction(Connection connection, String function)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement("""
                SELECT 1 FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                JOIN pg_proc f ON f.oid = t.tgfoid
                WHERE n.nspname = ? AND c.relname = ? AND f.proname = ?""")) {
            statement.setString(1, schema);
            statement.setString(2, naming.table());
            statement.setString(3, function);
            try (ResultSet result = statement.executeQuery()) {
                return result.next();
            }
        }
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

    private static String boundCondition(Instant start, Instant end)
    {
        return Tier.sqlBetween(literal(start), literal(end));
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
                throw lockTimeout(sqlException);
            }
            throw e;
        }
        finally {
            connection.setAutoCommit(autoCommit);
        }
    }

    private LockTimeoutException lockTimeout(SQLException e)
    {
        return new LockTimeoutException("Lock timeout on table '%s': another session held a conflicting lock for longer than '%s' (%sms); try again later"
                .formatted(qualifiedParent(), TiersConfig.LOCK_TIMEOUT_PROPERTY, lockTimeout.toMillis()), e);
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
