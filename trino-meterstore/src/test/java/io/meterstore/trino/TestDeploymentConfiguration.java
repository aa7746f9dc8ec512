package io.meterstore.trino;

import com.google.common.collect.Maps;
import io.airlift.configuration.ConfigPropertyMetadata;
import io.airlift.configuration.ConfigurationFactory;
import io.airlift.http.server.HttpConfig;
import io.meterstore.testing.TestingDeployment.Compose;
import io.meterstore.testing.TestingDeployment.Copy;
import io.meterstore.testing.TestingRestCatalog;
import io.trino.execution.scheduler.NodeSchedulerConfig;
import io.trino.node.AnnounceNodeAnnouncerConfig;
import io.trino.plugin.iceberg.IcebergPlugin;
import io.trino.server.ServerConfig;
import io.trino.spi.connector.Connector;
import io.trino.spi.connector.ConnectorFactory;
import io.trino.testing.TestingConnectorContext;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.xml.sax.SAXException;

import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import javax.xml.xpath.XPathExpressionException;
import javax.xml.xpath.XPathFactory;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static com.google.common.collect.ImmutableSet.toImmutableSet;
import static com.google.common.collect.Iterables.getOnlyElement;
import static io.meterstore.testing.TestingDeployment.OPERATOR_ENVIRONMENT;
import static io.meterstore.testing.TestingDeployment.classPathDirectories;
import static io.meterstore.testing.TestingDeployment.entrypoint;
import static io.meterstore.testing.TestingDeployment.properties;
import static io.meterstore.testing.TestingDeployment.propertiesWithCommentedOnes;
import static io.meterstore.testing.TestingDeployment.repositoryRoot;
import static io.meterstore.testing.TestingDeployment.resolveEnvironment;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The Trino side of {@code etc/} and {@code docker/}, and the files the images are built from, checked without Docker
 * (the machines the tests run on have none). Each catalog file is loaded as Trino loads it: its {@code ${ENV:NAME}}
 * resolved from the environment the compose file gives the node, then handed to its connector's factory, whose
 * Bootstrap refuses an unknown, misspelt or missing property; as written, and with the properties it offers commented
 * out set too. The archiver's files are loaded by TestArchiverDeploymentConfiguration (meterstore-archiver).
 */
final class TestDeploymentConfiguration
{
    private static final Path ROOT = repositoryRoot();
    private static final Compose COMPOSE = Compose.load(ROOT.resolve("docker/compose.yaml"));
    private static final List<String> TRINO_NODES = List.of("trino-coordinator", "trino-worker-1", "trino-worker-2");
    private static final String CATALOG_DIRECTORY = "/etc/trino/catalog/";

    @Test
    void testEtcCatalog()
    {
        Path file = ROOT.resolve("etc/catalog/meterstore.properties");
        assertThat(properties(file)).containsEntry("connector.name", "meterstore");
        createCatalog("meterstore", resolveEnvironment(properties(file), OPERATOR_ENVIRONMENT)).shutdown();
        // the S3 warehouse and storage it offers, the password and the erasure key from the operator's environment
        Map<String, String> offered = resolveEnvironment(propertiesWithCommentedOnes(file), OPERATOR_ENVIRONMENT);
        assertThat(offered).containsEntry("meterstore.iceberg.warehouse", "s3://meterstore/warehouse");
        createCatalog("meterstore", offered).shutdown();
    }

