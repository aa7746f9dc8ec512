package io.meterstore.archiver.cycle;

import com.google.common.collect.ImmutableList;
import io.meterstore.core.HotPartition;
import io.meterstore.core.HotTier;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.TieringWatermark;
import io.meterstore.testing.TestingDatabase;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.CloseableIterable;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static java.util.Objects.requireNonNull;

/** Both tiers of one readings table, in a fresh database and warehouse, with a clock the test moves. */
public final class TestingArchiverTable
        implements AutoCloseable
{
    public static final String SCHEMA = "metering";
    public static final String TABLE = "readings";

    private final TestingDatabase database;
    private final TestingWarehouse warehouse;
    private final Catalog catalog;
    private final HotTier hotTier;
    private final TestingClock clock;

    private TestingArchiverTable(TestingDatabase database, TestingWarehouse warehouse, Catalog catalog, HotTier hotTier, TestingClock clock)
    {
        this.database = requireNonNull(database, "database is null");
        this.warehouse = requireNonNull(warehouse, "warehouse is null");
        this.catalog = requireNonNull(catalog, "catalog is null");
        this.hotTier = requireNonNull(hotTier, "hotTier is null");
        this.clock = requireNonNull(clock, "clock is null");
    }

    public static TestingArchiverTable create(String hint, Duration step, Duration lockTimeout)
            throws SQLException
    {
        return create(TestingPostgresServer.shared(), hint, step, lockTimeout);
    }

    /** On {@code server}: a test that restarts PostgreSQL brings a server of its own. */
    public static TestingArchiverTable create(TestingPostgresServer server, String hint, Duration step, Duration lockTimeout)
            throws SQLException
    {
        TestingDatabase database = server.createDatabase(hint);
        TestingWarehouse warehouse = TestingWarehouse.create(database);
        Catalog catalog = warehouse.catalog();
        HotTier hotTier = new HotTier(SCHEMA, new PartitionNaming(TABLE, step), lockTimeout);
        try (Connection connection = database.connect()) {
            hotTier.createParent(connection);
        }
        IcebergTableSpec.createIfMissing(catalog, identifier());
        return new TestingArchiverTable(database, warehouse, catalog, hotTier, new TestingClock(Instant.EPOCH));
    }

    public static TestingArchiverTable create(String hint)
            throws SQLException
    {
        return create(hint, PartitionNaming.DEFAULT_STEP, Duration.ofSeconds(5));
    }

    public static TableIdentifier identifier()
    {
        return TableIdentifier.of(Namespace.of(SCHEMA), TABLE);
    }

    public TestingDatabase database()
    {
        return database;
    }

    public TestingWarehouse warehouse()
    {
        return warehouse;
    }

    public Catalog catalog()
    {
        return catalog;
    }

    public HotTier hotTier()
    {
        return hotTier;
    }

    public TestingClock clock()
    {
        return clock;
    }

    public ArchivalCycle cycle(ArchivalSettings settings)
    {
        return new ArchivalCycle(catalog, identifier(), hotTier, database::connect, settings, clock);
    }

    public ArchivalCycle cycle()
    {
        return cycle(ArchivalSettings.DEFAULTS);
    }

    public Connection connect()
            throws SQLException
    {
        return database.connect();
    }

    /** The Iceberg table as the catalogue has it now. */
    public Table table()
    {
        return catalog.loadTable(identifier());
    }

    public List<HotPartition> partitions()
            throws SQLException
    {
        try (Connection connection = connect()) {
            return hotTier.partitions(connection);
        }
    }

    /** Rows of every hot partition starting at or above the watermark, each read by its name, as a query reads them. */
    public long hotRows(TieringWatermark watermark)
            throws SQLException
    {
        long rows = 0;
        try (Connection connection = connect()) {
            for (HotPartition partition : hotTier.partitions(connection)) {
                if (partition.isBelow(watermark)) {
                    continue;
                }
                rows += partition.start().isBefore(watermark.instant())
                        ? hotTier.rowCount(connection, partition.name()) - hotTier.rowCountBelow(connection, partition.name(), watermark.instant())
                        : hotTier.rowCount(connection, partition.name());
            }
        }
        return rows;
    }

    /** The data files of the current snapshot. */
    public List<DataFile> dataFiles()
    {
        Table table = table();
        if (table.currentSnapshot() == null) {
            return List.of();
        }
        try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
            ImmutableList.Builder<DataFile> files = ImmutableList.builder();
            for (FileScanTask task : tasks) {
                files.add(task.file());
            }
            return files.build();
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close()
            throws IOException
    {
        if (catalog instanceof Closeable closeable) {
            closeable.close();
        }
        database.close();
    }
}
