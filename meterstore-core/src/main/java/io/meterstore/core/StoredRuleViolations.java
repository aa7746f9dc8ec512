package io.meterstore.core;

import com.google.common.collect.ImmutableList;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static io.meterstore.core.Sql.quoteIdentifier;
import static io.meterstore.core.Sql.qualified;
import static io.meterstore.core.Sql.tableExists;
import static io.meterstore.core.TieringWatermark.formatInstant;

/**
 * The pairs of hot rows that break a rule of {@link ReadingRules} although the triggers of {@link HotTierRules} hold:
 * rows stored before the table had the rules. {@code bin/archiver create}, run again on such a table, finds them in one
 * pass over the hot tier and keeps them beside the table ({@code meterstore_rule_violations}); {@link InvariantCheck}
 * (so {@code status} and {@code "<table>$invariant"}) reports each for as long as its two rows still break the rule,
 * which a look-up by key tells: a pair is kept with the values of the key's other columns (a tenant, melo_id), since
 * two tenants' pairs may share everything else. A row written around the triggers later is the archival cycle's to find: it refuses the
 * window (see {@link InvariantLog.Refusal}).
 */
public final class StoredRuleViolations
{
    public static final String TABLE = "meterstore_rule_violations";
    // the pairs kept per table: enough to repair by, and the count says how many there are
    private static final int KEPT = 1_000;

    private StoredRuleViolations() {}

    /**
     * Finds the pairs of stored rows of {@code hotTier} that break a rule, keeps the first ones in place of those found
     * before, and returns them worded for the operator, with their count. One sorted pass over every hot row.
     */
    public static List<String> find(Connection connection, HotTier hotTier)
            throws SQLException
    {
        return find(connection, hotTier, List.of());
    }

    /**
     * As {@link #find(Connection, HotTier)} for a table whose key has more columns ({@code keyColumns},
     * {@link TableColumns#keyNames()}): the versions of each channel, (malo_id, obis_code) and those columns, are compared
     * apart, two tenants' readings being two readings.
     */
    public static List<String> find(Connection connection, HotTier hotTier, List<String> keyColumns)
            throws SQLException
    {
        String kept = qualified(hotTier.schema(), TABLE);
        createKept(connection, kept);
        String key = keyColumns.stream().map(column -> ", " + quoteIdentifier(column)).collect(Collectors.joining());
        String pairs = HotTierRules.brokenPairs("SELECT malo_id, obis_code%s, \"from\", \"to\", version, version_scope, true AS written FROM %s".formatted(key, hotTier.qualifiedParent()),
                Integer.MAX_VALUE, keyColumns);
        ImmutableList.Builder<String> found = ImmutableList.builder();
        long count = 0;
        boolean autoCommit = connection.getAutoCommit();
        connection.setAutoCommit(false);
        try (PreparedStatement forget = connection.prepareStatement("DELETE FROM %s WHERE \"table\" = ?".formatted(kept));
                PreparedStatement keep = connection.prepareStatement("""
                        INSERT INTO %s ("table", rule, malo_id, key_values, obis_code, earlier_from, earlier_version, later_from, later_version, message)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""".formatted(kept));
                PreparedStatement select = connection.prepareStatement("SELECT *, %s AS rule FROM (%s) pairs".formatted(
                        HotTierRules.rule("previous_from", "previous_to", "previous_version", "\"from\"", "\"to\"", "version"), pairs))) {
            forget.setString(1, hotTier.naming().table());
            forget.executeUpdate();
            select.setFetchSize(KEPT);
            try (ResultSet result = select.executeQuery()) {
                while (result.next()) {
                    count++;
                    if (count > KEPT) {
                        continue;
                    }
                    String message = message(hotTier, result, keyColumns);
                    keep.setString(1, hotTier.naming().table());
                    keep.setString(2, result.getString("rule"));
                    keep.setString(3, result.getString("malo_id"));
                    keep.setArray(4, connection.createArrayOf("text", keyValues(result, keyColumns).toArray()));
                    keep.setString(5, result.getString("obis_code"));
                    keep.setObject(6, result.getObject("previous_from", OffsetDateTime.class));
                    keep.setBigDecimal(7, result.getBigDecimal("previous_version"));
                    keep.setObject(8, result.getObject("from", OffsetDateTime.class));
                    keep.setBigDecimal(9, result.getBigDecimal("version"));
                    keep.setString(10, message);
                    keep.executeUpdate();
                    found.add(message);
                }
            }
            connection.commit();
        }
        catch (SQLException e) {
            connection.rollback();
            throw e;
        }
        finally {
            connection.setAutoCommit(autoCommit);
        }
        if (count > KEPT) {
            found.add("%s more pairs of rows of table %s break a rule; after repairing the ones above, run create again to list them".formatted(count - KEPT, hotTier.qualifiedParent()));
        }
        return found.build();
    }

    /** The kept pairs of {@code hotTier}, a table of the default key, whose two rows still break their rule, worded as {@link #find} words them. */
    public static List<String> stillBroken(Connection connection, HotTier hotTier)
            throws SQLException
    {
        return stillBroken(connection, hotTier, List.of());
    }

