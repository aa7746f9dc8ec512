package io.meterstore.trino.base;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import com.google.inject.Inject;
import io.airlift.log.Logger;
import io.meterstore.core.ArchivalHistory;
import io.meterstore.core.ErasureKey;
import io.meterstore.core.HotTier;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.MeterstoreException;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.ReadingsTableCreation;
import io.meterstore.core.TableColumns;
import io.meterstore.core.TableShape;
import io.meterstore.core.TiersConfig;
import io.meterstore.storage.ColdStorage;
import io.meterstore.storage.ForwardingFileIo;
import io.trino.filesystem.Location;
import io.trino.filesystem.TrinoFileSystem;
import io.trino.filesystem.TrinoFileSystemFactory;
import io.trino.filesystem.cache.TrinoFileSystemCache;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.SchemaTableName;
import io.trino.spi.security.ConnectorIdentity;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.StaticTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchTableException;

import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import static com.google.common.base.Suppliers.memoize;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_CATALOG_UNAVAILABLE;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_COLD_READ_FAILED;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_POSTGRES_UNAVAILABLE;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_TABLE_NOT_FOUND;
import static io.trino.spi.StandardErrorCode.NOT_SUPPORTED;
import static java.util.Objects.requireNonNull;

/**
 * The readings tables this catalog serves (configured or created) and the way to each tier: the Iceberg catalogue for the cold tier, PostgreSQL
 * connections for the hot tier. Foreign failures become MeterStore errors here and nowhere else.
 */
public final class MeterstoreTables
{
    private static final Logger LOG = Logger.get(MeterstoreTables.class);
    public static final String VERSIONS_SUFFIX = "_versions";
    private static final Map<String, String> MANIFEST_CACHE = ImmutableMap.of(CatalogProperties.IO_MANIFEST_CACHE_ENABLED, "true");

    private final TiersConfig config;
    private final PostgresConnectionPool postgres;
    private final Supplier<Catalog> catalog;
    // the table each storage table was last pinned from: a metadata file never changes, and a newer one lists every snapshot of an older one
    private final Map<String, Table> lastPinned = new ConcurrentHashMap<>();
    // the shape each table last pinned stores, checked against its entry when it was pinned: a query reads it from here
    private final Map<Table, TableShape> pinnedShapes = new WeakHashMap<>();
    private final Map<String, TableOperations> catalogOperations = new ConcurrentHashMap<>();
    // the tables CREATE TABLE created beyond meterstore.tables, found by the shape their Iceberg table stores
    private final Set<String> createdTables = ConcurrentHashMap.newKeySet();
    private final Optional<ErasureKey> erasureKey;

    /**
     * @param fileSystemCache the memory {@code fileSystemFactory} keeps files in, if it keeps them (the coordinator's): it
     * holds the manifests too, so Iceberg does not keep a second copy
     */
    @Inject
    public MeterstoreTables(TiersConfig config, PostgresConnectionPool postgres, @ForColdReads TrinoFileSystemFactory fileSystemFactory, Optional<TrinoFileSystemCache> fileSystemCache)
    {
        this.config = requireNonNull(config, "config is null");
        this.postgres = requireNonNull(postgres, "postgres is null");
        requireNonNull(fileSystemFactory, "fileSystemFactory is null");
        requireNonNull(fileSystemCache, "fileSystemCache is null");
        this.erasureKey = config.erasureKey();
        // manifests never change once written: where no file cache keeps them, Iceberg keeps the ones planning reads in
        // memory instead of reading them for every query
        Map<String, String> fileIoProperties = fileSystemCache.isPresent() ? ImmutableMap.of() : MANIFEST_CACHE;
        // created on first use, so that a catalogue that is down fails the query that needs it, not the server start
        this.catalog = memoize(() -> {
            TrinoFileSystem fileSystem = fileSystemFactory.create(ConnectorIdentity.ofUser("meterstore"));
            checkWarehouseReadable(fileSystem);
            try {
                return config.openCatalog(properties -> new ForwardingFileIo(fileSystem, fileIoProperties));
            }
            catch (RuntimeException e) {
                throw new TrinoException(METERSTORE_CATALOG_UNAVAILABLE, "Cannot open the Iceberg catalogue '%s' at '%s': %s; check meterstore.iceberg.* and that the %s is reachable"
                        .formatted(config.getIcebergCatalogName(), config.catalogLocation(), e.getMessage(), switch (config.getCatalogType()) {
                            case JDBC -> "database";
                            case REST -> "REST catalogue (meterstore.iceberg.rest-catalog.uri)";
                        }), e);
            }
        });
    }

