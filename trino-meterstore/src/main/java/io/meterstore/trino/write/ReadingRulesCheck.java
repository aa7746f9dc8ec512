package io.meterstore.trino.write;

import io.meterstore.core.HotTier;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingRules;
import io.meterstore.core.TieringWatermark;
import io.trino.spi.TrinoException;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Optional;

import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_INVALID_READING;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_WRITE_FAILED;
import static java.util.Objects.requireNonNull;

/**
 * {@link ReadingRules} applied by PostgreSQL to the rows an INSERT staged: against each other, and against the hot
 * tier's stored versions of their channels. Sorted by channel, "from" and version, a rule can only break between a
 * row and the one before it (spans that pass are disjoint or the same), so one window pass finds the first broken
 * pair; the pair is then read whole and {@link ReadingRules} words the refusal, as it does for the cold tier.
 */
final class ReadingRulesCheck
{
    // the hot writers of one channel are serialized by one of this many locks, taken in order: two statements cannot
    // both find a channel free of a span and both write one that overlaps the other's
    private static final int CHANNEL_LOCKS = 64;
    private static final String CHANNEL_LOCK_PREFIX = "meterstore.channels:";

    private final Connection connection;
    private final InsertStaging staging;

    /**
     * @param connection the statement's open transaction
     */
    ReadingRulesCheck(Connection connection, InsertStaging staging)
    {
        this.connection = requireNonNull(connection, "connection is null");
        this.staging = requireNonNull(staging, "staging is null");
    }

    /** Fails the statement at the first staged row that breaks a rule against another staged row. */
    void requireStagedCompatible()
            throws SQLException
    {
        String rows = "SELECT malo_id, obis_code, \"from\", \"to\", version, version_scope, true AS staged FROM %s".formatted(staging.qualifiedName());
        firstBrokenPair(rows, new Object[0]).ifPresent(pair -> refuse(pair, "PostgreSQL"));
    }

    /**
     * Fails the statement at the first staged row reaching the hot tier (its span ends above W) that breaks a rule
     * against a version the hot tier holds. Takes the channel locks of the staged rows first, held until the
     * transaction ends.
     */
    void requireHotCompatible(HotTier hotTier, TieringWatermark watermark)
            throws SQLException
    {
        String reaching = "\"to\" > ?";
        Optional<Instant[]> range = stagedRange(reaching, watermark.instant());
        if (range.isEmpty()) {
            return;
        }
        lockChannels(hotTier, reaching, watermark.instant());
        // a stored span that meets a staged one starts at most the longest span before it
        Instant lower = range.get()[0].minus(ReadingRules.LONGEST_WRITTEN_SPAN);
        Instant upper = range.get()[1];
        String rows = """
                SELECT malo_id, obis_code, "from", "to", version, version_scope, true AS staged FROM %1$s WHERE %3$s
                UNION ALL
                SELECT p.malo_id, p.obis_code, p."from", p."to", p.version, p.version_scope, false FROM %2$s p
                WHERE p."from" >= ? AND p."from" < ? AND (p.malo_id, p.obis_code) IN (SELECT malo_id, obis_code FROM %1$s WHERE %3$s)"""
                .formatted(staging.qualifiedName(), hotTier.qualifiedParent(), reaching);
        Object[] parameters = {watermark.instant(), lower, upper, watermark.instant()};
        firstBrokenPair(rows, parameters).ifPresent(pair -> refuse(pair, hotTier.qualifiedParent()));
    }

    private record Row(String maloId, String obisCode, Instant from, BigDecimal version, boolean staged) {}

    private record BrokenPair(Row earlier, Row later) {}

    private Optional<BrokenPair> firstBrokenPair(String rows, Object[] parameters)
            throws SQLException
    {
        String sql = """
                SELECT malo_id, obis_code, "from", version, staged, previous_from, previous_version, previous_staged FROM (
                    SELECT malo_id, obis_code, "from", "to", version, version_scope, staged,
                        lag("from") OVER w AS previous_from, lag("to") OVER w AS previous_to, lag(version) OVER w AS previous_version,
                        lag(version_scope) OVER w AS previous_scope, lag(staged) OVER w AS previous_staged
                    FROM (%s) u
                    WINDOW w AS (PARTITION BY malo_id, obis_code ORDER BY "from", version, staged)) x
                WHERE (staged OR previous_staged) AND previous_to > "from"
                    AND (previous_from <> "from" OR previous_to <> "to" OR split_part(previous_scope, ':', 1) <> split_part(version_scope, ':', 1))
                ORDER BY malo_id, obis_code, "from", version
                LIMIT 1""".formatted(rows);
        try (PreparedStatement select = connection.prepareStatement(sql)) {
            for (int index = 0; index < parameters.length; index++) {
                select.setObject(index + 1, timestamp((Instant) parameters[index]));
            }
            try (ResultSet result = select.executeQuery()) {
                if (!result.next()) {
                    return Optional.empty();
                }
                String maloId = result.getString("malo_id");
                String obisCode = result.getString("obis_code");
                Row later = new Row(maloId, obisCode, result.getObject("from", OffsetDateTime.class).toInstant(), result.getBigDecimal("version"), result.getBoolean("staged"));
                Row earlier = new Row(maloId, obisCode, result.getObject("previous_from", OffsetDateTime.class).toInstant(), result.getBigDecimal("previous_version"), result.getBoolean("previous_staged"));
                return Optional.of(new BrokenPair(earlier, later));
            }
        }
    }

