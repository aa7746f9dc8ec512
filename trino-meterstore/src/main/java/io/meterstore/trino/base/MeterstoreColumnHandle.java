package io.meterstore.trino.base;

import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.TableColumn;
import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.connector.ColumnMetadata;
import io.trino.spi.type.Type;

import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * A stored column of a readings table: one of the readings columns, or an attribute column its shape declares
 * ({@link io.meterstore.core.TableColumns}); {@code column} names its place in the table's schema in both tiers.
 */
public record MeterstoreColumnHandle(TableColumn column, Type type)
        implements ColumnHandle
{
    public MeterstoreColumnHandle
    {
        requireNonNull(column, "column is null");
        requireNonNull(type, "type is null");
    }

    public String name()
    {
        return column.name();
    }

    /** The readings column this is; empty for an attribute column. */
    public Optional<ReadingsColumn> readingsColumn()
    {
        return column.readingsColumn();
    }

    /** Whether this is {@code readingsColumn}. */
    public boolean is(ReadingsColumn readingsColumn)
    {
        return column.is(readingsColumn);
    }

    /** Whether this is an attribute column: carried with a reading, never read by the resolution nor pushed into a tier's read. */
    public boolean attributeColumn()
    {
        return column.attributeColumn();
    }

    public ColumnMetadata toColumnMetadata()
    {
        return ColumnMetadata.builder()
                .setName(column.name())
                .setType(type)
                // stored for every row, but NULL on INSERT asks MeterStore to fill them in: the statement's start, the calendar's day;
                // "to" is NULL in a point table and required in an interval one, which the write path refuses naming the table's model;
                // melo_id and the identity columns are required where the table's key holds them, which the write path refuses naming the key
                .setNullable(column.nullable() || is(ReadingsColumn.RECORDED_AT) || is(ReadingsColumn.BALANCING_DAY) || is(ReadingsColumn.TO)
                        || is(ReadingsColumn.MELO_ID) || column.attributeColumn())
                .build();
    }
}