    /**
     * Lists the warehouse once before the catalogue is first used, as the archiver's {@code check} does: wrong storage
     * credentials or a missing bucket fail the first query at once, naming the settings, instead of after Iceberg has
     * retried reading a table's metadata file for minutes. A failure is not remembered: the next query checks again.
     */
    private void checkWarehouseReadable(TrinoFileSystem fileSystem)
    {
        String warehouse = config.getIcebergWarehouse();
        try {
            fileSystem.listFiles(Location.of(warehouse)).hasNext();
        }
        catch (IOException | RuntimeException e) {
            throw new TrinoException(METERSTORE_COLD_READ_FAILED, "Cannot list the warehouse '%s' of catalogue '%s': %s; check %s"
                    .formatted(warehouse, config.getIcebergCatalogName(), e.getMessage(), ColdStorage.settingsToCheck(warehouse)), e);
        }
    }

    public String schema()
    {
        return config.getSchema();
    }

    /**
     * The readings tables this catalog serves, by their name in both tiers: those of {@code meterstore.tables}, then
     * those CREATE TABLE (or the archiver's {@code create}) made beyond them, which the Iceberg namespace lists with
     * the shape they store. A catalogue that cannot be listed leaves out the created tables not seen yet: a listing of
     * the catalog never fails for the cold tier.
     */
    public List<String> storageTables()
    {
        List<String> created;
        try {
            created = translated(schema(), () -> listNamespace().stream()
                    .map(TableIdentifier::name)
                    .filter(table -> !config.getTables().contains(table))
                    .filter(this::isListedCreatedTable)
                    .sorted()
                    .toList());
        }
        catch (TrinoException e) {
            LOG.warn("Cannot list the Iceberg namespace '%s' for the tables CREATE TABLE created: %s", schema(), e.getMessage());
            created = createdTables.stream().sorted().toList();
        }
        return ImmutableList.<String>builder().addAll(config.getTables()).addAll(created).build();
    }

    /**
     * {@link #isCreatedTable} for a listing: a table that cannot be loaded (another engine's whose metadata file is gone,
     * or in storage this catalog cannot read) is left out, not the created tables listed after it.
     */
    private boolean isListedCreatedTable(String table)
    {
        try {
            return isCreatedTable(table);
        }
        catch (TrinoException e) {
            LOG.warn("Cannot read whether Iceberg table '%s.%s' is a readings table, so it is not listed: %s", schema(), table, e.getMessage());
            return false;
        }
    }

    private List<TableIdentifier> listNamespace()
    {
        try {
            return catalog.get().listTables(Namespace.of(schema()));
        }
        catch (NoSuchNamespaceException e) {
            // no table was created yet
            return List.of();
        }
    }

    /** The tables of {@code meterstore.tables}, in its order. */
    public List<String> configuredTables()
    {
        return config.getTables();
    }

    /** The shape the {@code meterstore.tables} entry of {@code table} declares; empty for an entry that is its name alone. */
    public Optional<TableShape> declaredShape(String table)
    {
        return config.declaredShape(table);
    }

    /** The storage table behind a {@code <table>_versions} name, if this catalog serves it. */
    public Optional<String> storageTableOfVersions(SchemaTableName name)
    {
        if (!name.getSchemaName().equals(schema()) || !name.getTableName().endsWith(VERSIONS_SUFFIX)) {
            return Optional.empty();
        }
        String table = name.getTableName().substring(0, name.getTableName().length() - VERSIONS_SUFFIX.length());
        return isServed(table) ? Optional.of(table) : Optional.empty();
    }

    /** The storage table behind a Trino name of either form, if this catalog serves it. */
    public Optional<String> storageTableOf(SchemaTableName name)
    {
        return isResolvedTable(name) ? Optional.of(name.getTableName()) : storageTableOfVersions(name);
    }

