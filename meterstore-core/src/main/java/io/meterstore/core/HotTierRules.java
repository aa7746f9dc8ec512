package io.meterstore.core;

import com.google.common.collect.ImmutableMap;
import org.postgresql.util.PSQLException;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static io.meterstore.core.Sql.quoteIdentifier;
import static java.util.Objects.requireNonNull;

/**
 * The rules of the readings model that PostgreSQL keeps itself, so that no writer gets around them: CHECK constraints
 * for the shapes that need no arithmetic (identifiers, canonical OBIS, the scope's form, "to" after "from", the known
 * codes), and {@link ReadingRules}' rules between the versions of a channel as statement triggers on the parent and on
 * every partition (a partition is written by name too). The triggers see each statement's new rows at once, in a
 * transition table, and check them in one window pass against the versions stored around them in any partition, so a
 * span reaching into the next partition is checked too. An exclusion constraint per partition would do the latter for
 * one partition only, and costs ten times an INSERT (measured: 96,000 rows, 0.5 s without, 5 to 7 s with one).
 * <p>
 * The checks that need arithmetic (MaLo-ID check digit, the scope's month, the balancing day) stay with the write path
 * and the archiver, which apply {@link Reading#validate}.
 */
public final class HotTierRules
{
    /** The SQLSTATE the triggers raise, exclusion_violation, with the rule's name as the constraint. */
    public static final String RULE_VIOLATION = "23P01";
    public static final String FUNCTION = "meterstore_reading_rules";
    private static final String INSERT_TRIGGER = "meterstore_reading_rules_insert";
    private static final String UPDATE_TRIGGER = "meterstore_reading_rules_update";
    /** The names of the rules' triggers, on the parent and on each partition. */
    public static final List<String> TRIGGERS = List.of(INSERT_TRIGGER, UPDATE_TRIGGER);
    // the writers of one channel are serialized by one of this many transaction locks, taken in order
    private static final int CHANNEL_LOCKS = 64;
    // the dense check sorts a day's ingest of a thousand meters (96,000 rows, 8 MB) in memory; PostgreSQL's default
    // of 4 MB spilled it to disk
    private static final String WORK_MEM = "64MB";

    // a point table's row is the register at "from": named so that PostgreSQL's refusal of an interval reads as such
    private static final String POINT_WITHOUT_TO = "point_reading_has_no_to";
    private static final String POINT_WITHOUT_TO_CHECK = "\"to\" IS NULL";
    private static final String CANONICAL_GROUP = "(0|[1-9][0-9]{0,2})";
    // a checked column's CHECK is named after it, as in the Rust MeterStore: malo_id_shape, grid_area_shape
    private static final String SHAPE_SUFFIX = "_shape";

    /** The CHECK constraints of an interval table, by name: what a row must be, whoever writes it. */
    public static final Map<String, String> CHECKS = checks(TableShape.TimeModel.INTERVAL);
    // the checks of either model by name, for the constraints a table holds
    private static final Map<String, String> ALL_CHECKS = ImmutableMap.<String, String>builder()
            .putAll(CHECKS)
            .put(POINT_WITHOUT_TO, POINT_WITHOUT_TO_CHECK)
            .buildOrThrow();

    private HotTierRules() {}

