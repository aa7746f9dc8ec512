package io.meterstore.trino;

import com.google.common.collect.Iterables;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.TiersConfig;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.meterstore.trino.base.MeterstoreConfig;
import io.meterstore.trino.base.MeterstoreTables;
import io.meterstore.trino.base.PostgresConnectionPool;
import io.opentelemetry.api.OpenTelemetry;
import io.trino.filesystem.TrinoFileSystemFactory;
import io.trino.filesystem.local.LocalFileSystem;
import io.trino.filesystem.memory.MemoryFileSystemCache;
import io.trino.filesystem.memory.MemoryFileSystemCacheConfig;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;
import static io.meterstore.trino.TestingMeterstoreTables.TABLE;
import static org.assertj.core.api.Assertions.assertThat;

final class TestMeterstoreTables
{
    @Test
    void testPlanningReusesTheLoadedTableWhileItListsThePinnedSnapshot()
            throws Exception
    {
        TestingWarehouse warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("tables"));
        TestingMeterstoreTables.createTables(warehouse);
        TiersConfig config = new TiersConfig()
                .setPostgresqlUrl(warehouse.database().jdbcUrl())
                .setPostgresqlUser(warehouse.database().user())
                .setSchema(SCHEMA)
                .setTables(List.of(TABLE))
                .setIcebergCatalogName(warehouse.catalogName())
                .setIcebergWarehouse(warehouse.location());
        try (PostgresConnectionPool postgres = new PostgresConnectionPool(config, new MeterstoreConfig())) {
            testPlanningReusesTheLoadedTable(warehouse, new MeterstoreTables(config, postgres, identity -> new LocalFileSystem(Path.of("/")), Optional.empty()));

            testCoordinatorFileCacheKeepsTheManifests(warehouse, config, postgres);
        }
    }

    /** A coordinator's file cache keeps the manifests planning reads, and Iceberg keeps no second copy in front of it. */
    private static void testCoordinatorFileCacheKeepsTheManifests(TestingWarehouse warehouse, TiersConfig config, PostgresConnectionPool postgres)
            throws IOException
    {
        Table written = warehouse.catalog().loadTable(TableIdentifier.of(SCHEMA, TABLE));
        // planning reads the manifests, never the data files: an entry is enough
        written.newAppend().appendFile(DataFiles.builder(written.spec())
                .withPath(warehouse.location() + "/data/from_month=2024-03/listed-only.parquet")
                // month("from") as Iceberg stores it: months since 1970-01, here 2024-03
                .withPartitionPath("from_month=650")
                .withFileSizeInBytes(1024)
                .withRecordCount(1)
                .build()).commit();

        MemoryFileSystemCache cache = new MemoryFileSystemCache(new MemoryFileSystemCacheConfig());
        TrinoFileSystemFactory storage = identity -> new LocalFileSystem(Path.of("/"));
        MeterstoreTables tables = new MeterstoreTables(config, postgres, CoordinatorFileCacheModule.coldReads(storage, Optional.of(cache), OpenTelemetry.noop().getTracer("test")), Optional.of(cache));
        Table pinned = tables.pinIcebergTable(TABLE);
        assertThat(((HasTableOperations) pinned).operations().io().properties()).doesNotContainKey(CatalogProperties.IO_MANIFEST_CACHE_ENABLED);
        assertThat(plannedFiles(pinned)).isEqualTo(1);
        long hits = cache.getHitCount();
        // the next query's planning reads the manifest again, from the file cache: no cache of Iceberg's answers first
        assertThat(plannedFiles(pinned)).isEqualTo(1);
        assertThat(cache.getHitCount()).isGreaterThan(hits);
    }

    private static int plannedFiles(Table table)
            throws IOException
    {
        try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
            return Iterables.size(tasks);
        }
    }

    private static void testPlanningReusesTheLoadedTable(TestingWarehouse warehouse, MeterstoreTables tables)
    {

        // another process (the archiver) commits through a catalogue of its own
        long first = commitSnapshot(warehouse);
        Table pinned = tables.pinIcebergTable(TABLE);
        assertThat(pinned.currentSnapshot().snapshotId()).isEqualTo(first);
        // the next query finds the catalogue's pointer where it was: the same table, its metadata file not read again
        assertThat(tables.pinIcebergTable(TABLE)).isSameAs(pinned);
        // and, without a file cache, Iceberg keeps the manifests planning reads in memory: they never change once written
        assertThat(((HasTableOperations) pinned).operations().io().properties()).containsEntry(CatalogProperties.IO_MANIFEST_CACHE_ENABLED, "true");
        // statistics and splits of that query plan with the table it pinned from, without reading the catalogue again
        assertThat(tables.icebergTableListing(TABLE, first)).isSameAs(pinned);

        long second = commitSnapshot(warehouse);
        // a writer's table, which it refreshes and commits through, is its own and never handed to a query's planning
        Table writers = tables.loadIcebergTable(TABLE);
        assertThat(writers.currentSnapshot().snapshotId()).isEqualTo(second);
        // a snapshot the loaded table does not list loads the table anew, which lists both
        Table reloaded = tables.icebergTableListing(TABLE, second);
        assertThat(reloaded).isNotSameAs(pinned).isNotSameAs(writers);
        assertThat(reloaded.currentSnapshot().snapshotId()).isEqualTo(second);
        assertThat(tables.icebergTableListing(TABLE, first)).isSameAs(reloaded);
        assertThat(reloaded.snapshot(first).snapshotId()).isEqualTo(first);

        // the table dropped and created again under its name (a new table UUID): the next query pins the new table
        assertThat(warehouse.catalog().dropTable(TableIdentifier.of(SCHEMA, TABLE), true)).isTrue();
        IcebergTableSpec.createIfMissing(warehouse.catalog(), TableIdentifier.of(SCHEMA, TABLE));
        long recreated = commitSnapshot(warehouse);
        assertThat(tables.pinIcebergTable(TABLE).currentSnapshot().snapshotId()).isEqualTo(recreated);
    }

    private static long commitSnapshot(TestingWarehouse warehouse)
    {
        Table table = warehouse.catalog().loadTable(TableIdentifier.of(SCHEMA, TABLE));
        table.newAppend().commit();
        return table.currentSnapshot().snapshotId();
    }
}
