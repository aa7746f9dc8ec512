package io.meterstore.trino.base;

import io.trino.spi.connector.ColumnHandle;

import static java.util.Objects.requireNonNull;

/** A hidden column of a readings table: never stored, its value is the split's tier or the table handle's W. */
public record HiddenColumnHandle(HiddenColumn column)
        implements ColumnHandle
{
    public HiddenColumnHandle
    {
        requireNonNull(column, "column is null");
    }
}