    @Test
    void testDockerCatalogs()
    {
        // the three nodes run one image with one environment (x-trino): its catalogs are loaded once
        String coordinator = TRINO_NODES.getFirst();
        for (String node : TRINO_NODES) {
            assertThat(COMPOSE.dockerfile(node)).as(node).isEqualTo(COMPOSE.dockerfile(coordinator));
            assertThat(COMPOSE.environmentSetByOperator(node)).as(node).isEqualTo(COMPOSE.environmentSetByOperator(coordinator));
        }
        Map<String, String> catalogs = catalogFiles(coordinator);
        assertThat(catalogs).containsOnlyKeys("meterstore", "iceberg");
        Map<String, String> environment = COMPOSE.environmentSetByOperator(coordinator);
        for (Map.Entry<String, String> catalog : catalogs.entrySet()) {
            Path file = COMPOSE.buildContext(coordinator).orElseThrow().resolve(catalog.getValue());
            Map<String, String> written = resolveEnvironment(properties(file), environment);
            // the connector of the name the file gives its catalog, with the keys compose passes
            assertThat(written).containsEntry("connector.name", catalog.getKey());
            assertThat(written).containsEntry("s3.aws-secret-key", "meterstore-minio");
            createCatalog(catalog.getKey(), written).shutdown();
            createCatalog(catalog.getKey(), resolveEnvironment(propertiesWithCommentedOnes(file), environment)).shutdown();
        }
        // the erasure key, once uncommented, is what the operator set in the stack's environment
        Path meterstore = COMPOSE.buildContext(coordinator).orElseThrow().resolve(catalogs.get("meterstore"));
        assertThat(resolveEnvironment(propertiesWithCommentedOnes(meterstore), environment))
                .containsEntry("meterstore.erasure.hmac-key", OPERATOR_ENVIRONMENT.get("METERSTORE_ERASURE_HMAC_KEY"));
    }

    @Test
    void testDockerServerConfiguration()
    {
        for (String node : TRINO_NODES) {
            Path file = COMPOSE.bindMounts(node).get("/etc/trino/config.properties");
            assertThat(file).as(node).isRegularFile();
            ServerConfiguration configuration = serverConfiguration(properties(file));
            assertThat(configuration.server().isCoordinator()).as(node).isEqualTo(node.equals("trino-coordinator"));
            assertThat(configuration.http().getHttpPort()).as(node).isEqualTo(8080);
            // every node announces itself to the coordinator's service, by its name in the compose file
            assertThat(configuration.announcer().getCoordinatorUris()).as(node).containsExactly(URI.create("http://trino-coordinator:8080"));
            if (configuration.server().isCoordinator()) {
                // as the tests' cluster runs: the workers read every split
                assertThat(configuration.scheduler().isIncludeCoordinator()).isFalse();
            }
        }
    }

    @Test
    void testRestCatalogEntryPoint()
    {
        // the server the tests start (TestingRestCatalog), on the jars copied into the image
        Path dockerfile = COMPOSE.dockerfile("iceberg-rest").orElseThrow();
        List<String> entrypoint = entrypoint(dockerfile);
        assertThat(entrypoint.getLast()).isEqualTo(TestingRestCatalog.SERVER_CLASS);
        assertThat(classPathDirectories(entrypoint)).containsExactly("/usr/lib/iceberg-rest/lib/");
        assertThat(Copy.of(dockerfile).stream().map(Copy::destination)).containsAll(classPathDirectories(entrypoint));
    }

    @Test
    void testMisspeltOrMissingPropertyIsRefused()
    {
        Path catalog = ROOT.resolve("docker/trino/meterstore.properties");
        Map<String, String> misspelt = new HashMap<>(resolveEnvironment(properties(catalog), COMPOSE.environmentSetByOperator("trino-coordinator")));
        misspelt.put("meterstore.iceberg.catalog-typ", misspelt.remove("meterstore.iceberg.catalog-type"));
        assertThatThrownBy(() -> createCatalog("meterstore", misspelt))
                .hasMessageContaining("Configuration property 'meterstore.iceberg.catalog-typ' was not used");

        Map<String, String> missing = new HashMap<>(resolveEnvironment(properties(catalog), COMPOSE.environmentSetByOperator("trino-coordinator")));
        missing.remove("meterstore.postgresql.url");
        assertThatThrownBy(() -> createCatalog("meterstore", missing))
                .hasMessageContaining("meterstore.postgresql.url");

        Map<String, String> iceberg = new HashMap<>(resolveEnvironment(properties(ROOT.resolve("docker/trino/iceberg.properties")), COMPOSE.environmentSetByOperator("trino-coordinator")));
        iceberg.put("s3.path-style-acess", iceberg.remove("s3.path-style-access"));
        assertThatThrownBy(() -> createCatalog("iceberg", iceberg))
                .hasMessageContaining("Configuration property 's3.path-style-acess' was not used");

        Map<String, String> server = new HashMap<>(properties(ROOT.resolve("docker/trino/coordinator.properties")));
        server.put("node-scheduler.include-coordinater", server.remove("node-scheduler.include-coordinator"));
        assertThatThrownBy(() -> serverConfiguration(server))
                .hasMessageContaining("node-scheduler.include-coordinater");
    }

