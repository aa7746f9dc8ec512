package io.meterstore.benchmark;

import com.google.common.collect.ImmutableList;
import io.trino.jdbc.TrinoResultSet;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * One statement on one engine, timed from the client as a user sees it: from sending the query to having fetched its
 * last row. Rows come back as text, numbers without trailing zeros, so the two engines' answers compare exactly.
 */
record TimedQuery(String engine, Connection connection, String sql)
{
    /** @param queryId the engine's id of the query, where the driver tells it (Trino's does) */
    record Execution(long nanos, List<List<String>> rows, Optional<String> queryId)
    {
        Execution
        {
            rows = ImmutableList.copyOf(rows);
            requireNonNull(queryId, "queryId is null");
        }

        Execution(long nanos, List<List<String>> rows)
        {
            this(nanos, rows, Optional.empty());
        }
    }

    TimedQuery
    {
        requireNonNull(engine, "engine is null");
        requireNonNull(connection, "connection is null");
        requireNonNull(sql, "sql is null");
    }

    Execution execute()
            throws SQLException
    {
        List<List<String>> rows = new ArrayList<>();
        Optional<String> queryId = Optional.empty();
        long start = System.nanoTime();
        try (Statement statement = connection.createStatement()) {
            // a statement without rows (SET SESSION in a probe) has no result set
            if (statement.execute(sql)) {
                try (ResultSet result = statement.getResultSet()) {
                    if (result.isWrapperFor(TrinoResultSet.class)) {
                        queryId = Optional.of(result.unwrap(TrinoResultSet.class).getQueryId());
                    }
                    int columns = result.getMetaData().getColumnCount();
                    while (result.next()) {
                        List<String> row = new ArrayList<>(columns);
                        for (int column = 1; column <= columns; column++) {
                            row.add(normalize(result.getObject(column)));
                        }
                        rows.add(row);
                    }
                }
            }
        }
        return new Execution(System.nanoTime() - start, rows, queryId);
    }

    static String normalize(Object value)
    {
        if (value == null) {
            return "NULL";
        }
        if (value instanceof BigDecimal decimal) {
            return decimal.signum() == 0 ? "0" : decimal.stripTrailingZeros().toPlainString();
        }
        return value.toString();
    }
}
