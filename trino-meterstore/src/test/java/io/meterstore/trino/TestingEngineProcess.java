package io.meterstore.trino;

import io.meterstore.testing.TestingWarehouse;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

/**
 * A {@link MeterstoreEngineProcess} started by a test: a Trino engine in a JVM of its own over the test's warehouse, its
 * JDBC URL, its output lines as they arrive, and SIGKILL of that JVM itself. The engine's logging takes over its
 * stdout (a printed line arrives as a log line naming the logger {@code stdout}), so both streams are read as one.
 */
final class TestingEngineProcess
        implements AutoCloseable
{
    private static final Duration POLL = Duration.ofMillis(20);
    private static final Duration STARTUP_TIMEOUT = Duration.ofMinutes(3);
    private static final Pattern READY = Pattern.compile("READY (\\S+:\\d+)");

    private final String name;
    private final Process process;
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final Thread reader;
    private final String address;

    private TestingEngineProcess(String name, Process process)
            throws InterruptedException
    {
        this.name = requireNonNull(name, "name is null");
        this.process = requireNonNull(process, "process is null");
        this.reader = Thread.ofPlatform().daemon().name("engine-process-" + name).start(this::readLines);
        Matcher ready = READY.matcher(awaitLine("READY ", STARTUP_TIMEOUT));
        if (!ready.find()) {
            throw new AssertionError("Engine process '%s' printed no address%n%s".formatted(name, output()));
        }
        this.address = ready.group(1);
    }

    /** Starts an engine over {@code warehouse} with {@code overrides} of its catalog properties and {@code systemProperties} (a failpoint) in its JVM. */
    static TestingEngineProcess start(String name, TestingWarehouse warehouse, Map<String, String> overrides, Map<String, String> systemProperties, Path directory)
            throws IOException, InterruptedException
    {
        Properties catalog = new Properties();
        catalog.putAll(MeterstoreQueryRunner.catalogProperties(warehouse));
        catalog.putAll(overrides);
        Path catalogFile = directory.resolve(name + ".properties");
        try (Writer writer = Files.newBufferedWriter(catalogFile, UTF_8)) {
            catalog.store(writer, null);
        }
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx1g");
        // the JIT's top tier only costs start-up time in an engine that runs a few statements
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-XX:+ExitOnOutOfMemoryError");
        command.add("--add-modules=jdk.incubator.vector");
        command.add("--enable-native-access=ALL-UNNAMED");
        command.add("--sun-misc-unsafe-memory-access=allow");
        command.add("-Duser.timezone=UTC");
        command.add("-Dairlift.quiet=true");
        systemProperties.forEach((key, value) -> command.add("-D%s=%s".formatted(key, value)));
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(MeterstoreEngineProcess.class.getName());
        command.add(catalogFile.toString());
        // the java process itself, not a shell around it: destroyForcibly is a SIGKILL of the engine's JVM
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .start();
        try {
            return new TestingEngineProcess(name, process);
        }
        catch (RuntimeException | Error | InterruptedException e) {
            process.destroyForcibly();
            throw e;
        }
    }

    /** The JDBC URL of the engine's meterstore catalog and schema. */
    String jdbcUrl()
    {
        return "jdbc:trino://%s/%s/%s".formatted(address, MeterstoreQueryRunner.CATALOG, MeterstoreQueryRunner.SCHEMA);
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

    /** Waits for the first output line containing {@code text}; fails with the process's output if none comes. */
    String awaitLine(String text, Duration timeout)
            throws InterruptedException
    {
        Instant deadline = Instant.now().plus(timeout);
        while (true) {
            Optional<String> line = lines.stream().filter(candidate -> candidate.contains(text)).findFirst();
            if (line.isPresent()) {
                return line.get();
            }
            if (!process.isAlive()) {
                reader.join(timeout.toMillis());
                line = lines.stream().filter(candidate -> candidate.contains(text)).findFirst();
                if (line.isPresent()) {
                    return line.get();
                }
                throw new AssertionError("Engine process '%s' exited with %s before printing '%s'%n%s".formatted(name, process.exitValue(), text, output()));
            }
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("Engine process '%s' printed no '%s' within %s%n%s".formatted(name, text, timeout, output()));
            }
            Thread.sleep(POLL);
        }
    }

    /** SIGKILL of the engine's JVM: no shutdown hook, no finally block, no rollback, no clean close of any connection. */
    void kill()
            throws InterruptedException
    {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new AssertionError("Engine process '%s' did not die".formatted(name));
        }
    }

    private String output()
    {
        // the engine's logs are long; the end says what went wrong
        List<String> all = List.copyOf(lines);
        return String.join("\n", all.subList(Math.max(0, all.size() - 200), all.size()));
    }

    @Override
    public void close()
            throws InterruptedException
    {
        if (process.isAlive()) {
            kill();
        }
    }
}