    /** The CHECK constraints of a table of {@code timeModel}: an interval runs forward, a point (register reading) has no "to". */
    public static Map<String, String> checks(TableShape.TimeModel timeModel)
    {
        String obis = "^%1$s-%1$s:%1$s\\.%1$s\\.%1$s(\\*%1$s)?$".formatted(CANONICAL_GROUP);
        Map.Entry<String, String> span = switch (timeModel) {
            case INTERVAL -> Map.entry("interval_forward", "\"to\" > \"from\"");
            case POINT -> Map.entry(POINT_WITHOUT_TO, POINT_WITHOUT_TO_CHECK);
        };
        return Map.of(
                "malo_id_shape", "malo_id ~ '^[1-9][0-9]{10}$'",
                "melo_id_shape", "melo_id IS NULL OR melo_id ~ '^[A-Z]{2}[0-9]{6}[A-Z0-9]{25}$'",
                "obis_code_canonical", "obis_code ~ '%s' AND obis_code !~ '\\*255$'".formatted(obis),
                "version_scope_canonical", "version_scope ~ '^[0-9]{13}:[0-9]{4}-(0[1-9]|1[0-2])$'",
                span.getKey(), span.getValue(),
                "sparte_known", "sparte IN (%s)".formatted(codes(Sparte.values())),
                "unit_known", "unit IN (%s)".formatted(codes(Sparte.MeasurementUnit.values())),
                "quality_known", "quality IN (%s)".formatted(codes(Quality.values())),
                "version_fits", "version >= 0");
    }

    /**
     * The CHECK constraints of a table of {@code shape}: its time model's, and one {@code "<column>_shape"} per checked
     * column holding the shape of its canonical values ({@link ValueCheck#pattern()}); malo_id's and melo_id's are the
     * model's own. NULL passes a CHECK, so a nullable column stays nullable.
     */
    public static Map<String, String> checks(TableShape shape)
    {
        Map<String, String> checks = new HashMap<>(checks(shape.timeModel()));
        shape.checkedColumns().forEach((column, check) -> checks.putIfAbsent(column + SHAPE_SUFFIX, "%s ~ '%s'".formatted(quoteIdentifier(column), check.pattern())));
        return ImmutableMap.copyOf(checks);
    }

    private static String codes(Enum<?>[] values)
    {
        return Arrays.stream(values).map(value -> "'" + value.name() + "'").collect(Collectors.joining(", "));
    }

