package io.meterstore.trino;

import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchivalSettings;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.cycle.Failpoints;
import io.meterstore.archiver.cycle.Failpoints.Failpoint;
import io.meterstore.core.IcebergCatalogs;
import io.meterstore.core.IcebergCatalogs.JdbcCatalogSpec;
import io.meterstore.core.LocalFileIo;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

/**
 * One archival cycle of a testing warehouse's table in a JVM of its own, so that a test holds it at a failpoint
 * ({@code -Dmeterstore.failpoint}, which prints {@code FAILPOINT <point>} and blocks) and kills it there with SIGKILL.
 * Its {@link #main} prints {@code OUTCOME <KIND> <description>}, or {@code FAILED <message>} and exits 1.
 */
final class TestingArchiveOnce
        implements AutoCloseable
{
    private final Process process;
    private final Path errors;
    private final List<String> lines = new CopyOnWriteArrayList<>();

    private TestingArchiveOnce(Process process, Path errors)
    {
        this.process = requireNonNull(process, "process is null");
        this.errors = requireNonNull(errors, "errors is null");
        Thread.ofPlatform().daemon().name("archive-once").start(this::readLines);
    }

    /** Starts a cycle of {@code warehouse}'s table on the fixed instant {@code clock}; {@code failpoint} arms that point. */
    static TestingArchiveOnce start(TestingWarehouse warehouse, Instant clock, Optional<Failpoint> failpoint)
            throws IOException
    {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx256m");
        command.add("-XX:TieredStopAtLevel=1");
        command.add("--add-modules=jdk.incubator.vector");
        command.add("--enable-native-access=ALL-UNNAMED");
        command.add("--sun-misc-unsafe-memory-access=allow");
        command.add("-Duser.timezone=UTC");
        failpoint.ifPresent(point -> command.add("-D%s=%s".formatted(Failpoints.PROPERTY, point.pointName())));
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(TestingArchiveOnce.class.getName());
        command.add(warehouse.database().jdbcUrl());
        command.add(warehouse.database().user());
        command.add(warehouse.location());
        command.add(clock.toString());
        Path errors = Files.createTempFile("archive-once", ".err");
        // the java process itself, not a shell around it: destroyForcibly is a SIGKILL of the archiver's JVM
        return new TestingArchiveOnce(new ProcessBuilder(command).redirectError(errors.toFile()).start(), errors);
    }

    public static void main(String[] args)
            throws Exception
    {
        String url = args[0];
        String user = args[1];
        Catalog catalog = IcebergCatalogs.jdbc(new JdbcCatalogSpec(TestingWarehouse.CATALOG_NAME, url, user, Optional.empty(), args[2]), _ -> new LocalFileIo());
        int exitCode = 0;
        try {
            ArchivalCycle cycle = new ArchivalCycle(
                    catalog,
                    TableIdentifier.of(MeterstoreQueryRunner.SCHEMA, TestingMeterstoreTables.TABLE),
                    TestingMeterstoreTables.hotTier(),
                    () -> DriverManager.getConnection(url, user, null),
                    ArchivalSettings.DEFAULTS,
                    InstantSource.fixed(Instant.parse(args[3])));
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
        }
        System.out.flush();
        System.exit(exitCode);
    }

    /** Waits for the stdout line {@code expected}; fails with the process's output if it exits or stays silent first. */
    void awaitLine(String expected, Duration timeout)
            throws InterruptedException, IOException
    {
        Instant deadline = Instant.now().plus(timeout);
        while (!lines.contains(expected)) {
            if (!process.isAlive() && !lines.contains(expected)) {
                Thread.sleep(200);
                if (lines.contains(expected)) {
                    return;
                }
                throw new AssertionError("The archiver exited with %s before printing '%s': %s%n%s".formatted(process.exitValue(), expected, lines, Files.readString(errors)));
            }
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("The archiver printed no '%s' within %s: %s%n%s".formatted(expected, timeout, lines, Files.readString(errors)));
            }
            Thread.sleep(20);
        }
    }

    /** SIGKILL: no shutdown hook, no finally block, no clean close of any connection. */
    void kill()
            throws InterruptedException
    {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new AssertionError("The archiver did not die");
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

    @Override
    public void close()
            throws InterruptedException
    {
        kill();
    }
}
