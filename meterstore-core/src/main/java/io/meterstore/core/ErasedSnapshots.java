package io.meterstore.core;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Collection;
import java.util.Optional;

import static io.meterstore.core.Sql.qualified;
import static io.meterstore.core.Sql.tableExists;

/**
 * The Iceberg snapshots the archiver expired to make an erasure physical, one PostgreSQL table per MeterStore schema
 * ({@value #TABLE}) beside the {@link ErasureLog}: {@code FOR VERSION AS OF} one of them then names the erasure that
 * expired it, instead of a snapshot that may never have existed. Recorded before the expiry commits, so a crash between
 * the two loses nothing; a recorded snapshot still in the table is never consulted.
 */
public final class ErasedSnapshots
{
    public static final String TABLE = "meterstore_erased_snapshots";

    private ErasedSnapshots() {}

    /** Records that erasure {@code erasureId} of {@code table} expires {@code snapshotIds}; creates the table on first use. */
    public static void record(Connection connection, String schema, String table, long erasureId, Collection<Long> snapshotIds)
            throws SQLException
    {
        if (snapshotIds.isEmpty()) {
            return;
        }
        try (Statement statement = connection.createStatement()) {
            statement.execute("""
                    CREATE TABLE IF NOT EXISTS %s (
                        "table" text NOT NULL,
                        snapshot_id bigint NOT NULL,
                        erasure_id bigint NOT NULL,
                        PRIMARY KEY ("table", snapshot_id))""".formatted(qualified(schema, TABLE)));
        }
        try (PreparedStatement insert = connection.prepareStatement("INSERT INTO %s (\"table\", snapshot_id, erasure_id) VALUES (?, ?, ?) ON CONFLICT DO NOTHING"
                .formatted(qualified(schema, TABLE)))) {
            for (long snapshotId : snapshotIds) {
                insert.setString(1, table);
                insert.setLong(2, snapshotId);
                insert.setLong(3, erasureId);
                insert.addBatch();
            }
            insert.executeBatch();
        }
    }

    /** The erasure that expired snapshot {@code snapshotId} of {@code table}, if one did. */
    public static Optional<Long> erasureOf(Connection connection, String schema, String table, long snapshotId)
            throws SQLException
    {
        if (!tableExists(connection, qualified(schema, TABLE))) {
            return Optional.empty();
        }
        try (PreparedStatement select = connection.prepareStatement("SELECT erasure_id FROM %s WHERE \"table\" = ? AND snapshot_id = ?".formatted(qualified(schema, TABLE)))) {
            select.setString(1, table);
            select.setLong(2, snapshotId);
            try (ResultSet result = select.executeQuery()) {
                return result.next() ? Optional.of(result.getLong(1)) : Optional.empty();
            }
        }
    }
}