    public boolean isResolvedTable(SchemaTableName name)
    {
        return name.getSchemaName().equals(schema()) && isServed(name.getTableName());
    }

    /** Whether {@code table} is one of {@code meterstore.tables} or a readings table created beyond them. */
    public boolean isServed(String table)
    {
        return config.getTables().contains(table) || isCreatedTable(table);
    }

    /**
     * Whether {@code table}, which {@code meterstore.tables} does not list, is a readings table CREATE TABLE created: an
     * Iceberg table in the namespace that stores a shape ({@link TableShape#isStoredIn}). Its PostgreSQL table is created
     * first, so a creation that did not finish is not served, and CREATE TABLE finishes it. A table found is remembered
     * until it is dropped; another name costs a look into the catalogue each time it is asked for.
     */
    private boolean isCreatedTable(String table)
    {
        if (createdTables.contains(table)) {
            return true;
        }
        // a <table>_versions name is the raw relation of <table>, never a table of its own
        if (!PartitionNaming.isValidTableName(table) || table.endsWith(VERSIONS_SUFFIX)) {
            return false;
        }
        boolean created = translated(table, () -> {
            try {
                return TableShape.isStoredIn(catalog.get().loadTable(TableIdentifier.of(schema(), table)).properties());
            }
            catch (NoSuchTableException e) {
                return false;
            }
        });
        if (created) {
            createdTables.add(table);
        }
        return created;
    }

    /**
     * Refuses, before anything is created, a name CREATE TABLE cannot give a readings table beyond
     * {@code meterstore.tables}: one PostgreSQL cannot name its partitions by, or one that is the versions relation's.
     */
    public void requireCreatableName(SchemaTableName name)
    {
        String table = name.getTableName();
        if (table.endsWith(VERSIONS_SUFFIX)) {
            throw new TrinoException(NOT_SUPPORTED, "Table name '%s' ends in '%s', which names the versions of a readings table: create '%s', which is also read as '%s'"
                    .formatted(name, VERSIONS_SUFFIX, table.substring(0, table.length() - VERSIONS_SUFFIX.length()), table));
        }
        if (!PartitionNaming.isValidTableName(table)) {
            throw new TrinoException(NOT_SUPPORTED, "Table name '%s' cannot name a readings table: use lowercase letters, digits and underscores, starting with a letter or an underscore, at most %s characters, so that PostgreSQL can name its partitions after it"
                    .formatted(name, PartitionNaming.MAX_TABLE_NAME_LENGTH));
        }
    }

    public Table loadIcebergTable(String table)
    {
        return translated(table, () -> {
            Table icebergTable = catalog.get().loadTable(TableIdentifier.of(schema(), table));
            IcebergTableSpec.verify(icebergTable);
            shape(table, icebergTable);
            return icebergTable;
        });
    }

    /**
     * The shape {@code icebergTable} stores (the default one for a table created before shapes were declared), refused
     * when its {@code meterstore.tables} entry declares another or this release cannot read or write it.
     */
    public TableShape shape(String table, Table icebergTable)
    {
        try {
            return TableShape.ofProperties(icebergTable.properties()).orElse(TableShape.DEFAULT)
                    .requireServed("%s.%s".formatted(schema(), table), config.declaredShape(table), "%s's entry '%s' of the catalogue".formatted(TiersConfig.TABLES_PROPERTY, table));
        }
        catch (MeterstoreException e) {
            throw MeterstoreErrorCode.toTrinoException(e);
        }
    }

    /**
     * The shape {@code icebergTable}, a table {@link #pinIcebergTable} returned, stores: the one checked when it was
     * pinned, read without parsing the properties again.
     */
    public TableShape pinnedShape(String table, Table icebergTable)
    {
        TableShape shape;
        synchronized (pinnedShapes) {
            shape = pinnedShapes.get(icebergTable);
        }
        return shape != null ? shape : shape(table, icebergTable);
    }

