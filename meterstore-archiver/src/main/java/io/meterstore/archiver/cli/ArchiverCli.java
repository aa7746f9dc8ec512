package io.meterstore.archiver.cli;

import com.google.inject.Injector;
import io.airlift.bootstrap.ApplicationConfigurationException;
import io.airlift.http.server.HttpServerInfo;
import io.meterstore.archiver.ArchiverMain;
import io.meterstore.archiver.ArchiverModule;
import io.meterstore.archiver.tables.ArchiverTables;
import io.meterstore.archiver.tables.Failures;
import io.meterstore.archiver.cycle.ArchivalException;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.cycle.Failpoints;
import io.meterstore.archiver.service.ShutdownAction;
import io.meterstore.core.ArchivalHistory;
import io.meterstore.core.HotTier;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.MeterstoreException;
import io.meterstore.core.ReadingsTableCreation;
import io.meterstore.core.TableShape;
import io.meterstore.core.TiersConfig;
import io.meterstore.storage.ColdStorage;
import org.apache.iceberg.Table;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.List;
import java.util.EnumSet;
import java.util.Optional;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.stream.Collectors;

import static java.util.Objects.requireNonNull;

/**
 * The archiver's command line, one configuration file for every command and for the service:
 * <ul>
 * <li>{@code create} creates both tiers of every configured table;
 * <li>{@code check} validates the configuration and that PostgreSQL, the catalogue and both tiers of every table are
 * there as configured, and changes nothing;
 * <li>{@code status} prints each table's watermark, lag, partitions and invariant;
 * <li>{@code archive-once} runs one archival cycle per table, creates the partitions ahead of now it lacks, and prints what it did;
 * <li>{@code expire} removes the months past {@code meterstore.retention}, makes the due erasures physical, expires the
 * snapshots past the snapshot retention and removes orphan files of every table;
 * <li>{@code compact} compacts every table's months below W that are past the compaction delay into few large files and
 * rewrites its manifests one per month;
 * <li>{@code erasures} prints the audit trail of every table's erasures (DELETE and retention), with their physical completion;
 * <li>{@code completeness} prints the completeness report of every table, asked of Trino;
 * <li>{@code run} starts the service.
 * </ul>
 * Exits 0 on success (idle, deferred, superseded and lease-contended cycles are not failures), 1 when a table failed,
 * a check failed or a table is unhealthy, 2 on a usage or configuration error.
 */
public final class ArchiverCli
{
    public static final int EXIT_OK = 0;
    public static final int EXIT_FAILED = 1;
    public static final int EXIT_USAGE = 2;

