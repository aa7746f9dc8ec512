package io.meterstore.archiver.cli;

import io.meterstore.archiver.cycle.ArchivalException;
import io.meterstore.archiver.maintenance.ColdTierLayout;
import io.meterstore.archiver.tables.ArchiverConfig;
import io.meterstore.archiver.tables.ArchiverTables;
import io.meterstore.archiver.tables.Failures;
import io.meterstore.core.ArchivalHistory;
import io.meterstore.core.HotPartition;
import io.meterstore.core.HotTier;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.TableShape;
import io.meterstore.core.TiersConfig;
import io.meterstore.core.TiersConfig.CatalogType;
import io.meterstore.core.WatermarkReader;
import io.meterstore.storage.ColdStorage;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;

import io.trino.filesystem.Location;

import java.io.IOException;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * {@code check}: the configuration is valid (done by loading it), PostgreSQL accepts the login, the catalogue is
 * there, and each table has both tiers, laid out as MeterStore needs, partitioned and archived with the configured
 * step. Reads only: the catalogue is opened only once its tables are known to exist, because opening the JDBC
 * catalogue creates them otherwise.
 */
final class ConfigurationCheck
{
    private final ArchiverConfig config;
    private final ArchiverTables tables;
    private final PrintStream out;
    private final PrintStream err;

    ConfigurationCheck(ArchiverConfig config, ArchiverTables tables, PrintStream out, PrintStream err)
    {
        this.config = requireNonNull(config, "config is null");
        this.tables = requireNonNull(tables, "tables is null");
        this.out = requireNonNull(out, "out is null");
        this.err = requireNonNull(err, "err is null");
    }

    /** Prints one line per check, failures to {@code err}; returns whether all passed. */
    boolean run()
    {
        TiersConfig tiers = tables.tiers();
        out.println("configuration: ok, tables %s in schema '%s', archival step %s, settlement lag %s, reader grace %s, retention %s".formatted(
                tiers.getTables(), tiers.getSchema(), config.getArchivalStep(), tiers.getSettlementLag(), tiers.getReaderGrace(),
                config.retentionPeriod().map(period -> ColdTierLayout.count(period.settlementYears(), "settlement year")).orElse("off")));
        try (Connection connection = tables.connect()) {
            out.println("postgresql: ok, logged in to '%s' as '%s' (PostgreSQL %s)".formatted(
                    tiers.getPostgresqlUrl(), tiers.getPostgresqlUser(), connection.getMetaData().getDatabaseProductVersion()));
            Optional<Catalog> catalog = catalog();
            boolean warehouse = warehouse();
            // tables are checked without the catalogue if the warehouse cannot be read: each would repeat the storage error
            if (!warehouse) {
                catalog = Optional.empty();
            }
            boolean passed = catalog.isPresent();
            if (catalog.isPresent()) {
                // the tables CREATE TABLE created beyond meterstore.tables are checked too
                ArchiverCli.findCreatedTables(tables, err);
            }
            for (String table : tables.tables()) {
                passed &= checkTable(connection, catalog, table);
            }
            return passed;
        }
        catch (SQLException e) {
            err.println("postgresql: " + cannotLogIn(tiers, tiers.getPostgresqlUrl(), e) + "; check meterstore.postgresql.url, meterstore.postgresql.user and meterstore.postgresql.password");
            return false;
        }
    }

    private Optional<Catalog> catalog()
    {
        TiersConfig tiers = tables.tiers();
        String url = tiers.catalogJdbcUrl();
        try {
            if (!catalogTablesExist(tables)) {
                err.println("catalogue: the Iceberg JDBC catalogue has no tables in '%s': run the archiver's 'create' command, or check meterstore.iceberg.jdbc-url".formatted(url));
                return Optional.empty();
            }
        }
        catch (SQLException e) {
            err.println("catalogue: " + cannotLogIn(tiers, url, e) + "; check meterstore.iceberg.jdbc-url and the credentials");
            return Optional.empty();
        }
        try {
            Catalog catalog = tables.catalog();
            out.println("catalogue: ok, Iceberg %s catalogue '%s' in '%s', warehouse '%s'".formatted(tiers.getCatalogType(), tiers.getIcebergCatalogName(), tiers.catalogLocation(), tiers.getIcebergWarehouse()));
            return Optional.of(catalog);
        }
        catch (RuntimeException e) {
            String settings = switch (tiers.getCatalogType()) {
                case JDBC -> "meterstore.iceberg.*";
                case REST -> "meterstore.iceberg.rest-catalog.uri and that the REST catalogue is running";
            };
            err.println("catalogue: cannot open the Iceberg catalogue '%s' in '%s': %s; check %s".formatted(tiers.getIcebergCatalogName(), tiers.catalogLocation(), Failures.describe(e), settings));
            return Optional.empty();
        }
    }

