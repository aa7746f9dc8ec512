package io.meterstore.trino;

import io.trino.spi.connector.ConnectorTransactionHandle;

public enum MeterstoreTransactionHandle
        implements ConnectorTransactionHandle
{
    INSTANCE
}