    // held here: java.util.logging keeps only weak references to its loggers, and a collected one forgets its level
    private static final String CONNECTION_SETTINGS = "check meterstore.postgresql.url, meterstore.postgresql.user and meterstore.postgresql.password "
            + "(and meterstore.iceberg.jdbc-url if the catalogue has a database of its own); the 'check' command tests each";
    private static final Logger ROOT_LOGGER = Logger.getLogger("");
    private static final Logger METERSTORE_LOGGER = Logger.getLogger("io.meterstore");
    private static final String USAGE = """
            Usage: archiver <command> --config <file.properties>
            Commands:
              create         create the PostgreSQL parent table and the Iceberg table of every configured table
              check          check the configuration, the PostgreSQL login, the catalogue and both tiers of every table; changes nothing
              status         print each table's watermark, lag, partitions and invariant; exits 1 when a table is unhealthy
              archive-once   run one archival cycle for every configured table and create its partitions ahead of now
              expire         remove the months past meterstore.retention, make erasures past the reader grace physical, expire the
                             snapshots past meterstore.snapshot-retention and remove the files no snapshot references
              erasures       print the audit trail of every table's erasures (DELETE and retention) and when each became or becomes physical
              compact        compact the months below the watermark into few large files, then rewrite the manifests one per month of "from"
              completeness   print which readings miss intervals in a month or range, asked of Trino (options: run it without them)
              run            start the archiver service: scheduled cycles, /v1/info and /metrics over HTTP""";

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
        CHECK("check"),
        STATUS("status"),
        ARCHIVE_ONCE("archive-once"),
        EXPIRE("expire"),
        COMPACT("compact"),
        ERASURES("erasures"),
        COMPLETENESS("completeness"),
        RUN("run"),
        /**/;

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
        boolean service = args.length > 0 && Command.parse(args[0]).equals(Optional.of(Command.RUN));
        if (!service) {
            // a one-shot command prints its answer on the console, where java.util.logging's default handler would mix in
            // the libraries' INFO lines (Iceberg's one per table load, the configuration's start); MeterStore's own
            // progress stays. The service initializes logging with its own levels
            ROOT_LOGGER.setLevel(Level.WARNING);
            METERSTORE_LOGGER.setLevel(Level.INFO);
        }
        int exitCode = new ArchiverCli(System.out, System.err, Clock.systemUTC()).run(args);
        // a started service keeps the JVM alive until a signal or PUT /v1/info/state ends it
        boolean serving = exitCode == EXIT_OK && service;
        if (!serving) {
            System.exit(exitCode);
        }
    }

    /** What is wrong with the command line, in the words of its usage; only completeness takes options after the file. */
    private static Optional<String> usageProblem(String[] args, Optional<Command> command)
    {
        if (args.length == 0) {
            return Optional.of("No command given");
        }
        if (command.isEmpty()) {
            return Optional.of("Unknown command '%s'".formatted(args[0]));
        }
        if (args.length < 2 || !args[1].equals("--config")) {
            if (args.length >= 2 && args[1].startsWith("--config=")) {
                return Optional.of("Write '--config %s', with a space".formatted(args[1].substring("--config=".length())));
            }
            return Optional.of("'%s' needs --config <file.properties>".formatted(args[0]));
        }
        if (args.length < 3) {
            return Optional.of("--config needs the configuration file");
        }
        if (args.length > 3 && command.get() != Command.COMPLETENESS) {
            return Optional.of("'%s' takes no options: remove %s".formatted(args[0], String.join(" ", Arrays.asList(args).subList(3, args.length))));
        }
        return Optional.empty();
    }

    public int run(String[] args)
    {
        Optional<Command> command = args.length == 0 ? Optional.empty() : Command.parse(args[0]);
        if (command.equals(Optional.of(Command.COMPLETENESS)) && (args.length < 3 || !args[1].equals("--config"))) {
            err.println(CompletenessCommand.USAGE);
            return EXIT_USAGE;
        }
        Optional<String> problem = usageProblem(args, command);
        if (problem.isPresent()) {
            err.println(problem.get());
            err.println(USAGE);
            return EXIT_USAGE;
        }
        try {
            Failpoints.checkArmed();
        }
        catch (IllegalArgumentException e) {
            err.println(e.getMessage());
            return EXIT_USAGE;
        }
        CliConfiguration configuration;
        try {
            configuration = CliConfiguration.load(Path.of(args[2]));
        }
        catch (ApplicationConfigurationException e) {
            err.println("Invalid configuration in '%s':".formatted(args[2]));
            CliConfiguration.describeErrors(e).forEach(error -> err.println("  " + error));
            return EXIT_USAGE;
        }
        catch (IOException | RuntimeException e) {
            err.println("Invalid configuration in '%s': %s".formatted(args[2], CliConfiguration.readable(Failures.describe(e))));
            return EXIT_USAGE;
        }
        if (command.get() == Command.RUN) {
            return serve(configuration);
        }
        if (command.get() == Command.COMPLETENESS) {
            CompletenessCommand.Options options;
            try {
                options = CompletenessCommand.parse(Arrays.asList(args).subList(3, args.length));
            }
            catch (IllegalArgumentException e) {
                err.println(e.getMessage());
                err.println(CompletenessCommand.USAGE);
                return EXIT_USAGE;
            }
            return new CompletenessCommand(configuration.tiers().getTables(), out, err).run(options) ? EXIT_OK : EXIT_FAILED;
        }
        try (ColdStorage storage = ColdStorage.create(configuration.resolvedProperties());
                ArchiverTables tables = new ArchiverTables(configuration.tiers(), configuration.archiver(), storage.fileSystemFactory())) {
            if (EnumSet.of(Command.ARCHIVE_ONCE, Command.EXPIRE, Command.COMPACT, Command.ERASURES).contains(command.get())) {
                // the tables CREATE TABLE created beyond meterstore.tables are archived and kept too ('check' and 'status'
                // look for them once they know the catalogue is there)
                findCreatedTables(tables, err);
            }
            return switch (command.get()) {
                case CREATE -> createAll(tables);
                case CHECK -> new ConfigurationCheck(configuration.archiver(), tables, out, err).run() ? EXIT_OK : EXIT_FAILED;
                case STATUS -> new StatusReport(configuration.archiver(), tables, clock, out, err).run() ? EXIT_OK : EXIT_FAILED;
                case ARCHIVE_ONCE -> forEachTable(tables, this::archiveOnce);
                case EXPIRE -> forEachTable(tables, (archiverTables, table) -> out.println(archiverTables.maintenance(table, clock).expire().describe()));
                case COMPACT -> forEachTable(tables, (archiverTables, table) -> out.println(archiverTables.maintenance(table, clock).compact().describe()));
                case ERASURES -> forEachTable(tables, (archiverTables, table) -> new ErasuresReport(archiverTables, clock, out).print(table));
                case RUN, COMPLETENESS -> throw new IllegalStateException("'%s' is served above".formatted(args[0]));
            };
        }
        catch (IOException e) {
            err.println("Cannot close the Iceberg catalogue: " + Failures.describe(e));
            return EXIT_FAILED;
        }
    }

    /** Adds the tables CREATE TABLE created to those {@code tables} lists; a failure is printed, and the configured ones follow. */
    static void findCreatedTables(ArchiverTables tables, PrintStream err)
    {
        try {
            tables.findCreatedTables();
        }
        catch (RuntimeException e) {
            // a catalogue that cannot be reached fails each table's command too, which says so and what to check
            if (!Failures.isConnectionFailure(e)) {
                err.println("catalogue: cannot look for the tables CREATE TABLE created in namespace '%s', so only those of %s follow: %s"
                        .formatted(tables.schema(), TiersConfig.TABLES_PROPERTY, Failures.describe(e)));
            }
        }
    }

    private interface TableCommand
    {
        void run(ArchiverTables tables, String table)
                throws SQLException, IOException;
    }

    private int forEachTable(ArchiverTables tables, TableCommand command)
    {
        boolean failed = false;
        for (String table : tables.tables()) {
            try {
                command.run(tables, table);
            }
            catch (SQLException | IOException | RuntimeException e) {
                failed = true;
                String hint = Failures.isConnectionFailure(e) ? "; " + CONNECTION_SETTINGS : "";
                err.println("%s: failed: %s%s".formatted(tables.qualifiedName(table), Failures.describe(e), hint));
            }
        }
        return failed ? EXIT_FAILED : EXIT_OK;
    }

    /** Creates every table, after checking that the warehouse can be written, so that a bad one creates nothing. */
    private int createAll(ArchiverTables tables)
    {
        try {
            tables.requireWritableWarehouse();
        }
        catch (ArchivalException e) {
            err.println(e.getMessage());
            return EXIT_FAILED;
        }
        return forEachTable(tables, this::create);
    }

    /** One cycle, then the partitions ahead of now, as each run of the service does. */
    private void archiveOnce(ArchiverTables tables, String table)
            throws SQLException, IOException
    {
        ArchiveOutcome outcome = tables.cycle(table, clock).archiveOnce();
        out.println(outcome.describe());
        if (outcome.kind() == ArchiveOutcome.Kind.LEASE_CONTENDED) {
            // it changed nothing, as it says: the archiver holding the lease creates them
            return;
        }
        List<String> created = tables.ensureHeadroom(table, clock);
        if (!created.isEmpty()) {
            out.println("%s: created %s ahead of now: %s".formatted(tables.qualifiedName(table), created.size() == 1 ? "1 partition" : created.size() + " partitions", String.join(", ", created)));
        }
    }

    private void create(ArchiverTables tables, String table)
            throws SQLException
    {
        HotTier hotTier = tables.hotTier(table);
        ReadingsTableCreation.Created created;
        try (Connection connection = tables.connect()) {
            // the same creation as CREATE TABLE through the connector: the shape settled first, then both tiers
            created = ReadingsTableCreation.create(connection, hotTier, tables.catalog(), tables.identifier(table),
                    tables.tiers().declaredShape(table), "%s's entry '%s'".formatted(TiersConfig.TABLES_PROPERTY, table));
        }
        Table icebergTable = created.icebergTable();
        // the retention as configured, for any engine that expires the table by its properties
        IcebergTableSpec.restateMaintenanceProperties(icebergTable, tables.maintenanceSettings().retention());
        // writers name and size the partitions they create by the recorded step, so it is recorded before any is created
        Duration step = tables.step();
        Optional<Duration> recorded = ArchivalHistory.recordedStep(icebergTable);
        if (recorded.isEmpty()) {
            ArchivalHistory.recordStep(icebergTable, step);
        }
        else if (!recorded.get().equals(step)) {
            throw new ArchivalException(ArchivalException.Reason.STEP_MISMATCH,
                    "Table '%s' is archived with a step of %s seconds, but meterstore.archival-step is %s seconds: set meterstore.archival-step to %ss"
                            .formatted(tables.identifier(table), recorded.get().toSeconds(), step.toSeconds(), recorded.get().toSeconds()));
        }
        out.println("%s: %s (PostgreSQL table %s, Iceberg table '%s'), shape %s".formatted(tables.qualifiedName(table), created.existed() ? "exists" : "created", hotTier.qualifiedParent(), tables.identifier(table), describe(created.shape())));
        if (created.shapeRecorded()) {
            out.println("%s: recorded its shape, which it had not stored yet (a table created before shapes were declared)".formatted(tables.qualifiedName(table)));
        }
        for (String broken : created.brokenChecks()) {
            // new rows are checked; the stored ones that break it are the operator's to repair (docs/operations.md)
            out.println("%s: rows stored before the rules break CHECK constraint %s; it holds for new rows and stays NOT VALID until they are repaired, then run create again"
                    .formatted(tables.qualifiedName(table), broken));
        }
        for (String broken : created.brokenPairs()) {
            out.println("%s: %s".formatted(tables.qualifiedName(table), broken));
        }
    }

    static String describe(TableShape shape)
    {
        return shape.settings().entrySet().stream().map(entry -> "%s=%s".formatted(entry.getKey(), entry.getValue())).collect(Collectors.joining("; "));
    }

    private int serve(CliConfiguration configuration)
    {
        // the service's start refuses it too, but only after its HTTP server and MBeans are up; checked before any of it
        try (ColdStorage storage = ColdStorage.create(configuration.resolvedProperties());
                ArchiverTables tables = new ArchiverTables(configuration.tiers(), configuration.archiver(), storage.fileSystemFactory())) {
            tables.requireWritableWarehouse();
            for (String table : tables.tables()) {
                // a configuration that declares another shape than a table stores is refused before anything runs
                tables.requireShape(table);
            }
        }
        catch (ArchivalException | MeterstoreException e) {
            err.println("Cannot start the archiver: " + e.getMessage());
            return EXIT_FAILED;
        }
        catch (SQLException e) {
            // PostgreSQL down: the service starts and reports failed cycles until it is back, as it always did
            err.println("Cannot check the tables' shapes before starting: %s; %s".formatted(Failures.describe(e), CONNECTION_SETTINGS));
        }
        catch (IOException e) {
            err.println("Cannot close the Iceberg catalogue: " + Failures.describe(e));
            return EXIT_FAILED;
        }
        try {
            Injector injector = ArchiverMain.start(Optional.of(configuration.properties()), new ArchiverModule(clock, ShutdownAction.EXIT));
            out.println("Archiver serving on %s".formatted(injector.getInstance(HttpServerInfo.class).getHttpUri()));
            return EXIT_OK;
        }
        catch (RuntimeException e) {
            err.println("Cannot start the archiver: %s".formatted(Failures.describe(e)));
            return EXIT_FAILED;
        }
    }
}
