package io.meterstore.trino.write;

import io.meterstore.core.HotTier;
import io.meterstore.core.HotTierRules;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingRules;
import io.meterstore.core.TableColumns;
import io.meterstore.core.TieringWatermark;
import io.meterstore.trino.base.MeterstoreTypes;
import io.trino.spi.TrinoException;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

import static io.meterstore.core.Sql.quoteIdentifier;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_INVALID_READING;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_WRITE_FAILED;
import static java.lang.Math.toIntExact;
import static java.util.Objects.requireNonNull;

/**
 * {@link ReadingRules} for the rows an INSERT staged: PostgreSQL checks them against each other before anything is
 * written (sorted by channel, "from" and version, a rule can only break between a row and the one before it, so one
 * window pass finds the first broken pair), and the hot tier's own trigger ({@link HotTierRules}) checks the rows it
 * takes against the versions it holds. Either way the pair is read whole and {@link ReadingRules} words the refusal,
 * as it does for the cold tier. A channel is (malo_id, obis_code) and the key's other columns ({@link TableColumns#keyColumns()}):
 * two tenants' versions are never compared.
 */
final class ReadingRulesCheck
{
    private final Connection connection;
    private final InsertStaging staging;
    private final TableColumns columns;
    // the key's other columns after obis_code in a select list, each preceded by a comma; empty for the default key
    private final String key;

    /**
     * @param connection the statement's open transaction
     */
    ReadingRulesCheck(Connection connection, InsertStaging staging, TableColumns columns)
    {
        this.connection = requireNonNull(connection, "connection is null");
        this.staging = requireNonNull(staging, "staging is null");
        this.columns = requireNonNull(columns, "columns is null");
        this.key = keyList("", columns);
    }

    /**
     * Fails the statement at the first staged row for Iceberg that breaks a rule against another staged row. The rows
     * for PostgreSQL are checked against each other by the hot tier's trigger as they are written; those from W on that
     * a span of a cold row reaches (a P1D or P1M row just below W ends above it) are checked here too: up to the latest
     * "to" of a cold row, not the longest span past W, which would sort a month's ingest to find none.
     */
    void requireStagedCompatible(TieringWatermark watermark)
            throws SQLException
    {
        String rows = "SELECT malo_id, obis_code%2$s, \"from\", \"to\", version, version_scope, true AS written FROM %1$s WHERE \"from\" < (SELECT greatest(?::timestamptz, max(\"to\")) FROM %1$s WHERE \"from\" < ?)"
                .formatted(staging.qualifiedName(), key);
        firstBrokenPair(rows, watermark.instant(), watermark.instant()).ifPresent(pair -> refuse(connection, pair, staging.qualifiedName()));
    }

    /**
     * Fails the statement at the first staged row for Iceberg whose span reaches above W into a version PostgreSQL holds
     * (a P1D row of the Berlin day starting at 23:00 UTC below W, a P1M row): no trigger sees that pair, the hot tier's
     * sees only the rows it takes. The first stored row from W on within each such span is the one it meets first.
     */
    void requireColdSpansCompatibleWithHot(TieringWatermark watermark, HotTier hotTier)
            throws SQLException
    {
        String reaching = "SELECT malo_id, obis_code%s, \"from\", \"to\", version, version_scope FROM %s WHERE \"from\" < ? AND \"to\" > ?".formatted(key, staging.qualifiedName());
        String rows = """
                SELECT n.*, true AS written FROM (%1$s) n
                UNION ALL
                SELECT h.*, false FROM (%1$s) n CROSS JOIN LATERAL (
                    SELECT p.malo_id, p.obis_code%3$s, p."from", p."to", p.version, p.version_scope FROM %2$s p
                    WHERE p.malo_id = n.malo_id AND p.obis_code = n.obis_code%4$s AND p."from" >= ? AND p."from" < n."to" ORDER BY p."from" LIMIT 1) h"""
                .formatted(reaching, hotTier.qualifiedParent(), keyList("p.", columns), sameKey("p.", "n."));
        Instant below = watermark.instant();
        firstBrokenPair(rows, below, below, below, below, below).ifPresent(pair -> refuse(connection, pair, hotTier.qualifiedParent()));
    }

