package io.meterstore.archiver.cli;

import com.google.common.collect.ImmutableList;
import io.airlift.configuration.ConfigPropertyMetadata;
import io.airlift.configuration.ConfigurationFactory;
import io.airlift.configuration.ConfigurationLoader;
import io.meterstore.archiver.ArchiverConfig;
import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchivalException;
import io.meterstore.archiver.cycle.ArchivalSettings;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.core.HotTier;
import io.meterstore.core.IcebergCatalogs;
import io.meterstore.core.IcebergCatalogs.JdbcCatalogSpec;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.MeterstoreException;
import io.meterstore.core.PartitionNaming;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;

import java.io.Closeable;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Clock;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static java.util.Objects.requireNonNull;

/**
 * The archiver's command line: {@code create} creates both tiers of every configured table, {@code archive-once} runs
 * one archival cycle per table and prints one line per table saying what it did. Exits 0 when every table succeeded
 * (idle, deferred and superseded are not failures), 1 when a table failed, 2 on a usage or configuration error.
 */
public final class ArchiverCli
{
    public static final int EXIT_OK = 0;
    public static final int EXIT_FAILED = 1;
    public static final int EXIT_USAGE = 2;

    private static final String USAGE = """
            Usage: archiver <command> --config <file.properties>
            Commands:
              create         create the PostgreSQL parent table and the Iceberg table of every configured table
              archive-once   run one archival cycle for every configured table""";

    private final PrintStream out;
    private final PrintStream err;
    private final InstantSource clock;

    public ArchiverCli(PrintStream out, PrintStream err, InstantSource clock)
    {
        this.out = requireNonNull(out, "out is null");
        this.err = requireNonNull(err, "err is null");
        this.clock = requireNonNull(clock, "clock is null");
    }

    private enum Command
    {
        CREATE("create"),
        ARCHIVE_ONCE("archive-once");

        private final String name;

        Command(String name)
        {
            this.name = name;
        }

        static Optional<Command> parse(String name)
        {
            return Arrays.stream(values()).filter(command -> command.name.equals(name)).findFirst();
        }
    }

    public static void main(String[] args)
    {
        System.exit(new ArchiverCli(System.out, System.err, Clock.systemUTC()).run(args));
    }

    public int run(String[] args)
    {
        if (args.length != 3 || !args[1].equals("--config")) {
            err.println(USAGE);
            return EXIT_USAGE;
        }
        Optional<Command> command = Command.parse(args[0]);
        if (command.isEmpty()) {
            err.println("Unknown command '%s'".formatted(args[0]));
            err.println(USAGE);
            return EXIT_USAGE;
        }
        ArchiverConfig config;
        try {
            config = loadConfig(Path.of(args[2]));
        }
        catch (IOException | RuntimeException e) {
            err.println("Invalid configuration in '%s': %s".formatted(args[2], e.getMessage()));
            return EXIT_USAGE;
        }
        Catalog catalog;
        try {
            catalog = IcebergCatalogs.jdbc(new JdbcCatalogSpec(config.getIcebergCatalogName(), config.effectiveIcebergJdbcUrl(), config.getPostgresqlUser(), config.getPostgresqlPassword(), config.getIcebergWarehouse()));
        }
        catch (RuntimeException e) {
            err.println("Cannot open the Iceberg catalogue '%s' at '%s': %s; check meterstore.iceberg.jdbc-url and the credentials".formatted(config.getIcebergCatalogName(), config.effectiveIcebergJdbcUrl(), describe(e)));
            return EXIT_FAILED;
        }
        try {
            boolean failed = false;
            for (String table : config.getTables()) {
                String name = config.getSchema() + "." + table;
                try {
                    switch (command.get()) {
                        case CREATE -> create(config, catalog, table);
                        case ARCHIVE_ONCE -> out.println(archiveOnce(config, catalog, table).describe());
                    }
                }
                catch (Exception e) {
                    failed = true;
                    err.println("%s: failed: %s".formatted(name, describe(e)));
                }
            }
            return failed ? EXIT_FAILED : EXIT_OK;
        }
        finally {
            if (catalog instanceof Closeable closeable) {
                try {
                    closeable.close();
                }
                catch (IOException e) {
                    err.println("Cannot close the Iceberg catalogue: " + describe(e));
                }
            }
        }
    }