    /**
     * The function the triggers run, in {@code schema}. Its argument is the qualified parent, whose partitions hold every
     * version a new row can meet. New rows are marked by their key in the transition table: under a savepoint their
     * xmin is a subtransaction's, not the transaction's.
     * <p>
     * A channel is (malo_id, obis_code) and the key's other columns ({@code keyColumns}, {@link TableColumns#keyColumns()}):
     * two tenants' readings, or two MeLos', are different readings, and may differ in operator or grid. The function of
     * the default key is {@link #FUNCTION}, shared by the tables of the schema; a table whose key has more columns has
     * one of its own, {@link #function}.
     */
    static String createFunction(String schema, String table, List<String> keyColumns)
    {
        // the key's other columns after obis_code, each preceded by a comma; empty for the default key, whose statements stay as they were
        String key = keyList("", keyColumns);
        String columns = "p.malo_id, p.obis_code%s, p.\"from\", p.\"to\", p.version, p.version_scope".formatted(keyList("p.", keyColumns));
        String channel = "p.malo_id = n.malo_id AND p.obis_code = n.obis_code" + sameKey("p.", "n.", keyColumns);
        String groupByChannel = IntStream.rangeClosed(1, 2 + keyColumns.size()).mapToObj(Integer::toString).collect(Collectors.joining(", "));
        // dense (a day's ingest): the stored versions from each channel's first new "from" to its last "to", and the one
        // before, which is the only earlier span that can reach into them. The stored rows include the new ones (the
        // trigger runs after the statement): grouped by key, each row counts once and is written if the statement wrote
        // it. A join that leaves out the new rows instead was planned as a nested loop over the transition table once
        // statistics made the stored rows look few, which is quadratic in the statement's rows.
        // the span before an instant that can reach into it: the last row of the 25 hours before it (a span that can
        // start anywhere is at most a P1D one), or a P1M row from the start of the balancing month holding it; where a
        // look-back over the longest span walked a month of partitions, empty ones after a gap in the deliveries too
        String before = """
                SELECT b.*, false FROM (SELECT malo_id, obis_code%4$s, min("from") AS lower_from FROM new_rows GROUP BY %5$s) n
                CROSS JOIN LATERAL (
                    (SELECT %1$s FROM %%1$s p WHERE %2$s AND p."from" < n.lower_from AND p."from" >= n.lower_from - $3 ORDER BY p."from" DESC LIMIT 1)
                    UNION ALL
                    (SELECT %1$s FROM %%1$s p WHERE %2$s AND p."from" < n.lower_from - $3 AND p."from" IN (%3$s))) b"""
                .formatted(columns, channel, monthStarts("n.lower_from"), key, groupByChannel);
        String dense = firstBrokenPair("""
                SELECT malo_id, obis_code%4$s, "from", max("to") AS "to", version, max(version_scope) AS version_scope, bool_or(written) AS written FROM (
                    SELECT malo_id, obis_code%4$s, "from", "to", version, version_scope, true AS written FROM new_rows
                    UNION ALL
                    SELECT %1$s, false FROM (SELECT malo_id, obis_code%4$s, min("from") AS lower_from, max("to") AS upper_to FROM new_rows GROUP BY %5$s) n
                    JOIN %%1$s p ON %2$s AND p."from" >= n.lower_from AND p."from" < n.upper_to AND p."from" >= $1 AND p."from" < $2
                    UNION ALL
                    %3$s) rows
                GROUP BY malo_id, obis_code%4$s, "from", version"""
                .formatted(columns, channel, before, key, groupByChannel), keyColumns);
        // alone (a day's ingest): the new rows are all the table holds in their channels' ranges, an index range probe
        // per channel shows it, so they are checked against each other and the span before each channel's first
        String alone = firstBrokenPair("""
                SELECT malo_id, obis_code%s, "from", "to", version, version_scope, true AS written FROM new_rows
                UNION ALL
                %s""".formatted(key, before), keyColumns);
        // sparse (corrections): each new row, its own "from"'s versions, the span before it and the first one after it
        String sparse = firstBrokenPair("""
                SELECT malo_id, obis_code%4$s, "from", "to", version, version_scope, true AS written FROM new_rows
                UNION ALL
                SELECT b.*, false FROM (SELECT DISTINCT b.* FROM new_rows n CROSS JOIN LATERAL (
                    (SELECT %1$s FROM %%1$s p WHERE %2$s AND p."from" = n."from")
                    UNION ALL
                    (SELECT %1$s FROM %%1$s p WHERE %2$s AND p."from" < n."from" AND p."from" >= n."from" - $3 ORDER BY p."from" DESC LIMIT 1)
                    UNION ALL
                    (SELECT %1$s FROM %%1$s p WHERE %2$s AND p."from" < n."from" - $3 AND p."from" IN (%3$s))
                    UNION ALL
                    (SELECT %1$s FROM %%1$s p WHERE %2$s AND p."from" > n."from" AND p."from" < n."to" ORDER BY p."from" LIMIT 1)) b) b
                WHERE NOT EXISTS (SELECT 1 FROM new_rows w WHERE w.malo_id = b.malo_id AND w.obis_code = b.obis_code%5$s AND w."from" = b."from" AND w.version = b.version)"""
                .formatted(columns, channel, monthStarts("n.\"from\""), key, sameKey("w.", "b.", keyColumns)), keyColumns);
        // a refusal names the reading's key: its other columns in the message, and after the six fields of the detail
        String keyMessage = keyColumns.stream().map(column -> ", %s %%".formatted(column.replace("%", "%%").replace("'", "''"))).collect(Collectors.joining());
        String keyArguments = keyColumns.stream().map(column -> ", quote_literal(broken.%s)".formatted(quoteIdentifier(column))).collect(Collectors.joining());
        String keyDetail = "|%s".repeat(keyColumns.size());
        String keyDetailArguments = keyColumns.stream().map(column -> ", broken." + quoteIdentifier(column)).collect(Collectors.joining());
        return """
                CREATE OR REPLACE FUNCTION %1$s.%2$s() RETURNS trigger LANGUAGE plpgsql SET work_mem = '%8$s' AS $function$
                DECLARE
                    lower_from timestamptz;
                    upper_to timestamptz;
                    written_rows bigint;
                    stored_rows bigint;
                    channels bigint;
                    broken record;
                    rule text;
                BEGIN
                    -- an UPDATE that changes none of the columns the rules read (the supersession marks) breaks none
                    -- (nested: an INSERT's trigger has no old_rows to plan)
                    IF TG_OP = 'UPDATE' THEN
                        IF NOT EXISTS (
                                SELECT malo_id, obis_code%10$s, "from", "to", version, version_scope FROM new_rows
                                EXCEPT ALL
                                SELECT malo_id, obis_code%10$s, "from", "to", version, version_scope FROM old_rows) THEN
                            RETURN NULL;
                        END IF;
                    END IF;
                    SELECT min("from"), max("to"), count(*) INTO lower_from, upper_to, written_rows FROM new_rows;
                    IF written_rows = 0 THEN
                        RETURN NULL;
                    END IF;
                    SELECT count(*) INTO channels FROM (SELECT 1 FROM new_rows GROUP BY malo_id, obis_code%10$s) c;
                    -- in ascending order, so that two writers never wait for each other's locks
                    PERFORM count(pg_advisory_xact_lock(hashtextextended('meterstore.channels:' || TG_ARGV[0], bucket)))
                    FROM (SELECT DISTINCT abs(hashtext(malo_id) %% %4$d) AS bucket FROM new_rows ORDER BY 1) b;
                    -- sorted by channel, "from" and version, a rule can only break between a row and the one before it, so
                    -- each new row is checked against its neighbours: in one pass over its channels' range when the new rows
                    -- fill it (over the new rows alone when the range holds nothing else), else by index probes around each
                    IF written_rows >= 24 * channels THEN
                        -- the stored rows in each channel's own range, by an index range probe per channel: O(statement),
                        -- where a count of the whole range grew with the partition through the day; the dense pass reads
                        -- no more than these ranges (and the span before each, which the alone pass reads too)
                        EXECUTE format('SELECT count(*) FROM (SELECT malo_id, obis_code%10$s, min("from") AS lower_from, max("to") AS upper_to FROM new_rows GROUP BY %15$s) n CROSS JOIN LATERAL (SELECT 1 FROM %%s p WHERE %16$s AND p."from" >= n.lower_from AND p."from" < n.upper_to AND p."from" >= $1 AND p."from" < $2 OFFSET 0) p', TG_ARGV[0]) INTO stored_rows USING lower_from, upper_to;
                        IF stored_rows = written_rows THEN
                            EXECUTE format($query$%9$s$query$, TG_ARGV[0]) INTO broken USING lower_from, upper_to, interval '%3$d seconds';
                        ELSE
                            EXECUTE format($query$%6$s$query$, TG_ARGV[0]) INTO broken USING lower_from, upper_to, interval '%3$d seconds';
                        END IF;
                    ELSE
                        EXECUTE format($query$%7$s$query$, TG_ARGV[0]) INTO broken USING lower_from, upper_to, interval '%3$d seconds';
                    END IF;
                    IF broken IS NULL THEN
                        RETURN NULL;
                    END IF;
                    rule := %5$s;
                    RAISE EXCEPTION 'Reading (malo_id %%%11$s, obis_code %%): version %% over [%%, %%) under scope %% meets version %% over [%%, %%) under scope %%, which rule %% refuses: a reading has one network operator, the spans of one version do not overlap, and a correction uses the stored grid',
                            quote_literal(broken.malo_id)%12$s, quote_literal(broken.obis_code),
                            broken.previous_version, broken.previous_from, broken.previous_to, broken.previous_scope,
                            broken.version, broken."from", broken."to", broken.version_scope, rule
                        USING ERRCODE = 'exclusion_violation', CONSTRAINT = rule,
                            DETAIL = format('%%s|%%s|%%s|%%s|%%s|%%s%13$s', broken.malo_id, broken.obis_code,
                                extract(epoch FROM broken.previous_from) * 1000000, broken.previous_version,
                                extract(epoch FROM broken."from") * 1000000, broken.version%14$s);
                END
                $function$""".formatted(quoteIdentifier(schema), functionName(function(table, keyColumns)), ReadingRules.LONGEST_DAILY_SPAN.toSeconds(), CHANNEL_LOCKS,
                rule("broken.previous_from", "broken.previous_to", "broken.previous_version", "broken.\"from\"", "broken.\"to\"", "broken.version"),
                dense, sparse, WORK_MEM, alone, key, keyMessage, keyArguments, keyDetail, keyDetailArguments, groupByChannel, channel.replace("'", "''"));
    }