    /**
     * Every file the compose file and the Dockerfiles name exists, or is one the build makes. The suite runs without
     * {@code -Pdistribution} and before {@code package}, so the build's outputs that the images copy (each module's jar,
     * the plugin's zip, the {@code target/lib/} of runtime dependencies) are not there yet: for those the module's pom
     * must declare them, under the name the Dockerfile's wildcard matches. After
     * {@code ./mvnw -B -DskipTests -Pdistribution clean package} each of them exists (operations.md).
     */
    @Test
    void testImagesCopyWhatTheBuildMakes()
            throws Exception
    {
        List<String> dockerignore = Files.readAllLines(ROOT.resolve(".dockerignore")).stream()
                .filter(line -> !line.isBlank() && !line.startsWith("#"))
                .toList();
        // the build context is everything but what the images copy: not var/, .git or every target/
        assertThat(dockerignore.getFirst()).isEqualTo("*");
        for (String service : COMPOSE.serviceNames()) {
            COMPOSE.bindMounts(service).values().forEach(file -> assertThat(file).as(service).exists());
            if (COMPOSE.dockerfile(service).isEmpty()) {
                continue;
            }
            assertThat(COMPOSE.buildContext(service)).as(service).contains(ROOT);
            Path dockerfile = COMPOSE.dockerfile(service).orElseThrow();
            assertThat(dockerfile).as(service).isRegularFile();
            for (Copy copy : Copy.of(dockerfile)) {
                if (copy.fromStage().isPresent()) {
                    continue;
                }
                for (String source : copy.sources()) {
                    assertThat(dockerignore).as("%s: .dockerignore sends %s", dockerfile, source).contains("!" + source);
                    assertBuildMakes(source);
                }
            }
        }
    }

    @Test
    void testWaitsForHealth()
    {
        for (String service : COMPOSE.serviceNames()) {
            // a service waited for until healthy has a healthcheck: Compose would otherwise never start the one waiting
            COMPOSE.dependsOn(service).forEach((dependency, condition) -> {
                assertThat(COMPOSE.serviceNames()).as(service).contains(dependency);
                if (condition.equals("service_healthy")) {
                    assertThat(COMPOSE.hasHealthcheck(dependency)).as("%s waits for %s to be healthy", service, dependency).isTrue();
                }
            });
        }
        // the REST catalogue is healthy before the tables are created in it
        assertThat(COMPOSE.dependsOn("archiver-create")).containsEntry("iceberg-rest", "service_healthy").containsEntry("postgres", "service_healthy");
    }

    @Test
    void testImagesArePinned()
            throws IOException
    {
        Pattern tagged = Pattern.compile("[^:]+:(?!latest$)[\\w.-]+");
        for (String service : COMPOSE.serviceNames()) {
            if (COMPOSE.dockerfile(service).isEmpty()) {
                assertThat(COMPOSE.image(service)).as(service).matches(tagged);
            }
            else {
                for (String line : Files.readAllLines(COMPOSE.dockerfile(service).orElseThrow())) {
                    if (line.startsWith("FROM ")) {
                        assertThat(line.split("\\s+")[1]).as(service).matches(tagged);
                    }
                }
            }
        }
        assertThat(COMPOSE.image("minio")).isEqualTo("minio/minio:RELEASE.2025-09-07T16-13-09Z");
    }