    /**
     * Whether the warehouse can be listed and written: reaches the storage with the configured endpoint, bucket and
     * credentials, and an empty file can be created there and deleted again.
     */
    private boolean warehouse()
    {
        String warehouse = tables.tiers().getIcebergWarehouse();
        try {
            tables.fileSystem().listFiles(Location.of(warehouse)).hasNext();
        }
        catch (IOException | RuntimeException e) {
            err.println("warehouse: cannot list '%s': %s; check %s".formatted(warehouse, Failures.describe(e), ColdStorage.settingsToCheck(warehouse)));
            return false;
        }
        try {
            tables.requireWritableWarehouse();
        }
        catch (ArchivalException e) {
            err.println("warehouse: " + e.getMessage());
            return false;
        }
        out.println("warehouse: ok, '%s' is readable and writable".formatted(warehouse));
        return true;
    }

    private boolean checkTable(Connection connection, Optional<Catalog> catalog, String table)
            throws SQLException
    {
        String name = tables.qualifiedName(table);
        HotTier hotTier = tables.hotTier(table);
        boolean hot = hotTier.parentExists(connection);
        boolean cold = catalog.isPresent() && catalog.get().tableExists(tables.identifier(table));
        if (!hot && !cold && catalog.isPresent()) {
            err.println("%s: exists in neither tier (no PostgreSQL table %s, no Iceberg table '%s'): fix meterstore.tables, or run the archiver's 'create' command to create it"
                    .formatted(name, hotTier.qualifiedParent(), name));
            return false;
        }
        if (!hot) {
            err.println("%s: PostgreSQL table %s does not exist: run the archiver's 'create' command".formatted(name, hotTier.qualifiedParent()));
            return false;
        }
        if (catalog.isEmpty()) {
            return false;
        }
        if (!cold) {
            err.println("%s: Iceberg table '%s' does not exist: run the archiver's 'create' command".formatted(name, name));
            return false;
        }
        try {
            Table icebergTable = catalog.get().loadTable(tables.identifier(table));
            IcebergTableSpec.verify(icebergTable);
            // the shape the table stores, against the one its meterstore.tables entry declares
            TableShape shape = tables.requireShape(table).orElseThrow();
            Duration step = config.getArchivalStep().toJavaTime();
            Optional<Duration> recorded = ArchivalHistory.recordedStep(icebergTable);
            if (recorded.isPresent() && !recorded.get().equals(step)) {
                err.println("%s: archived with a step of %s seconds, but meterstore.archival-step is %s seconds: set meterstore.archival-step to %ss"
                        .formatted(name, recorded.get().toSeconds(), step.toSeconds(), recorded.get().toSeconds()));
                return false;
            }
            // partitions are archived by their catalogue bounds, on the step's grid or not
            List<HotPartition> partitions = hotTier.partitions(connection);
            out.println("%s: ok, PostgreSQL table %s with %s, Iceberg table '%s' at watermark %s, shape %s"
                    .formatted(name, hotTier.qualifiedParent(), StatusReport.partitions(partitions.size()), name, WatermarkReader.current(icebergTable).watermark(), ArchiverCli.describe(shape)));
            return true;
        }
        catch (RuntimeException e) {
            err.println("%s: %s".formatted(name, Failures.describe(e)));
            return false;
        }
    }

    /** Whether the JDBC catalogue's table exists, asked without opening the catalogue (which would create it). */
    static boolean catalogTablesExist(ArchiverTables tables)
            throws SQLException
    {
        if (tables.tiers().getCatalogType() == CatalogType.REST) {
            // a REST catalogue keeps its own storage; opening it creates nothing
            return true;
        }
        try (Connection connection = tables.connectCatalogDatabase();
                PreparedStatement statement = connection.prepareStatement("SELECT to_regclass('iceberg_tables') IS NOT NULL");
                ResultSet result = statement.executeQuery()) {
            result.next();
            return result.getBoolean(1);
        }
    }

    static String cannotLogIn(TiersConfig tiers, String url, SQLException e)
    {
        // a server that cannot be reached is not a login that was refused
        if (e.getSQLState() != null && e.getSQLState().startsWith("08")) {
            return "cannot connect to '%s': %s".formatted(url, Failures.describe(e));
        }
        return "cannot log in to '%s' as '%s': %s".formatted(url, tiers.getPostgresqlUser(), Failures.describe(e));
    }
}
