package io.meterstore.benchmark;

import com.google.common.collect.ImmutableList;
import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchivalSettings;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.cycle.Failpoints;
import io.meterstore.archiver.cycle.Failpoints.Failpoint;
import io.meterstore.core.IcebergCatalogs;
import io.meterstore.core.IcebergCatalogs.JdbcCatalogSpec;
import io.meterstore.core.LocalFileIo;
import io.meterstore.storage.ColdStorage;
import io.meterstore.testing.TestingWarehouse;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

import java.io.BufferedReader;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.DriverManager;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

/**
 * The soak's archiver killed mid-cycle: one archival cycle of the soak's table in a JVM of its own, armed at a
 * {@link Failpoint} ({@code -Dmeterstore.failpoint}, which prints {@code FAILPOINT <point>} and blocks), killed there
 * with SIGKILL: no shutdown hook, no finally block, no clean close of its PostgreSQL sessions. Its {@link #main} prints
 * {@code OUTCOME <KIND> <description>} if the cycle ends without reaching the point, or {@code FAILED <message>}.
 */
final class SoakArchiverProcess
{
    private static final Duration TIMEOUT = Duration.ofMinutes(3);

    private final Process process;
    private final Path errors;
    private final List<String> lines = new CopyOnWriteArrayList<>();

    private SoakArchiverProcess(Process process, Path errors)
    {
        this.process = requireNonNull(process, "process is null");
        this.errors = requireNonNull(errors, "errors is null");
        Thread.ofPlatform().daemon().name("soak-archiver").start(this::readLines);
    }

    /**
     * Runs a cycle of {@code warehouse}'s soak table at {@code now} in a new JVM, waits until it stops at {@code failpoint}
     * and kills it; fails if the cycle ends, fails or stays silent before it reaches the point.
     */
    static void killAt(TestingWarehouse warehouse, Instant now, Failpoint failpoint)
            throws IOException, InterruptedException
    {
        Path errors = Files.createTempFile("soak-archiver", ".err");
        ImmutableList.Builder<String> command = ImmutableList.<String>builder().add(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m",
                "-XX:TieredStopAtLevel=1",
                "--add-modules=jdk.incubator.vector",
                "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow",
                "-Duser.timezone=UTC",
                "-D%s=%s".formatted(Failpoints.PROPERTY, failpoint.pointName()),
                "-cp",
                System.getProperty("java.class.path"),
                SoakArchiverProcess.class.getName(),
                warehouse.database().jdbcUrl(),
                warehouse.database().user(),
                warehouse.catalogName(),
                warehouse.location(),
                now.toString());
        // an S3 warehouse's fs.* and s3.* properties, as key=value
        warehouse.storageProperties().forEach((key, value) -> command.add(key + "=" + value));
        // the java process itself, not a shell around it: destroyForcibly is a SIGKILL of the archiver's JVM
        SoakArchiverProcess archiver = new SoakArchiverProcess(new ProcessBuilder(command.build()).redirectError(errors.toFile()).start(), errors);
        try {
            archiver.awaitLine("FAILPOINT " + failpoint.pointName());
        }
        finally {
            archiver.process.destroyForcibly();
            if (!archiver.process.waitFor(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("The soak's archiver did not die after SIGKILL");
            }
            Files.deleteIfExists(errors);
        }
    }

    public static void main(String[] args)
            throws Exception
    {
        String url = args[0];
        String user = args[1];
        Map<String, String> storageProperties = new HashMap<>();
        for (String property : Arrays.asList(args).subList(5, args.length)) {
            storageProperties.put(property.substring(0, property.indexOf('=')), property.substring(property.indexOf('=') + 1));
        }
        Optional<ColdStorage> storage = storageProperties.isEmpty() ? Optional.empty() : Optional.of(ColdStorage.create(storageProperties));
        Catalog catalog = IcebergCatalogs.jdbc(new JdbcCatalogSpec(args[2], url, user, Optional.empty(), args[3]),
                properties -> storage.map(value -> value.fileIo("meterstore-soak")).orElseGet(LocalFileIo::new));
        int exitCode = 0;
        try {
            ArchivalCycle cycle = new ArchivalCycle(
                    catalog,
                    TableIdentifier.of(BenchmarkDataset.SCHEMA, BenchmarkDataset.TABLE),
                    BenchmarkDataset.HOT_TIER,
                    () -> DriverManager.getConnection(url, user, null),
                    ArchivalSettings.DEFAULTS,
                    InstantSource.fixed(Instant.parse(args[4])));
            ArchiveOutcome outcome = cycle.archiveOnce();
            System.out.println("OUTCOME " + outcome.kind() + " " + outcome.describe());
        }
        catch (Exception e) {
            System.out.println("FAILED " + e);
            e.printStackTrace();
            exitCode = 1;
        }
        finally {
            ((Closeable) catalog).close();
            storage.ifPresent(ColdStorage::close);
        }
        System.out.flush();
        System.exit(exitCode);
    }

    private void awaitLine(String expected)
            throws InterruptedException, IOException
    {
        Instant deadline = Instant.now().plus(TIMEOUT);
        while (!lines.contains(expected)) {
            if (!process.isAlive()) {
                // the output may lag the exit by a line
                Thread.sleep(200);
                if (lines.contains(expected)) {
                    return;
                }
                throw new IllegalStateException("The soak's archiver exited with %s before reaching '%s': %s%n%s".formatted(process.exitValue(), expected, lines, Files.readString(errors)));
            }
            if (Instant.now().isAfter(deadline)) {
                throw new IllegalStateException("The soak's archiver printed no '%s' within %s: %s%n%s".formatted(expected, TIMEOUT, lines, Files.readString(errors)));
            }
            Thread.sleep(20);
        }
    }

    private void readLines()
    {
        try (BufferedReader output = new BufferedReader(new InputStreamReader(process.getInputStream(), UTF_8))) {
            for (String line = output.readLine(); line != null; line = output.readLine()) {
                lines.add(line);
            }
        }
        catch (IOException ignored) {
            // the process was killed
        }
    }
}
