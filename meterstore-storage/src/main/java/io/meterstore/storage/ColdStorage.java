package io.meterstore.storage;

import com.google.inject.Injector;
import io.airlift.bootstrap.Bootstrap;
import io.airlift.bootstrap.LifeCycleManager;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Tracer;
import io.trino.filesystem.Location;
import io.trino.filesystem.TrinoFileSystemFactory;
import io.trino.spi.security.ConnectorIdentity;
import org.apache.iceberg.io.FileIO;

import java.io.Closeable;
import java.util.Map;

import static java.util.Objects.requireNonNull;

/**
 * The cold tier's storage outside a service's own injector: the archiver's command line and the tests configure it from
 * the same {@code fs.*}, {@code local.*} and {@code s3.*} properties through {@link ColdStorageModule}. Closing it
 * closes the S3 clients.
 */
public final class ColdStorage
        implements Closeable
{
    private final LifeCycleManager lifeCycleManager;
    private final TrinoFileSystemFactory fileSystemFactory;

    private ColdStorage(LifeCycleManager lifeCycleManager, TrinoFileSystemFactory fileSystemFactory)
    {
        this.lifeCycleManager = requireNonNull(lifeCycleManager, "lifeCycleManager is null");
        this.fileSystemFactory = requireNonNull(fileSystemFactory, "fileSystemFactory is null");
    }

    /**
     * The storage {@code properties} configure; properties of other modules are ignored here, because the caller
     * validates the whole file with its own Bootstrap.
     */
    public static ColdStorage create(Map<String, String> properties)
    {
        OpenTelemetry openTelemetry = OpenTelemetry.noop();
        Injector injector = new Bootstrap(
                new ColdStorageModule(),
                binder -> {
                    binder.bind(OpenTelemetry.class).toInstance(openTelemetry);
                    binder.bind(Tracer.class).toInstance(openTelemetry.getTracer("meterstore"));
                })
                .doNotInitializeLogging()
                .disableSystemProperties()
                .quiet()
                .setOptionalConfigurationProperties(properties)
                .initialize();
        return new ColdStorage(injector.getInstance(LifeCycleManager.class), injector.getInstance(TrinoFileSystemFactory.class));
    }

    public TrinoFileSystemFactory fileSystemFactory()
    {
        return fileSystemFactory;
    }

    /** An Iceberg FileIO over this storage, as {@code user}. */
    public FileIO fileIo(String user)
    {
        return fileIo(fileSystemFactory, user);
    }

    /** An Iceberg FileIO over {@code fileSystemFactory}, as {@code user}. */
    public static FileIO fileIo(TrinoFileSystemFactory fileSystemFactory, String user)
    {
        return new ForwardingFileIo(fileSystemFactory.create(ConnectorIdentity.ofUser(user)));
    }

    /**
     * The settings an operator checks when the storage holding {@code location} cannot be read or listed: the same
     * words for the archiver's {@code check} and the connector's errors.
     */
    public static String settingsToCheck(String location)
    {
        boolean s3 = Location.of(location).scheme().filter(scheme -> scheme.startsWith("s3")).isPresent();
        return s3
                ? "meterstore.iceberg.warehouse (its bucket must exist), s3.endpoint, s3.aws-access-key and s3.aws-secret-key"
                : "meterstore.iceberg.warehouse and the file system properties (fs.local.enabled, local.location)";
    }

    @Override
    public void close()
    {
        lifeCycleManager.stop();
    }
}