    /** The function of the rules' triggers of {@code table}: {@link #FUNCTION} for the default key, one of the table's own for a key with {@code keyColumns}. */
    public static String function(String table, List<String> keyColumns)
    {
        return keyColumns.isEmpty() ? FUNCTION : tableFunction(table);
    }

    /** The function of the rules' triggers of {@code table} when its key has more columns than the default key. */
    public static String tableFunction(String table)
    {
        return FUNCTION + "__" + table;
    }

    // the schema's function as its statements always named it, a table's own quoted
    private static String functionName(String function)
    {
        return function.equals(FUNCTION) ? FUNCTION : quoteIdentifier(function);
    }

    // the key's other columns, each preceded by a comma and qualified by prefix
    private static String keyList(String prefix, List<String> keyColumns)
    {
        return keyColumns.stream().map(column -> ", " + prefix + quoteIdentifier(column)).collect(Collectors.joining());
    }

    // the key's other columns equal between two rows
    private static String sameKey(String left, String right, List<String> keyColumns)
    {
        return keyColumns.stream().map(column -> " AND %1$s%3$s = %2$s%3$s".formatted(left, right, quoteIdentifier(column))).collect(Collectors.joining());
    }

    /**
     * Where a P1M span holding {@code instant} starts, as {@link ReadingRules#monthStartsReaching} says: Berlin midnight
     * on the first of its Berlin month, and 06:00 local time on the first of its gas month.
     */
    static String monthStarts(String instant)
    {
        String zone = "'" + MeteringCalendar.BERLIN.getId() + "'";
        return "date_trunc('month', %1$s AT TIME ZONE %2$s) AT TIME ZONE %2$s, (date_trunc('month', (%1$s AT TIME ZONE %2$s) - interval '6 hours') + interval '6 hours') AT TIME ZONE %2$s"
                .formatted(instant, zone);
    }