    /** A file in the repository, or an output the module's pom declares under the name the Dockerfile copies. */
    private static void assertBuildMakes(String source)
            throws IOException, SAXException, ParserConfigurationException, XPathExpressionException
    {
        Matcher output = Pattern.compile("(.+)/target/(.+)").matcher(source);
        if (!output.matches()) {
            assertThat(ROOT.resolve(source)).as(source).exists();
            return;
        }
        String module = output.group(1);
        Document rootPom = parse(ROOT.resolve("pom.xml"));
        assertThat(evaluate(rootPom, "count(/project/modules/module[text()='%s'])".formatted(module))).as(source).isEqualTo("1");
        Document pom = parse(ROOT.resolve(module).resolve("pom.xml"));
        String artifactId = evaluate(pom, "/project/artifactId");
        String packaging = evaluate(pom, "/project/packaging");
        String file = output.group(2);
        if (file.equals("lib/")) {
            // only -Pdistribution makes it: every runtime dependency, as the image's class path needs
            String copy = "/project/profiles/profile[id='distribution']/build/plugins/plugin[artifactId='maven-dependency-plugin']/executions/execution[goals/goal='copy-dependencies']/configuration";
            assertThat(evaluate(pom, copy + "/outputDirectory")).as(source).isEqualTo("${project.build.directory}/lib");
            assertThat(evaluate(pom, copy + "/includeScope")).as(source).isEqualTo("runtime");
        }
        else if (file.equals(artifactId + "-*.jar")) {
            assertThat(packaging).as(source).isIn("", "jar");
            // a second jar of the module (tests, sources) would match the wildcard too
            assertThat(evaluate(pom, "count(//goal[text()='test-jar' or text()='jar-no-fork'])")).as(source).isEqualTo("0");
        }
        else if (file.equals(artifactId + "-*.zip")) {
            // the trino-maven-plugin's packaging makes <artifactId>-<version>.zip
            assertThat(packaging).as(source).isEqualTo("trino-plugin");
        }
        else {
            throw new AssertionError("%s copies %s, which no rule here says the build makes".formatted(source, file));
        }
    }

    private static Document parse(Path pom)
            throws IOException, SAXException, ParserConfigurationException
    {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(pom.toFile());
    }

    private static String evaluate(Document document, String expression)
            throws XPathExpressionException
    {
        return XPathFactory.newInstance().newXPath().evaluate(expression, document).trim();
    }

    /** The catalog files the node's image has, by catalog name: the files its Dockerfile copies into Trino's catalog directory. */
    private static Map<String, String> catalogFiles(String node)
    {
        Map<String, String> catalogs = new HashMap<>();
        Copy.imageFiles(COMPOSE.dockerfile(node).orElseThrow()).forEach((imagePath, source) -> {
            if (imagePath.startsWith(CATALOG_DIRECTORY) && imagePath.endsWith(".properties")) {
                catalogs.put(imagePath.substring(CATALOG_DIRECTORY.length(), imagePath.length() - ".properties".length()), source);
            }
        });
        return catalogs;
    }

    /** The catalog as Trino creates it from a file: the factory named by connector.name gets the other properties. */
    private static Connector createCatalog(String catalogName, Map<String, String> properties)
    {
        ConnectorFactory factory = switch (properties.get("connector.name")) {
            case "meterstore" -> getOnlyElement(new MeterstorePlugin().getConnectorFactories());
            case "iceberg" -> getOnlyElement(new IcebergPlugin().getConnectorFactories());
            case String other -> throw new AssertionError("No connector '%s' in the image".formatted(other));
        };
        return factory.create(catalogName, Maps.filterKeys(properties, key -> !key.equals("connector.name")), new TestingConnectorContext());
    }

    /**
     * A node's config.properties read by the configuration classes of Trino 483 that own its keys, strict as Trino's
     * Bootstrap is: a property none of them uses fails. (Starting a Trino server on the file instead would bind its port,
     * 8080, and announce itself to a coordinator named trino-coordinator.)
     */
    private static ServerConfiguration serverConfiguration(Map<String, String> properties)
    {
        try (ConfigurationFactory factory = new ConfigurationFactory(properties)) {
            ServerConfiguration configuration = new ServerConfiguration(
                    factory.build(ServerConfig.class),
                    factory.build(NodeSchedulerConfig.class),
                    factory.build(HttpConfig.class),
                    factory.build(AnnounceNodeAnnouncerConfig.class));
            Set<String> used = factory.getUsedProperties().stream().map(ConfigPropertyMetadata::name).collect(toImmutableSet());
            assertThat(properties.keySet()).as("properties Trino's server does not use").isSubsetOf(used);
            return configuration;
        }
    }

    private record ServerConfiguration(ServerConfig server, NodeSchedulerConfig scheduler, HttpConfig http, AnnounceNodeAnnouncerConfig announcer) {}
}
