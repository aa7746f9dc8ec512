package io.meterstore.trino.write;

import com.google.inject.Inject;
import io.meterstore.trino.base.PostgresConnectionPool;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.ConnectorInsertTableHandle;
import io.trino.spi.connector.ConnectorOutputTableHandle;
import io.trino.spi.connector.ConnectorPageSink;
import io.trino.spi.connector.ConnectorPageSinkId;
import io.trino.spi.connector.ConnectorPageSinkProvider;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.ConnectorTableCredentials;
import io.trino.spi.connector.ConnectorTransactionHandle;

import java.util.Optional;

import static io.trino.spi.StandardErrorCode.NOT_SUPPORTED;
import static java.util.Objects.requireNonNull;

public final class MeterstorePageSinkProvider
        implements ConnectorPageSinkProvider
{
    private final PostgresConnectionPool postgres;

    @Inject
    public MeterstorePageSinkProvider(PostgresConnectionPool postgres)
    {
        this.postgres = requireNonNull(postgres, "postgres is null");
    }

    @Override
    public ConnectorPageSink createPageSink(ConnectorTransactionHandle transactionHandle, ConnectorSession session, ConnectorOutputTableHandle outputTableHandle, Optional<ConnectorTableCredentials> tableCredentials, ConnectorPageSinkId pageSinkId)
    {
        throw new TrinoException(NOT_SUPPORTED, "CREATE TABLE AS SELECT is not supported: create the readings table with CREATE TABLE, then INSERT into its _versions table");
    }

    @Override
    public ConnectorPageSink createPageSink(ConnectorTransactionHandle transactionHandle, ConnectorSession session, ConnectorInsertTableHandle insertTableHandle, Optional<ConnectorTableCredentials> tableCredentials, ConnectorPageSinkId pageSinkId)
    {
        return new MeterstorePageSink((MeterstoreInsertTableHandle) insertTableHandle, postgres);
    }
}
