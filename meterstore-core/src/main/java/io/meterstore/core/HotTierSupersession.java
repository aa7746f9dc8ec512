package io.meterstore.core;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

import static io.meterstore.core.Sql.quoteIdentifier;

/**
 * Supersession recorded when it happens, as the cold tier records it: every hot row carries {@code superseded_at}, the
 * transaction time at which it stopped winning (NULL while it wins), so that {@code readings} reads the hot tier's
 * winners unordered as {@code superseded_at IS NULL}, and {@code FOR TIMESTAMP AS OF t} as
 * {@code recorded_at <= t AND (superseded_at IS NULL OR superseded_at > t)}, without resolution.
 * <p>
 * A row's mark is what {@link ResolutionRule} says of the versions of its key: the earliest recorded_at of the versions
 * that beat it, or its own recorded_at when one of those was recorded before it (a redelivery of a lower version after
 * a higher one never wins, at no instant). Statement triggers with transition tables on the parent and on every
 * partition (a partition is written by name too) recompute the marks of the keys each statement touches, in the
 * writer's transaction, whoever the writer is; a statement whose new rows are the only stored versions of their keys
 * (a day's ingest) marks nothing and costs an index probe per key, however full the day's partition already is.
 * <p>
 * A re-grid (a higher version whose span covers lower-version spans of another grid) would supersede those spans too;
 * the rules' trigger refuses it today (rule {@link ReadingRules#ONE_GRID_PER_READING}), so only versions of the same
 * "from" supersede each other. Covering spans would be marked where the keys are gathered below.
 * <p>
 * A partition that held rows before its triggers were installed is read with resolution until {@link #markPartition}
 * has marked all of them; it then carries {@link #MARKED_COMMENT} as its comment, which the read path checks per partition.
 */
public final class HotTierSupersession
{
    public static final String COLUMN = "superseded_at";
    public static final String FUNCTION = "meterstore_supersession";
    /** The comment of a partition every row of which is marked: its winners are the rows whose mark is NULL. */
    public static final String MARKED_COMMENT = "meterstore: superseded_at marked";
    private static final String INSERT_TRIGGER = "meterstore_supersession_insert";
    private static final String UPDATE_TRIGGER = "meterstore_supersession_update";
    private static final String DELETE_TRIGGER = "meterstore_supersession_delete";
    /** The triggers each table of the hot tier (parent and partitions) carries for the marks. */
    public static final List<String> TRIGGERS = List.of(INSERT_TRIGGER, UPDATE_TRIGGER, DELETE_TRIGGER);
    // as the rules' trigger serializes the writers of one channel: the same locks, taken in the same order
    private static final int CHANNEL_LOCKS = 64;
    /** The rows a transaction of {@link #markPartition} marks at most: what a writer of the table may wait for. */
    public static final int MARK_BATCH_ROWS = 20_000;

    // the "from" range of the statement's rows, bound by the trigger
    private static final String TRIGGER_RANGE = "p.\"from\" >= $1 AND p.\"from\" <= $2";

    private HotTierSupersession() {}

    /** The column's definition in a CREATE TABLE of the parent. */
    static String columnDefinition()
    {
        return quoteIdentifier(COLUMN) + " timestamptz";
    }

    /** Adds the column to {@code qualifiedTable}, a parent or a detached partition, if it lacks it: no rewrite, no scan. */
    static String addColumn(String qualifiedTable)
    {
        return "ALTER TABLE %s ADD COLUMN IF NOT EXISTS %s".formatted(qualifiedTable, columnDefinition());
    }

