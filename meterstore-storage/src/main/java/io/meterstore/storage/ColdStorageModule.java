package io.meterstore.storage;

import com.google.common.collect.ImmutableList;
import com.google.inject.Binder;
import com.google.inject.Key;
import com.google.inject.Provides;
import com.google.inject.Singleton;
import com.google.inject.multibindings.MapBinder;
import io.airlift.configuration.AbstractConfigurationAwareModule;
import io.opentelemetry.api.trace.Tracer;
import io.trino.filesystem.Location;
import io.trino.filesystem.TrinoFileSystemFactory;
import io.trino.filesystem.local.LocalFileSystemConfig;
import io.trino.filesystem.local.LocalFileSystemFactory;
import io.trino.filesystem.manager.FileSystemConfig;
import io.trino.filesystem.s3.FileSystemS3;
import io.trino.filesystem.s3.S3FileSystemModule;
import io.trino.filesystem.switching.SwitchingFileSystemFactory;
import io.trino.filesystem.tracing.TracingFileSystemFactory;
import io.trino.filesystem.tracking.TrackingFileSystemFactory;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static io.airlift.configuration.ConfigBinder.configBinder;

/**
 * The cold tier's storage, configured as in Trino's Iceberg connector: {@code fs.s3.enabled} with the {@code s3.*}
 * properties, {@code fs.local.enabled} with {@code local.location} (the older names {@code fs.native-s3.enabled} and
 * {@code fs.native-local.enabled} are accepted with a warning). The connector (Parquet reader, INSERT, its catalogue's
 * FileIO) and the archiver (archival, its catalogue's FileIO) both bind their {@link TrinoFileSystemFactory} here, so a
 * key means the same in both files. A configuration that sets no local file system property reads {@code file:}
 * locations from the root, as MeterStore always has, so existing local warehouses need no change.
 * <p>
 * Binds what Trino's {@code FileSystemModule} binds for the local and S3 file systems, without its Hadoop, Azure, GCS
 * and cache loaders (whose libraries neither MeterStore service ships) and without the connector context it needs, which
 * the archiver has not.
 */
public class ColdStorageModule
        extends AbstractConfigurationAwareModule
{
    private static final List<String> LOCAL_PROPERTIES = ImmutableList.of("fs.local.enabled", "fs.native-local.enabled");
    private static final List<String> S3_SCHEMES = ImmutableList.of("s3", "s3a", "s3n");

    @Override
    protected void setup(Binder binder)
    {
        FileSystemConfig config = buildConfigObject(FileSystemConfig.class);
        // the services ship the local and S3 file systems only: the others would fail later, with a missing class
        boolean refused = refuse(binder, config.isAzureEnabled(), "fs.azure.enabled", "fs.native-azure.enabled")
                | refuse(binder, config.isGcsEnabled(), "fs.gcs.enabled", "fs.native-gcs.enabled")
                | refuse(binder, config.isHadoopEnabled(), "fs.hadoop.enabled")
                | refuse(binder, config.isCacheEnabled(), "fs.cache.enabled");
        if (refused) {
            return;
        }

        MapBinder<String, TrinoFileSystemFactory> factories = MapBinder.newMapBinder(binder, String.class, TrinoFileSystemFactory.class);
        if (config.isS3Enabled()) {
            install(new S3FileSystemModule());
            for (String scheme : S3_SCHEMES) {
                factories.addBinding(scheme).to(Key.get(TrinoFileSystemFactory.class, FileSystemS3.class));
            }
        }
        if (LOCAL_PROPERTIES.stream().noneMatch(getProperties()::containsKey)) {
            // warehouses are absolute file:/// URIs, resolved against the root
            TrinoFileSystemFactory root = new LocalFileSystemFactory(Path.of("/"));
            factories.addBinding("file").toInstance(root);
            factories.addBinding("local").toInstance(root);
        }
        else if (config.isLocalEnabled()) {
            configBinder(binder).bindConfig(LocalFileSystemConfig.class);
            factories.addBinding("file").to(LocalFileSystemFactory.class);
            factories.addBinding("local").to(LocalFileSystemFactory.class);
        }
    }

    @Provides
    @Singleton
    public static TrinoFileSystemFactory createFileSystemFactory(FileSystemConfig config, Map<String, TrinoFileSystemFactory> factories, Tracer tracer)
    {
        TrinoFileSystemFactory factory = new SwitchingFileSystemFactory(location -> location.scheme()
                .map(factories::get)
                .orElseThrow(() -> new IllegalArgumentException(unsupported(location))));
        factory = new TracingFileSystemFactory(tracer, factory);
        if (config.isTrackingEnabled()) {
            factory = new TrackingFileSystemFactory(factory);
        }
        return factory;
    }

    private static String unsupported(Location location)
    {
        return "No file system is configured for location '%s': enable it with fs.s3.enabled (s3://) or fs.local.enabled (file://)".formatted(location);
    }

    /** @param names the property's names, current first, as the configuration may spell it */
    private boolean refuse(Binder binder, boolean enabled, String... names)
    {
        if (enabled) {
            String property = Stream.of(names).filter(getProperties()::containsKey).findFirst().orElse(names[0]);
            binder.addError("MeterStore reads and writes the cold tier on local or S3-compatible storage only: remove '%s' from the configuration, and use fs.s3.enabled or fs.local.enabled", property);
        }
        return enabled;
    }
}
