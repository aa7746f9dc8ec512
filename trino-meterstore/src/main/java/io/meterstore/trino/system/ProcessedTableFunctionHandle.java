package io.meterstore.trino.system;

import io.trino.spi.function.table.ConnectorTableFunctionHandle;
import io.trino.spi.function.table.TableFunctionProcessorProvider;

/**
 * The handle of a table function the engine runs on the workers (a polymorphic table function with a table argument),
 * which names its own processors: the function provider serves any such function without knowing it.
 */
public interface ProcessedTableFunctionHandle
        extends ConnectorTableFunctionHandle
{
    TableFunctionProcessorProvider processorProvider();
}
