package io.meterstore.core;

import com.google.common.collect.ImmutableList;

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

import static io.meterstore.core.Sql.qualified;
import static io.meterstore.core.Sql.tableExists;
import static java.util.Objects.requireNonNull;

/**
 * The last invariant check of each table, kept in PostgreSQL beside the table ({@code meterstore_invariant_checks}):
 * the archiver service records the check it makes after each cycle, so that the connector's
 * {@code "<table>$invariant"} shows what the archiver last found without the archiver's HTTP endpoint. Beside it, the
 * window an archival cycle last refused ({@code meterstore_archival_refusals}), which {@link InvariantCheck} reports
 * until the watermark passes it.
 */
public final class InvariantLog
{
    public static final String TABLE = "meterstore_invariant_checks";
    public static final String REFUSALS_TABLE = "meterstore_archival_refusals";
    private static final String UNDEFINED_TABLE = "42P01";

    private InvariantLog() {}

    /** One recorded check. */
    public record LoggedCheck(Instant checkedAt, TieringWatermark watermark, Optional<Long> snapshotId, List<String> violations)
    {
        public LoggedCheck
        {
            requireNonNull(checkedAt, "checkedAt is null");
            requireNonNull(watermark, "watermark is null");
            requireNonNull(snapshotId, "snapshotId is null");
            violations = ImmutableList.copyOf(violations);
        }
    }

    /**
     * A window an archival cycle refused to archive, and why: a row the write path's validation refuses, named with
     * what to do. It holds the watermark at the window's start until the row is repaired and a cycle archives it.
     */
    public record Refusal(Instant refusedAt, Instant windowStart, Instant windowEnd, String message)
    {
        public Refusal
        {
            requireNonNull(refusedAt, "refusedAt is null");
            requireNonNull(windowStart, "windowStart is null");
            requireNonNull(windowEnd, "windowEnd is null");
            requireNonNull(message, "message is null");
        }
    }

    /** Records {@code refusal} as the table's last refused window; creates the table on first use. */
    public static void recordRefusal(Connection connection, HotTier hotTier, Refusal refusal)
            throws SQLException
    {
        String refusals = qualified(hotTier.schema(), REFUSALS_TABLE);
        try (Statement statement = connection.createStatement()) {
            statement.execute("""
                    CREATE TABLE IF NOT EXISTS %s (
                        "table" text PRIMARY KEY,
                        refused_at timestamptz NOT NULL,
                        window_start timestamptz NOT NULL,
                        window_end timestamptz NOT NULL,
                        message text NOT NULL)""".formatted(refusals));
        }
        try (PreparedStatement statement = connection.prepareStatement("""
                INSERT INTO %s ("table", refused_at, window_start, window_end, message) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT ("table") DO UPDATE SET refused_at = excluded.refused_at, window_start = excluded.window_start,
                    window_end = excluded.window_end, message = excluded.message""".formatted(refusals))) {
            statement.setString(1, hotTier.naming().table());
            statement.setObject(2, OffsetDateTime.ofInstant(refusal.refusedAt(), ZoneOffset.UTC));
            statement.setObject(3, OffsetDateTime.ofInstant(refusal.windowStart(), ZoneOffset.UTC));
            statement.setObject(4, OffsetDateTime.ofInstant(refusal.windowEnd(), ZoneOffset.UTC));
            statement.setString(5, refusal.message());
            statement.executeUpdate();
        }
    }

    /** The table's last refused window; empty when none was refused, or the table does not exist yet. */
    public static Optional<Refusal> lastRefusal(Connection connection, HotTier hotTier)
            throws SQLException
    {
        String refusals = qualified(hotTier.schema(), REFUSALS_TABLE);
        if (!tableExists(connection, refusals)) {
            return Optional.empty();
        }
        try (PreparedStatement statement = connection.prepareStatement("SELECT refused_at, window_start, window_end, message FROM %s WHERE \"table\" = ?".formatted(refusals))) {
            statement.setString(1, hotTier.naming().table());
            try (ResultSet result = statement.executeQuery()) {
                if (!result.next()) {
                    return Optional.empty();
                }
                return Optional.of(new Refusal(
                        result.getObject(1, OffsetDateTime.class).toInstant(),
                        result.getObject(2, OffsetDateTime.class).toInstant(),
                        result.getObject(3, OffsetDateTime.class).toInstant(),
                        result.getString(4)));
            }
        }
    }

    /** Records {@code report} as the last check of its table, made at {@code checkedAt}; creates the log table on first use. */
    public static void record(Connection connection, HotTier hotTier, InvariantReport report, Instant checkedAt)
            throws SQLException
    {
        String log = qualified(hotTier.schema(), TABLE);
        try (Statement statement = connection.createStatement()) {
            statement.execute("""
                    CREATE TABLE IF NOT EXISTS %s (
                        "table" text PRIMARY KEY,
                        checked_at timestamptz NOT NULL,
                        watermark timestamptz NOT NULL,
                        snapshot_id bigint,
                        violations text[] NOT NULL)""".formatted(log));
        }
        try (PreparedStatement statement = connection.prepareStatement("""
                INSERT INTO %s ("table", checked_at, watermark, snapshot_id, violations) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT ("table") DO UPDATE SET checked_at = excluded.checked_at, watermark = excluded.watermark,
                    snapshot_id = excluded.snapshot_id, violations = excluded.violations""".formatted(log))) {
            statement.setString(1, hotTier.naming().table());
            statement.setObject(2, OffsetDateTime.ofInstant(checkedAt, ZoneOffset.UTC));
            statement.setObject(3, OffsetDateTime.ofInstant(report.watermark().instant(), ZoneOffset.UTC));
            statement.setObject(4, report.snapshotId().orElse(null), Types.BIGINT);
            statement.setArray(5, connection.createArrayOf("text", report.violations().toArray()));
            statement.executeUpdate();
        }
    }

    /** The last check recorded for the table; empty when none was, or the log table does not exist yet. */
    public static Optional<LoggedCheck> last(Connection connection, HotTier hotTier)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement("SELECT checked_at, watermark, snapshot_id, violations FROM %s WHERE \"table\" = ?"
                .formatted(qualified(hotTier.schema(), TABLE)))) {
            statement.setString(1, hotTier.naming().table());
            try (ResultSet result = statement.executeQuery()) {
                if (!result.next()) {
                    return Optional.empty();
                }
                long snapshotId = result.getLong(3);
                Optional<Long> snapshot = result.wasNull() ? Optional.empty() : Optional.of(snapshotId);
                Array violations = result.getArray(4);
                return Optional.of(new LoggedCheck(
                        result.getObject(1, OffsetDateTime.class).toInstant(),
                        TieringWatermark.of(result.getObject(2, OffsetDateTime.class).toInstant()),
                        snapshot,
                        List.of((String[]) violations.getArray())));
            }
        }
        catch (SQLException e) {
            // no archiver has checked this deployment yet
            if (UNDEFINED_TABLE.equals(e.getSQLState())) {
                return Optional.empty();
            }
            throw e;
        }
    }
}
