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
        List<NestedField> fields = Arrays.stream(ReadingsColumn.values())
                .map(column -> column.nullable()
                        ? NestedField.optional(column.fieldId(), column.columnName(), column.icebergType())
                        : NestedField.required(column.fieldId(), column.columnName(), column.icebergType()))
                .toList();
        return new Schema(fields);
    }

    /** The column list of a PostgreSQL CREATE TABLE, every identifier quoted. */
    public static String postgresColumnDefinitions()
    {
        return String.join(",\n    ", COLUMNS.stream()
                // C collation: the primary-key index then walks text in byte order, the order Parquet and Iceberg sort in
                .map(column -> "%s %s%s%s".formatted(
                        Sql.quoteIdentifier(column.columnName()),
                        column.postgresType(),
                        column.kind() == ReadingsColumn.ColumnKind.STRING ? " COLLATE \"C\"" : "",
                        column.nullable() ? "" : " NOT NULL"))
                .toList());
    }

    /** The quoted column list in storage order, for SELECT and COPY. */
    public static String postgresColumnList()
    {
        return String.join(", ", COLUMNS.stream().map(column -> Sql.quoteIdentifier(column.columnName())).toList());
    }
}
