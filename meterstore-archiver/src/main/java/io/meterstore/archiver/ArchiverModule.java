package io.meterstore.archiver;

import com.google.inject.Binder;
import com.google.inject.Scopes;
import com.google.inject.multibindings.MapBinder;
import io.airlift.configuration.AbstractConfigurationAwareModule;
import io.meterstore.archiver.service.ArchiverInfoResource;
import io.meterstore.archiver.service.ArchiverScheduler;
import io.meterstore.archiver.service.ArchiverStats;
import io.meterstore.archiver.service.ArchiverVersion;
import io.meterstore.archiver.service.SchedulerConfig;
import io.meterstore.archiver.service.ShutdownAction;
import io.meterstore.archiver.service.ShutdownHandler;
import io.meterstore.archiver.service.TableArchiverStats;
import io.meterstore.archiver.tables.ArchiverConfig;
import io.meterstore.archiver.tables.ArchiverTables;
import io.meterstore.core.TiersConfig;
import io.meterstore.storage.ColdStorageModule;
import io.trino.filesystem.manager.FileSystemConfig;

import java.time.Clock;
import java.time.InstantSource;
import java.util.Optional;

import static com.google.inject.multibindings.MapBinder.newMapBinder;
import static io.airlift.configuration.ConfigBinder.configBinder;
import static io.airlift.jaxrs.JaxrsBinder.jaxrsBinder;
import static java.util.Objects.requireNonNull;
import static org.weakref.jmx.guice.ExportBinder.newExporter;

/**
 * The archiver service: the tables of the configuration, a scheduler running their cycles, the statistics exported
 * to JMX and {@code /metrics}, and {@code /v1/info}. Reads the configured tables while binding, because each table's
 * statistics are an MBean of their own.
 */
public class ArchiverModule
        extends AbstractConfigurationAwareModule
{
    private final InstantSource clock;
    private final ShutdownAction shutdownAction;

    public ArchiverModule()
    {
        this(Clock.systemUTC(), ShutdownAction.EXIT);
    }

    public ArchiverModule(InstantSource clock, ShutdownAction shutdownAction)
    {
        this.clock = requireNonNull(clock, "clock is null");
        this.shutdownAction = requireNonNull(shutdownAction, "shutdownAction is null");
    }

    @Override
    protected void setup(Binder binder)
    {
        TiersConfig tiers = buildConfigObject(TiersConfig.class);
        ArchiverConfig archiver = buildConfigObject(ArchiverConfig.class);
        // checks across the shared keys and the archiver's own, which no single bean's validation sees
        archiver.violations(tiers).forEach(violation -> binder.addError("%s", violation));
        configBinder(binder).bindConfig(SchedulerConfig.class);
        // the cold tier's storage, configured by the connector's fs.* and s3.* keys
        install(new ColdStorageModule());
        boolean s3Enabled = buildConfigObject(FileSystemConfig.class).isS3Enabled();
        // every command and the service refuse a warehouse the archiver cannot write, before anything touches it
        Optional.ofNullable(tiers.getIcebergWarehouse()).flatMap(warehouse -> ArchiverStorage.unwritable(warehouse, s3Enabled)).ifPresent(refusal -> binder.addError("%s", refusal));

        binder.bind(InstantSource.class).toInstance(clock);
        binder.bind(ShutdownAction.class).toInstance(shutdownAction);
        binder.bind(ArchiverVersion.class).toInstance(ArchiverVersion.CURRENT);

        binder.bind(ArchiverTables.class).in(Scopes.SINGLETON);
        binder.bind(ArchiverScheduler.class).in(Scopes.SINGLETON);
        binder.bind(ShutdownHandler.class).in(Scopes.SINGLETON);

        MapBinder<String, TableArchiverStats> tableStats = newMapBinder(binder, String.class, TableArchiverStats.class);
        for (String table : tiers.getTables()) {
            tableStats.addBinding(table).toInstance(new TableArchiverStats(tiers.getSchema() + "." + table, clock));
        }
        newExporter(binder).exportMap(TableArchiverStats.class).withGeneratedName();
        binder.bind(ArchiverStats.class).in(Scopes.SINGLETON);
        newExporter(binder).export(ArchiverStats.class).withGeneratedName();

        jaxrsBinder(binder).bind(ArchiverInfoResource.class);
    }
}
