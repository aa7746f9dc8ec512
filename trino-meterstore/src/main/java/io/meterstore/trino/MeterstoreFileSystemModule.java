package io.meterstore.trino;

import com.google.common.collect.ImmutableList;
import com.google.inject.Binder;
import com.google.inject.multibindings.MapBinder;
import io.airlift.configuration.AbstractConfigurationAwareModule;
import io.trino.filesystem.TrinoFileSystemFactory;
import io.trino.filesystem.local.LocalFileSystemFactory;
import io.trino.filesystem.manager.FileSystemConfig;
import io.trino.filesystem.manager.FileSystemModule;
import io.trino.spi.connector.ConnectorContext;

import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static java.util.Objects.requireNonNull;

/**
 * The cold tier's storage, configured as in Trino's Iceberg connector: {@code fs.s3.enabled} with the
 * {@code s3.*} properties, {@code fs.local.enabled} with {@code local.location} (the older names
 * {@code fs.native-s3.enabled} and {@code fs.native-local.enabled} are accepted with a warning). The Parquet reader and the
 * Iceberg catalogue's FileIO both use the file system bound here. A catalog that sets no local file system property
 * reads {@code file:} locations from the root, as MeterStore always has, so existing local warehouses need no change.
 */
public class MeterstoreFileSystemModule
        extends AbstractConfigurationAwareModule
{
    private static final List<String> LOCAL_PROPERTIES = ImmutableList.of("fs.local.enabled", "fs.native-local.enabled");

    private final String catalogName;
    private final ConnectorContext context;

    public MeterstoreFileSystemModule(String catalogName, ConnectorContext context)
    {
        this.catalogName = requireNonNull(catalogName, "catalogName is null");
        this.context = requireNonNull(context, "context is null");
    }

    @Override
    protected void setup(Binder binder)
    {
        FileSystemConfig config = buildConfigObject(FileSystemConfig.class);
        // the plugin ships the local and S3 file systems only: the others would fail later, with a missing class
        boolean refused = refuse(binder, config.isAzureEnabled(), "fs.azure.enabled", "fs.native-azure.enabled")
                | refuse(binder, config.isGcsEnabled(), "fs.gcs.enabled", "fs.native-gcs.enabled")
                | refuse(binder, config.isHadoopEnabled(), "fs.hadoop.enabled")
                | refuse(binder, config.isCacheEnabled(), "fs.cache.enabled");
        if (refused) {
            return;
        }
        install(new FileSystemModule(catalogName, context, false));

        if (LOCAL_PROPERTIES.stream().noneMatch(getProperties()::containsKey)) {
            // warehouses are absolute file:/// URIs, resolved against the root
            TrinoFileSystemFactory root = new LocalFileSystemFactory(Path.of("/"));
            MapBinder<String, TrinoFileSystemFactory> factories = MapBinder.newMapBinder(binder, String.class, TrinoFileSystemFactory.class);
            factories.addBinding("file").toInstance(root);
            factories.addBinding("local").toInstance(root);
        }
    }

    /** @param names the property's names, current first, as the catalog may spell it */
    private boolean refuse(Binder binder, boolean enabled, String... names)
    {
        if (enabled) {
            String property = Stream.of(names).filter(getProperties()::containsKey).findFirst().orElse(names[0]);
            binder.addError("MeterStore reads the cold tier from local or S3-compatible storage only: remove '%s' from the catalog, and use fs.s3.enabled or fs.local.enabled", property);
        }
        return enabled;
    }
}
