package io.meterstore.archiver.cli;

import com.google.common.collect.ImmutableMap;
import com.google.common.collect.Maps;
import io.airlift.bootstrap.ApplicationConfigurationException;
import io.airlift.configuration.ConfigPropertyMetadata;
import io.airlift.configuration.ConfigurationFactory;
import io.airlift.configuration.ConfigurationLoader;
import io.airlift.configuration.secrets.SecretsResolver;
import io.airlift.configuration.secrets.env.EnvironmentVariableSecretProvider;
import io.airlift.log.LoggingConfiguration;
import io.meterstore.archiver.tables.ArchiverConfig;
import io.meterstore.archiver.ArchiverMain;
import io.meterstore.archiver.ArchiverModule;
import io.meterstore.archiver.service.SchedulerConfig;
import io.meterstore.core.TiersConfig;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static com.google.common.collect.ImmutableSet.toImmutableSet;
import static java.util.Objects.requireNonNull;

/**
 * A configuration file as the command line reads it, its properties as written and resolved: validated by the
 * service's own Bootstrap, so every property the service knows is accepted, a misspelt one is refused with a
 * suggestion, and {@code ${ENV:NAME}} is resolved exactly as {@code run} resolves it.
 */
record CliConfiguration(Path file, Map<String, String> properties, Map<String, String> resolvedProperties, TiersConfig tiers, ArchiverConfig archiver, SchedulerConfig scheduler)
{
    CliConfiguration
    {
        requireNonNull(file, "file is null");
        properties = ImmutableMap.copyOf(requireNonNull(properties, "properties is null"));
        resolvedProperties = ImmutableMap.copyOf(requireNonNull(resolvedProperties, "resolvedProperties is null"));
        requireNonNull(tiers, "tiers is null");
        requireNonNull(archiver, "archiver is null");
        requireNonNull(scheduler, "scheduler is null");
    }

    /**
     * Reads and validates {@code file}; changes nothing and connects nowhere.
     *
     * @throws IOException the file cannot be read
     * @throws ApplicationConfigurationException the configuration is invalid; its errors say which property and why
     */
    static CliConfiguration load(Path file)
            throws IOException
    {
        if (!Files.isRegularFile(file)) {
            throw new IOException("the file does not exist");
        }
        Map<String, String> properties = ConfigurationLoader.loadPropertiesFrom(file.toString());
        Map<String, String> resolved = new SecretsResolver(ImmutableMap.of("env", new EnvironmentVariableSecretProvider()))
                .getResolvedConfiguration(properties);
        Set<String> loggingProperties;
        try (ConfigurationFactory factory = new ConfigurationFactory(resolved)) {
            factory.build(LoggingConfiguration.class);
            loggingProperties = factory.getUsedProperties().stream().map(ConfigPropertyMetadata::name).collect(toImmutableSet());
        }
        // the command line logs to the console: the log.* properties are the service's, validated above and left out
        // here, where a Bootstrap that does not initialize logging would report them unused
        ArchiverMain.bootstrap(Optional.of(Maps.filterKeys(properties, key -> !loggingProperties.contains(key))), new ArchiverModule())
                .doNotInitializeLogging()
                .disableSystemProperties()
                .quiet()
                .configure();
        try (ConfigurationFactory factory = new ConfigurationFactory(resolved)) {
            return new CliConfiguration(file, properties, resolved, factory.build(TiersConfig.class), factory.build(ArchiverConfig.class), factory.build(SchedulerConfig.class));
        }
    }
}
