package io.meterstore.trino.completeness;

import io.trino.spi.connector.ColumnHandle;

import static java.util.Objects.requireNonNull;

public record CompletenessColumnHandle(CompletenessColumn column)
        implements ColumnHandle
{
    public CompletenessColumnHandle
    {
        requireNonNull(column, "column is null");
    }
}
