package io.meterstore.archiver.cli;

import com.google.common.collect.ImmutableMap;
import io.airlift.bootstrap.ApplicationConfigurationException;
import io.airlift.log.Level;
import io.meterstore.core.TiersConfig.CatalogType;
import io.meterstore.testing.TestingDeployment;
import io.meterstore.testing.TestingDeployment.Compose;
import io.meterstore.testing.TestingDeployment.Copy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.function.Function;

import static io.meterstore.testing.TestingDeployment.OPERATOR_ENVIRONMENT;
import static io.meterstore.testing.TestingDeployment.classPathDirectories;
import static io.meterstore.testing.TestingDeployment.entrypoint;
import static io.meterstore.testing.TestingDeployment.properties;
import static io.meterstore.testing.TestingDeployment.propertiesWithCommentedOnes;
import static io.meterstore.testing.TestingDeployment.resolveEnvironment;
import static io.meterstore.testing.TestingDeployment.repositoryRoot;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The archiver's configuration files of {@code etc/} and {@code docker/}, loaded as the command line and the service
 * load them ({@link CliConfiguration#load}: the service's Bootstrap, strict about unknown, misspelt and missing
 * properties), as written and with the properties they offer commented out set too. The {@code docker/} file is read
 * as the compose file's archiver containers read it: the file their {@code --config} names in the image, with their
 * environment, and the paths it names in the image mapped to the files the Dockerfile copies there.
 * TestDeploymentConfiguration (trino-meterstore) checks the Trino side and the images' files.
 */
final class TestArchiverDeploymentConfiguration
{
    private static final Path ROOT = repositoryRoot();

    @TempDir
    Path directory;

    @Test
    void testEtcConfiguration()
            throws IOException
    {
        Path file = ROOT.resolve("etc/archiver.properties");
        // bin/archiver runs from the repository's root: the relative log.levels-file is resolved there
        Function<String, String> paths = path -> ROOT.resolve(path).toString();

        CliConfiguration written = load(resolveEnvironment(properties(file), OPERATOR_ENVIRONMENT), paths);
        assertThat(written.tiers().getIcebergWarehouse()).isEqualTo("file:///var/lib/meterstore/warehouse");
        assertThat(written.tiers().getCatalogType()).isEqualTo(CatalogType.JDBC);
        assertThat(written.scheduler().getShutdownTimeout().toString()).isEqualTo("5.00m");

        CliConfiguration offered = load(resolveEnvironment(propertiesWithCommentedOnes(file), OPERATOR_ENVIRONMENT), paths);
        assertThat(offered.tiers().getPostgresqlPassword()).contains(OPERATOR_ENVIRONMENT.get("METERSTORE_POSTGRESQL_PASSWORD"));
        assertThat(offered.tiers().getErasureHmacKey()).contains(OPERATOR_ENVIRONMENT.get("METERSTORE_ERASURE_HMAC_KEY"));
        assertThat(offered.tiers().getCatalogType()).isEqualTo(CatalogType.REST);
        assertThat(offered.resolvedProperties()).containsEntry("log.levels-file", ROOT.resolve("etc/archiver-log.properties").toString());
    }

    @Test
    void testDockerConfiguration()
            throws IOException
    {
        Compose compose = Compose.load(ROOT.resolve("docker/compose.yaml"));
        for (String service : List.of("archiver-create", "archiver")) {
            Path context = compose.buildContext(service).orElseThrow();
            Map<String, String> imageFiles = Copy.imageFiles(compose.dockerfile(service).orElseThrow());
            List<String> command = compose.command(service);
            String configuration = command.get(command.indexOf("--config") + 1);
            assertThat(imageFiles).as("%s: the image has its --config", service).containsKey(configuration);
            Path file = context.resolve(imageFiles.get(configuration));
            Map<String, String> environment = compose.environmentSetByOperator(service);
            // a path in the image is the file the Dockerfile copies there
            Function<String, String> paths = path -> {
                assertThat(imageFiles).as("%s: the image has %s", service, path).containsKey(path);
                return context.resolve(imageFiles.get(path)).toString();
            };

            CliConfiguration written = load(resolveEnvironment(properties(file), environment), paths);
            assertThat(written.tiers().getPostgresqlUrl()).isEqualTo("jdbc:postgresql://postgres:5432/metering");
            assertThat(written.tiers().getPostgresqlPassword()).contains("meterstore");
            assertThat(written.tiers().getCatalogType()).isEqualTo(CatalogType.REST);
            assertThat(written.tiers().getRestUri()).contains("http://iceberg-rest:8181");
            assertThat(written.resolvedProperties()).containsEntry("s3.aws-secret-key", "meterstore-minio");
            assertThat(written.resolvedProperties()).containsEntry("log.levels-file", context.resolve("docker/archiver/log.properties").toString());

            // the erasure key, once uncommented, is what the operator set in the stack's environment
            CliConfiguration offered = load(resolveEnvironment(propertiesWithCommentedOnes(file), environment), paths);
            assertThat(offered.tiers().getErasureHmacKey()).contains(OPERATOR_ENVIRONMENT.get("METERSTORE_ERASURE_HMAC_KEY"));
        }
    }

    @Test
    void testDockerEntryPoint()
    {
        Path dockerfile = ROOT.resolve("docker/archiver/Dockerfile");
        List<String> entrypoint = entrypoint(dockerfile);
        assertThat(entrypoint.getFirst()).isEqualTo("java");
        // the command line, which also starts the service ('run', the image's CMD)
        assertThat(entrypoint.getLast()).isEqualTo(ArchiverCli.class.getName());
        // the class path is the directories the jars are copied to
        List<String> destinations = Copy.of(dockerfile).stream().map(Copy::destination).toList();
        assertThat(classPathDirectories(entrypoint)).containsExactly("/usr/lib/meterstore-archiver/", "/usr/lib/meterstore-archiver/lib/");
        assertThat(destinations).containsAll(classPathDirectories(entrypoint));
    }

    @Test
    void testMisspeltOrMissingPropertyIsRefused()
    {
        Map<String, String> properties = resolveEnvironment(properties(ROOT.resolve("etc/archiver.properties")), OPERATOR_ENVIRONMENT);
        Function<String, String> paths = path -> ROOT.resolve(path).toString();

        Map<String, String> misspelt = new HashMap<>(properties);
        misspelt.put("meterstore.setlement-lag", misspelt.remove("meterstore.settlement-lag"));
        assertThatThrownBy(() -> load(misspelt, paths))
                .isInstanceOf(ApplicationConfigurationException.class)
                .hasMessageContaining("Configuration property 'meterstore.setlement-lag' was not used");

        Map<String, String> missing = new HashMap<>(properties);
        missing.remove("meterstore.postgresql.url");
        assertThatThrownBy(() -> load(missing, paths))
                .isInstanceOf(ApplicationConfigurationException.class)
                .hasMessageContaining("meterstore.postgresql.url");

        // a placeholder the environment does not give: the compose file must pass every variable the files name
        assertThatThrownBy(() -> resolveEnvironment(ImmutableMap.of("meterstore.erasure.hmac-key", "${ENV:METERSTORE_ERASURE_HMAC_KEY}"), ImmutableMap.of()))
                .hasMessageContaining("METERSTORE_ERASURE_HMAC_KEY");
    }

    @Test
    void testLogLevelsFiles()
    {
        // read as airlift's Logging.setLevels reads them: every value a level
        for (Path file : List.of(ROOT.resolve("etc/archiver-log.properties"), ROOT.resolve("docker/archiver/log.properties"))) {
            assertThat(properties(file)).as(file.toString())
                    .containsEntry("io.meterstore", "INFO")
                    .allSatisfy((logger, level) -> assertThat(Level.valueOf(level.toUpperCase(Locale.US))).isNotNull());
        }
    }

    /** Loads the properties as the command line loads its file, {@code paths} mapping log.levels-file to this checkout. */
    private CliConfiguration load(Map<String, String> properties, Function<String, String> paths)
            throws IOException
    {
        Properties file = new Properties();
        properties.forEach((key, value) -> file.setProperty(key, key.equals("log.levels-file") ? paths.apply(value) : value));
        Path path = Files.createTempFile(directory, "archiver-", ".properties");
        try (Writer writer = Files.newBufferedWriter(path)) {
            file.store(writer, null);
        }
        return CliConfiguration.load(path);
    }
}
