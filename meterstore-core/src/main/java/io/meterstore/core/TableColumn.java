package io.meterstore.core;

import io.meterstore.core.ReadingsColumn.ColumnKind;
import org.apache.iceberg.types.Type;

import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * A column a readings table stores, in both tiers: one of the 17 {@link ReadingsColumn}s, or an attribute column its
 * shape declares ({@link TableShape#attributeColumns()}), a nullable string carried with a reading and never read by the
 * resolution. {@link TableColumns} gives a table's columns in storage order.
 *
 * @param name the column's name in SQL, PostgreSQL, Iceberg and Parquet
 * @param kind its value domain, which each engine maps to its own type
 * @param fieldId its Iceberg field id: a readings column's own, an attribute column's after the readings columns'
 * @param nullable whether the column may hold NULL
 */
public record TableColumn(String name, ColumnKind kind, int fieldId, boolean nullable)
{
    private static final ReadingsColumn[] BY_FIELD_ID = readingsByFieldId();

    public TableColumn
    {
        requireNonNull(name, "name is null");
        requireNonNull(kind, "kind is null");
        checkArgument(fieldId > 0, "fieldId must be positive");
    }

    /** The column of {@code column}. */
    public static TableColumn of(ReadingsColumn column)
    {
        return new TableColumn(column.columnName(), column.kind(), column.fieldId(), column.nullable());
    }

    /** The column of {@code column} in a table of {@code timeModel}: "to" is nullable in a point table ({@link ReadingsSchema#nullable}). */
    public static TableColumn of(ReadingsColumn column, TableShape.TimeModel timeModel)
    {
        return new TableColumn(column.columnName(), column.kind(), column.fieldId(), ReadingsSchema.nullable(column, timeModel));
    }

    /** An attribute column: a nullable string, stored as TEXT in PostgreSQL and an optional string in Iceberg. */
    public static TableColumn attribute(String name, int fieldId)
    {
        checkArgument(fieldId > ReadingsColumn.values().length, "An attribute column's field id %s must follow the readings columns'", fieldId);
        return new TableColumn(name, ColumnKind.STRING, fieldId, true);
    }

    /** An identity column: a string every row holds, part of the merge key, TEXT NOT NULL in PostgreSQL and a required string in Iceberg. */
    public static TableColumn identity(String name, int fieldId)
    {
        checkArgument(fieldId > ReadingsColumn.values().length, "An identity column's field id %s must follow the readings columns'", fieldId);
        return new TableColumn(name, ColumnKind.STRING, fieldId, false);
    }

    /** {@code column} as a column of the merge key, which every row holds: melo_id in a table keyed by it. */
    public static TableColumn keyed(TableColumn column)
    {
        return new TableColumn(column.name(), column.kind(), column.fieldId(), false);
    }

    /** The readings column this is; empty for an attribute column. */
    public Optional<ReadingsColumn> readingsColumn()
    {
        if (fieldId >= BY_FIELD_ID.length || BY_FIELD_ID[fieldId] == null || !BY_FIELD_ID[fieldId].columnName().equals(name)) {
            return Optional.empty();
        }
        return Optional.of(BY_FIELD_ID[fieldId]);
    }

    /** Whether this is {@code column}. */
    public boolean is(ReadingsColumn column)
    {
        return fieldId == column.fieldId() && name.equals(column.columnName());
    }

    /** Whether this is an attribute column, carried with a reading and never read by the resolution. */
    public boolean attributeColumn()
    {
        return readingsColumn().isEmpty();
    }

    /**
     * Whether this is a column of the merge key besides malo_id, obis_code and "from" ({@link TableColumns#keyColumns()}):
     * melo_id in a table keyed by it, or an identity column. Every row holds a value in it, and every version of a key the same.
     */
    public boolean keyColumn()
    {
        return !nullable && (attributeColumn() || is(ReadingsColumn.MELO_ID));
    }

    public Type icebergType()
    {
        return kind.icebergType();
    }

    public String postgresType()
    {
        return kind.postgresType();
    }

    private static ReadingsColumn[] readingsByFieldId()
    {
        int max = 0;
        for (ReadingsColumn column : ReadingsColumn.values()) {
            max = Math.max(max, column.fieldId());
        }
        ReadingsColumn[] columns = new ReadingsColumn[max + 1];
        for (ReadingsColumn column : ReadingsColumn.values()) {
            columns[column.fieldId()] = column;
        }
        return columns;
    }
}