    /**
     * The function the triggers run, in {@code schema}; its argument is the qualified parent, which names the channel
     * locks. It reads and marks the table the trigger fired on: a key's versions share its "from", so its partition (or
     * the parent) holds them all, attached or detached. The function of the default key is {@link #FUNCTION}, shared by
     * the tables of the schema; a table whose key has more columns ({@code keyColumns}, {@link TableColumns#keyColumns()})
     * has one of its own, {@link #function}.
     */
    static String createFunction(String schema, String table, List<String> keyColumns)
    {
        // the key's columns after malo_id, obis_code and "from", each preceded by a comma; empty for the default key
        String key = keyColumns.stream().map(column -> ", " + quoteIdentifier(column)).collect(Collectors.joining());
        String probeKey = keyColumns.stream().map(column -> " AND p.%1$s = k.%1$s".formatted(quoteIdentifier(column))).collect(Collectors.joining());
        // the versions of the keys the statement touched: in one pass over their "from" range when the statement fills
        // it (a day's ingest), else by an index probe per key (OFFSET 0 keeps the probe from being turned into a join)
        String dense = """
                SELECT p.* FROM %1$s p
                WHERE p."from" >= $1 AND p."from" <= $2 AND (p.malo_id, p.obis_code, p."from"%3$s) IN (SELECT malo_id, obis_code, "from"%4$s FROM %2$s k)"""
                .formatted("%1$s", "%2$s", keyColumns.stream().map(column -> ", p." + quoteIdentifier(column)).collect(Collectors.joining()), key);
        String sparse = """
                SELECT p.* FROM (SELECT DISTINCT malo_id, obis_code, "from"%3$s FROM %2$s k) k CROSS JOIN LATERAL (
                    SELECT * FROM %1$s p WHERE p.malo_id = k.malo_id AND p.obis_code = k.obis_code AND p."from" = k."from"%4$s AND p."from" >= $1 AND p."from" <= $2 OFFSET 0) p"""
                .formatted("%1$s", "%2$s", key, probeKey);
        return """
                CREATE OR REPLACE FUNCTION %1$s.%2$s() RETURNS trigger LANGUAGE plpgsql AS $function$
                DECLARE
                    target text := format('%%I.%%I', TG_TABLE_SCHEMA, TG_TABLE_NAME);
                    keys text;
                    lower_from timestamptz;
                    upper_from timestamptz;
                    written_rows bigint;
                    marked_rows bigint;
                    channels bigint;
                    stored_rows bigint;
                    repeated_keys bigint;
                BEGIN
                    keys := CASE TG_OP
                        WHEN 'INSERT' THEN 'new_rows'
                        WHEN 'DELETE' THEN 'old_rows'
                        ELSE '(SELECT malo_id, obis_code, "from"%7$s, %4$s FROM new_rows UNION ALL SELECT malo_id, obis_code, "from"%7$s, %4$s FROM old_rows)' END;
                    EXECUTE format('SELECT min("from"), max("from"), count(*), count(%4$s) FROM %%s k', keys) INTO lower_from, upper_from, written_rows, marked_rows;
                    IF written_rows = 0 THEN
                        RETURN NULL;
                    END IF;
                    -- in ascending order, as the rules' trigger takes them (already held when it ran first): a writer of a
                    -- channel sees every version another writer of it committed
                    EXECUTE format('SELECT count(pg_advisory_xact_lock(hashtextextended(%%L, bucket))) FROM (SELECT DISTINCT abs(hashtext(malo_id) %%%% %3$d) AS bucket FROM %%s k ORDER BY 1) b',
                            'meterstore.channels:' || TG_ARGV[0], keys);
                    EXECUTE format('SELECT count(*) FROM (SELECT 1 FROM %%s k GROUP BY malo_id, obis_code) c', keys) INTO channels;
                    IF written_rows >= 24 * channels THEN
                        -- a day's ingest: when the new rows are the only stored versions of their keys and hold one
                        -- version of each key, no key has a second version
                        IF TG_OP = 'INSERT' AND marked_rows = 0 THEN
                            -- the stored versions of the statement's keys, by an index probe per key: O(statement), where a
                            -- count of the whole range grew with the partition through the day
                            EXECUTE format('SELECT count(*) FROM (SELECT DISTINCT malo_id, obis_code, "from"%7$s FROM new_rows) k CROSS JOIN LATERAL (SELECT 1 FROM %%s p WHERE p.malo_id = k.malo_id AND p.obis_code = k.obis_code AND p."from" = k."from"%8$s AND p."from" >= $1 AND p."from" <= $2 OFFSET 0) p', target) INTO stored_rows USING lower_from, upper_from;
                            IF stored_rows = written_rows THEN
                                EXECUTE 'SELECT count(*) FROM (SELECT 1 FROM new_rows GROUP BY malo_id, obis_code, "from"%7$s HAVING count(*) > 1 LIMIT 1) r' INTO repeated_keys;
                                IF repeated_keys = 0 THEN
                                    RETURN NULL;
                                END IF;
                            END IF;
                        END IF;
                    END IF;
                    -- the UPDATE below fires the UPDATE triggers again, whoever ran this: the rules' passes it (no column it
                    -- reads changed), this one recomputes the marks it wrote, finds them right and writes none
                    IF written_rows >= 24 * channels THEN
                        EXECUTE format($query$%5$s$query$, target, keys) USING lower_from, upper_from;
                    ELSE
                        EXECUTE format($query$%6$s$query$, target, keys) USING lower_from, upper_from;
                    END IF;
                    RETURN NULL;
                END
                $function$""".formatted(quoteIdentifier(schema), quoteIdentifier(function(table, keyColumns)), CHANNEL_LOCKS, quoteIdentifier(COLUMN),
                mark(dense, "%1$s", TRIGGER_RANGE, keyColumns), mark(sparse, "%1$s", TRIGGER_RANGE, keyColumns), key.replace("'", "''"), probeKey.replace("'", "''"));
    }

