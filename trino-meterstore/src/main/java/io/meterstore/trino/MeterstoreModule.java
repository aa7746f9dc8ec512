package io.meterstore.trino;

import com.google.inject.Binder;
import com.google.inject.Key;
import com.google.inject.Module;
import com.google.inject.Provides;
import com.google.inject.Scopes;
import com.google.inject.Singleton;
import io.meterstore.core.TiersConfig;
import io.meterstore.trino.base.ForColdReads;
import io.meterstore.trino.base.MeterstoreConfig;
import io.meterstore.trino.base.MeterstoreTables;
import io.meterstore.trino.base.PostgresConnectionPool;
import io.meterstore.trino.cold.ColdPageSourceProvider;
import io.meterstore.trino.cold.ColdSplitPlanner;
import io.meterstore.trino.completeness.ForCompleteness;
import io.meterstore.trino.completeness.MeterCompletenessFunction;
import io.meterstore.trino.consumption.RegisterConsumptionFunction;
import io.meterstore.trino.hot.QuerySnapshots;
import io.meterstore.trino.system.MeterstoreFunctions;
import io.meterstore.trino.system.LiftErasureProcedure;
import io.meterstore.trino.system.MeterstoreSystemTables;
import io.meterstore.trino.write.ColdRedeliveryLookup;
import io.meterstore.trino.write.ErasureWriter;
import io.meterstore.trino.write.InsertWriter;
import io.meterstore.trino.write.MeterstorePageSinkProvider;
import io.trino.filesystem.TrinoFileSystemFactory;
import io.trino.filesystem.cache.TrinoFileSystemCache;
import io.trino.parquet.ParquetReaderOptions;
import io.trino.spi.catalog.CatalogName;
import io.trino.spi.function.FunctionBundleFactory;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;

import static io.airlift.concurrent.Threads.daemonThreadsNamed;
import static io.airlift.bootstrap.ClosingBinder.closingBinder;
import static io.airlift.configuration.ConfigBinder.configBinder;
import static java.util.concurrent.Executors.newCachedThreadPool;

public class MeterstoreModule
        implements Module
{
    @Override
    public void configure(Binder binder)
    {
        // the keys shared with the archiver, then the connector's own
        configBinder(binder).bindConfig(TiersConfig.class);
        configBinder(binder).bindConfig(MeterstoreConfig.class);
        binder.bind(MeterstoreConnector.class).in(Scopes.SINGLETON);
        // one per transaction: MeterstoreConnector.getMetadata
        binder.bind(MeterstoreMetadata.class);
        binder.bind(MeterstoreSplitManager.class).in(Scopes.SINGLETON);
        binder.bind(MeterstorePageSourceProvider.class).in(Scopes.SINGLETON);
        binder.bind(MeterstoreTables.class).in(Scopes.SINGLETON);
        binder.bind(PostgresConnectionPool.class).in(Scopes.SINGLETON);
        binder.bind(QuerySnapshots.class).in(Scopes.SINGLETON);
        binder.bind(MeterstoreTableStatistics.class).in(Scopes.SINGLETON);
        binder.bind(MeterstorePageSinkProvider.class).in(Scopes.SINGLETON);
        binder.bind(InsertWriter.class).in(Scopes.SINGLETON);
        binder.bind(ErasureWriter.class).in(Scopes.SINGLETON);
        binder.bind(ColdRedeliveryLookup.class).in(Scopes.SINGLETON);
        binder.bind(MeterstoreSessionProperties.class).in(Scopes.SINGLETON);
        binder.bind(MeterstoreTableProperties.class).in(Scopes.SINGLETON);
        binder.bind(MeterCompletenessFunction.class).in(Scopes.SINGLETON);
        binder.bind(RegisterConsumptionFunction.class).in(Scopes.SINGLETON);
        binder.bind(MeterstoreSystemTables.class).in(Scopes.SINGLETON);
        binder.bind(LiftErasureProcedure.class).in(Scopes.SINGLETON);
        closingBinder(binder).registerExecutor(Key.get(ExecutorService.class, ForCompleteness.class));
    }

    @Provides
    @Singleton
    @ForCompleteness
    public static ExecutorService completenessExecutor(CatalogName catalogName)
    {
        // threads only while reports run; each report bounds how many of its reads run at once
        return newCachedThreadPool(daemonThreadsNamed("meterstore-completeness-" + catalogName + "-%s"));
    }

    @Provides
    @Singleton
    public static MeterstoreFunctions functions(FunctionBundleFactory bundleFactory, MeterCompletenessFunction completenessFunction, RegisterConsumptionFunction consumptionFunction)
    {
        return new MeterstoreFunctions(bundleFactory, List.of(completenessFunction, consumptionFunction));
    }

    @Provides
    @Singleton
    public static ColdSplitPlanner coldSplitPlanner(TrinoFileSystemFactory fileSystemFactory)
    {
        return new ColdSplitPlanner(ColdSplitPlanner.DEFAULT_TARGET_SPLIT_SIZE, fileSystemFactory, ParquetReaderOptions.defaultOptions());
    }

    @Provides
    @Singleton
    public static ColdPageSourceProvider coldPageSourceProvider(@ForColdReads TrinoFileSystemFactory fileSystemFactory, Optional<TrinoFileSystemCache> cache)
    {
        return new ColdPageSourceProvider(fileSystemFactory, ParquetReaderOptions.defaultOptions(), cache);
    }
}
