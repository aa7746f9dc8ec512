package io.meterstore.core;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableSortedSet;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import java.util.SortedSet;

import static com.google.common.base.Preconditions.checkArgument;
import static io.meterstore.core.Sql.qualified;
import static io.meterstore.core.Sql.quoteIdentifier;
import static io.meterstore.core.Sql.tableExists;
import static java.util.Locale.ROOT;
import static java.util.Objects.requireNonNull;

/**
 * The audit trail of erasures, one PostgreSQL table per MeterStore schema ({@value #TABLE}), and the suppression list
 * derived from it: every erasure not lifted keeps INSERT from writing its readings again. One row per erasure (a
 * DELETE statement, or one month of a retention sweep): who, when, the scope (HMAC of the malo_ids, never the ids),
 * rows removed per tier, the Iceberg snapshot that removed the cold ones; later the time the erased files became
 * unreachable ({@code physically_completed_at}) and an audited lift. Append-only, enforced in PostgreSQL by a trigger:
 * DELETE and TRUNCATE are refused, and UPDATE may only fill {@code physically_completed_at} once and the three lift
 * columns once, so no MeterStore role can rewrite history (a table owner can still disable the trigger: keep the owner
 * a role no service runs as where that matters).
 */
public final class ErasureLog
{
    public static final String TABLE = "meterstore_erasures";
    private static final String GUARD_FUNCTION = "meterstore_erasures_append_only";
    // compares whole rows as JSON less the columns that may be filled, so a column added later is guarded too
    private static final String GUARD_BODY = """
            BEGIN
                IF TG_OP <> 'UPDATE' THEN
                    RAISE EXCEPTION 'The erasure log %.% is append-only: % is refused', TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_OP
                        USING ERRCODE = 'insufficient_privilege', HINT = 'An erasure is undone for future writes by lifting it (CALL meterstore.system.lift_erasure), never by removing its row';
                END IF;
                IF (to_jsonb(NEW) - 'physically_completed_at' - 'lifted_at' - 'lifted_by' - 'lift_reason')
                        IS DISTINCT FROM (to_jsonb(OLD) - 'physically_completed_at' - 'lifted_at' - 'lifted_by' - 'lift_reason') THEN
                    RAISE EXCEPTION 'The erasure log %.% is append-only: erasure % may only get its physical completion and its lift recorded', TG_TABLE_SCHEMA, TG_TABLE_NAME, OLD.erasure_id
                        USING ERRCODE = 'insufficient_privilege';
                END IF;
                IF OLD.physically_completed_at IS NOT NULL AND NEW.physically_completed_at IS DISTINCT FROM OLD.physically_completed_at THEN
                    RAISE EXCEPTION 'Erasure % of the erasure log %.% recorded its physical completion already', OLD.erasure_id, TG_TABLE_SCHEMA, TG_TABLE_NAME
                        USING ERRCODE = 'insufficient_privilege';
                END IF;
                IF OLD.lifted_at IS NOT NULL AND (NEW.lifted_at, NEW.lifted_by, NEW.lift_reason) IS DISTINCT FROM (OLD.lifted_at, OLD.lifted_by, OLD.lift_reason) THEN
                    RAISE EXCEPTION 'Erasure % of the erasure log %.% was lifted already', OLD.erasure_id, TG_TABLE_SCHEMA, TG_TABLE_NAME
                        USING ERRCODE = 'insufficient_privilege';
                END IF;
                RETURN NEW;
            END
            """;
    private static final String LOCK_PREFIX = "meterstore.erasure-log:";
    private static final String COLUMNS = """
            erasure_id, "table", trigger, trino_user, statement_time, key_fingerprint, scope, obis_codes, from_start, from_end,
            rows_removed_hot, rows_removed_cold, snapshot_id, physically_completed_at, lifted_at, lifted_by, lift_reason""";

    private ErasureLog() {}

    public enum Trigger
    {
        /** A DELETE statement: someone asked for it. */
        REQUEST,
        /** The archiver's retention sweep. */
        RETENTION;

        public String sqlName()
        {
            return name().toLowerCase(ROOT);
        }

        static Trigger fromSql(String name)
        {
            return valueOf(name.toUpperCase(ROOT));
        }
    }