    /** The function of the triggers of {@code table}: {@link #FUNCTION} for the default key, one of the table's own for a key with {@code keyColumns}. */
    static String function(String table, List<String> keyColumns)
    {
        return keyColumns.isEmpty() ? FUNCTION : tableFunction(table);
    }

    /**
     * The function of the triggers of {@code table} when its key has more columns than the default key: named after the
     * table, which fits PostgreSQL's 63 bytes as its partitions' names do ({@link PartitionNaming#MAX_TABLE_NAME_LENGTH}).
     */
    static String tableFunction(String table)
    {
        return table + "_supersession";
    }

    /**
     * Marks the versions {@code versions} selects (every version of each key it holds, as {@code p.*}) as
     * {@link ResolutionRule} says: a row is beaten by the versions before it in the rule's order, at the earliest of their
     * recorded_at, never before its own. Writes only the marks that differ.
     */
    private static String mark(String versions, String target, String range, List<String> keyColumns)
    {
        String partitionBy = ResolutionRule.partition(keyColumns).stream().map(column -> "p." + quoteIdentifier(column)).collect(Collectors.joining(", "));
        String key = keyColumns.stream().map(column -> ", p." + quoteIdentifier(column)).collect(Collectors.joining());
        String sameKey = keyColumns.stream().map(column -> " AND p.%1$s = m.%1$s".formatted(quoteIdentifier(column))).collect(Collectors.joining());
        String order = ResolutionRule.ORDER.stream().map(column -> "p.%s DESC".formatted(quoteIdentifier(column.columnName()))).collect(Collectors.joining(", "));
        // a re-grid's covering spans would join the versions here, once the rules let a higher version change the grid
        return """
                WITH versions AS (%1$s),
                marks AS (
                    SELECT p.malo_id, p.obis_code, p."from"%7$s, p.version, p.%2$s,
                        CASE WHEN beaten_at IS NULL THEN NULL ELSE greatest(p.recorded_at, beaten_at) END AS marked
                    FROM (SELECT p.*, min(p.recorded_at) OVER (PARTITION BY %3$s ORDER BY %4$s ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS beaten_at
                        FROM versions p) p)
                UPDATE %5$s p SET %2$s = m.marked FROM marks m
                WHERE p.malo_id = m.malo_id AND p.obis_code = m.obis_code AND p."from" = m."from"%8$s AND p.version = m.version
                    AND %6$s AND m.%2$s IS DISTINCT FROM m.marked"""
                .formatted(versions, quoteIdentifier(COLUMN), partitionBy, order, target, range, key, sameKey);
    }

    /** The triggers of one table, the parent or a partition; {@code qualifiedParent} names the channel locks. */
    static List<String> createTriggers(String schema, String function, String qualifiedTable, String qualifiedParent)
    {
        String argument = "'" + qualifiedParent.replace("'", "''") + "'";
        function = quoteIdentifier(schema) + "." + quoteIdentifier(function);
        return List.of(
                "CREATE OR REPLACE TRIGGER %s AFTER INSERT ON %s REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION %s(%s)"
                        .formatted(INSERT_TRIGGER, qualifiedTable, function, argument),
                // every UPDATE, the marks' own too: a condition a writer can set (a setting; pg_trigger_depth(), by a
                // trigger of its own on a temporary table) would let it change a row and leave its key's marks stale
                "CREATE OR REPLACE TRIGGER %s AFTER UPDATE ON %s REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION %s(%s)"
                        .formatted(UPDATE_TRIGGER, qualifiedTable, function, argument),
                "CREATE OR REPLACE TRIGGER %s AFTER DELETE ON %s REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION %s(%s)"
                        .formatted(DELETE_TRIGGER, qualifiedTable, function, argument));
    }

    /** Gives {@code qualifiedPartition} the comment that says every row of it is marked. */
    static String markedComment(String qualifiedPartition)
    {
        return "COMMENT ON TABLE %s IS '%s'".formatted(qualifiedPartition, MARKED_COMMENT);
    }

