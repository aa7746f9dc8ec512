package io.meterstore.trino;

import com.google.inject.Binder;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import io.airlift.configuration.AbstractConfigurationAwareModule;
import io.meterstore.trino.base.ForColdReads;
import io.meterstore.trino.base.MeterstoreConfig;
import io.opentelemetry.api.trace.Tracer;
import io.trino.filesystem.TrinoFileSystemFactory;
import io.trino.filesystem.TrinoInputFile;
import io.trino.filesystem.cache.CacheFileSystemFactory;
import io.trino.filesystem.cache.TrinoFileSystemCache;
import io.trino.filesystem.memory.MemoryFileSystemCache;
import io.trino.filesystem.memory.MemoryFileSystemCacheModule;

import java.util.Optional;

import static com.google.inject.multibindings.OptionalBinder.newOptionalBinder;

/**
 * On the coordinator, the cold tier's files of at most {@code fs.memory-cache.max-content-length} (8 MB) stay in memory
 * once read (at most {@code fs.memory-cache.max-size}, 2 % of the heap, each for {@code fs.memory-cache.ttl}, 1 h), as
 * Trino's Iceberg connector keeps them with {@code iceberg.metadata-cache.enabled}: the tables' metadata files,
 * manifest lists and manifests (Iceberg's manifest cache is then off), and, on a coordinator that also runs splits,
 * small data and delete files, which on object storage would otherwise cost a request each for every query. Only reads
 * through {@link ForColdReads} use it; planning's footer
 * reads (whose parsed footers {@code RowGroupKeys} keeps) and every write go to the storage. Workers read the storage.
 * {@code meterstore.coordinator-file-cache.enabled=false} turns it off. Its hit and request counts are exported over JMX as
 * Trino's Iceberg connector exports its own: {@code io.trino.filesystem.memory:type=MemoryFileSystemCache,name=<catalog>}.
 */
final class CoordinatorFileCacheModule
        extends AbstractConfigurationAwareModule
{
    private final boolean coordinator;

    CoordinatorFileCacheModule(boolean coordinator)
    {
        this.coordinator = coordinator;
    }

    @Override
    protected void setup(Binder binder)
    {
        boolean enabled = coordinator && buildConfigObject(MeterstoreConfig.class).isCoordinatorFileCacheEnabled();
        // Trino's own module: the sizing keys are accepted on every node and with the cache off, so one catalog file
        // serves all nodes; where the cache is on, it is bound once and exported over JMX
        install(new MemoryFileSystemCacheModule(enabled));
        newOptionalBinder(binder, TrinoFileSystemCache.class);
        if (enabled) {
            newOptionalBinder(binder, TrinoFileSystemCache.class).setBinding().to(MemoryFileSystemCache.class);
        }
    }

    @Provides
    @Singleton
    @ForColdReads
    public static TrinoFileSystemFactory coldReads(TrinoFileSystemFactory storage, Optional<TrinoFileSystemCache> cache, Tracer tracer)
    {
        return cache.<TrinoFileSystemFactory>map(files -> new CacheFileSystemFactory(tracer, storage, files, CoordinatorFileCacheModule::cacheKey))
                .orElse(storage);
    }

    // a location's path, as Trino's Iceberg connector keys its files: MeterStore writes every file once, under a name no
    // other file had, and the cache's expire(location) matches keys by the location's path
    private static Optional<String> cacheKey(TrinoInputFile file)
    {
        return Optional.of(file.location().path());
    }
}
