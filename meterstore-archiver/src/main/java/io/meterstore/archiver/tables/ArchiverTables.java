package io.meterstore.archiver.tables;

import com.google.common.collect.ImmutableList;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import com.google.inject.Inject;
import io.airlift.log.Logger;
import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchivalException;
import io.meterstore.archiver.cycle.ArchivalSettings;
import io.meterstore.archiver.cycle.PartitionHeadroom;
import io.meterstore.archiver.maintenance.CompactionSettings;
import io.meterstore.archiver.maintenance.MaintenanceSettings;
import io.meterstore.archiver.maintenance.TableMaintenance;
import io.meterstore.core.HotTier;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.ReadingsTableCreation;
import io.meterstore.core.SnapshotRetention;
import io.meterstore.core.TableShape;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.TiersConfig;
import io.meterstore.core.WatermarkReader;
import io.meterstore.storage.ColdStorage;
import io.trino.filesystem.Location;
import io.trino.filesystem.TrinoFileSystem;
import io.trino.filesystem.TrinoFileSystemFactory;
import io.trino.spi.security.ConnectorIdentity;
import jakarta.annotation.PreDestroy;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;

import java.io.Closeable;
import java.io.IOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArraySet;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.collect.ImmutableSet.toImmutableSet;
import static io.meterstore.archiver.cycle.ArchivalException.Reason.WAREHOUSE_NOT_WRITABLE;
import static java.util.Objects.requireNonNull;

/**
 * The readings tables this archiver archives (configured, or created by CREATE TABLE) and how to reach both tiers of
 * each: PostgreSQL connections, the hot-tier DDL and the Iceberg catalogue. The command line and the service build their cycles here, so both archive the same way.
 * <p>
 * The catalogue is opened on first use and kept; a failed open is retried by the next caller, so a service started
 * while PostgreSQL is down reports failed cycles until it is back, instead of not starting at all.
 */
