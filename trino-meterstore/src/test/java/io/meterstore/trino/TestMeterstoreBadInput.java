package io.meterstore.trino;

import com.google.common.collect.ImmutableMap;
import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchivalSettings;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.core.HotTier;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.LocalFileIo;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.ReadingsSchema;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.trino.testing.AbstractTestQueryFramework;
import io.trino.testing.DistributedQueryRunner;
import io.trino.testing.MaterializedResult;
import io.trino.testing.QueryRunner;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.Test;

import javax.management.MalformedObjectNameException;
import javax.management.ObjectName;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.InstantSource;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import static io.meterstore.trino.base.MeterstoreConfig.COORDINATOR_FILE_CACHE_PROPERTY;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_CATALOG_UNAVAILABLE;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_COLD_READ_FAILED;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_POSTGRES_UNAVAILABLE;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_UNSUPPORTED_TABLE_LAYOUT;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_WATERMARK_MISSING;
import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;
import static io.trino.spi.StandardErrorCode.TABLE_NOT_FOUND;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Every refusal names what is wrong and what to do, with a MeterStore error code. */
final class TestMeterstoreBadInput
        extends AbstractTestQueryFramework
{
    // nothing listens on port 1
    private static final String UNREACHABLE_POSTGRES = "jdbc:postgresql://localhost:1/metering?connectTimeout=2";

    private Table damagedTable;
    private Map<String, String> damagedCatalog;

    @Override
    protected QueryRunner createQueryRunner()
            throws Exception
    {
        TestingWarehouse warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("bad_input"));
        TestingMeterstoreTables.createTables(warehouse);
        Catalog catalog = warehouse.catalog();

        // a table another tool wrote: snapshots, none of them MeterStore's
        IcebergTableSpec.createIfMissing(catalog, TableIdentifier.of(SCHEMA, "foreign"))
                .newAppend().set("engine", "compaction").commit();
        // format v3, which MeterStore refuses to read
        Schema schema = ReadingsSchema.icebergSchema();
        catalog.buildTable(TableIdentifier.of(SCHEMA, "future"), schema)
                .withPartitionSpec(IcebergTableSpec.partitionSpec(schema))
                .withProperty("format-version", "3")
                .create();
        // a table altered by another tool: a column dropped
        IcebergTableSpec.createIfMissing(catalog, TableIdentifier.of(SCHEMA, "dropped"))
                .updateSchema().deleteColumn("provenance").commit();
        // and one replaced by a format v1 table
        catalog.buildTable(TableIdentifier.of(SCHEMA, "downgraded"), schema)
                .withPartitionSpec(IcebergTableSpec.partitionSpec(schema))
                .withProperty("format-version", "1")
                .create();
        // a table with archived days, whose data files the tests damage by hand and restore
        HotTier damaged = new HotTier(SCHEMA, new PartitionNaming("damaged", PartitionNaming.DEFAULT_STEP), Duration.ofSeconds(5));
        try (Connection connection = warehouse.database().connect()) {
            damaged.createParent(connection);
            new ReadingsLoader(damaged).load(connection, ReadingsGenerator.builder().seed(51).meters(3).startDay(LocalDate.of(2026, 1, 12)).days(2).build());
        }
        IcebergTableSpec.createIfMissing(catalog, TableIdentifier.of(SCHEMA, "damaged"));
        ArchivalCycle archival = new ArchivalCycle(catalog, TableIdentifier.of(SCHEMA, "damaged"), damaged, () -> warehouse.database().connect(), ArchivalSettings.DEFAULTS, InstantSource.fixed(TestingArchival.LATER));
        while (archival.archiveOnce().kind() == ArchiveOutcome.Kind.ARCHIVED) {
            // every closed day into Iceberg
        }
        damagedTable = catalog.loadTable(TableIdentifier.of(SCHEMA, "damaged"));

        Map<String, String> tables = ImmutableMap.of("meterstore.tables", "readings,foreign,future,absent,dropped,downgraded,damaged");
        DistributedQueryRunner queryRunner = MeterstoreQueryRunner.builder(warehouse)
                .withoutIceberg()
                .withCatalogOverrides(tables)
                .build();

        // this node is the coordinator, whose catalog keeps the small files it read in memory; a worker reads the storage, as this catalog does
        damagedCatalog = new HashMap<>(MeterstoreQueryRunner.catalogProperties(warehouse));
        damagedCatalog.putAll(tables);
        Map<String, String> uncached = new HashMap<>(damagedCatalog);
        uncached.put(COORDINATOR_FILE_CACHE_PROPERTY, "false");
        queryRunner.createCatalog("uncached", "meterstore", uncached);

        Map<String, String> postgresDown = new HashMap<>(MeterstoreQueryRunner.catalogProperties(warehouse));
        postgresDown.put("meterstore.postgresql.url", UNREACHABLE_POSTGRES);
        postgresDown.put("meterstore.iceberg.jdbc-url", warehouse.database().jdbcUrl());
        queryRunner.createCatalog("postgres_down", "meterstore", postgresDown);

        Map<String, String> everythingDown = new HashMap<>(MeterstoreQueryRunner.catalogProperties(warehouse));
        everythingDown.put("meterstore.postgresql.url", UNREACHABLE_POSTGRES);
        queryRunner.createCatalog("everything_down", "meterstore", everythingDown);
        return queryRunner;
    }

    @Test
    void testUnknownTableIsMissingAsOnEveryCatalog()
            throws Exception
    {
        assertThat(query("SELECT count(*) FROM readings_nope"))
                .failure()
                .hasErrorCode(TABLE_NOT_FOUND)
                .hasMessage("line 1:22: Table 'meterstore.metering.readings_nope' does not exist");

        // through the real JDBC driver, as a BI tool sees the catalog
        try (Connection connection = DriverManager.getConnection("jdbc:trino://%s/meterstore/metering".formatted(getDistributedQueryRunner().getCoordinator().getAddress()), "bi", null);
                Statement statement = connection.createStatement()) {
            DatabaseMetaData metaData = connection.getMetaData();
            assertThat(columnNames(metaData.getColumns("meterstore", "metering", "readings_nope", null))).isEmpty();
            assertThat(columnNames(metaData.getColumns("meterstore", "metering", "readings_versions", null))).containsExactlyElementsOf(
                    Stream.of(ReadingsColumn.values()).map(ReadingsColumn::columnName).toList());
            // every served table lists its columns, even one whose Iceberg table is missing or cannot be read (the readings
            // columns, and the attribute columns its entry declares): one broken table never fails a listing
            List<String> tables = new ArrayList<>();
            try (ResultSet columns = metaData.getColumns("meterstore", "metering", null, "malo_id")) {
                while (columns.next()) {
                    tables.add(columns.getString("TABLE_NAME"));
                }
            }
            assertThat(tables).containsExactlyInAnyOrder(
                    "readings", "readings_versions", "foreign", "foreign_versions", "future", "future_versions", "absent", "absent_versions",
                    "dropped", "dropped_versions", "downgraded", "downgraded_versions", "damaged", "damaged_versions");

            assertThat(longValue(statement, "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'metering' AND table_name = 'readings_nope'")).isZero();
            assertThat(longValue(statement, "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'metering' AND table_name = 'readings'")).isEqualTo(ReadingsColumn.values().length);
            assertThat(longValue(statement, "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'metering' AND table_name = 'readings_nope'")).isZero();

            // IF EXISTS is a no-op; SHOW CREATE TABLE and DESCRIBE report the name missing, as Trino does
            assertThat(statement.execute("DROP TABLE IF EXISTS readings_nope")).isFalse();
            for (String sql : List.of("SHOW CREATE TABLE readings_nope", "DESCRIBE readings_nope", "SHOW COLUMNS FROM readings_nope")) {
                assertThatThrownBy(() -> statement.execute(sql))
                        .as(sql)
                        .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(TABLE_NOT_FOUND.toErrorCode().getCode()))
                        .hasMessageContaining("Table 'meterstore.metering.readings_nope' does not exist");
            }
            try (ResultSet created = statement.executeQuery("SHOW CREATE TABLE readings_versions")) {
                assertThat(created.next()).isTrue();
                assertThat(created.getString(1)).startsWith("CREATE TABLE meterstore.metering.readings_versions (").contains("malo_id varchar NOT NULL");
            }
        }
    }

    private static List<String> columnNames(ResultSet columns)
            throws SQLException
    {
        try (columns) {
            List<String> names = new ArrayList<>();
            while (columns.next()) {
                names.add(columns.getString("COLUMN_NAME"));
            }
            return names;
        }
    }

    private static long longValue(Statement statement, String sql)
            throws SQLException
    {
        try (ResultSet result = statement.executeQuery(sql)) {
            assertThat(result.next()).isTrue();
            return result.getLong(1);
        }
    }

    @Test
    void testConfiguredTableMissingInIceberg()
    {
        // a configured table in neither tier does not exist yet, as on any catalog: CREATE TABLE creates it
        assertThat(query("SELECT count(*) FROM absent_versions"))
                .failure()
                .hasErrorCode(TABLE_NOT_FOUND)
                .hasMessageContaining("absent_versions' does not exist");
    }

    @Test
    void testWatermarkChainWithoutMeterstoreSnapshot()
    {
        assertThat(query("SELECT count(*) FROM foreign_versions"))
                .failure()
                .hasErrorCode(METERSTORE_WATERMARK_MISSING)
                .hasMessageContaining("meterstore.tiering_watermark")
                .hasMessageContaining("reassert the watermark");
    }

    @Test
    void testFormatVersionThree()
    {
        assertThat(query("SELECT count(*) FROM future_versions"))
                .failure()
                .hasErrorCode(METERSTORE_UNSUPPORTED_TABLE_LAYOUT)
                .hasMessageContaining("format version 3")
                .hasMessageContaining("format version 2 only");
    }

    @Test
    void testTableAlteredByAnotherTool()
    {
        // at planning, naming the table and what changed
        assertThat(query("SELECT count(*) FROM dropped_versions"))
                .failure()
                .hasErrorCode(METERSTORE_UNSUPPORTED_TABLE_LAYOUT)
                .hasMessageContaining("Iceberg table 'meterstore.metering.dropped' is not a readings table: column 'provenance' (field id 13, string) was dropped; it was altered outside MeterStore");
        assertThat(query("SELECT count(*) FROM downgraded"))
                .failure()
                .hasErrorCode(METERSTORE_UNSUPPORTED_TABLE_LAYOUT)
                .hasMessageContaining("Iceberg table 'meterstore.metering.downgraded' has format version 1: MeterStore reads and writes format version 2 only");
    }

    private DataFile firstDamagedFile()
            throws IOException
    {
        try (CloseableIterable<FileScanTask> tasks = damagedTable.newScan().planFiles()) {
            return tasks.iterator().next().file();
        }
    }

    /** A copy of {@code path} to restore it from, as an operator's backup. */
    private static Path backUp(Path path)
            throws IOException
    {
        Path backup = Files.createTempFile("meterstore-damaged-", ".parquet");
        Files.copy(path, backup, StandardCopyOption.REPLACE_EXISTING);
        return backup;
    }

    @Test
    void testColdDataFileRestoredAnswersAtOnce()
            throws Exception
    {
        // a catalog of its own, whose memory holds no file yet
        getQueryRunner().createCatalog("first_read", "meterstore", damagedCatalog);
        String sql = "SELECT count(*), sum(value) FROM first_read.metering.damaged_versions";
        MaterializedResult expected = computeActual("SELECT count(*), sum(value) FROM uncached.metering.damaged_versions");
        DataFile file = firstDamagedFile();
        Path path = LocalFileIo.path(file.location());
        Path backup = backUp(path);
        try {
            // the coordinator's first read finds the file cut short, and what it read is all the memory could keep of it
            try (FileChannel channel = FileChannel.open(path, StandardOpenOption.WRITE)) {
                channel.truncate(file.fileSizeInBytes() / 2);
            }
            assertThat(query(sql))
                    .failure()
                    .hasErrorCode(METERSTORE_COLD_READ_FAILED)
                    .hasMessageContaining("Data file '%s' is %s bytes long, but the snapshot records %s bytes".formatted(file.location(), file.fileSizeInBytes() / 2, file.fileSizeInBytes()));
        }
        finally {
            Files.move(backup, path, StandardCopyOption.REPLACE_EXISTING);
        }
        // restored from a backup, as the error says, the file answers the next query: the failed read dropped the short copy
        assertThat(computeActual(sql)).isEqualTo(expected);
    }

    @Test
    void testCoordinatorFileCacheCountsOverJmx()
            throws Exception
    {
        getQueryRunner().createCatalog("watched", "meterstore", damagedCatalog);
        String sql = "SELECT count(*), sum(value) FROM watched.metering.damaged_versions";
        computeActual(sql);
        long requests = fileCacheCount("watched", "RequestCount");
        long hits = fileCacheCount("watched", "HitCount");
        assertThat(requests).isPositive();
        // the same query again reads every file it needs from memory
        computeActual(sql);
        assertThat(fileCacheCount("watched", "RequestCount")).isGreaterThan(requests);
        assertThat(fileCacheCount("watched", "HitCount") - hits).isEqualTo(fileCacheCount("watched", "RequestCount") - requests);
        // a catalog with the cache off exports none
        computeActual("SELECT count(*) FROM uncached.metering.damaged_versions");
        assertThat(fileCacheBeans("uncached")).isEmpty();
    }

    private static long fileCacheCount(String catalog, String attribute)
            throws Exception
    {
        Set<ObjectName> beans = fileCacheBeans(catalog);
        assertThat(beans).hasSize(1);
        return (long) ManagementFactory.getPlatformMBeanServer().getAttribute(beans.iterator().next(), attribute);
    }

    // named as Trino's Iceberg connector names its catalog's file cache
    private static Set<ObjectName> fileCacheBeans(String catalog)
            throws MalformedObjectNameException
    {
        return ManagementFactory.getPlatformMBeanServer().queryNames(new ObjectName("io.trino.filesystem.memory:type=MemoryFileSystemCache,name=%s,*".formatted(catalog)), null);
    }

    @Test
    void testColdDataFileDeletedOrTruncatedByHand()
            throws Exception
    {
        MaterializedResult expected = computeActual("SELECT count(*), sum(value) FROM damaged_versions");
        assertThat((long) expected.getMaterializedRows().getFirst().getField(0)).isPositive();
        DataFile file = firstDamagedFile();
        Path path = LocalFileIo.path(file.location());
        Path backup = backUp(path);
        try {
            // deleted: an error naming the file, never an answer without its rows, in either view
            Files.delete(path);
            for (String table : List.of("damaged_versions", "damaged")) {
                assertThat(query("SELECT count(*), sum(value) FROM uncached.metering." + table))
                        .failure()
                        .hasErrorCode(METERSTORE_COLD_READ_FAILED)
                        .hasMessageContaining("Data file '%s' of the pinned snapshot does not exist".formatted(file.location()))
                        .hasMessageContaining("restore the file from a backup");
            }
            // the coordinator answers from the file it keeps in memory since its first read: every row, never a short answer
            assertThat(computeActual("SELECT count(*), sum(value) FROM damaged_versions")).isEqualTo(expected);

            // truncated: its length against the snapshot's says what happened
            Files.copy(backup, path);
            try (FileChannel channel = FileChannel.open(path, StandardOpenOption.WRITE)) {
                channel.truncate(file.fileSizeInBytes() / 2);
            }
            assertThat(query("SELECT count(*), sum(value) FROM uncached.metering.damaged_versions"))
                    .failure()
                    .hasErrorCode(METERSTORE_COLD_READ_FAILED)
                    .hasMessageContaining("Data file '%s' is %s bytes long, but the snapshot records %s bytes: it was truncated or overwritten".formatted(file.location(), file.fileSizeInBytes() / 2, file.fileSizeInBytes()));
            assertThat(computeActual("SELECT count(*), sum(value) FROM damaged_versions")).isEqualTo(expected);
        }
        finally {
            Files.move(backup, path, StandardCopyOption.REPLACE_EXISTING);
        }
        assertThat(computeActual("SELECT count(*), sum(value) FROM uncached.metering.damaged_versions")).isEqualTo(expected);
    }

    @Test
    void testUnreachablePostgres()
    {
        assertThat(query("SELECT count(*) FROM postgres_down.metering.readings_versions"))
                .failure()
                .hasErrorCode(METERSTORE_POSTGRES_UNAVAILABLE)
                .hasMessageContaining("Cannot connect to PostgreSQL at '%s'".formatted(UNREACHABLE_POSTGRES))
                .hasMessageContaining("meterstore.postgresql");
    }

    @Test
    void testUnreachableCatalogue()
    {
        assertThat(query("SELECT count(*) FROM everything_down.metering.readings_versions"))
                .failure()
                .hasErrorCode(METERSTORE_CATALOG_UNAVAILABLE)
                .hasMessageContaining("Iceberg catalogue 'meterstore'");
    }

    @Test
    void testEmptyTableReadsEmpty()
    {
        // a table with no snapshot has W = the epoch: everything is hot, and there is nothing yet
        assertThat(query("SELECT count(*) FROM readings_versions")).matches("VALUES BIGINT '0'");
        assertThat(query("SELECT count(*) FROM readings")).matches("VALUES BIGINT '0'");
    }
}
