package io.meterstore.testing;

import com.google.common.base.Splitter;
import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.collect.ImmutableList.toImmutableList;
import static com.google.common.collect.ImmutableMap.toImmutableMap;
import static java.util.Objects.requireNonNull;

/**
 * The deployment files as written in the repository: {@code docker/compose.yaml}'s services, their Dockerfiles' COPY
 * and ENTRYPOINT instructions, and the property files of {@code docker/} and {@code etc/} with their {@code ${ENV:NAME}} placeholders
 * resolved as the service would resolve them. Nothing here runs Docker (the machines the tests run on have none): it
 * lets the tests check the files against the services' own configuration.
 */
public final class TestingDeployment
{
    /**
     * What an operator sets for the placeholders that {@code etc/} leaves to the environment, and for the variables that
     * {@code docker/compose.yaml} passes on empty unless set (the erasure key, whose property is commented out).
     */
    public static final Map<String, String> OPERATOR_ENVIRONMENT = ImmutableMap.of(
            "METERSTORE_POSTGRESQL_PASSWORD", "operator-postgresql-password",
            "METERSTORE_ERASURE_HMAC_KEY", "operator-erasure-key-of-at-least-32-characters",
            "METERSTORE_S3_ACCESS_KEY", "operator-access-key",
            "METERSTORE_S3_SECRET_KEY", "operator-secret-key");

    // '#key=value', without a space after '#': a property the file offers commented out (prose comments have the space)
    private static final Pattern COMMENTED_PROPERTY = Pattern.compile("(?m)^#(?=[a-z][a-z0-9._-]*=)");
    private static final Pattern ENVIRONMENT_PLACEHOLDER = Pattern.compile("\\$\\{ENV:([^}]+)}");
    private static final Pattern QUOTED = Pattern.compile("\"([^\"]*)\"");
    private static final Pattern COMPOSE_VARIABLE = Pattern.compile("\\$\\$|\\$\\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?}");

    private TestingDeployment() {}

    /** The repository's root: the nearest directory at or above the working directory (a module's) with {@code docker/compose.yaml}. */
    public static Path repositoryRoot()
    {
        for (Path directory = Path.of("").toAbsolutePath(); directory != null; directory = directory.getParent()) {
            if (Files.isRegularFile(directory.resolve("docker/compose.yaml")) && Files.isRegularFile(directory.resolve("pom.xml"))) {
                return directory;
            }
        }
        throw new IllegalStateException("No docker/compose.yaml at or above " + Path.of("").toAbsolutePath());
    }

    /** The properties of {@code file} as the services load it (java.util.Properties, as airlift's ConfigurationLoader). */
    public static Map<String, String> properties(Path file)
    {
        return load(read(file));
    }

    /** The properties of {@code file} with the ones it offers commented out ({@code #key=value}) set too, later lines winning. */
    public static Map<String, String> propertiesWithCommentedOnes(Path file)
    {
        return load(COMMENTED_PROPERTY.matcher(read(file)).replaceAll(""));
    }

    /**
     * {@code properties} with each {@code ${ENV:NAME}} replaced by NAME's value in {@code environment}, as the archiver's
     * Bootstrap and Trino's catalog loader replace it; a NAME the environment does not define, or defines empty, fails.
     */
    public static Map<String, String> resolveEnvironment(Map<String, String> properties, Map<String, String> environment)
    {
        return properties.entrySet().stream().collect(toImmutableMap(Map.Entry::getKey, entry -> {
            Matcher matcher = ENVIRONMENT_PLACEHOLDER.matcher(entry.getValue());
            StringBuilder resolved = new StringBuilder();
            while (matcher.find()) {
                String value = environment.get(matcher.group(1));
                checkArgument(value != null && !value.isEmpty(), "Property '%s' needs the environment variable %s, which the environment %s does not give", entry.getKey(), matcher.group(1), environment.keySet());
                matcher.appendReplacement(resolved, Matcher.quoteReplacement(value));
            }
            return matcher.appendTail(resolved).toString();
        }));
    }