    /** An audited lift: from then on INSERT may write the erasure's readings again. */
    public record Lift(Instant liftedAt, String liftedBy, String reason)
    {
        public Lift
        {
            requireNonNull(liftedAt, "liftedAt is null");
            requireNonNull(liftedBy, "liftedBy is null");
            requireNonNull(reason, "reason is null");
        }
    }

    /**
     * An erasure as it is recorded. {@code keyFingerprint} is the {@link ErasureKey#fingerprint()} its malo scopes were
     * computed with (empty only for a scope of every malo_id); {@code snapshotId} the Iceberg commit that removed its
     * cold rows (empty when it removed none).
     */
    public record NewErasure(
            String table,
            Trigger trigger,
            String user,
            Instant statementTime,
            Optional<String> keyFingerprint,
            ErasureScope scope,
            long rowsRemovedHot,
            long rowsRemovedCold,
            Optional<Long> snapshotId)
    {
        public NewErasure
        {
            requireNonNull(table, "table is null");
            requireNonNull(trigger, "trigger is null");
            requireNonNull(user, "user is null");
            requireNonNull(statementTime, "statementTime is null");
            requireNonNull(keyFingerprint, "keyFingerprint is null");
            requireNonNull(scope, "scope is null");
            requireNonNull(snapshotId, "snapshotId is null");
            checkArgument(rowsRemovedHot >= 0 && rowsRemovedCold >= 0, "rows removed are negative");
            checkArgument(scope.maloScopes().isPresent() == keyFingerprint.isPresent(), "a malo scope needs the fingerprint of its key, and only a malo scope has one");
            checkArgument(scope.maloScopes().isPresent() || trigger == Trigger.RETENTION, "only retention erases every malo_id");
        }
    }

    /** One row of the log. */
    public record Erasure(
            long erasureId,
            NewErasure recorded,
            Optional<Instant> physicallyCompletedAt,
            Optional<Lift> lift)
    {
        public Erasure
        {
            requireNonNull(recorded, "recorded is null");
            requireNonNull(physicallyCompletedAt, "physicallyCompletedAt is null");
            requireNonNull(lift, "lift is null");
        }

        /** Whether the erasure keeps INSERT from writing its readings: until it is lifted. */
        public boolean suppresses()
        {
            return lift.isEmpty();
        }

        /**
         * Whether a read of a snapshot committed at {@code committedAt} must hide the erasure's readings: a snapshot from
         * before the erasure still holds them until the archiver expires it. After a lift, readings written again are
         * in snapshots committed after it, which are shown whole.
         */
        public boolean hidesSnapshotAt(Instant committedAt)
        {
            return lift.map(lifted -> committedAt.isBefore(lifted.liftedAt())).orElse(true);
        }
    }

