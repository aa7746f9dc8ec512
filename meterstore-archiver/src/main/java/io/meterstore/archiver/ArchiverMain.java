package io.meterstore.archiver;

import com.google.common.collect.ImmutableList;
import com.google.inject.Injector;
import com.google.inject.Module;
import io.airlift.bootstrap.ApplicationConfigurationException;
import io.airlift.bootstrap.Bootstrap;
import io.airlift.http.server.HttpServerModule;
import io.airlift.jaxrs.JaxrsModule;
import io.airlift.jmx.JmxModule;
import io.airlift.json.JsonModule;
import io.airlift.log.LogJmxModule;
import io.airlift.log.Logger;
import io.airlift.node.NodeModule;
import io.airlift.openmetrics.JmxOpenMetricsModule;
import io.airlift.tracing.TracingModule;
import io.meterstore.archiver.service.ArchiverVersion;
import io.meterstore.archiver.service.ShutdownHandler;
import org.weakref.jmx.guice.MBeanModule;
import sun.misc.Signal;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Starts the archiver service, airlift style: {@code java -Dconfig=etc/archiver.properties io.meterstore.archiver.ArchiverMain}.
 * The command line's {@code run} starts the same service from {@code --config}.
 */
public final class ArchiverMain
{
    public static final String DEFAULT_ENVIRONMENT = "meterstore";
    private static final Logger log = Logger.get(ArchiverMain.class);

    private ArchiverMain() {}

    public static void main(String[] args)
    {
        try {
            start(Optional.empty());
        }
        catch (ApplicationConfigurationException e) {
            System.err.println(e.getMessage());
            System.exit(100);
        }
        catch (Throwable e) {
            log.error(e);
            System.exit(1);
        }
    }

    /**
     * Starts the service with {@code properties}, or with the file named by {@code -Dconfig} when empty; returns once
     * it serves. Its threads keep the JVM alive until a shutdown ends it.
     */
    public static Injector start(Optional<Map<String, String>> properties)
    {
        return start(properties, new ArchiverModule());
    }

    /** Starts the service as a process of its own: {@link #shutDownOnSignal signals} shut it down gracefully. */
    public static Injector start(Optional<Map<String, String>> properties, ArchiverModule archiverModule)
    {
        Injector injector = bootstrap(properties, archiverModule).initialize();
        shutDownOnSignal(injector.getInstance(ShutdownHandler.class));
        log.info("======== ARCHIVER %s STARTED ========", ArchiverVersion.CURRENT);
        return injector;
    }

    /**
     * SIGTERM (docker stop, Kubernetes, systemd) and SIGINT (Ctrl-C) shut the service down as {@code PUT /v1/info/state}
     * does: the cycles in flight finish their step while the service still logs and answers HTTP, then the process
     * exits with 0. The JVM's own handling would run the shutdown hooks at once, which stop the HTTP server and
     * java.util.logging while the cycles still run, and exit with 143. A repeated signal changes nothing; SIGKILL ends
     * the process at once, which is safe (the next run finishes the window).
     */
    private static void shutDownOnSignal(ShutdownHandler shutdown)
    {
        for (String name : List.of("TERM", "INT")) {
            try {
                Signal.handle(new Signal(name), _ -> shutdown.requestShutdown());
            }
            catch (IllegalArgumentException e) {
                // the JVM reserves it (-Xrs): its shutdown hooks stop the service instead
                log.warn("Cannot handle SIG%s: %s; shut the service down with PUT /v1/info/state", name, e.getMessage());
            }
        }
    }

    /**
     * The service's Bootstrap; the command line validates a configuration with it ({@link Bootstrap#configure()}), so
     * a file {@code check} accepts is one {@code run} accepts.
     */
    public static Bootstrap bootstrap(Optional<Map<String, String>> properties, ArchiverModule archiverModule)
    {
        Bootstrap app = new Bootstrap(modules(archiverModule))
                // one archiver per deployment needs no environment name to tell nodes apart
                .setOptionalConfigurationProperty("node.environment", DEFAULT_ENVIRONMENT);
        properties.ifPresent(app::setRequiredConfigurationProperties);
        return app;
    }

    private static List<Module> modules(ArchiverModule archiverModule)
    {
        return ImmutableList.of(
                new NodeModule(),
                new HttpServerModule(),
                new JsonModule(),
                new JaxrsModule(),
                new MBeanModule(),
                new JmxModule(),
                new JmxOpenMetricsModule(),
                new LogJmxModule(),
                new TracingModule("meterstore-archiver", ArchiverVersion.CURRENT.toString()),
                archiverModule);
    }
}