    /** The partitions (by name, attached or detached) of {@code schema} every row of which is marked, in one catalogue read. */
    public static Set<String> markedPartitions(Connection connection, String schema)
            throws SQLException
    {
        Set<String> marked = new HashSet<>();
        try (PreparedStatement statement = connection.prepareStatement("""
                SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                JOIN pg_description d ON d.objoid = c.oid AND d.classoid = 'pg_class'::regclass AND d.objsubid = 0
                WHERE n.nspname = ? AND c.relkind = 'r' AND d.description = ?""")) {
            statement.setString(1, schema);
            statement.setString(2, MARKED_COMMENT);
            try (ResultSet result = statement.executeQuery()) {
                while (result.next()) {
                    marked.add(result.getString(1));
                }
            }
        }
        return Set.copyOf(marked);
    }

    /**
     * Marks every row {@code qualifiedPartition} holds, by ranges of malo_id of about {@code batchRows} rows, each in a
     * transaction of its own that holds every channel lock of the table while it runs: a writer's trigger, which marks
     * the keys it writes, then never races a batch over the same key. The last batch gives the partition its comment.
     * The triggers must be installed first: a row written after a batch passed its key is marked by its writer.
     */
    static void markPartition(Connection connection, String qualifiedParent, String qualifiedPartition, int batchRows, Duration lockTimeout)
            throws SQLException
    {
        boolean autoCommit = connection.getAutoCommit();
        connection.setAutoCommit(false);
        try {
            Optional<String> lower = Optional.empty();
            while (true) {
                try (Statement statement = connection.createStatement()) {
                    statement.execute("SET LOCAL lock_timeout = '%dms'".formatted(lockTimeout.toMillis()));
                }
                try (PreparedStatement lock = connection.prepareStatement(
                        "SELECT count(pg_advisory_xact_lock(hashtextextended(?, bucket))) FROM generate_series(0, %d) bucket".formatted(CHANNEL_LOCKS - 1))) {
                    lock.setString(1, "meterstore.channels:" + qualifiedParent);
                    lock.execute();
                }
                Optional<String> upper = batchUpper(connection, qualifiedPartition, lower, batchRows);
                try (PreparedStatement mark = connection.prepareStatement(markBatch(qualifiedPartition, lower.isPresent(), upper.isPresent()))) {
                    int parameter = 1;
                    // the range twice: the versions read, and the rows updated
                    for (int pass = 0; pass < 2; pass++) {
                        if (lower.isPresent()) {
                            mark.setString(parameter++, lower.get());
                        }
                        if (upper.isPresent()) {
                            mark.setString(parameter++, upper.get());
                        }
                    }
                    mark.execute();
                }
                if (upper.isEmpty()) {
                    try (Statement statement = connection.createStatement()) {
                        statement.execute(markedComment(qualifiedPartition));
                    }
                    connection.commit();
                    return;
                }
                connection.commit();
                lower = upper;
            }
        }
        catch (SQLException | RuntimeException e) {
            connection.rollback();
            throw e;
        }
        finally {
            connection.setAutoCommit(autoCommit);
        }
    }

    // the malo_id that ends a batch of about batchRows rows after lower; none when the rest is one batch
    private static Optional<String> batchUpper(Connection connection, String qualifiedPartition, Optional<String> lower, int batchRows)
            throws SQLException
    {
        try (PreparedStatement select = connection.prepareStatement("SELECT malo_id FROM %s %s ORDER BY malo_id OFFSET ? LIMIT 1"
                .formatted(qualifiedPartition, lower.isPresent() ? "WHERE malo_id > ?" : ""))) {
            int parameter = 1;
            if (lower.isPresent()) {
                select.setString(parameter++, lower.get());
            }
            select.setInt(parameter, batchRows);
            try (ResultSet result = select.executeQuery()) {
                return result.next() ? Optional.of(result.getString(1)) : Optional.empty();
            }
        }
    }

    // the marks of every key with malo_id in (lower, upper], as the triggers write them
    private static String markBatch(String qualifiedPartition, boolean lower, boolean upper)
    {
        String range = lower && upper ? "p.malo_id > ? AND p.malo_id <= ?" : lower ? "p.malo_id > ?" : upper ? "p.malo_id <= ?" : "true";
        // the range bounds the UPDATE's own scan too, which then probes the batch's keys alone
        // the default key's: a table whose key has more columns was created with its triggers, so each of its partitions
        // carries the marks from its first row and is never marked here
        return mark("SELECT p.* FROM %s p WHERE %s".formatted(qualifiedPartition, range), qualifiedPartition, range, List.of());
    }
}