public final class ArchiverTables
        implements Closeable
{
    private static final Logger log = Logger.get(ArchiverTables.class);
    private static final String USER = "meterstore-archiver";

    private final TiersConfig tiers;
    private final ArchiverConfig config;
    private final List<String> configured;
    // the tables CREATE TABLE created beyond meterstore.tables, in the order they were found
    private final Set<String> created = new CopyOnWriteArraySet<>();
    private final TrinoFileSystemFactory fileSystemFactory;

    @GuardedBy("this")
    private Optional<Catalog> catalog = Optional.empty();

    @Inject
    public ArchiverTables(TiersConfig tiers, ArchiverConfig config, TrinoFileSystemFactory fileSystemFactory)
    {
        this.tiers = requireNonNull(tiers, "tiers is null");
        this.config = requireNonNull(config, "config is null");
        this.fileSystemFactory = requireNonNull(fileSystemFactory, "fileSystemFactory is null");
        this.configured = ImmutableList.copyOf(tiers.getTables());
    }

    /** Where both tiers live and how to reach them, as the connector reads them too. */
    public TiersConfig tiers()
    {
        return tiers;
    }

    /**
     * The names of the tables this archiver archives, without the schema: those of {@code meterstore.tables}, then those
     * {@link #findCreatedTables} found.
     */
    public List<String> tables()
    {
        return ImmutableList.<String>builder().addAll(configured).addAll(created).build();
    }

    /**
     * Finds the readings tables CREATE TABLE (through the connector) created beyond {@code meterstore.tables}: the Iceberg
     * tables in the namespace that CREATE TABLE marked ({@link ReadingsTableCreation#isCreatedByCreateTable}). A table
     * another archiver's {@code create} made stores a shape too, but is that archiver's (its settings, its step); an
     * Iceberg table of another engine is not MeterStore's. Both stay untouched. Returns the tables found for the first time, which
     * {@link #tables} lists from then on, and those found before that the namespace no longer lists (dropped), which it
     * lists no longer. A table that cannot be loaded is logged and left out until it can be.
     */
    public CreatedTables findCreatedTables()
    {
        Namespace namespace = Namespace.of(tiers.getSchema());
        List<TableIdentifier> identifiers;
        try {
            identifiers = catalog().listTables(namespace);
        }
        catch (NoSuchNamespaceException e) {
            // nothing was created yet
            identifiers = List.of();
        }
        // a created table dropped (by DROP TABLE through any catalog) has nothing left to archive: a table created again
        // under its name is found again
        Set<String> listed = identifiers.stream().map(TableIdentifier::name).collect(toImmutableSet());
        List<String> dropped = created.stream().filter(table -> !listed.contains(table)).toList();
        created.removeAll(dropped);
        List<String> found = new ArrayList<>();
        for (TableIdentifier identifier : identifiers) {
            String table = identifier.name();
            if (configured.contains(table) || created.contains(table) || !PartitionNaming.isValidTableName(table)) {
                continue;
            }
            Map<String, String> properties;
            try {
                properties = catalog().loadTable(identifier).properties();
            }
            catch (NoSuchTableException e) {
                // dropped since the listing
                continue;
            }
            catch (RuntimeException e) {
                if (Failures.isConnectionFailure(e)) {
                    throw e;
                }
                // one table another engine left unreadable (its metadata file gone, or in storage this archiver cannot
                // read) must not keep every table created after it from being archived: it is looked at again next time
                log.warn("Cannot read whether Iceberg table '%s' is a readings table, so it is not archived: %s", identifier, Failures.describe(e));
                continue;
            }
            // a table another archiver's create made is that archiver's; one CREATE TABLE made is every archiver's
            if (ReadingsTableCreation.isCreatedByCreateTable(properties)) {
                created.add(table);
                found.add(table);
            }
        }
        return new CreatedTables(found, dropped);
    }

    /** What {@link #findCreatedTables} found: the tables created since the last look, and those dropped since. */
    public record CreatedTables(List<String> found, List<String> dropped)
    {
        public CreatedTables
        {
            found = ImmutableList.copyOf(requireNonNull(found, "found is null"));
            dropped = ImmutableList.copyOf(requireNonNull(dropped, "dropped is null"));
        }
    }

    /** Whether {@code table} is one of {@link #tables}. */
    public boolean isArchived(String table)
    {
        return configured.contains(table) || created.contains(table);
    }

    public String schema()
    {
        return tiers.getSchema();
    }

    /** {@code <schema>.<table>}, as the Iceberg identifier and every message name it. */
    public String qualifiedName(String table)
    {
        // names a created table found dropped too, in the messages of its last cycle
        return TableIdentifier.of(Namespace.of(tiers.getSchema()), table).toString();
    }

    public TableIdentifier identifier(String table)
    {
        checkArgument(isArchived(table), "Table '%s' is neither configured nor created", table);
        return TableIdentifier.of(Namespace.of(tiers.getSchema()), table);
    }

    public HotTier hotTier(String table)
    {
        checkArgument(isArchived(table), "Table '%s' is neither configured nor created", table);
        return tiers.hotTier(table, step());
    }

    /** The configured archival step, which names and sizes the partitions. */
    public Duration step()
    {
        return config.getArchivalStep().toJavaTime();
    }

    public ArchivalSettings settings()
    {
        return new ArchivalSettings(tiers.getSettlementLag().toJavaTime(), tiers.getReaderGrace().toJavaTime(), config.getChunkRows());
    }

    public MaintenanceSettings maintenanceSettings()
    {
        return new MaintenanceSettings(
                new SnapshotRetention(config.getSnapshotRetention().toJavaTime(), config.getMinSnapshotsToKeep()),
                config.getOrphanSafetyAge().toJavaTime(),
                tiers.getReaderGrace().toJavaTime(),
                new CompactionSettings(config.getCompactionDelay().toJavaTime(), config.getCompactionTargetFileSize().toBytes(), config.getCompactionCorrectionFiles()),
                config.retentionPeriod());
    }

    /** The maintenance of {@code table} on {@code clock}; cheap, so a new one per run. */
    public TableMaintenance maintenance(String table, InstantSource clock)
    {
        return new TableMaintenance(catalog(), identifier(table), hotTier(table), this::connect, maintenanceSettings(), clock);
    }

    /** One cycle of {@code table} on {@code clock}; cheap, so a new one per run. */
    public ArchivalCycle cycle(String table, InstantSource clock)
    {
        return new ArchivalCycle(catalog(), identifier(table), hotTier(table), this::connect, settings(), clock);
    }

    /**
     * Creates the hot partitions of {@code table} missing from now to {@code meterstore.partition-headroom} ahead
     * ({@link PartitionHeadroom}); returns their names.
     */
    public List<String> ensureHeadroom(String table, InstantSource clock)
            throws SQLException
    {
        TieringWatermark watermark = WatermarkReader.current(catalog().loadTable(identifier(table))).watermark();
        try (Connection connection = connect()) {
            return PartitionHeadroom.ensure(connection, hotTier(table), watermark, clock.instant(), config.getPartitionHeadroom().toJavaTime());
        }
    }

    /**
     * The shape {@code table} stores, refused when it differs from the one its {@code meterstore.tables} entry declares,
     * or is one this release cannot archive, naming the difference; empty for a table not created yet ({@code create}
     * settles its shape). A table created before shapes were declared stores the default one.
     */
    public Optional<TableShape> requireShape(String table)
            throws SQLException
    {
        HotTier hotTier = hotTier(table);
        try (Connection connection = connect()) {
            if (!hotTier.parentExists(connection) && !catalog().tableExists(identifier(table))) {
                return Optional.empty();
            }
            return Optional.of(ReadingsTableCreation.storedShape(connection, hotTier, catalog(), identifier(table)).orElse(TableShape.DEFAULT)
                    .requireServed(qualifiedName(table), tiers.declaredShape(table), "%s's entry '%s'".formatted(TiersConfig.TABLES_PROPERTY, table)));
        }
    }

    /** A new connection to the hot tier's database. */
    public Connection connect()
            throws SQLException
    {
        return connect(tiers.getPostgresqlUrl());
    }

    /** A new connection to the catalogue's database, which is the hot tier's unless configured otherwise. */
    public Connection connectCatalogDatabase()
            throws SQLException
    {
        return connect(tiers.catalogJdbcUrl());
    }

    private Connection connect(String url)
            throws SQLException
    {
        return DriverManager.getConnection(url, tiers.connectionProperties("meterstore-archiver"));
    }

    /** The cold tier's storage, as the archiver's own user. */
    public TrinoFileSystem fileSystem()
    {
        return fileSystemFactory.create(ConnectorIdentity.ofUser(USER));
    }

    /**
     * Refuses a warehouse the archiver cannot write, before anything is created in either tier: a local directory that
     * does not exist (a typo or an unmounted volume, not a place to start a warehouse), or storage where an empty file
     * cannot be created and deleted again (read-only, wrong credentials, a missing bucket). The probe file is deleted.
     */
    public void requireWritableWarehouse()
    {
        String warehouse = tiers.getIcebergWarehouse();
        Location location = Location.of(warehouse);
        TrinoFileSystem fileSystem = fileSystem();
        try {
            if (fileSystem.directoryExists(location).equals(Optional.of(false))) {
                throw new ArchivalException(WAREHOUSE_NOT_WRITABLE, "Warehouse '%s' does not exist: create the directory (or mount the volume) or fix meterstore.iceberg.warehouse".formatted(warehouse));
            }
            Location probe = location.appendPath(".meterstore-write-check-" + UUID.randomUUID());
            fileSystem.newOutputFile(probe).createOrOverwrite(new byte[0]);
            fileSystem.deleteFile(probe);
        }
        catch (IOException | RuntimeException e) {
            if (e instanceof ArchivalException archivalException) {
                throw archivalException;
            }
            throw new ArchivalException(WAREHOUSE_NOT_WRITABLE, "Cannot write to warehouse '%s': %s; check %s".formatted(warehouse, Failures.describe(e), ColdStorage.settingsToCheck(warehouse)), e);
        }
    }

    public synchronized Catalog catalog()
    {
        if (catalog.isEmpty()) {
            catalog = Optional.of(tiers.openCatalog(properties -> ColdStorage.fileIo(fileSystemFactory, USER)));
        }
        return catalog.get();
    }

    @PreDestroy
    @Override
    public synchronized void close()
            throws IOException
    {
        if (catalog.isPresent() && catalog.get() instanceof Closeable closeable) {
            closeable.close();
        }
        catalog = Optional.empty();
    }
}