    /**
     * As {@link #stillBroken(Connection, HotTier)} for a table whose key has more columns ({@code keyColumns},
     * {@link TableColumns#keyNames()}): a kept pair's rows are looked up by their values of those columns too, so that
     * another tenant's rows of the same (malo_id, obis_code, "from", version) never stand in for them.
     */
    public static List<String> stillBroken(Connection connection, HotTier hotTier, List<String> keyColumns)
            throws SQLException
    {
        String kept = qualified(hotTier.schema(), TABLE);
        if (!tableExists(connection, kept)) {
            return List.of();
        }
        String parent = hotTier.qualifiedParent();
        ImmutableList.Builder<String> broken = ImmutableList.builder();
        try (PreparedStatement select = connection.prepareStatement("""
                SELECT v.message FROM %s v
                JOIN %s e ON e.malo_id = v.malo_id AND e.obis_code = v.obis_code AND e."from" = v.earlier_from AND e.version = v.earlier_version%s
                JOIN %s l ON l.malo_id = v.malo_id AND l.obis_code = v.obis_code AND l."from" = v.later_from AND l.version = v.later_version%s
                WHERE v."table" = ? AND %s
                ORDER BY v.malo_id, v.key_values, v.obis_code, v.later_from, v.later_version""".formatted(kept, parent, sameKey("e.", keyColumns), parent, sameKey("l.", keyColumns),
                HotTierRules.breaks("e.\"from\"", "e.\"to\"", "e.version_scope", "l.\"from\"", "l.\"to\"", "l.version_scope")))) {
            select.setString(1, hotTier.naming().table());
            try (ResultSet result = select.executeQuery()) {
                while (result.next()) {
                    broken.add(result.getString(1));
                }
            }
        }
        return broken.build();
    }

    /**
     * Creates the table of kept pairs, or brings one an earlier release created up to date: the key's other values
     * ({@code key_values}, in key order, '{}' for the default key) were added to its columns and its primary key, since
     * two tenants' pairs may share every other column. Idempotent: the column is added if missing, the primary key moved
     * if it lacks the column. A pair kept before holds '{}' until create finds the pairs again.
     */
    private static void createKept(Connection connection, String kept)
            throws SQLException
    {
        String primaryKey = "\"table\", malo_id, key_values, obis_code, earlier_from, earlier_version, later_from, later_version";
        try (Statement statement = connection.createStatement()) {
            statement.execute("""
                    CREATE TABLE IF NOT EXISTS %s (
                        "table" text NOT NULL,
                        rule text NOT NULL,
                        malo_id text NOT NULL,
                        obis_code text NOT NULL,
                        earlier_from timestamptz NOT NULL,
                        earlier_version numeric(20, 0) NOT NULL,
                        later_from timestamptz NOT NULL,
                        later_version numeric(20, 0) NOT NULL,
                        message text NOT NULL,
                        key_values text[] NOT NULL DEFAULT '{}',
                        PRIMARY KEY (%s))""".formatted(kept, primaryKey));
            statement.execute("ALTER TABLE %s ADD COLUMN IF NOT EXISTS key_values text[] NOT NULL DEFAULT '{}'".formatted(kept));
        }
        Optional<String> outdated = Optional.empty();
        try (PreparedStatement select = connection.prepareStatement("""
                SELECT k.conname FROM pg_constraint k
                WHERE k.conrelid = ?::regclass AND k.contype = 'p'
                    AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = k.conrelid AND a.attnum = ANY (k.conkey) AND a.attname = 'key_values')""")) {
            select.setString(1, kept);
            try (ResultSet result = select.executeQuery()) {
                if (result.next()) {
                    outdated = Optional.of(result.getString(1));
                }
            }
        }
        if (outdated.isPresent()) {
            try (Statement statement = connection.createStatement()) {
                // one statement: the table is never without a primary key; IF EXISTS, since a create racing this one
                // may have moved it under the same name
                statement.execute("ALTER TABLE %s DROP CONSTRAINT IF EXISTS %s, ADD PRIMARY KEY (%s)".formatted(kept, quoteIdentifier(outdated.get()), primaryKey));
            }
        }
    }

    // the key's other columns of the stored row named by alias equal the kept pair's values; a pair kept before the
    // values were stored ('{}') is looked up as it was, by (malo_id, obis_code, "from", version)
    private static String sameKey(String alias, List<String> keyColumns)
    {
        return IntStream.range(0, keyColumns.size())
                .mapToObj(index -> " AND (cardinality(v.key_values) = 0 OR %s%s = v.key_values[%d])".formatted(alias, quoteIdentifier(keyColumns.get(index)), index + 1))
                .collect(Collectors.joining());
    }

    private static List<String> keyValues(ResultSet pair, List<String> keyColumns)
            throws SQLException
    {
        ImmutableList.Builder<String> values = ImmutableList.builder();
        for (String column : keyColumns) {
            values.add(pair.getString(column));
        }
        return values.build();
    }

    private static String message(HotTier hotTier, ResultSet pair, List<String> keyColumns)
            throws SQLException
    {
        StringBuilder key = new StringBuilder();
        for (String column : keyColumns) {
            key.append(", %s '%s'".formatted(column, pair.getString(column)));
        }
        return "Rows stored before the rules break rule %s in table %s: reading (malo_id '%s'%s, obis_code '%s') version %s over [%s, %s) under scope '%s' and version %s over [%s, %s) under scope '%s'; keep the row that is right and DELETE the other (docs/operations.md, \"Rows that break a rule\")"
                .formatted(pair.getString("rule"), hotTier.qualifiedParent(), pair.getString("malo_id"), key, pair.getString("obis_code"),
                        pair.getBigDecimal("previous_version").toPlainString(), instant(pair, "previous_from"), instant(pair, "previous_to"), pair.getString("previous_scope"),
                        pair.getBigDecimal("version").toPlainString(), instant(pair, "from"), instant(pair, "to"), pair.getString("version_scope"));
    }

    private static String instant(ResultSet result, String column)
            throws SQLException
    {
        return formatInstant(result.getObject(column, OffsetDateTime.class).toInstant());
    }
}