    /**
     * The columns {@code table} stores, for a listing of the catalogue's columns: by the shape its Iceberg table stores;
     * for a configured table nobody has created yet, or one that cannot be read (its queries say why), by the shape its
     * {@code meterstore.tables} entry declares, the default one for an entry that is its name alone. A listing of the
     * whole catalogue never fails for one table.
     */
    public TableColumns listedColumns(String table)
    {
        try {
            Table pinned = pinIcebergTable(table);
            return TableColumns.of(pinnedShape(table, pinned));
        }
        catch (TrinoException e) {
            return TableColumns.of(config.declaredShape(table).orElse(TableShape.DEFAULT));
        }
    }

    /**
     * Creates both tiers of {@code table} with {@code shape}, as the archiver's {@code create} does
     * ({@link ReadingsTableCreation}): what CREATE TABLE runs.
     */
    public void createTable(String table, TableShape shape)
    {
        TableIdentifier identifier = TableIdentifier.of(schema(), table);
        translated(table, () -> {
            try (Connection connection = connectPostgres()) {
                ReadingsTableCreation.Created created = ReadingsTableCreation.create(connection, hotTier(table), catalog.get(), identifier, Optional.of(shape), "CREATE TABLE", ReadingsTableCreation.BY_CREATE_TABLE);
                if (!config.getTables().contains(table)) {
                    createdTables.add(table);
                }
                return created;
            }
            catch (SQLException e) {
                throw new TrinoException(METERSTORE_POSTGRES_UNAVAILABLE, "Cannot create PostgreSQL table %s: %s".formatted(hotTier(table).qualifiedParent(), e.getMessage()), e);
            }
        });
    }

    /**
     * Drops both tiers of {@code table}: in PostgreSQL the parent table with its attached partitions, the partitions
     * archival left detached, and the table's archival window; in Iceberg the table with every data and metadata file
     * (purged). Under the archiver's lease, so no cycle runs meanwhile. The audit trail of erasures and the suppression
     * list stay: a table created again under the name keeps refusing the readings erased from the old one.
     */
    public List<String> dropTable(String table)
    {
        TableIdentifier identifier = TableIdentifier.of(schema(), table);
        HotTier hotTier = hotTier(table);
        List<String> dropped;
        try (Connection connection = connectPostgres()) {
            // PostgreSQL first: a drop interrupted after it leaves the Iceberg table, which DROP TABLE finds and drops again
            dropped = hotTier.dropTable(connection);
        }
        catch (SQLException e) {
            throw new TrinoException(METERSTORE_POSTGRES_UNAVAILABLE, "Cannot drop PostgreSQL table %s: %s".formatted(hotTier.qualifiedParent(), e.getMessage()), e);
        }
        translated(table, () -> catalog.get().dropTable(identifier, true));
        catalogOperations.remove(table);
        lastPinned.remove(table);
        createdTables.remove(table);
        return ImmutableList.<String>builder().addAll(dropped).add("Iceberg table '%s' and its files".formatted(identifier)).build();
    }

    /** Whether {@code table} exists in neither tier: a configured table nobody has created yet. */
    public boolean existsInNeitherTier(String table)
    {
        boolean cold = translated(table, () -> catalog.get().tableExists(TableIdentifier.of(schema(), table)));
        if (cold) {
            return false;
        }
        // a created table dropped elsewhere (by another catalog over the same tiers) is served no longer
        createdTables.remove(table);
        try (Connection connection = connectPostgres()) {
            return !hotTier(table).parentExists(connection);
        }
        catch (SQLException e) {
            throw new TrinoException(METERSTORE_POSTGRES_UNAVAILABLE, "Cannot read whether PostgreSQL table %s exists: %s".formatted(hotTier(table).qualifiedParent(), e.getMessage()), e);
        }
    }

