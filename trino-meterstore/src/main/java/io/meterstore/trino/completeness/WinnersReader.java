package io.meterstore.trino.completeness;

import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.ConnectorSplit;

import java.util.List;

/** Opens the read of one split of a table's winners, as a query of {@code readings} would read it. */
@FunctionalInterface
public interface WinnersReader
{
    ConnectorPageSource open(ConnectorSplit split, List<MeterstoreColumnHandle> columns);
}