    /**
     * The first pair of rows among {@code candidates} that breaks a rule and holds a written row, as a SELECT of its
     * later row's malo_id, obis_code, the key's other columns ({@code keyColumns}), "from", "to", version, version_scope and written, and its earlier row's as
     * previous_*. {@code candidates} selects those columns of the rows to check, sorted or not. Sorted by channel,
     * "from" and version, a rule can only break between a row and the one before it: spans that pass are disjoint or
     * the same, so the last span of a channel is the only one a following row can meet.
     */
    public static String firstBrokenPair(String candidates, List<String> keyColumns)
    {
        return brokenPairs(candidates, 1, keyColumns);
    }

    /**
     * The first {@code limit} pairs of rows among {@code candidates} that break a rule, as {@link #firstBrokenPair}; the
     * candidates select the key's other columns ({@code keyColumns}) after obis_code, and each channel is checked apart.
     */
    public static String brokenPairs(String candidates, int limit, List<String> keyColumns)
    {
        String key = keyList("", keyColumns);
        return """
                SELECT * FROM (
                    SELECT malo_id, obis_code%4$s, "from", "to", version, version_scope, written,
                        lag("from") OVER w AS previous_from, lag("to") OVER w AS previous_to, lag(version) OVER w AS previous_version,
                        lag(version_scope) OVER w AS previous_scope, lag(written) OVER w AS previous_written
                    FROM (%1$s) candidates
                    WINDOW w AS (PARTITION BY malo_id, obis_code%4$s ORDER BY "from", version)) x
                WHERE (written OR previous_written) AND %2$s
                ORDER BY malo_id, obis_code%4$s, "from", version
                LIMIT %3$d""".formatted(candidates, breaks("previous_from", "previous_to", "previous_scope", "\"from\"", "\"to\"", "version_scope"), limit, key);
    }