    /**
     * Fails the statement at the first staged row for PostgreSQL that one of {@code coldSpans}, stored versions below W
     * whose span reaches above it, overlaps: the cold span starts below W and the row at or after it, so they are never
     * the same span and every such pair breaks a rule. No trigger sees it, the cold span being in Iceberg.
     */
    void requireHotRowsCompatibleWithCold(TieringWatermark watermark, List<Reading> coldSpans, String coldTable)
            throws SQLException
    {
        if (coldSpans.isEmpty()) {
            return;
        }
        // the key's other columns as arrays after those three, one per column
        String keyArrays = ", ?::text[]".repeat(columns.keyColumns().size());
        String sql = """
                SELECT s.*, c.ordinal FROM unnest(?::text[], ?::text[], ?::text[]::timestamptz[]%2$s) WITH ORDINALITY AS c(malo_id, obis_code, upper_to%3$s, ordinal)
                JOIN %1$s s ON s.malo_id = c.malo_id AND s.obis_code = c.obis_code%4$s AND s."from" >= ? AND s."from" < c.upper_to
                ORDER BY s.malo_id, s.obis_code%5$s, s."from", s.version LIMIT 1""".formatted(staging.qualifiedName(), keyArrays, key, sameKey("s.", "c."), keyList("s.", columns));
        Reading cold;
        Reading staged;
        try (PreparedStatement select = connection.prepareStatement(sql)) {
            select.setArray(1, connection.createArrayOf("text", coldSpans.stream().map(Reading::maloId).toArray()));
            select.setArray(2, connection.createArrayOf("text", coldSpans.stream().map(Reading::obisCode).toArray()));
            select.setArray(3, connection.createArrayOf("text", coldSpans.stream().map(span -> span.end().toString()).toArray()));
            int parameter = 4;
            for (int index = 0; index < columns.keyColumns().size(); index++) {
                int column = index;
                select.setArray(parameter++, connection.createArrayOf("text", coldSpans.stream().map(span -> columns.keyValues(span).get(column).orElse(null)).toArray()));
            }
            select.setObject(parameter, timestamp(watermark.instant()));
            try (ResultSet result = select.executeQuery()) {
                if (!result.next()) {
                    return;
                }
                staged = HotRows.reading(result, "", columns);
                cold = coldSpans.get(toIntExact(result.getLong("ordinal") - 1));
            }
        }
        Optional<ReadingRules.ViolationException> violation = ReadingRules.violation(cold, staged, columns);
        if (violation.isEmpty()) {
            throw new TrinoException(METERSTORE_WRITE_FAILED, "INSERT found %s and %s breaking a rule of the readings model, which MeterStore cannot name; nothing of this statement was written"
                    .formatted(RowDescription.describe(cold, columns), RowDescription.describe(staged, columns)));
        }
        throw new TrinoException(METERSTORE_INVALID_READING, "%s (the other stored in Iceberg table '%s'); nothing of this statement was written"
                .formatted(violation.get().getMessage(), coldTable), violation.get());
    }

    /**
     * Fails the statement with the rule the hot tier's trigger refused {@code e} for, worded as for the cold tier, if it
     * was that. The statement's transaction is aborted by then, so the rows are read over {@code fresh}: the staged one
     * from the staging table, whose chunks were committed, the stored one from the table. (A savepoint would have made
     * the hot rows a subtransaction's, which the redelivery check's own-statement test cannot tell from another's.)
     */
    void refuseBrokenRule(SQLException e, HotTier hotTier, Connection fresh)
            throws SQLException
    {
        Optional<HotTierRules.Refusal> refusal = HotTierRules.Refusal.of(e);
        if (refusal.isEmpty()) {
            return;
        }
        Row earlier = row(fresh, refusal.get(), refusal.get().earlierFromMicros(), refusal.get().earlierVersion());
        Row later = row(fresh, refusal.get(), refusal.get().laterFromMicros(), refusal.get().laterVersion());
        refuse(fresh, new BrokenPair(earlier, later), hotTier.qualifiedParent());
    }

    private Row row(Connection reader, HotTierRules.Refusal refusal, long fromMicros, String version)
            throws SQLException
    {
        Instant from = MeterstoreTypes.fromEpochMicros(fromMicros);
        BigDecimal number = new BigDecimal(version);
        // the statement's row if it carries the key, else the stored one
        Row row = new Row(refusal.maloId(), refusal.obisCode(), refusal.keyValues(), from, number, false);
        try (PreparedStatement select = reader.prepareStatement("SELECT 1 FROM %s WHERE %s".formatted(staging.qualifiedName(), rowCondition()))) {
            bindRow(select, row);
            try (ResultSet result = select.executeQuery()) {
                return new Row(row.maloId(), row.obisCode(), row.keyValues(), from, number, result.next());
            }
        }
    }

    /** A version of a channel: its malo_id, obis_code, the values of the key's other columns, its "from" and version. */
    private record Row(String maloId, String obisCode, List<String> keyValues, Instant from, BigDecimal version, boolean staged) {}

