package io.meterstore.trino;

import com.google.common.annotations.VisibleForTesting;
import com.google.common.collect.ImmutableSet;
import com.google.inject.Inject;
import com.google.inject.Injector;
import com.google.inject.Provider;
import io.airlift.bootstrap.LifeCycleManager;
import io.meterstore.trino.completeness.MeterCompletenessFunction;
import io.meterstore.trino.consumption.RegisterConsumptionFunction;
import io.meterstore.trino.system.LiftErasureProcedure;
import io.meterstore.trino.system.MeterstoreFunctions;
import io.meterstore.trino.write.MeterstorePageSinkProvider;
import io.trino.spi.connector.Connector;
import io.trino.spi.connector.ConnectorCapabilities;
import io.trino.spi.connector.ConnectorMetadata;
import io.trino.spi.connector.ConnectorPageSinkProvider;
import io.trino.spi.connector.ConnectorPageSourceProvider;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.ConnectorSplitManager;
import io.trino.spi.connector.ConnectorTransactionHandle;
import io.trino.spi.function.FunctionProvider;
import io.trino.spi.function.table.ConnectorTableFunction;
import io.trino.spi.procedure.Procedure;
import io.trino.spi.session.PropertyMetadata;
import io.trino.spi.transaction.IsolationLevel;

import java.util.List;
import java.util.Optional;
import java.util.Set;

import static java.util.Objects.requireNonNull;

public class MeterstoreConnector
        implements Connector
{
    private final Injector injector;
    private final LifeCycleManager lifeCycleManager;
    private final Provider<MeterstoreMetadata> metadata;
    private final MeterstoreSplitManager splitManager;
    private final MeterstorePageSourceProvider pageSourceProvider;
    private final MeterstorePageSinkProvider pageSinkProvider;
    private final MeterstoreSessionProperties sessionProperties;
    private final MeterstoreTableProperties tableProperties;
    private final MeterstoreFunctions functions;
    private final Set<ConnectorTableFunction> tableFunctions;
    private final Set<Procedure> procedures;

    @Inject
    public MeterstoreConnector(
            Injector injector,
            LifeCycleManager lifeCycleManager,
            Provider<MeterstoreMetadata> metadata,
            MeterstoreSplitManager splitManager,
            MeterstorePageSourceProvider pageSourceProvider,
            MeterstorePageSinkProvider pageSinkProvider,
            MeterstoreSessionProperties sessionProperties,
            MeterstoreTableProperties tableProperties,
            MeterstoreFunctions functions,
            MeterCompletenessFunction completenessFunction,
            RegisterConsumptionFunction consumptionFunction,
            LiftErasureProcedure liftErasure)
    {
        this.injector = requireNonNull(injector, "injector is null");
        this.procedures = ImmutableSet.of(requireNonNull(liftErasure, "liftErasure is null").get());
        this.lifeCycleManager = requireNonNull(lifeCycleManager, "lifeCycleManager is null");
        this.metadata = requireNonNull(metadata, "metadata is null");
        this.splitManager = requireNonNull(splitManager, "splitManager is null");
        this.pageSourceProvider = requireNonNull(pageSourceProvider, "pageSourceProvider is null");
        this.pageSinkProvider = requireNonNull(pageSinkProvider, "pageSinkProvider is null");
        this.sessionProperties = requireNonNull(sessionProperties, "sessionProperties is null");
        this.tableProperties = requireNonNull(tableProperties, "tableProperties is null");
        this.functions = requireNonNull(functions, "functions is null");
        this.tableFunctions = ImmutableSet.of(
                requireNonNull(completenessFunction, "completenessFunction is null"),
                requireNonNull(consumptionFunction, "consumptionFunction is null"));
    }

    /** The connector's services, for a test that looks at their state (the connection pool's queue), as Trino's Iceberg connector gives its own. */
    @VisibleForTesting
    public Injector getInjector()
    {
        return injector;
    }

    @Override
    public ConnectorTransactionHandle beginTransaction(IsolationLevel isolationLevel, boolean readOnly, boolean autoCommit)
    {
        return MeterstoreTransactionHandle.INSTANCE;
    }

    @Override
    public ConnectorMetadata getMetadata(ConnectorSession session, ConnectorTransactionHandle transactionHandle)
    {
        // Trino asks once per transaction; each gets its own, which keeps what its INSERTs wrote for the query's metrics
        return metadata.get();
    }

    @Override
    public ConnectorSplitManager getSplitManager()
    {
        return splitManager;
    }

    @Override
    public ConnectorPageSourceProvider getPageSourceProvider()
    {
        return pageSourceProvider;
    }

    @Override
    public ConnectorPageSinkProvider getPageSinkProvider()
    {
        return pageSinkProvider;
    }

    @Override
    public Optional<FunctionProvider> getFunctionProvider()
    {
        return Optional.of(functions.provider());
    }

    @Override
    public Set<ConnectorTableFunction> getTableFunctions()
    {
        return tableFunctions;
    }

    @Override
    public Set<Procedure> getProcedures()
    {
        return procedures;
    }

    @Override
    public List<PropertyMetadata<?>> getSessionProperties()
    {
        return sessionProperties.getSessionProperties();
    }

    /** CREATE TABLE may write NOT NULL where a readings column is stored for every row. */
    @Override
    public Set<ConnectorCapabilities> getCapabilities()
    {
        return ImmutableSet.of(ConnectorCapabilities.NOT_NULL_COLUMN_CONSTRAINT);
    }

    @Override
    public List<PropertyMetadata<?>> getTableProperties()
    {
        return tableProperties.getTableProperties();
    }

    @Override
    public void shutdown()
    {
        lifeCycleManager.stop();
    }
}