    /** The rule a pair that {@link #breaks} breaks, as the name of a rule of {@link ReadingRules}. */
    static String rule(String earlierFrom, String earlierTo, String earlierVersion, String laterFrom, String laterTo, String laterVersion)
    {
        return "CASE WHEN %1$s = %4$s AND %2$s = %5$s THEN '%7$s' WHEN %3$s = %6$s THEN '%8$s' ELSE '%9$s' END".formatted(
                earlierFrom, earlierTo, earlierVersion, laterFrom, laterTo, laterVersion,
                ReadingRules.ONE_OPERATOR_PER_READING, ReadingRules.SPANS_DO_NOT_OVERLAP, ReadingRules.ONE_GRID_PER_READING);
    }

    /** Whether an earlier span breaks a rule against a later one of the same channel sorting after it by ("from", version). */
    static String breaks(String earlierFrom, String earlierTo, String earlierScope, String laterFrom, String laterTo, String laterScope)
    {
        return "%2$s > %4$s AND (%1$s <> %4$s OR %2$s <> %5$s OR split_part(%3$s, ':', 1) <> split_part(%6$s, ':', 1))"
                .formatted(earlierFrom, earlierTo, earlierScope, laterFrom, laterTo, laterScope);
    }

    /** The triggers of one table, the parent or a partition, every version of whose channels is in {@code qualifiedParent}. */
    static List<String> createTriggers(String schema, String function, String qualifiedTable, String qualifiedParent)
    {
        String argument = "'" + qualifiedParent.replace("'", "''") + "'";
        function = functionName(function);
        return List.of(
                "CREATE OR REPLACE TRIGGER %s AFTER INSERT ON %s REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION %s.%s(%s)"
                        .formatted(INSERT_TRIGGER, qualifiedTable, quoteIdentifier(schema), function, argument),
                // every UPDATE, the supersession marks' own too (a condition a writer can set would let it change a span
                // unchecked); the function passes one that changes no column the rules read
                "CREATE OR REPLACE TRIGGER %s AFTER UPDATE ON %s REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION %s.%s(%s)"
                        .formatted(UPDATE_TRIGGER, qualifiedTable, quoteIdentifier(schema), function, argument));
    }

    /** The CHECK constraints {@code qualifiedTable} lacks, as ADD CONSTRAINT statements; NOT VALID: rows stored before are checked by {@link #validate}. */
    static List<String> addMissingChecks(Connection connection, String schema, String table, String qualifiedTable, Map<String, String> checks)
            throws SQLException
    {
        Map<String, String> present = presentChecks(connection, schema, table);
        return checks.entrySet().stream()
                .filter(check -> !present.containsKey(check.getKey()))
                .sorted(Map.Entry.comparingByKey())
                .map(check -> "ALTER TABLE %s ADD CONSTRAINT %s CHECK (%s) NOT VALID".formatted(qualifiedTable, quoteIdentifier(check.getKey()), check.getValue()))
                .toList();
    }

