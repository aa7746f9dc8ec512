package io.meterstore.trino.hot;

import com.google.common.collect.ImmutableMap;
import io.meterstore.core.HotTier;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * PostgreSQL's own estimates of each hot partition's size, from its catalogue in one read: rows as of the last
 * VACUUM or ANALYZE ({@code pg_class.reltuples}, -1 when never analysed) and the heap's size in bytes. Estimates for
 * split weights and table statistics only, never for an answer.
 */
public record HotPartitionSizes(Map<String, Size> sizes)
{
    public record Size(Optional<Long> rows, long bytes)
    {
        public Size
        {
            requireNonNull(rows, "rows is null");
            checkArgument(bytes >= 0, "bytes is negative: %s", bytes);
        }
    }

    public HotPartitionSizes
    {
        sizes = ImmutableMap.copyOf(requireNonNull(sizes, "sizes is null"));
    }

    public static HotPartitionSizes read(Connection connection, HotTier hotTier)
            throws SQLException
    {
        ImmutableMap.Builder<String, Size> sizes = ImmutableMap.builder();
        try (PreparedStatement statement = connection.prepareStatement("""
                SELECT c.relname, c.reltuples, pg_relation_size(c.oid)
                FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = ? AND c.relkind = 'r' AND c.relname LIKE ?""")) {
            statement.setString(1, hotTier.schema());
            statement.setString(2, hotTier.naming().likePattern());
            try (ResultSet result = statement.executeQuery()) {
                while (result.next()) {
                    String name = result.getString(1);
                    double rows = result.getDouble(2);
                    // PostgreSQL 14+ reports -1 for a table never vacuumed or analysed: unknown, not empty
                    Optional<Long> estimatedRows = rows < 0 ? Optional.empty() : Optional.of(Math.round(rows));
                    sizes.put(name, new Size(estimatedRows, result.getLong(3)));
                }
            }
        }
        return new HotPartitionSizes(sizes.buildOrThrow());
    }

    public Optional<Size> size(String partition)
    {
        return Optional.ofNullable(sizes.get(partition));
    }
}
