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
 * VACUUM or ANALYZE ({@code pg_class.reltuples}, -1 when never analysed) scaled to the heap's size now, as
 * PostgreSQL's planner does, and the heap's size in bytes. Estimates for split weights and table statistics only,
 * never for an answer.
 */
public record HotPartitionSizes(Map<String, Size> sizes)
{
    /**
     * Heap bytes per reading row (tuple header, line pointer, the columns and free space): generated readings with
     * their JSON source detail and provenance measured 270 to 400; it only sizes a partition nobody has analysed yet.
     */
    public static final long ESTIMATED_HEAP_BYTES_PER_ROW = 340;

    /**
     * @param rows the rows now, from the last ANALYZE or VACUUM: empty if there was none, or if the partition was
     * empty then and has grown since
     */
    public record Size(Optional<Long> rows, long bytes)
    {
        public Size
        {
            requireNonNull(rows, "rows is null");
            checkArgument(bytes >= 0, "bytes is negative: %s", bytes);
        }

        /** The rows, or without statistics an estimate from the heap's size (PostgreSQL's planner does the same). */
        public long estimatedRows()
        {
            return rows.orElse(bytes / ESTIMATED_HEAP_BYTES_PER_ROW);
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
                SELECT c.relname, c.reltuples, c.relpages, pg_relation_size(c.oid), current_setting('block_size')::bigint
                FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = ? AND c.relkind = 'r' AND c.relname LIKE ?""")) {
            statement.setString(1, hotTier.schema());
            statement.setString(2, hotTier.naming().likePattern());
            try (ResultSet result = statement.executeQuery()) {
                while (result.next()) {
                    String name = result.getString(1);
                    long bytes = result.getLong(4);
                    sizes.put(name, new Size(rowsNow(result.getDouble(2), result.getLong(3), bytes / result.getLong(5)), bytes));
                }
            }
        }
        return new HotPartitionSizes(sizes.buildOrThrow());
    }

    /**
     * reltuples describes the heap as it was at the last ANALYZE or VACUUM, relpages pages ago: scale its density
     * to the pages now, so rows loaded since count without another ANALYZE.
     */
    private static Optional<Long> rowsNow(double analysedRows, long analysedPages, long pages)
    {
        // PostgreSQL 14+ reports -1 for a table never vacuumed or analysed: unknown, not empty
        if (analysedRows < 0) {
            return Optional.empty();
        }
        if (analysedPages > 0) {
            return Optional.of(Math.round(analysedRows / analysedPages * pages));
        }
        // analysed while empty: still empty, or grown by an unknown number of rows
        return pages == 0 ? Optional.of(Math.round(analysedRows)) : Optional.empty();
    }

    public Optional<Size> size(String partition)
    {
        return Optional.ofNullable(sizes.get(partition));
    }
}
