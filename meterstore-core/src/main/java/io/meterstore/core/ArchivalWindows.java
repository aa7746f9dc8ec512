package io.meterstore.core;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static io.meterstore.core.Sql.qualified;
import static java.util.Objects.requireNonNull;

/**
 * The window each table's archival cycle archives, published in PostgreSQL beside the table
 * ({@code meterstore_archival_windows}, one row a table) before the cycle detaches anything, under the table's boundary
 * lock ({@link HotTier#holdBoundary}) in exclusive mode. A writer reads it under the same lock in shared mode, so it
 * either finished before the publication (its hot rows are in the partition the cycle then detaches) or knows the window:
 * its rows at or above the window's end, and below W, go ahead; only its rows inside [W, end) wait for the cycle. The
 * row stays after the cycle: once W reaches its end it names no row at or above W, and an interrupted cycle's window
 * stays published until the next cycle publishes its own.
 */
public final class ArchivalWindows
{
    public static final String TABLE = "meterstore_archival_windows";

    private ArchivalWindows() {}

    /** The range [start, end) a cycle archives, as it published it. */
    public record Window(Instant start, Instant end)
    {
        public Window
        {
            requireNonNull(start, "start is null");
            requireNonNull(end, "end is null");
            checkArgument(end.isAfter(start), "Window end %s is not after its start %s", end, start);
        }
    }

    /** What a writer finds: whether the table of windows exists (an archiver of this release created it), and the window published. */
    public record Published(boolean known, Optional<Window> window)
    {
        public Published
        {
            requireNonNull(window, "window is null");
            checkArgument(known || window.isEmpty(), "a window is only published where the table of windows exists");
        }
    }

    /** Creates the table of windows of {@code schema} if it does not exist, in the caller's transaction or on its own. */
    public static void create(Connection connection, String schema)
            throws SQLException
    {
        try (Statement statement = connection.createStatement()) {
            statement.execute("""
                    CREATE TABLE IF NOT EXISTS %s (
                        "table" text PRIMARY KEY,
                        window_start timestamptz NOT NULL,
                        window_end timestamptz NOT NULL,
                        published_at timestamptz NOT NULL)""".formatted(qualified(schema, TABLE)));
        }
    }

    /**
     * Publishes {@code window} as the one the table's cycle archives now, replacing the last one. The caller holds the
     * table's boundary lock in exclusive mode, in the same transaction.
     */
    public static void publish(Connection connection, HotTier hotTier, Window window, Instant now)
            throws SQLException
    {
        checkArgument(!connection.getAutoCommit(), "a window is published in the transaction that holds the boundary lock");
        try (PreparedStatement statement = connection.prepareStatement("""
                INSERT INTO %s ("table", window_start, window_end, published_at) VALUES (?, ?, ?, ?)
                ON CONFLICT ("table") DO UPDATE SET window_start = excluded.window_start, window_end = excluded.window_end,
                    published_at = excluded.published_at""".formatted(qualified(hotTier.schema(), TABLE)))) {
            statement.setString(1, hotTier.naming().table());
            statement.setObject(2, OffsetDateTime.ofInstant(window.start(), ZoneOffset.UTC));
            statement.setObject(3, OffsetDateTime.ofInstant(window.end(), ZoneOffset.UTC));
            statement.setObject(4, OffsetDateTime.ofInstant(now, ZoneOffset.UTC));
            statement.executeUpdate();
        }
    }

    /**
     * The window last published for the table. Not known when the table of windows does not exist: no archiver of this
     * release has run, and one of an older release publishes nothing, so a writer must wait for the whole cycle.
     */
    public static Published published(Connection connection, HotTier hotTier)
            throws SQLException
    {
        String windows = qualified(hotTier.schema(), TABLE);
        // looked up, not tried: a failed statement would abort the writer's transaction
        try (PreparedStatement statement = connection.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
            statement.setString(1, windows);
            try (ResultSet result = statement.executeQuery()) {
                result.next();
                if (!result.getBoolean(1)) {
                    return new Published(false, Optional.empty());
                }
            }
        }
        try (PreparedStatement statement = connection.prepareStatement("SELECT window_start, window_end FROM %s WHERE \"table\" = ?".formatted(windows))) {
            statement.setString(1, hotTier.naming().table());
            try (ResultSet result = statement.executeQuery()) {
                if (!result.next()) {
                    return new Published(true, Optional.empty());
                }
                return new Published(true, Optional.of(new Window(result.getObject(1, OffsetDateTime.class).toInstant(), result.getObject(2, OffsetDateTime.class).toInstant())));
            }
        }
    }
}
