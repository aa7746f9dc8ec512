package io.meterstore.testing;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

import static java.util.Objects.requireNonNull;

/**
 * A real PostgreSQL 17 from Maven Central (zonky embedded binaries), started once per JVM; each test class takes a
 * fresh database. A persistent data directory (the demo) survives restarts. A test that stops and starts PostgreSQL
 * takes a {@link #restartable} server of its own, never the shared one other test classes use.
 */
public final class TestingPostgresServer
        implements AutoCloseable
{
    public static final String USER = "postgres";

    private static TestingPostgresServer shared;
    private static final AtomicInteger DATABASES = new AtomicInteger();

    private final EmbeddedPostgres.Builder builder;
    private final int port;
    private volatile Optional<EmbeddedPostgres> postgres;

    private TestingPostgresServer(EmbeddedPostgres.Builder builder, EmbeddedPostgres postgres)
    {
        this.builder = requireNonNull(builder, "builder is null");
        this.postgres = Optional.of(postgres);
        this.port = postgres.getPort();
    }

    /** The JVM's server, started on first use and stopped when the JVM exits. */
    public static synchronized TestingPostgresServer shared()
    {
        if (shared == null) {
            shared = start(builder());
        }
        return shared;
    }

    /** A server whose data lives in {@code dataDirectory} across restarts, on {@code port} (0 picks a free one, kept by {@link #start()} after a {@link #stop()}). */
    public static TestingPostgresServer persistent(Path dataDirectory, int port)
    {
        // data that outlives the process must survive a crash: durable settings, unlike the throw-away test servers
        EmbeddedPostgres.Builder builder = builder()
                .setDataDirectory(dataDirectory)
                .setCleanDataDirectory(false)
                .setServerConfig("fsync", "on")
                .setServerConfig("full_page_writes", "on")
                .setServerConfig("synchronous_commit", "on");
        if (port > 0) {
            builder.setPort(port);
        }
        TestingPostgresServer server = start(builder);
        // a restart (the soak's) comes back on the port its clients know
        server.builder.setPort(server.port);
        return server;
    }

    /**
     * A server of its own on a data directory that {@link #stop()} keeps and {@link #start()} starts again, on the same
     * port: clients reconnect to the URL they had, as to a restarted production server.
     */
    public static TestingPostgresServer restartable(Path dataDirectory)
    {
        TestingPostgresServer server = start(builder()
                .setDataDirectory(dataDirectory)
                .setCleanDataDirectory(false));
        server.builder.setPort(server.port);
        return server;
    }

    /** Stops PostgreSQL as an operator would (fast shutdown: sessions are terminated, committed data kept). */
    public synchronized void stop()
            throws IOException
    {
        if (postgres.isPresent()) {
            postgres.get().close();
            postgres = Optional.empty();
        }
    }

    /** Starts a {@link #stop() stopped} server again on its data directory and port. */
    public synchronized void start()
    {
        if (postgres.isEmpty()) {
            postgres = Optional.of(startEmbedded(builder));
        }
    }

    private static EmbeddedPostgres.Builder builder()
    {
        return EmbeddedPostgres.builder()
                .setPGStartupWait(Duration.ofSeconds(60))
                .setServerConfig("max_connections", "300")
                .setServerConfig("listen_addresses", "localhost")
                .setServerConfig("unix_socket_directories", "")
                .setServerConfig("max_locks_per_transaction", "256")
                .setServerConfig("fsync", "off")
                .setServerConfig("full_page_writes", "off")
                .setServerConfig("synchronous_commit", "off")
                .setLocaleConfig("locale", "C")
                .setLocaleConfig("encoding", "UTF8");
    }

    private static TestingPostgresServer start(EmbeddedPostgres.Builder builder)
    {
        return new TestingPostgresServer(builder, startEmbedded(builder));
    }

    private static EmbeddedPostgres startEmbedded(EmbeddedPostgres.Builder builder)
    {
        try {
            return builder.start();
        }
        catch (IOException e) {
            throw new UncheckedIOException("Cannot start embedded PostgreSQL", e);
        }
    }

    public int port()
    {
        return port;
    }

    public String jdbcUrl(String database)
    {
        return "jdbc:postgresql://localhost:%s/%s".formatted(port(), database);
    }

    /** Creates a fresh database named after {@code hint} and returns it. */
    public TestingDatabase createDatabase(String hint)
    {
        String name = (hint.toLowerCase().replaceAll("[^a-z0-9]+", "_") + "_" + ProcessHandle.current().pid() + "_" + DATABASES.incrementAndGet());
        name = name.length() > 60 ? name.substring(name.length() - 60) : name;
        name = name.replaceFirst("^[^a-z]+", "db_");
        createDatabaseIfMissing(name);
        return new TestingDatabase(this, name);
    }

    /** Creates {@code name} unless it exists; used by the demo, whose database outlives the process. */
    public TestingDatabase database(String name)
    {
        createDatabaseIfMissing(name);
        return new TestingDatabase(this, name);
    }

    private void createDatabaseIfMissing(String name)
    {
        try (Connection connection = DriverManager.getConnection(jdbcUrl("postgres"), USER, null);
                Statement statement = connection.createStatement()) {
            try (var result = statement.executeQuery("SELECT 1 FROM pg_database WHERE datname = '" + name.replace("'", "''") + "'")) {
                if (result.next()) {
                    return;
                }
            }
            statement.execute("CREATE DATABASE \"" + name + "\"");
        }
        catch (SQLException e) {
            throw new IllegalStateException("Cannot create database '%s'".formatted(name), e);
        }
    }

    void dropDatabase(String name)
    {
        try (Connection connection = DriverManager.getConnection(jdbcUrl("postgres"), USER, null);
                Statement statement = connection.createStatement()) {
            statement.execute("DROP DATABASE IF EXISTS \"" + name + "\" WITH (FORCE)");
        }
        catch (SQLException e) {
            throw new IllegalStateException("Cannot drop database '%s'".formatted(name), e);
        }
    }

    @Override
    public void close()
            throws IOException
    {
        stop();
    }
}
