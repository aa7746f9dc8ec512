package io.meterstore.trino;

import com.google.inject.Injector;
import io.airlift.bootstrap.Bootstrap;
import io.meterstore.storage.ColdStorageModule;
import io.trino.plugin.base.ConnectorContextModule;
import io.trino.plugin.base.jmx.ConnectorObjectNameGeneratorModule.ConnectorObjectNameGenerator;
import io.trino.plugin.base.jmx.MBeanServerModule;
import io.trino.spi.connector.Connector;
import io.trino.spi.connector.ConnectorContext;
import io.trino.spi.connector.ConnectorFactory;
import io.trino.spi.function.FunctionBundleFactory;
import org.weakref.jmx.ObjectNameGenerator;
import org.weakref.jmx.guice.MBeanModule;

import java.util.Map;

import static io.trino.plugin.base.Versions.checkStrictSpiVersionMatch;
import static java.util.Objects.requireNonNull;

public class MeterstoreConnectorFactory
        implements ConnectorFactory
{
    @Override
    public String getName()
    {
        return "meterstore";
    }

    @Override
    public Connector create(String catalogName, Map<String, String> config, ConnectorContext context)
    {
        requireNonNull(catalogName, "catalogName is null");
        requireNonNull(config, "config is null");
        requireNonNull(context, "context is null");
        checkStrictSpiVersionMatch(context, this);

        Bootstrap app = new Bootstrap(
                "io.trino.bootstrap.catalog." + catalogName,
                new ConnectorContextModule(catalogName, context),
                // JMX as Trino's connectors have it, beans named after the catalog (their jmx.base-name key is left
                // out: it renames only beans of the connector's own packages, and MeterStore's export none)
                new MBeanModule(),
                new MBeanServerModule(),
                binder -> binder.bind(ObjectNameGenerator.class).toInstance(new ConnectorObjectNameGenerator("io.meterstore.trino", "meterstore", catalogName)),
                new ColdStorageModule(),
                new CoordinatorFileCacheModule(context.getCurrentNode().isCoordinator()),
                new MeterstoreModule(),
                // the engine builds the connector's functions from their annotated classes
                binder -> binder.bind(FunctionBundleFactory.class).toInstance(context.getFunctionBundleFactory()));

        Injector injector = app
                .doNotInitializeLogging()
                .disableSystemProperties()
                .setRequiredConfigurationProperties(config)
                .initialize();

        return injector.getInstance(MeterstoreConnector.class);
    }
}