    /**
     * The table for a query to pin its snapshot and W from, kept for that query's statistics and splits
     * ({@link #icebergTableListing}). Only reads use it: a writer refreshes and commits through its table, so it loads
     * one of its own ({@link #loadIcebergTable}).
     */
    public Table pinIcebergTable(String table)
    {
        return translated(table, () -> {
            // one operations object per table, refreshed for every query: it reads the catalogue's pointer each time, but
            // the metadata file, which grows with every archival commit, only when a commit moved the pointer
            TableOperations operations = catalogOperations(table);
            TableMetadata metadata;
            try {
                metadata = refresh(operations);
            }
            catch (IllegalStateException e) {
                // the table was dropped and created again under its name: Iceberg refuses to refresh the old table's
                // operations to a table of another UUID, and the new table's operations are loaded anew
                catalogOperations.remove(table, operations);
                operations = catalogOperations(table);
                metadata = refresh(operations);
            }
            Table pinned = lastPinned.get(table);
            if (pinned != null && ((HasTableOperations) pinned).operations().current() == metadata) {
                return pinned;
            }
            // a table over exactly this metadata: queries pin from it and never refresh it
            Table fresh = new BaseTable(new StaticTableOperations(metadata, operations.io()), "%s.%s.%s".formatted(config.getIcebergCatalogName(), schema(), table));
            IcebergTableSpec.verify(fresh);
            TableShape shape = shape(table, fresh);
            synchronized (pinnedShapes) {
                pinnedShapes.put(fresh, shape);
            }
            lastPinned.put(table, fresh);
            return fresh;
        });
    }

    private TableOperations catalogOperations(String table)
    {
        return catalogOperations.computeIfAbsent(table, name -> ((HasTableOperations) catalog.get().loadTable(TableIdentifier.of(schema(), name))).operations());
    }

    private static TableMetadata refresh(TableOperations operations)
    {
        synchronized (operations) {
            return operations.refresh();
        }
    }

    private <T> T translated(String table, Supplier<T> catalogAccess)
    {
        try {
            return catalogAccess.get();
        }
        catch (NoSuchTableException e) {
            throw new TrinoException(METERSTORE_TABLE_NOT_FOUND, "Iceberg table '%s.%s' of MeterStore table '%s' does not exist in catalogue '%s': create it with 'meterstore-archiver create'"
                    .formatted(schema(), table, table, config.getIcebergCatalogName()), e);
        }
        catch (MeterstoreException e) {
            throw MeterstoreErrorCode.toTrinoException(e);
        }
        catch (TrinoException e) {
            throw e;
        }
        catch (RuntimeException e) {
            throw new TrinoException(METERSTORE_CATALOG_UNAVAILABLE, "Cannot load Iceberg table '%s.%s' from catalogue '%s': %s"
                    .formatted(schema(), table, config.getIcebergCatalogName(), e.getMessage()), e);
        }
    }

    /**
     * The table to plan a pinned snapshot with: the one last pinned if it lists that snapshot, else the table pinned anew.
     * A query loads the table once, in getTableHandle; its statistics and splits then read neither the catalogue nor
     * the metadata file again, which grows with every archival commit.
     */
    public Table icebergTableListing(String table, long snapshotId)
    {
        Table pinned = lastPinned.get(table);
        if (pinned != null && pinned.snapshot(snapshotId) != null) {
            return pinned;
        }
        return pinIcebergTable(table);
    }

    /** The key erasures record their scope under; empty when meterstore.erasure.hmac-key is not set. */
    public Optional<ErasureKey> erasureKey()
    {
        return erasureKey;
    }

    public HotTier hotTier(String table)
    {
        // the step only matters for creating partitions; reading enumerates whatever partitions exist
        return hotTier(table, PartitionNaming.DEFAULT_STEP);
    }

    /** The hot tier of {@code table} with partitions of {@code step}, which names the partitions a write creates. */
    public HotTier hotTier(String table, Duration step)
    {
        return config.hotTier(table, step);
    }

    /**
     * The hot tier of {@code table} as a write sees it: with partitions of the archival step its Iceberg table records,
     * the names the archiver gives them (the default step while none is recorded).
     */
    public HotTier hotTierForWrites(String table, Table icebergTable)
    {
        try {
            return hotTier(table, ArchivalHistory.recordedStep(icebergTable).orElse(PartitionNaming.DEFAULT_STEP));
        }
        catch (MeterstoreException e) {
            throw MeterstoreErrorCode.toTrinoException(e);
        }
    }

    /** Runs a read of the hot tier that can be repeated; see {@link PostgresConnectionPool#read}. */
    public <T> T readPostgres(PostgresConnectionPool.SqlRead<T> read)
            throws SQLException
    {
        return postgres.read(read);
    }

    /** A pooled connection to the hot tier; closing it gives it back. */
    public Connection connectPostgres()
    {
        return postgres.connection();
    }

}
