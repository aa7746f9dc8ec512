package io.meterstore.trino.completeness;

import io.trino.spi.function.table.ConnectorTableFunctionHandle;

import static java.util.Objects.requireNonNull;

/** What analysing a {@code meter_completeness} call produced: the table handle the metadata hands to the engine. */
public record CompletenessFunctionHandle(CompletenessTableHandle table)
        implements ConnectorTableFunctionHandle
{
    public CompletenessFunctionHandle
    {
        requireNonNull(table, "table is null");
    }
}