    // the one row of a channel's version
    private String rowCondition()
    {
        return "malo_id = ? AND obis_code = ?%s AND \"from\" = ? AND version = ?".formatted(
                columns.keyNames().stream().map(column -> " AND %s = ?".formatted(quoteIdentifier(column))).collect(Collectors.joining()));
    }

    private static void bindRow(PreparedStatement select, Row row)
            throws SQLException
    {
        int parameter = 1;
        select.setString(parameter++, row.maloId());
        select.setString(parameter++, row.obisCode());
        for (String value : row.keyValues()) {
            select.setString(parameter++, value);
        }
        select.setObject(parameter++, timestamp(row.from()));
        select.setBigDecimal(parameter, row.version());
    }

    // the key's other columns, each preceded by a comma and qualified by prefix
    private static String keyList(String prefix, TableColumns columns)
    {
        return columns.keyNames().stream().map(column -> ", " + prefix + quoteIdentifier(column)).collect(Collectors.joining());
    }

    // the key's other columns equal between two rows
    private String sameKey(String left, String right)
    {
        return columns.keyNames().stream().map(column -> " AND %1$s%3$s = %2$s%3$s".formatted(left, right, quoteIdentifier(column))).collect(Collectors.joining());
    }

    private record BrokenPair(Row earlier, Row later) {}

    private Optional<BrokenPair> firstBrokenPair(String rows, Instant... parameters)
            throws SQLException
    {
        try (PreparedStatement select = connection.prepareStatement(HotTierRules.firstBrokenPair(rows, columns.keyNames()))) {
            for (int index = 0; index < parameters.length; index++) {
                select.setObject(index + 1, timestamp(parameters[index]));
            }
            try (ResultSet result = select.executeQuery()) {
                if (!result.next()) {
                    return Optional.empty();
                }
                String maloId = result.getString("malo_id");
                String obisCode = result.getString("obis_code");
                List<String> keyValues = new ArrayList<>();
                for (String column : columns.keyNames()) {
                    keyValues.add(result.getString(column));
                }
                Row later = new Row(maloId, obisCode, keyValues, result.getObject("from", OffsetDateTime.class).toInstant(), result.getBigDecimal("version"), result.getBoolean("written"));
                Row earlier = new Row(maloId, obisCode, keyValues, result.getObject("previous_from", OffsetDateTime.class).toInstant(), result.getBigDecimal("previous_version"), result.getBoolean("previous_written"));
                return Optional.of(new BrokenPair(earlier, later));
            }
        }
    }

    private void refuse(Connection reader, BrokenPair pair, String storedIn)
    {
        Reading earlier;
        Reading later;
        try {
            earlier = read(reader, pair.earlier(), storedIn);
            later = read(reader, pair.later(), storedIn);
        }
        catch (SQLException e) {
            throw new TrinoException(METERSTORE_WRITE_FAILED, "INSERT cannot read the rows that break a rule of the readings model: %s; nothing of this statement was written".formatted(e.getMessage()), e);
        }
        Optional<ReadingRules.ViolationException> violation = ReadingRules.violation(earlier, later, columns);
        if (violation.isEmpty()) {
            // PostgreSQL and ReadingRules disagree: never write what one of them refused
            throw new TrinoException(METERSTORE_WRITE_FAILED, "INSERT found %s and %s breaking a rule of the readings model, which MeterStore cannot name; nothing of this statement was written"
                    .formatted(RowDescription.describe(earlier, columns), RowDescription.describe(later, columns)));
        }
        String where = pair.earlier().staged() && pair.later().staged() ? "both in this statement" : "the other stored in " + storedIn;
        throw new TrinoException(METERSTORE_INVALID_READING, "%s (%s); nothing of this statement was written".formatted(violation.get().getMessage(), where), violation.get());
    }

    private Reading read(Connection reader, Row row, String storedIn)
            throws SQLException
    {
        String table = row.staged() ? staging.qualifiedName() : storedIn;
        try (PreparedStatement select = reader.prepareStatement("SELECT * FROM %s WHERE %s LIMIT 1".formatted(table, rowCondition()))) {
            bindRow(select, row);
            try (ResultSet result = select.executeQuery()) {
                if (!result.next()) {
                    throw new SQLException("Row (malo_id '%s', obis_code '%s', \"from\" %s, version %s) is gone from %s".formatted(row.maloId(), row.obisCode(), row.from(), row.version(), table));
                }
                return HotRows.reading(result, "", columns);
            }
        }
    }

    private static OffsetDateTime timestamp(Instant instant)
    {
        return OffsetDateTime.ofInstant(instant, ZoneOffset.UTC);
    }
}
