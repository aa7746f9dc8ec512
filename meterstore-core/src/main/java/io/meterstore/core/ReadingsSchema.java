package io.meterstore.core;

import org.apache.iceberg.Schema;
import org.apache.iceberg.types.Types.NestedField;

import java.util.Arrays;
import java.util.List;

/**
 * The one definition of a readings table's schema; the PostgreSQL DDL, the Iceberg schema and the Trino
 * columns are all derived from {@link ReadingsColumn}.
 */
public final class ReadingsSchema
{
    public static final List<ReadingsColumn> COLUMNS = List.of(ReadingsColumn.values());

    private ReadingsSchema() {}

    public static Schema icebergSchema()
    {
        return icebergSchema(TableShape.TimeModel.INTERVAL);
    }

    /** The Iceberg schema of a table of {@code timeModel}: "to" is optional in a point table, whose rows have none. */
    public static Schema icebergSchema(TableShape.TimeModel timeModel)
    {
        List<NestedField> fields = Arrays.stream(ReadingsColumn.values())
                .map(column -> nullable(column, timeModel)
                        ? NestedField.optional(column.fieldId(), column.columnName(), column.icebergType())
                        : NestedField.required(column.fieldId(), column.columnName(), column.icebergType()))
                .toList();
        return new Schema(fields);
    }

    /** The column list of a PostgreSQL CREATE TABLE of an interval table, every identifier quoted. */
    public static String postgresColumnDefinitions()
    {
        return postgresColumnDefinitions(TableShape.TimeModel.INTERVAL);
    }

    /** The column list of a PostgreSQL CREATE TABLE of a table of {@code timeModel}, every identifier quoted. */
    public static String postgresColumnDefinitions(TableShape.TimeModel timeModel)
    {
        return String.join(",\n    ", COLUMNS.stream()
                // C collation: the primary-key index then walks text in byte order, the order Parquet and Iceberg sort in
                .map(column -> "%s %s%s%s".formatted(
                        Sql.quoteIdentifier(column.columnName()),
                        column.postgresType(),
                        column.kind() == ReadingsColumn.ColumnKind.STRING ? " COLLATE \"C\"" : "",
                        nullable(column, timeModel) ? "" : " NOT NULL"))
                .toList());
    }

    /** Whether {@code column} may be NULL in a table of {@code timeModel}: a nullable column, and "to" of a point table. */
    public static boolean nullable(ReadingsColumn column, TableShape.TimeModel timeModel)
    {
        return column.nullable() || (column == ReadingsColumn.TO && timeModel == TableShape.TimeModel.POINT);
    }

    /** The quoted column list in storage order, for SELECT and COPY. */
    public static String postgresColumnList()
    {
        return String.join(", ", COLUMNS.stream().map(column -> Sql.quoteIdentifier(column.columnName())).toList());
    }
}