    /**
     * Creates the log of {@code schema} unless it exists: the table, and the trigger that keeps it append-only. Called by
     * {@code meterstore-archiver create} and by every writer before it first reads or writes the log, so a deployment
     * created before the log existed gets it on first use. Concurrent callers wait for each other.
     */
    public static void create(Connection connection, String schema)
            throws SQLException
    {
        checkArgument(connection.getAutoCommit(), "ErasureLog.create commits a transaction of its own");
        if (exists(connection, schema)) {
            return;
        }
        connection.setAutoCommit(false);
        try {
            try (PreparedStatement lock = connection.prepareStatement("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))")) {
                lock.setString(1, LOCK_PREFIX + schema);
                lock.execute();
            }
            String log = qualified(schema, TABLE);
            String guard = qualified(schema, GUARD_FUNCTION);
            try (Statement statement = connection.createStatement()) {
                statement.execute("CREATE SCHEMA IF NOT EXISTS " + quoteIdentifier(schema));
                statement.execute("""
                        CREATE TABLE IF NOT EXISTS %s (
                            erasure_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                            "table" text NOT NULL,
                            trigger text NOT NULL CHECK (trigger IN ('request', 'retention')),
                            trino_user text NOT NULL,
                            statement_time timestamptz NOT NULL,
                            key_fingerprint text,
                            scope text[],
                            obis_codes text[],
                            from_start timestamptz,
                            from_end timestamptz,
                            rows_removed_hot bigint NOT NULL CHECK (rows_removed_hot >= 0),
                            rows_removed_cold bigint NOT NULL CHECK (rows_removed_cold >= 0),
                            snapshot_id bigint,
                            physically_completed_at timestamptz,
                            lifted_at timestamptz,
                            lifted_by text,
                            lift_reason text,
                            CHECK ((scope IS NULL) = (key_fingerprint IS NULL)),
                            CHECK (scope IS NOT NULL OR trigger = 'retention'),
                            CHECK (from_start IS NULL OR from_end IS NULL OR from_start < from_end),
                            CHECK ((lifted_at IS NULL) = (lifted_by IS NULL) AND (lifted_at IS NULL) = (lift_reason IS NULL)))""".formatted(log));
                statement.execute("CREATE INDEX IF NOT EXISTS %s ON %s (\"table\", erasure_id)".formatted(quoteIdentifier(TABLE + "_table"), log));
                statement.execute("CREATE OR REPLACE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql AS $guard$%n%s$guard$".formatted(guard, GUARD_BODY));
                statement.execute("CREATE OR REPLACE TRIGGER %s BEFORE UPDATE OR DELETE ON %s FOR EACH ROW EXECUTE FUNCTION %s()"
                        .formatted(quoteIdentifier(GUARD_FUNCTION), log, guard));
                statement.execute("CREATE OR REPLACE TRIGGER %s BEFORE TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION %s()"
                        .formatted(quoteIdentifier(GUARD_FUNCTION + "_truncate"), log, guard));
            }
            connection.commit();
        }
        catch (SQLException | RuntimeException e) {
            connection.rollback();
            throw e;
        }
        finally {
            connection.setAutoCommit(true);
        }
    }

    /** Whether the log of {@code schema} exists. */
    public static boolean exists(Connection connection, String schema)
            throws SQLException
    {
        return tableExists(connection, qualified(schema, TABLE));
    }

