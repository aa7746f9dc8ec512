package io.meterstore.trino.base;

import io.meterstore.core.ReadingsColumn;
import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.connector.ColumnMetadata;
import io.trino.spi.type.Type;

import static java.util.Objects.requireNonNull;

/** A column of a readings table; {@code column} names its place in the one schema definition. */
public record MeterstoreColumnHandle(ReadingsColumn column, Type type)
        implements ColumnHandle
{
    public MeterstoreColumnHandle
    {
        requireNonNull(column, "column is null");
        requireNonNull(type, "type is null");
    }

    public String name()
    {
        return column.columnName();
    }

    public ColumnMetadata toColumnMetadata()
    {
        return ColumnMetadata.builder()
                .setName(column.columnName())
                .setType(type)
                // stored for every row, but NULL on INSERT asks MeterStore to fill them in: the statement's start, the calendar's day;
                // "to" is NULL in a point table and required in an interval one, which the write path refuses naming the table's model
                .setNullable(column.nullable() || column == ReadingsColumn.RECORDED_AT || column == ReadingsColumn.BALANCING_DAY || column == ReadingsColumn.TO)
                .build();
    }
}
