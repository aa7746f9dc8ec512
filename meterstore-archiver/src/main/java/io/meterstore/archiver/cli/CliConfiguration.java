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
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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

    private static final Pattern INVALID_VALUE = Pattern.compile("Invalid value '(.*)' for type ([\\w.$]+) \\(property '([^']+)'\\)(?: in order to call .*)?", Pattern.DOTALL);
    // airlift's words for a setter that threw
    private static final String SETTER_FAILED = "Error invoking configuration method";
    private static final Pattern SET_TWICE = Pattern.compile("Key '([^']+)' is already present in the \\[.*\\] candidates.*", Pattern.DOTALL);
    private static final String UNUSED = "was not used";

    /**
     * What an operator reads of a refused configuration, one line per error. A property whose value cannot be read says
     * how to write it, not which Java method it was for. An error in one property makes the configuration object that
     * holds it fail as a whole, so Bootstrap then also reports that object's correct properties as "not used" (with
     * wrong suggestions): a misspelt property is reported only when nothing else is wrong.
     */
    static List<String> describeErrors(ApplicationConfigurationException e)
    {
        // a setter that refused its value (a meterstore.tables entry's shape) says why in its cause, not in its message
        List<String> messages = e.getErrors().stream()
                .map(error -> readable(error.getMessage()) + (error.getMessage().startsWith(SETTER_FAILED) ? rootCause(error.getCause()).map(cause -> ": " + cause).orElse("") : ""))
                .distinct()
                .toList();
        List<String> others = messages.stream().filter(message -> !message.contains(UNUSED)).toList();
        return others.isEmpty() ? messages : others;
    }

    private static Optional<String> rootCause(Throwable failure)
    {
        if (failure == null) {
            return Optional.empty();
        }
        Throwable cause = failure;
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        return Optional.ofNullable(cause.getMessage());
    }

    static String readable(String message)
    {
        Matcher twice = SET_TWICE.matcher(message);
        if (twice.matches()) {
            // airlift's words for a property set under its name and under an older name of it
            return "'%s' is set twice, under that name and under an older name of it: keep only '%s'".formatted(twice.group(1), twice.group(1));
        }
        Matcher matcher = INVALID_VALUE.matcher(message);
        if (!matcher.matches()) {
            return message;
        }
        String form = switch (matcher.group(2)) {
            case "io.airlift.units.Duration" -> "a duration such as 30s, 15m, 1h or 7d";
            case "io.airlift.units.DataSize" -> "a size such as 512kB, 64MB or 1GB";
            case "int", "java.lang.Integer", "long", "java.lang.Long" -> "a whole number";
            case "boolean", "java.lang.Boolean" -> "true or false";
            default -> "a value of type " + matcher.group(2).substring(matcher.group(2).lastIndexOf('.') + 1);
        };
        return "Invalid value '%s' for property '%s': write %s".formatted(matcher.group(1), matcher.group(3), form);
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
            LoggingConfiguration logging = factory.build(LoggingConfiguration.class);
            loggingProperties = factory.getUsedProperties().stream().map(ConfigPropertyMetadata::name).collect(toImmutableSet());
            // the service reads it when it starts and would refuse to start
            String levelsFile = logging.getLevelsFile();
            if (levelsFile != null && !Files.isRegularFile(Path.of(levelsFile))) {
                throw new IOException("log.levels-file names '%s', which does not exist".formatted(levelsFile));
            }
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
