package io.meterstore.core;

import org.apache.iceberg.Schema;

import java.util.List;

/**
 * The one definition of a readings table's schema; the PostgreSQL DDL, the Iceberg schema and the Trino
 * columns are all derived from {@link ReadingsColumn}. A table whose shape declares attribute columns stores them after
 * these ({@link TableColumns}).
 */
public final class ReadingsSchema
{
    public static final List<ReadingsColumn> COLUMNS = List.of(ReadingsColumn.values());

    private ReadingsSchema() {}

    public static Schema icebergSchema()
    {
        return TableColumns.READINGS.icebergSchema();
    }

    /** The Iceberg schema of a table of {@code timeModel} without attribute columns: "to" is optional in a point table. */
    public static Schema icebergSchema(TableShape.TimeModel timeModel)
    {
        return TableColumns.of(timeModel, List.of()).icebergSchema();
    }

    /** The column list of a PostgreSQL CREATE TABLE of an interval table, every identifier quoted. */
    public static String postgresColumnDefinitions()
    {
        return TableColumns.READINGS.postgresColumnDefinitions();
    }

    /** Whether {@code column} may be NULL in a table of {@code timeModel}: a nullable column, and "to" of a point table. */
    public static boolean nullable(ReadingsColumn column, TableShape.TimeModel timeModel)
    {
        return column.nullable() || (column == ReadingsColumn.TO && timeModel == TableShape.TimeModel.POINT);
    }

    /** The quoted column list in storage order, for SELECT and COPY. */
    public static String postgresColumnList()
    {
        return TableColumns.READINGS.postgresColumnList();
    }
}
