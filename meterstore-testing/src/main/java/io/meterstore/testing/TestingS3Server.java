package io.meterstore.testing;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import io.meterstore.storage.ColdStorage;
import org.apache.iceberg.io.FileIO;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * A real S3-compatible server (S3Proxy 2.6 from Maven Central on a local directory) speaking S3 over HTTP: path-style
 * requests, AWS signature V4, multipart uploads. It runs as a child process ({@link ServerProcess}), started once per
 * JVM like {@link TestingPostgresServer}; each test class takes a fresh bucket. A test that stops and starts the server
 * takes a {@link #restartable()} one of its own.
 */
public final class TestingS3Server
        implements AutoCloseable
{
    public static final String ACCESS_KEY = "meterstore-test-access";
    public static final String SECRET_KEY = "meterstore-test-secret-b5f1c2";
    public static final String REGION = "us-east-1";

    private static final AtomicInteger BUCKETS = new AtomicInteger();
    private static TestingS3Server shared;

    private final Path directory;
    private final int port;
    private Optional<ServerProcess> process = Optional.empty();
    private Optional<ColdStorage> storage = Optional.empty();

    private TestingS3Server(Path directory, int port)
    {
        this.directory = requireNonNull(directory, "directory is null");
        this.port = port;
    }

    /** The JVM's server, started on first use and stopped when the JVM exits. */
    public static synchronized TestingS3Server shared()
    {
        if (shared == null) {
            shared = restartable();
        }
        return shared;
    }

    /** A server of its own that {@link #stop()} stops and {@link #start()} starts again on the same port and data. */
    public static TestingS3Server restartable()
    {
        try {
            TestingS3Server server = new TestingS3Server(Files.createTempDirectory("meterstore-s3-"), ServerProcess.freePort());
            server.start();
            return server;
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A server over the objects kept in {@code directory}, on a port free now: its buckets outlive it, so the benchmark
     * and the demo reuse what an earlier run stored there.
     */
    public static TestingS3Server persistent(Path directory)
    {
        try {
            TestingS3Server server = new TestingS3Server(Files.createDirectories(directory), ServerProcess.freePort());
            server.start();
            return server;
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public synchronized void start()
    {
        if (process.isPresent()) {
            return;
        }
        Path configuration = directory.resolve("s3proxy.conf");
        Path data = directory.resolve("data");
        Path logging = directory.resolve("logback.xml");
        try {
            Files.createDirectories(data);
            // without a configuration Logback logs every request at DEBUG, which slows the server down many times over
            Files.writeString(logging, """
                    <configuration>
                      <appender name="console" class="ch.qos.logback.core.ConsoleAppender"><encoder><pattern>%d %level %logger - %msg%n</pattern></encoder></appender>
                      <root level="WARN"><appender-ref ref="console"/></root>
                    </configuration>
                    """);
            Files.writeString(configuration, """
                    s3proxy.endpoint=http://127.0.0.1:%s
                    s3proxy.authorization=aws-v2-or-v4
                    s3proxy.identity=%s
                    s3proxy.credential=%s
                    # Trino lists with x-amz-optional-object-attributes (to skip archived objects), which S3 and MinIO
                    # accept and S3Proxy 2.6 refuses unless told to ignore headers it does not know
                    s3proxy.ignore-unknown-headers=true
                    jclouds.provider=filesystem
                    jclouds.filesystem.basedir=%s
                    """.formatted(port, ACCESS_KEY, SECRET_KEY, data));
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        process = Optional.of(ServerProcess.start("s3proxy", "servers/s3proxy.classpath", ImmutableList.of("-Dlogback.configurationFile=" + logging), "org.gaul.s3proxy.Main",
                ImmutableList.of("--properties", configuration.toString()), ImmutableMap.of(), port, directory.resolve("s3proxy.log")));
    }

    /** Stops the server; objects stay on disk for {@link #start()}. */
    public synchronized void stop()
    {
        process.ifPresent(ServerProcess::close);
        process = Optional.empty();
    }

    public String endpoint()
    {
        return "http://127.0.0.1:" + port;
    }

    /** Creates a fresh bucket named after {@code hint} (unique in this server, as the data directory is) and returns its name. */
    public String createBucket(String hint)
    {
        // S3 bucket names: 3 to 63 lowercase letters, digits and hyphens
        String prefix = hint.toLowerCase().replaceAll("[^a-z0-9]+", "-").replaceAll("^-+|-+$", "");
        String name = prefix.substring(0, Math.min(prefix.length(), 40)) + "-" + BUCKETS.incrementAndGet();
        // the filesystem blob store keeps a bucket as a directory
        try {
            Files.createDirectories(directory.resolve("data").resolve(name));
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return name;
    }

    /** Creates bucket {@code name} if it does not exist yet and returns its name. */
    public String bucket(String name)
    {
        checkArgument(name.matches("[a-z0-9][a-z0-9-]{1,61}[a-z0-9]"), "Not an S3 bucket name: '%s'", name);
        try {
            Files.createDirectories(directory.resolve("data").resolve(name));
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return name;
    }

    /** The local file holding object {@code key} of {@code bucket}, for tests that damage or inspect one. */
    public Path objectPath(String bucket, String key)
    {
        return directory.resolve("data").resolve(bucket).resolve(key);
    }

    /**
     * The {@code fs.*} and {@code s3.*} properties that reach this server, as a Trino catalog, the connector and the
     * archiver all take them.
     */
    public Map<String, String> properties()
    {
        return ImmutableMap.<String, String>builder()
                .put("fs.s3.enabled", "true")
                .put("s3.endpoint", endpoint())
                .put("s3.region", REGION)
                .put("s3.path-style-access", "true")
                .put("s3.aws-access-key", ACCESS_KEY)
                .put("s3.aws-secret-key", SECRET_KEY)
                .buildOrThrow();
    }

    /** An Iceberg FileIO over this server, through the same file system the connector and the archiver use. */
    public synchronized FileIO fileIo()
    {
        if (storage.isEmpty()) {
            storage = Optional.of(ColdStorage.create(properties()));
        }
        return storage.get().fileIo("meterstore-test");
    }

    @Override
    public synchronized void close()
    {
        stop();
        storage.ifPresent(ColdStorage::close);
        storage = Optional.empty();
    }
}