    /** The exec form of {@code dockerfile}'s ENTRYPOINT, its words in order. */
    public static List<String> entrypoint(Path dockerfile)
    {
        // an instruction continues on the next line after a trailing backslash
        for (String instruction : read(dockerfile).replaceAll("\\\\\\n", " ").split("\\n")) {
            if (instruction.startsWith("ENTRYPOINT [")) {
                return QUOTED.matcher(instruction).results().map(word -> word.group(1)).collect(toImmutableList());
            }
        }
        throw new IllegalArgumentException(dockerfile + " has no ENTRYPOINT in exec form");
    }

    /**
     * The directories of {@code -cp} in a java command line, each with its trailing slash ({@code /usr/lib/x/*} is
     * {@code /usr/lib/x/}): where the image must have copied the jars.
     */
    public static List<String> classPathDirectories(List<String> command)
    {
        String classPath = command.get(command.indexOf("-cp") + 1);
        return Splitter.on(':').splitToStream(classPath)
                .map(entry -> {
                    checkArgument(entry.endsWith("/*"), "Class path entry '%s' is not a directory of jars", entry);
                    return entry.substring(0, entry.length() - 1);
                })
                .collect(toImmutableList());
    }

    private static Map<String, String> load(String text)
    {
        Properties properties = new Properties();
        try (Reader reader = new StringReader(text)) {
            properties.load(reader);
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return properties.stringPropertyNames().stream().collect(toImmutableMap(name -> name, properties::getProperty));
    }

    private static String read(Path file)
    {
        try {
            return Files.readString(file);
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code docker/compose.yaml} as Compose reads it, with no variable set in the shell (every {@code ${NAME:-default}} its default). */
    public record Compose(Path file, Map<String, Map<String, Object>> services)
    {
        public Compose
        {
            requireNonNull(file, "file is null");
            services = ImmutableMap.copyOf(requireNonNull(services, "services is null"));
        }

        @SuppressWarnings("unchecked")
        public static Compose load(Path file)
        {
            // SafeConstructor resolves anchors, aliases and '<<' merge keys as Compose does
            Map<String, Object> document = new Yaml(new SafeConstructor(new LoaderOptions())).load(read(file));
            return new Compose(file, (Map<String, Map<String, Object>>) document.get("services"));
        }

        public Set<String> serviceNames()
        {
            return services.keySet();
        }

        /** The image the service runs; a service that builds its own names the image it builds. */
        public String image(String service)
        {
            return (String) service(service).get("image");
        }

        /** The service's environment after Compose's interpolation. */
        @SuppressWarnings("unchecked")
        public Map<String, String> environment(String service)
        {
            Map<String, Object> environment = (Map<String, Object>) service(service).getOrDefault("environment", ImmutableMap.of());
            return environment.entrySet().stream().collect(toImmutableMap(Map.Entry::getKey, entry -> interpolate(String.valueOf(entry.getValue()))));
        }

        /** The service's environment with what the compose file leaves to the operator (empty unless set) set as {@link TestingDeployment#OPERATOR_ENVIRONMENT}. */
        public Map<String, String> environmentSetByOperator(String service)
        {
            return environment(service).entrySet().stream().collect(toImmutableMap(Map.Entry::getKey, entry ->
                    entry.getValue().isEmpty() ? OPERATOR_ENVIRONMENT.getOrDefault(entry.getKey(), "") : entry.getValue()));
        }

        /** The services this one waits for, each with its condition ({@code service_healthy}, ...). */
        @SuppressWarnings("unchecked")
        public Map<String, String> dependsOn(String service)
        {
            Map<String, Map<String, Object>> dependencies = (Map<String, Map<String, Object>>) service(service).getOrDefault("depends_on", ImmutableMap.of());
            return dependencies.entrySet().stream().collect(toImmutableMap(Map.Entry::getKey, entry -> (String) entry.getValue().get("condition")));
        }

        public boolean hasHealthcheck(String service)
        {
            return service(service).containsKey("healthcheck");
        }

        @SuppressWarnings("unchecked")
        public List<String> command(String service)
        {
            return ImmutableList.copyOf((List<String>) service(service).getOrDefault("command", ImmutableList.of()));
        }

        /** The Dockerfile the service's image is built from, resolved against the build context. */
        @SuppressWarnings("unchecked")
        public Optional<Path> dockerfile(String service)
        {
            Map<String, Object> build = (Map<String, Object>) service(service).get("build");
            if (build == null) {
                return Optional.empty();
            }
            Path context = file.getParent().resolve((String) build.get("context")).normalize();
            return Optional.of(context.resolve((String) build.getOrDefault("dockerfile", "Dockerfile")).normalize());
        }

        /** The build context of the service's image. */
        @SuppressWarnings("unchecked")
        public Optional<Path> buildContext(String service)
        {
            Map<String, Object> build = (Map<String, Object>) service(service).get("build");
            return Optional.ofNullable(build).map(value -> file.getParent().resolve((String) value.get("context")).normalize());
        }

        /** The service's bind mounts: the file or directory on the host (relative to the compose file) by its path in the container. */
        @SuppressWarnings("unchecked")
        public Map<String, Path> bindMounts(String service)
        {
            ImmutableMap.Builder<String, Path> mounts = ImmutableMap.builder();
            for (String volume : (List<String>) service(service).getOrDefault("volumes", ImmutableList.of())) {
                String[] parts = volume.split(":");
                if (parts[0].startsWith(".") || parts[0].startsWith("/")) {
                    mounts.put(parts[1], file.getParent().resolve(parts[0]).normalize());
                }
            }
            return mounts.buildOrThrow();
        }

        private Map<String, Object> service(String name)
        {
            Map<String, Object> service = services.get(name);
            checkArgument(service != null, "%s has no service '%s'", file, name);
            return service;
        }

        private static String interpolate(String value)
        {
            Matcher matcher = COMPOSE_VARIABLE.matcher(value);
            StringBuilder interpolated = new StringBuilder();
            while (matcher.find()) {
                String replacement;
                if (matcher.group().equals("$$")) {
                    replacement = "$";
                }
                else {
                    // no variable is set in the tests' shell: a variable without a default would be empty, and Compose warns
                    checkArgument(matcher.group(2) != null, "'%s' has no default: the stack needs %s set", value, matcher.group(1));
                    replacement = matcher.group(2);
                }
                matcher.appendReplacement(interpolated, Matcher.quoteReplacement(replacement));
            }
            return matcher.appendTail(interpolated).toString();
        }
    }

    /**
     * A Dockerfile's {@code COPY}: its sources (relative to the build context, or to the stage named by {@code --from})
     * and its destination in the image.
     */
    public record Copy(List<String> sources, String destination, Optional<String> fromStage)
    {
        public Copy
        {
            sources = ImmutableList.copyOf(requireNonNull(sources, "sources is null"));
            requireNonNull(destination, "destination is null");
            requireNonNull(fromStage, "fromStage is null");
        }

        /** The COPY instructions of {@code dockerfile}, in order. */
        public static List<Copy> of(Path dockerfile)
        {
            ImmutableList.Builder<Copy> copies = ImmutableList.builder();
            // an instruction continues on the next line after a trailing backslash
            for (String instruction : read(dockerfile).replaceAll("\\\\\\n", " ").split("\\n")) {
                List<String> words = List.of(instruction.trim().split("\\s+"));
                if (!words.getFirst().equals("COPY")) {
                    continue;
                }
                List<String> operands = new ArrayList<>();
                Optional<String> fromStage = Optional.empty();
                for (String word : words.subList(1, words.size())) {
                    if (word.startsWith("--from=")) {
                        fromStage = Optional.of(word.substring("--from=".length()));
                    }
                    else if (!word.startsWith("--")) {
                        operands.add(word);
                    }
                }
                copies.add(new Copy(operands.subList(0, operands.size() - 1), operands.getLast(), fromStage));
            }
            return copies.build();
        }

        /** The single files {@code dockerfile} copies from the build context, by their path in the image. */
        public static Map<String, String> imageFiles(Path dockerfile)
        {
            ImmutableMap.Builder<String, String> files = ImmutableMap.builder();
            for (Copy copy : of(dockerfile)) {
                if (copy.fromStage().isEmpty()) {
                    files.putAll(copy.filesByImagePath());
                }
            }
            return files.buildKeepingLast();
        }

        /** Where each source that is a single file lands in the image: the destination directory and the file's name. */
        public Map<String, String> filesByImagePath()
        {
            ImmutableMap.Builder<String, String> files = ImmutableMap.builder();
            for (String source : sources) {
                if (!source.endsWith("/") && !source.contains("*")) {
                    files.put(destination.endsWith("/") ? destination + Path.of(source).getFileName() : destination, source);
                }
            }
            return files.buildOrThrow();
        }
    }
}