    /**
     * The statements that give {@code qualifiedTable} and its partitions ({@code attached} and {@code detached}, qualified)
     * the current body of each CHECK constraint it holds under its name with another body: one whose code list grew (a
     * new unit in {@code unit_known}) would refuse rows the write path takes. The bodies are compared as PostgreSQL
     * spells them ({@code pg_get_constraintdef}), the current ones spelled by adding them to a temporary table. The
     * constraint is dropped from the parent and from every partition (a partition made by LIKE and ATTACH holds its own
     * copy, which the parent's drop leaves) and added again NOT VALID: to the parent, which adds it to the attached
     * partitions, and to each detached one, which an ATTACH requires to hold the parent's. {@link #validate} then checks
     * the stored rows, of the parent and of each detached partition (ATTACH refuses a NOT VALID one under a validated one).
     */
    static List<String> replaceChangedChecks(Connection connection, String schema, String table, String qualifiedTable, List<String> attached, List<String> detached, Map<String, String> checks)
            throws SQLException
    {
        Map<String, String> present = presentChecks(connection, schema, table);
        if (present.isEmpty()) {
            return List.of();
        }
        Map<String, String> current = new HashMap<>();
        try (Statement statement = connection.createStatement()) {
            statement.execute("CREATE TEMPORARY TABLE meterstore_current_checks (LIKE %s)".formatted(qualifiedTable));
            try {
                for (Map.Entry<String, String> check : checks.entrySet()) {
                    statement.execute("ALTER TABLE pg_temp.meterstore_current_checks ADD CONSTRAINT %s CHECK (%s) NOT VALID".formatted(quoteIdentifier(check.getKey()), check.getValue()));
                }
                try (ResultSet result = statement.executeQuery("""
                        SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'pg_temp.meterstore_current_checks'::regclass AND contype = 'c'""")) {
                    while (result.next()) {
                        current.put(result.getString(1), body(result.getString(2)));
                    }
                }
            }
            finally {
                statement.execute("DROP TABLE pg_temp.meterstore_current_checks");
            }
        }
        List<String> statements = new ArrayList<>();
        checks.keySet().stream()
                .filter(name -> present.containsKey(name) && !present.get(name).equals(current.get(name)))
                .sorted()
                .forEach(name -> {
                    String constraint = quoteIdentifier(name);
                    statements.add("ALTER TABLE %s DROP CONSTRAINT %s".formatted(qualifiedTable, constraint));
                    for (String partition : attached) {
                        statements.add("ALTER TABLE %s DROP CONSTRAINT IF EXISTS %s".formatted(partition, constraint));
                    }
                    for (String partition : detached) {
                        statements.add("ALTER TABLE %s DROP CONSTRAINT IF EXISTS %s".formatted(partition, constraint));
                    }
                    statements.add("ALTER TABLE %s ADD CONSTRAINT %s CHECK (%s) NOT VALID".formatted(qualifiedTable, constraint, checks.get(name)));
                    for (String partition : detached) {
                        statements.add("ALTER TABLE %s ADD CONSTRAINT %s CHECK (%s) NOT VALID".formatted(partition, constraint, checks.get(name)));
                    }
                });
        return List.copyOf(statements);
    }

    // the CHECK constraints of schema.table by name, each with its body as PostgreSQL spells it
    private static Map<String, String> presentChecks(Connection connection, String schema, String table)
            throws SQLException
    {
        Map<String, String> present = new HashMap<>();
        try (PreparedStatement select = connection.prepareStatement("""
                SELECT k.conname, pg_get_constraintdef(k.oid) FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = ? AND c.relname = ? AND k.contype = 'c'""")) {
            select.setString(1, schema);
            select.setString(2, table);
            try (ResultSet result = select.executeQuery()) {
                while (result.next()) {
                    present.put(result.getString(1), body(result.getString(2)));
                }
            }
        }
        return present;
    }

    // a definition without its NOT VALID, which says whether the stored rows were checked, not what is checked
    private static String body(String definition)
    {
        return definition.endsWith(" NOT VALID") ? definition.substring(0, definition.length() - " NOT VALID".length()) : definition;
    }