    private void create(ArchiverConfig config, Catalog catalog, String table)
            throws SQLException
    {
        HotTier hotTier = hotTier(config, table);
        try (Connection connection = connect(config)) {
            hotTier.createParent(connection);
        }
        IcebergTableSpec.createIfMissing(catalog, identifier(config, table));
        out.println("%s: created (PostgreSQL table %s, Iceberg table '%s')".formatted(config.getSchema() + "." + table, hotTier.qualifiedParent(), identifier(config, table)));
    }

    private ArchiveOutcome archiveOnce(ArchiverConfig config, Catalog catalog, String table)
            throws SQLException, IOException
    {
        ArchivalSettings settings = new ArchivalSettings(config.getSettlementLag().toJavaTime(), config.getReaderGrace().toJavaTime(), config.getChunkRows());
        ArchivalCycle cycle = new ArchivalCycle(catalog, identifier(config, table), hotTier(config, table), () -> connect(config), settings, clock);
        return cycle.archiveOnce();
    }

    public static ArchiverConfig loadConfig(Path file)
            throws IOException
    {
        if (!Files.isRegularFile(file)) {
            throw new IOException("the file does not exist");
        }
        Map<String, String> properties = ConfigurationLoader.loadPropertiesFrom(file.toString());
        try (ConfigurationFactory factory = new ConfigurationFactory(properties)) {
            ArchiverConfig config = factory.build(ArchiverConfig.class);
            Set<String> used = factory.getUsedProperties().stream().map(ConfigPropertyMetadata::name).collect(Collectors.toSet());
            Set<String> unknown = new TreeSet<>(properties.keySet());
            unknown.removeAll(used);
            if (!unknown.isEmpty()) {
                throw new IllegalArgumentException("unknown properties %s: remove them or fix their spelling".formatted(unknown));
            }
            return config;
        }
    }

    private static HotTier hotTier(ArchiverConfig config, String table)
    {
        return new HotTier(config.getSchema(), new PartitionNaming(table, config.getArchivalStep().toJavaTime()), config.getLockTimeout().toJavaTime());
    }

    private static TableIdentifier identifier(ArchiverConfig config, String table)
    {
        return TableIdentifier.of(Namespace.of(config.getSchema()), table);
    }

    private static Connection connect(ArchiverConfig config)
            throws SQLException
    {
        Properties properties = new Properties();
        properties.setProperty("user", config.getPostgresqlUser());
        config.getPostgresqlPassword().ifPresent(password -> properties.setProperty("password", password));
        properties.setProperty("ApplicationName", "meterstore-archiver");
        return DriverManager.getConnection(config.getPostgresqlUrl(), properties);
    }

    /**
     * The message of an exception and its causes, without repeating one that only wraps another. MeterStore's own
     * exceptions already say what is wrong and what to do, so their causes are left out.
     */
    static String describe(Throwable throwable)
    {
        if (throwable instanceof MeterstoreException || throwable instanceof ArchivalException) {
            return throwable.getMessage();
        }
        ImmutableList.Builder<String> messages = ImmutableList.builder();
        String previous = "";
        for (Throwable cause = throwable; cause != null; cause = cause.getCause()) {
            String message = cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
            if (cause instanceof SQLException sqlException && sqlException.getSQLState() != null) {
                message += " (SQLSTATE %s)".formatted(sqlException.getSQLState());
            }
            if (!previous.contains(message)) {
                messages.add(message);
            }
            previous = message;
        }
        List<String> all = messages.build();
        return String.join(": ", all);
    }
}
