package io.meterstore.testing;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import com.google.common.io.Resources;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

/**
 * A server from Maven Central run as a child JVM on a classpath of its own, resolved by Maven at build time into a
 * resource (see {@code testing-servers/}): its Jetty, Jackson and Guava never meet Trino's on the test classpath. The
 * child is started through a shell that kills it when its standard input closes, so a test JVM that dies, however it
 * dies, leaves no server behind.
 */
final class ServerProcess
        implements AutoCloseable
{
    private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(90);
    // kills the server when the test JVM's end of the pipe closes (on close() and on any death of the test JVM), and
    // exits when the server exits, so a server that fails to start is seen at once (a background job's standard input
    // is /dev/null unless redirected: the pipe is handed to it as descriptor 3)
    private static final String WATCHDOG = "exec 3<&0; \"$@\" & server=$!; (cat <&3 > /dev/null; kill $server 2>/dev/null) & wait $server";

    private final String name;
    private final Process process;

    private ServerProcess(String name, Process process)
    {
        this.name = requireNonNull(name, "name is null");
        this.process = requireNonNull(process, "process is null");
    }

    /**
     * Starts {@code mainClass} on the classpath in resource {@code classpathResource} (a path relative to this class's
     * package) and waits until {@code port}
     * accepts connections; its output goes to {@code log}.
     */
    static ServerProcess start(String name, String classpathResource, List<String> jvmOptions, String mainClass, List<String> arguments, Map<String, String> environment, int port, Path log)
    {
        String classpath;
        try {
            classpath = Resources.toString(Resources.getResource(ServerProcess.class, classpathResource), UTF_8).strip();
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String java = ProcessHandle.current().info().command().orElse("java");
        ProcessBuilder builder = new ProcessBuilder(ImmutableList.<String>builder()
                .add("sh", "-c", WATCHDOG, name)
                .add(java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")
                .addAll(jvmOptions)
                .add("-cp", classpath, mainClass)
                .addAll(arguments)
                .build())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        builder.environment().putAll(ImmutableMap.copyOf(environment));
        Process process;
        try {
            process = builder.start();
        }
        catch (IOException e) {
            throw new UncheckedIOException("Cannot start " + name, e);
        }
        ServerProcess server = new ServerProcess(name, process);
        server.awaitPort(port, log);
        return server;
    }

    /** A port that was free a moment ago. */
    static int freePort()
    {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void awaitPort(int port, Path log)
    {
        long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("%s exited with %s before it accepted connections on port %s; see %s".formatted(name, process.exitValue(), port, log));
            }
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
                return;
            }
            catch (IOException e) {
                sleep(Duration.ofMillis(100));
            }
        }
        close();
        throw new IllegalStateException("%s did not accept connections on port %s within %s; see %s".formatted(name, port, STARTUP_TIMEOUT, log));
    }

    /** Stops the server and waits until it has exited. */
    @Override
    public void close()
    {
        try {
            process.getOutputStream().close();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly().waitFor();
            }
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while stopping " + name, e);
        }
    }

    private static void sleep(Duration duration)
    {
        try {
            Thread.sleep(duration);
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
