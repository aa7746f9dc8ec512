package io.meterstore.trino;

import com.google.inject.Binder;
import com.google.inject.Scopes;
import io.airlift.configuration.AbstractConfigurationAwareModule;
import io.meterstore.trino.base.MeterstoreConfig;
import io.trino.filesystem.cache.TrinoFileSystemCache;
import io.trino.filesystem.memory.MemoryFileSystemCache;
import io.trino.filesystem.memory.MemoryFileSystemCacheConfig;

import static com.google.inject.multibindings.OptionalBinder.newOptionalBinder;
import static io.airlift.configuration.ConfigBinder.configBinder;

/**
 * On the coordinator, the cold tier's files of at most {@code fs.memory-cache.max-content-length} (8 MB) stay in memory
 * once read (at most {@code fs.memory-cache.max-size}, 2 % of the heap, each for {@code fs.memory-cache.ttl}, 1 h), as
 * Trino's Iceberg connector keeps them with {@code iceberg.metadata-cache.enabled}: the footers that plan {@code readings}
 * and, on a coordinator that also runs splits, small data files, which on object storage would otherwise cost a
 * request each for every query. Workers read through to the storage. {@code meterstore.coordinator-file-cache.enabled=false}
 * turns it off.
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
        // the sizing keys are accepted on every node and with the cache off, so one catalog file serves all nodes
        configBinder(binder).bindConfig(MemoryFileSystemCacheConfig.class);
        if (coordinator && buildConfigObject(MeterstoreConfig.class).isCoordinatorFileCacheEnabled()) {
            newOptionalBinder(binder, TrinoFileSystemCache.class).setBinding().to(MemoryFileSystemCache.class).in(Scopes.SINGLETON);
        }
    }
}
