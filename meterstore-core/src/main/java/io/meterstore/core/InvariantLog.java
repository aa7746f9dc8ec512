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
import static java.util.Objects.requireNonNull;

/**
 * The last invariant check of each table, kept in PostgreSQL beside the table ({@code meterstore_invariant_checks}):
 * the archiver service records the check it makes after each cycle, so that the connector's
 * {@code "<table>$invariant"} shows what the archiver last found without the archiver's HTTP endpoint.
 */
public final class InvariantLog
{
    public static final String TABLE = "meterstore_invariant_checks";
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