    private void refuse(BrokenPair pair, String storedIn)
    {
        Reading earlier;
        Reading later;
        try {
            earlier = read(pair.earlier(), storedIn);
            later = read(pair.later(), storedIn);
        }
        catch (SQLException e) {
            throw new TrinoException(METERSTORE_WRITE_FAILED, "INSERT cannot read the rows that break a rule of the readings model: %s; nothing of this statement was written".formatted(e.getMessage()), e);
        }
        Optional<ReadingRules.ViolationException> violation = ReadingRules.violation(earlier, later);
        if (violation.isEmpty()) {
            // PostgreSQL and ReadingRules disagree: never write what one of them refused
            throw new TrinoException(METERSTORE_WRITE_FAILED, "INSERT found %s and %s breaking a rule of the readings model, which MeterStore cannot name; nothing of this statement was written"
                    .formatted(RowDescription.describe(earlier), RowDescription.describe(later)));
        }
        String where = pair.earlier().staged() && pair.later().staged() ? "both in this statement" : "the other stored in " + storedIn;
        throw new TrinoException(METERSTORE_INVALID_READING, "%s (%s); nothing of this statement was written".formatted(violation.get().getMessage(), where), violation.get());
    }

    private Reading read(Row row, String storedIn)
            throws SQLException
    {
        String table = row.staged() ? staging.qualifiedName() : storedIn;
        try (PreparedStatement select = connection.prepareStatement("SELECT * FROM %s WHERE malo_id = ? AND obis_code = ? AND \"from\" = ? AND version = ? LIMIT 1".formatted(table))) {
            select.setString(1, row.maloId());
            select.setString(2, row.obisCode());
            select.setObject(3, timestamp(row.from()));
            select.setBigDecimal(4, row.version());
            try (ResultSet result = select.executeQuery()) {
                if (!result.next()) {
                    throw new SQLException("Row (malo_id '%s', obis_code '%s', \"from\" %s, version %s) is gone from %s".formatted(row.maloId(), row.obisCode(), row.from(), row.version(), table));
                }
                return HotRows.reading(result, "");
            }
        }
    }

    /** The least "from" and the greatest "to" of the staged rows that meet {@code condition}, if any. */
    private Optional<Instant[]> stagedRange(String condition, Instant boundary)
            throws SQLException
    {
        try (PreparedStatement select = connection.prepareStatement("SELECT min(\"from\"), max(\"to\") FROM %s WHERE %s".formatted(staging.qualifiedName(), condition))) {
            select.setObject(1, timestamp(boundary));
            try (ResultSet result = select.executeQuery()) {
                result.next();
                OffsetDateTime lower = result.getObject(1, OffsetDateTime.class);
                if (lower == null) {
                    return Optional.empty();
                }
                return Optional.of(new Instant[] {lower.toInstant(), result.getObject(2, OffsetDateTime.class).toInstant()});
            }
        }
    }

    private void lockChannels(HotTier hotTier, String condition, Instant boundary)
            throws SQLException
    {
        // in ascending order, so two statements never wait for each other's locks
        String sql = """
                SELECT count(pg_advisory_xact_lock(hashtextextended(?, bucket)))
                FROM (SELECT DISTINCT abs(hashtext(malo_id) %% %d) AS bucket FROM %s WHERE %s ORDER BY 1) b""".formatted(CHANNEL_LOCKS, staging.qualifiedName(), condition);
        try (PreparedStatement lock = connection.prepareStatement(sql)) {
            lock.setString(1, CHANNEL_LOCK_PREFIX + hotTier.qualifiedParent());
            lock.setObject(2, timestamp(boundary));
            lock.execute();
        }
    }

    private static OffsetDateTime timestamp(Instant instant)
    {
        return OffsetDateTime.ofInstant(instant, ZoneOffset.UTC);
    }
}