    /**
     * Validates the CHECK constraints of {@code qualifiedTable} that are not yet, each in a transaction of its own;
     * returns those that rows stored before them break, with what PostgreSQL said. Those stay NOT VALID: new rows are
     * checked, old ones are listed for repair.
     */
    static List<String> validate(Connection connection, String qualifiedTable, String schema, String table, Map<String, String> checks)
            throws SQLException
    {
        List<String> unvalidated = unvalidated(connection, schema, table);
        List<String> broken = new ArrayList<>();
        boolean autoCommit = connection.getAutoCommit();
        connection.setAutoCommit(true);
        try {
            for (String constraint : unvalidated) {
                try (Statement statement = connection.createStatement()) {
                    statement.execute("ALTER TABLE %s VALIDATE CONSTRAINT %s".formatted(qualifiedTable, quoteIdentifier(constraint)));
                }
                catch (SQLException e) {
                    if (HotTier.isLockTimeout(e)) {
                        throw e;
                    }
                    broken.add("%s (%s): %s".formatted(constraint, checks.getOrDefault(constraint, ALL_CHECKS.get(constraint)), e.getMessage()));
                }
            }
        }
        finally {
            connection.setAutoCommit(autoCommit);
        }
        return List.copyOf(broken);
    }

    /** The CHECK constraints of {@code table} that stored rows may still break, NOT VALID, by name. */
    static List<String> unvalidated(Connection connection, String schema, String table)
            throws SQLException
    {
        List<String> unvalidated = new ArrayList<>();
        try (PreparedStatement select = connection.prepareStatement("""
                SELECT k.conname FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = ? AND c.relname = ? AND k.contype = 'c' AND NOT k.convalidated ORDER BY 1""")) {
            select.setString(1, schema);
            select.setString(2, table);
            try (ResultSet result = select.executeQuery()) {
                while (result.next()) {
                    if (ALL_CHECKS.containsKey(result.getString(1)) || result.getString(1).endsWith(SHAPE_SUFFIX)) {
                        unvalidated.add(result.getString(1));
                    }
                }
            }
        }
        return unvalidated;
    }

    /**
     * The rule a trigger's refusal names, and the keys of the two rows it names, if {@code e} is one; {@code keyValues}
     * are the values of the key's other columns, none for the default key.
     */
    public record Refusal(String rule, String maloId, String obisCode, long earlierFromMicros, String earlierVersion, long laterFromMicros, String laterVersion, List<String> keyValues)
    {
        public Refusal
        {
            requireNonNull(rule, "rule is null");
            requireNonNull(maloId, "maloId is null");
            requireNonNull(obisCode, "obisCode is null");
            requireNonNull(earlierVersion, "earlierVersion is null");
            requireNonNull(laterVersion, "laterVersion is null");
            keyValues = List.copyOf(requireNonNull(keyValues, "keyValues is null"));
        }

        public static Optional<Refusal> of(SQLException e)
        {
            if (!RULE_VIOLATION.equals(e.getSQLState()) || !(e instanceof PSQLException postgres) || postgres.getServerErrorMessage() == null) {
                return Optional.empty();
            }
            String constraint = postgres.getServerErrorMessage().getConstraint();
            String detail = postgres.getServerErrorMessage().getDetail();
            if (constraint == null || detail == null) {
                return Optional.empty();
            }
            if (!List.of(ReadingRules.ONE_OPERATOR_PER_READING, ReadingRules.SPANS_DO_NOT_OVERLAP, ReadingRules.ONE_GRID_PER_READING).contains(constraint)) {
                return Optional.empty();
            }
            String[] fields = detail.split("\\|", -1);
            if (fields.length < 6) {
                return Optional.empty();
            }
            return Optional.of(new Refusal(constraint, fields[0], fields[1], micros(fields[2]), fields[3], micros(fields[4]), fields[5], List.of(fields).subList(6, fields.length)));
        }

        private static long micros(String value)
        {
            return new BigDecimal(value).setScale(0, RoundingMode.HALF_UP).longValueExact();
        }
    }
}
