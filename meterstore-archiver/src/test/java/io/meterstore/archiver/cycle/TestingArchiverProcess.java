package io.meterstore.archiver.cycle;

import com.google.common.collect.ImmutableList;
import io.meterstore.archiver.cycle.ArchiveOutcome.Kind;
import io.meterstore.archiver.cycle.Failpoints.Failpoint;
import io.meterstore.archiver.maintenance.MaintenanceCommand;
import io.meterstore.archiver.maintenance.MaintenanceSettings;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

/** An {@link ArchiverProcess} started by a test: its stdout lines as they arrive, its stderr in a file, and SIGKILL. */
public final class TestingArchiverProcess
        implements AutoCloseable
{
    private static final Duration POLL = Duration.ofMillis(20);

    private final String name;
    private final Process process;
    private final Path errors;
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final Thread reader;

    private TestingArchiverProcess(String name, Process process, Path errors)
    {
        this.name = requireNonNull(name, "name is null");
        this.process = requireNonNull(process, "process is null");
        this.errors = requireNonNull(errors, "errors is null");
        this.reader = Thread.ofPlatform().daemon().name("archiver-process-" + name).start(this::readLines);
    }

    /** Starts an archiver of {@code tables} on the fixed instant {@code clock}; {@code failpoint} arms that point. */
    static TestingArchiverProcess start(String name, TestingArchiverTable tables, Path directory, Instant clock, Duration readerGrace, boolean untilIdle, Optional<Failpoint> failpoint, boolean barrier)
            throws IOException
    {
        return start(name, tables, directory, clock, readerGrace, untilIdle, failpoint, barrier, false);
    }

    /** As above; {@code pauseBeforeCommit} stops the first commit between its base and its pointer swap, until {@link #resume()}. */
    static TestingArchiverProcess start(String name, TestingArchiverTable tables, Path directory, Instant clock, Duration readerGrace, boolean untilIdle, Optional<Failpoint> failpoint, boolean barrier, boolean pauseBeforeCommit)
            throws IOException
    {
        List<String> arguments = new ArrayList<>(List.of("mode=" + (untilIdle ? "until-idle" : "once"), "barrier=" + barrier));
        if (pauseBeforeCommit) {
            arguments.add("pause=before-commit");
        }
        return start(name, tables, directory, clock, readerGrace, failpoint, arguments);
    }

    /** Starts an archiver that runs the maintenance {@code command} of {@code tables} once on the fixed instant {@code clock}. */
    public static TestingArchiverProcess startMaintenance(String name, TestingArchiverTable tables, Path directory, Instant clock, MaintenanceCommand command, MaintenanceSettings settings, Optional<Failpoint> failpoint)
            throws IOException
    {
        return start(name, tables, directory, clock, settings.readerGrace(), failpoint, List.of(
                "mode=" + command.commandName(),
                "retention=" + settings.retention().maxSnapshotAge(),
                "keep=" + settings.retention().minSnapshotsToKeep(),
                "orphan-age=" + settings.orphanSafetyAge(),
                "data-retention=" + settings.dataRetention().map(Object::toString).orElse("")));
    }

    private static TestingArchiverProcess start(String name, TestingArchiverTable tables, Path directory, Instant clock, Duration readerGrace, Optional<Failpoint> failpoint, List<String> arguments)
            throws IOException
    {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx256m");
        // the JIT's top tier only costs start-up time in a process that lives for seconds
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-XX:+ExitOnOutOfMemoryError");
        command.add("--add-modules=jdk.incubator.vector");
        command.add("--enable-native-access=ALL-UNNAMED");
        command.add("--sun-misc-unsafe-memory-access=allow");
        command.add("-Duser.timezone=UTC");
        failpoint.ifPresent(point -> command.add("-D%s=%s".formatted(Failpoints.PROPERTY, point.pointName())));
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(ArchiverProcess.class.getName());
        command.add("url=" + tables.database().jdbcUrl());
        command.add("user=" + tables.database().user());
        command.add("warehouse=" + tables.warehouse().location());
        command.add("clock=" + clock);
        command.add("grace=" + readerGrace);
        command.addAll(arguments);
        Path errors = directory.resolve(name + ".err");
        Process process = new ProcessBuilder(command)
                .redirectError(errors.toFile())
                .start();
        return new TestingArchiverProcess(name, process, errors);
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

    /** Waits for the first stdout line matching {@code matches}; fails with the process's output if none comes. */
    public String awaitLine(Predicate<String> matches, Duration timeout)
            throws InterruptedException
    {
        Instant deadline = Instant.now().plus(timeout);
        while (true) {
            Optional<String> line = lines.stream().filter(matches).findFirst();
            if (line.isPresent()) {
                return line.get();
            }
            if (!process.isAlive()) {
                reader.join(timeout.toMillis());
                line = lines.stream().filter(matches).findFirst();
                if (line.isPresent()) {
                    return line.get();
                }
                throw new AssertionError("Archiver process '%s' exited with %s before the expected line%n%s".formatted(name, process.exitValue(), output()));
            }
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("Archiver process '%s' printed no expected line within %s%n%s".formatted(name, timeout, output()));
            }
            Thread.sleep(POLL);
        }
    }

    public String awaitLine(String line, Duration timeout)
            throws InterruptedException
    {
        return awaitLine(line::equals, timeout);
    }

    /** Lets a process started with a barrier begin its first cycle. */
    void go()
            throws IOException
    {
        OutputStream input = process.getOutputStream();
        input.write("go\n".getBytes(UTF_8));
        input.flush();
    }

    /** Lets a process paused before its commit go on. */
    void resume()
            throws IOException
    {
        OutputStream input = process.getOutputStream();
        input.write("resume\n".getBytes(UTF_8));
        input.flush();
    }

    /** SIGKILL: no shutdown hook, no finally block, no clean close of any connection. */
    public void kill()
            throws InterruptedException
    {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new AssertionError("Archiver process '%s' did not die".formatted(name));
        }
    }

    public int awaitExit(Duration timeout)
            throws InterruptedException
    {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("Archiver process '%s' did not finish within %s%n%s".formatted(name, timeout, output()));
        }
        reader.join(timeout.toMillis());
        return process.exitValue();
    }

    public List<String> lines()
    {
        return ImmutableList.copyOf(lines);
    }

    /** The outcomes printed so far, in order. */
    List<PrintedOutcome> outcomes()
    {
        return lines.stream()
                .filter(line -> line.startsWith("OUTCOME "))
                .map(line -> {
                    int separator = line.indexOf(' ', "OUTCOME ".length());
                    return new PrintedOutcome(Kind.valueOf(line.substring("OUTCOME ".length(), separator)), line.substring(separator + 1));
                })
                .collect(ImmutableList.toImmutableList());
    }

    public String output()
    {
        String stderr;
        try {
            stderr = Files.exists(errors) ? Files.readString(errors) : "";
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        // the library logs are long; the end says what went wrong
        int keep = 20_000;
        return "stdout:%n%s%nstderr (end):%n%s".formatted(String.join("\n", lines), stderr.length() > keep ? stderr.substring(stderr.length() - keep) : stderr);
    }

    @Override
    public void close()
            throws InterruptedException
    {
        if (process.isAlive()) {
            kill();
        }
    }

    record PrintedOutcome(Kind kind, String description)
    {
        PrintedOutcome
        {
            requireNonNull(kind, "kind is null");
            requireNonNull(description, "description is null");
        }
    }
}
