package io.meterstore.trino;

import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;

import java.io.IOException;
import java.math.BigDecimal;
import java.net.URI;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static java.util.stream.Collectors.joining;

/**
 * Another engine reading a MeterStore table's cold tier: DuckDB reads the current snapshot's data files with its own
 * Parquet reader, by column name, and its position delete files, which it applies as Iceberg's readers do (a row goes
 * when a delete file names its file and position). Its Iceberg extension cannot be downloaded here, so the files come
 * from the snapshot's scan plan. A row is every column of the table by name, in the form {@link #rows} reads Trino's
 * answers into (a string, an {@link Instant}, a {@link BigDecimal} at the column's scale, a {@link LocalDate}, or null),
 * so that the two compare equal.
 */
final class TestingDuckDb
{
    private TestingDuckDb() {}

    /** The rows of the current snapshot's data files, without the position-deleted ones, and how many delete files it has. */
    record FileRows(List<Map<String, Object>> rows, int deleteFiles) {}

    static FileRows currentRows(Table table)
            throws IOException, SQLException
    {
        // a data file's local path, as DuckDB names it, and its location, as the delete files name it
        Map<String, String> locations = new LinkedHashMap<>();
        Set<String> deleteFiles = new LinkedHashSet<>();
        try (CloseableIterable<FileScanTask> tasks = table.newScan().useSnapshot(table.currentSnapshot().snapshotId()).planFiles()) {
            for (FileScanTask task : tasks) {
                locations.put(Path.of(URI.create(task.file().location())).toString(), task.file().location());
                task.deletes().forEach(delete -> deleteFiles.add(Path.of(URI.create(delete.location())).toString()));
            }
        }
        if (locations.isEmpty()) {
            return new FileRows(List.of(), 0);
        }
        List<Types.NestedField> columns = table.schema().columns();
        Set<String> deleted = new HashSet<>();
        List<Map<String, Object>> rows = new ArrayList<>();
        try (Connection duckdb = DriverManager.getConnection("jdbc:duckdb:"); Statement statement = duckdb.createStatement()) {
            if (!deleteFiles.isEmpty()) {
                try (ResultSet result = statement.executeQuery("SELECT file_path, pos FROM read_parquet(%s)".formatted(list(deleteFiles)))) {
                    while (result.next()) {
                        deleted.add(result.getString(1) + "#" + result.getLong(2));
                    }
                }
            }
            String select = columns.stream().map(TestingDuckDb::expression).collect(joining(", "));
            try (ResultSet result = statement.executeQuery("SELECT filename, file_row_number, %s FROM read_parquet(%s, filename = true, file_row_number = true)".formatted(select, list(locations.keySet())))) {
                while (result.next()) {
                    if (deleted.contains(locations.get(result.getString(1)) + "#" + result.getLong(2))) {
                        continue;
                    }
                    Map<String, Object> row = new LinkedHashMap<>();
                    for (int index = 0; index < columns.size(); index++) {
                        row.put(columns.get(index).name(), fileValue(columns.get(index), result, index + 3));
                    }
                    rows.add(row);
                }
            }
        }
        return new FileRows(rows, deleteFiles.size());
    }

    /** The rows of an answer through the Trino JDBC driver, each column of {@code schema} by name, in the form {@link #currentRows} gives. */
    static List<Map<String, Object>> rows(ResultSet result, Schema schema)
            throws SQLException
    {
        List<Map<String, Object>> rows = new ArrayList<>();
        while (result.next()) {
            Map<String, Object> row = new LinkedHashMap<>();
            for (Types.NestedField column : schema.columns()) {
                int index = result.findColumn(column.name());
                Object value = result.getObject(index) == null ? null : switch (column.type().typeId()) {
                    case TIMESTAMP -> result.getTimestamp(index).toInstant();
                    case DECIMAL -> result.getBigDecimal(index).setScale(((Types.DecimalType) column.type()).scale());
                    case DATE -> LocalDate.parse(result.getString(index));
                    case STRING -> result.getString(index);
                    default -> throw unexpected(column);
                };
                row.put(column.name(), value);
            }
            rows.add(row);
        }
        return rows;
    }

    /** What DuckDB selects for a column: microseconds since the epoch for a timestamp, the text of a decimal or date. */
    private static String expression(Types.NestedField column)
    {
        String name = "\"" + column.name() + "\"";
        return switch (column.type().typeId()) {
            case TIMESTAMP -> "epoch_us(%s)".formatted(name);
            case DECIMAL, DATE -> "CAST(%s AS VARCHAR)".formatted(name);
            case STRING -> name;
            default -> throw unexpected(column);
        };
    }

    private static Object fileValue(Types.NestedField column, ResultSet result, int index)
            throws SQLException
    {
        if (result.getObject(index) == null) {
            return null;
        }
        return switch (column.type().typeId()) {
            case TIMESTAMP -> Instant.EPOCH.plus(Duration.ofNanos(Math.multiplyExact(result.getLong(index), 1_000L)));
            case DECIMAL -> new BigDecimal(result.getString(index)).setScale(((Types.DecimalType) column.type()).scale());
            case DATE -> LocalDate.parse(result.getString(index));
            case STRING -> result.getString(index);
            default -> throw unexpected(column);
        };
    }

    private static IllegalArgumentException unexpected(Types.NestedField column)
    {
        return new IllegalArgumentException("Column '%s' is %s, which no readings table has".formatted(column.name(), column.type()));
    }

    private static String list(Iterable<String> paths)
    {
        List<String> quoted = new ArrayList<>();
        paths.forEach(path -> quoted.add("'" + path.replace("'", "''") + "'"));
        return "[" + String.join(", ", quoted) + "]";
    }
}