    /** Appends {@code erasure} in the caller's transaction (that of the hot rows' DELETE), returning it with its id. */
    public static Erasure record(Connection connection, String schema, NewErasure erasure)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement("""
                INSERT INTO %s ("table", trigger, trino_user, statement_time, key_fingerprint, scope, obis_codes, from_start, from_end,
                    rows_removed_hot, rows_removed_cold, snapshot_id)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING erasure_id""".formatted(qualified(schema, TABLE)))) {
            statement.setString(1, erasure.table());
            statement.setString(2, erasure.trigger().sqlName());
            statement.setString(3, erasure.user());
            statement.setObject(4, timestamp(erasure.statementTime()));
            statement.setString(5, erasure.keyFingerprint().orElse(null));
            setTextArray(statement, 6, erasure.scope().maloScopes());
            setTextArray(statement, 7, erasure.scope().obisCodes());
            statement.setObject(8, erasure.scope().from().lower().map(ErasureLog::timestamp).orElse(null), Types.TIMESTAMP_WITH_TIMEZONE);
            statement.setObject(9, erasure.scope().from().upper().map(ErasureLog::timestamp).orElse(null), Types.TIMESTAMP_WITH_TIMEZONE);
            statement.setLong(10, erasure.rowsRemovedHot());
            statement.setLong(11, erasure.rowsRemovedCold());
            statement.setObject(12, erasure.snapshotId().orElse(null), Types.BIGINT);
            try (ResultSet result = statement.executeQuery()) {
                result.next();
                return new Erasure(result.getLong(1), erasure, Optional.empty(), Optional.empty());
            }
        }
    }

    /** Every erasure of {@code table}, oldest first; none when the log does not exist yet. */
    public static List<Erasure> erasures(Connection connection, String schema, String table)
            throws SQLException
    {
        return select(connection, schema, table, "");
    }

    /** The suppression list of {@code table}: its erasures not lifted, oldest first. */
    public static List<Erasure> suppressions(Connection connection, String schema, String table)
            throws SQLException
    {
        return select(connection, schema, table, " AND lifted_at IS NULL");
    }

    /**
     * Lifts erasure {@code erasureId} of {@code table}: INSERT may write its readings again. Returns the lifted erasure;
     * empty when the table has no such erasure. An erasure lifted already is refused by the log's trigger.
     */
    public static Optional<Erasure> lift(Connection connection, String schema, String table, long erasureId, Lift lift)
            throws SQLException
    {
        if (!exists(connection, schema)) {
            return Optional.empty();
        }
        try (PreparedStatement statement = connection.prepareStatement("""
                UPDATE %s SET lifted_at = ?, lifted_by = ?, lift_reason = ? WHERE "table" = ? AND erasure_id = ? RETURNING %s"""
                .formatted(qualified(schema, TABLE), COLUMNS))) {
            statement.setObject(1, timestamp(lift.liftedAt()));
            statement.setString(2, lift.liftedBy());
            statement.setString(3, lift.reason());
            statement.setString(4, table);
            statement.setLong(5, erasureId);
            try (ResultSet result = statement.executeQuery()) {
                return result.next() ? Optional.of(erasure(result)) : Optional.empty();
            }
        }
    }

    /**
     * Records that no retained snapshot references a file holding a row of erasure {@code erasureId} any more; once.
     * Returns whether this call recorded it (false: recorded before, or no such erasure).
     */
    public static boolean recordPhysicalCompletion(Connection connection, String schema, long erasureId, Instant completedAt)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement("UPDATE %s SET physically_completed_at = ? WHERE erasure_id = ? AND physically_completed_at IS NULL"
                .formatted(qualified(schema, TABLE)))) {
            statement.setObject(1, timestamp(completedAt));
            statement.setLong(2, erasureId);
            return statement.executeUpdate() == 1;
        }
    }

    private static List<Erasure> select(Connection connection, String schema, String table, String condition)
            throws SQLException
    {
        if (!exists(connection, schema)) {
            return ImmutableList.of();
        }
        try (PreparedStatement statement = connection.prepareStatement("SELECT %s FROM %s WHERE \"table\" = ?%s ORDER BY erasure_id"
                .formatted(COLUMNS, qualified(schema, TABLE), condition))) {
            statement.setString(1, table);
            ImmutableList.Builder<Erasure> erasures = ImmutableList.builder();
            try (ResultSet result = statement.executeQuery()) {
                while (result.next()) {
                    erasures.add(erasure(result));
                }
            }
            return erasures.build();
        }
    }

    private static Erasure erasure(ResultSet result)
            throws SQLException
    {
        ErasureScope scope = new ErasureScope(
                textSet(result.getArray("scope")),
                textSet(result.getArray("obis_codes")),
                new TierSplit.Range(instant(result, "from_start"), instant(result, "from_end")));
        long snapshotId = result.getLong("snapshot_id");
        Optional<Long> snapshot = result.wasNull() ? Optional.empty() : Optional.of(snapshotId);
        NewErasure recorded = new NewErasure(
                result.getString("table"),
                Trigger.fromSql(result.getString("trigger")),
                result.getString("trino_user"),
                instant(result, "statement_time").orElseThrow(),
                Optional.ofNullable(result.getString("key_fingerprint")),
                scope,
                result.getLong("rows_removed_hot"),
                result.getLong("rows_removed_cold"),
                snapshot);
        String liftedBy = result.getString("lifted_by");
        String liftReason = result.getString("lift_reason");
        Optional<Lift> lift = instant(result, "lifted_at").map(liftedAt -> new Lift(liftedAt, liftedBy, liftReason));
        return new Erasure(result.getLong("erasure_id"), recorded, instant(result, "physically_completed_at"), lift);
    }

    private static Optional<SortedSet<String>> textSet(Array array)
            throws SQLException
    {
        if (array == null) {
            return Optional.empty();
        }
        return Optional.of(ImmutableSortedSet.copyOf((String[]) array.getArray()));
    }

    // SQL NULL for no set of values: every value
    private static void setTextArray(PreparedStatement statement, int index, Optional<SortedSet<String>> values)
            throws SQLException
    {
        if (values.isEmpty()) {
            statement.setNull(index, Types.ARRAY);
            return;
        }
        statement.setArray(index, statement.getConnection().createArrayOf("text", values.get().toArray()));
    }

    private static Optional<Instant> instant(ResultSet result, String column)
            throws SQLException
    {
        return Optional.ofNullable(result.getObject(column, OffsetDateTime.class)).map(OffsetDateTime::toInstant);
    }

    private static OffsetDateTime timestamp(Instant instant)
    {
        return OffsetDateTime.ofInstant(instant, ZoneOffset.UTC);
    }
}
