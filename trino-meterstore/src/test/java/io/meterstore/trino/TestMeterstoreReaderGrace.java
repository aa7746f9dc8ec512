package io.meterstore.trino;

import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.maintenance.MaintenanceOutcome;
import io.meterstore.archiver.maintenance.MaintenanceSettings;
import io.meterstore.archiver.maintenance.TableMaintenance;
import io.meterstore.core.HotPartition;
import io.meterstore.core.SnapshotRetention;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.meterstore.trino.base.MeterstoreConfig;
import io.meterstore.trino.base.MeterstoreTypes;
import io.meterstore.trino.handle.MeterstoreTableHandle;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.connector.Connector;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.ConnectorSplit;
import io.trino.spi.connector.ConnectorSplitSource;
import io.trino.spi.connector.ConnectorTableVersion;
import io.trino.spi.connector.Constraint;
import io.trino.spi.connector.DynamicFilter;
import io.trino.spi.connector.DynamicFilterSnapshot;
import io.trino.spi.connector.MemoryContext;
import io.trino.spi.connector.PointerType;
import io.trino.spi.connector.SchemaTableName;
import io.trino.spi.connector.SourcePage;
import io.trino.testing.TestingConnectorContext;
import io.trino.testing.TestingConnectorSession;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.SupportsPrefixOperations;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.io.OutputStream;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

import static io.meterstore.trino.base.MeterstoreConfig.COORDINATOR_FILE_CACHE_PROPERTY;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_COLD_READ_FAILED;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_PARTITION_MISSING;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_SNAPSHOT_NOT_FOUND;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A query decides its tier split from the watermark at planning and reads the tiers when it executes; an archival
 * commit in between must not take a window out of its answer. Driven through the connector's SPI, so the order of
 * planning, archival and execution is exact.
 */
class TestMeterstoreReaderGrace
{
    // the connector's session properties, as a query's session has them
    private static final ConnectorSession SESSION = TestingConnectorSession.builder()
            .setPropertyMetadata(new MeterstoreSessionProperties(new MeterstoreConfig()).getSessionProperties())
            .build();

    private static final SchemaTableName VERSIONS = new SchemaTableName(SCHEMA, "readings_versions");

    private TestingWarehouse warehouse;
    private Connector connector;
    private long rows;

    @BeforeEach
    void setUp()
            throws Exception
    {
        warehouse = deployment().warehouse(TestingPostgresServer.shared().createDatabase("reader_grace"));
        TestingMeterstoreTables.createTables(warehouse);
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(7)
                .meters(20)
                .startDay(LocalDate.of(2026, 6, 1))
                .days(3)
                .correctionsFraction(0.02)
                .build();
        try (Connection connection = warehouse.database().connect()) {
            rows = new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, generator);
        }
        // the splits are read as a worker reads them, from the storage: a coordinator would answer a file it read before from memory
        Map<String, String> properties = new HashMap<>(MeterstoreQueryRunner.catalogProperties(warehouse));
        properties.put(COORDINATOR_FILE_CACHE_PROPERTY, "false");
        connector = new MeterstoreConnectorFactory().create("meterstore", properties, new TestingConnectorContext());
    }

    protected TestingDeployment deployment()
    {
        return TestingDeployment.SINGLE_NODE;
    }

    @AfterEach
    void tearDown()
    {
        connector.shutdown();
        warehouse.database().close();
    }

    @Test
    void testSplitsPlannedBeforeArchivalReadAfterIt()
            throws Exception
    {
        MeterstoreTableHandle handle = tableHandle();
        List<ConnectorSplit> splits = splits(handle);

        ArchiveOutcome outcome = TestingArchival.cycle(warehouse, InstantSource.fixed(TestingArchival.LATER)).archiveOnce();
        assertThat(outcome.kind()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);
        assertThat(outcome.rows()).isPositive();

        // the moved window is now detached and in Iceberg; the old plan still reads it, by name, from PostgreSQL
        assertThat(count(handle, splits)).isEqualTo(rows);
        // a plan made after the commit reads the window from Iceberg instead, and still sees every row once
        MeterstoreTableHandle after = tableHandle();
        assertThat(after.watermarkEpochMicros()).isGreaterThan(handle.watermarkEpochMicros());
        assertThat(count(after, splits(after))).isEqualTo(rows);
    }

    @Test
    void testHandlePinnedBeforeArchivalSplitsAfterIt()
            throws Exception
    {
        // in Trino the table handle is made at analysis and the splits while scheduling: archival can fall between
        MeterstoreTableHandle handle = tableHandle();
        TestingArchival.archiveWindows(warehouse, 2);
        try (Connection connection = warehouse.database().connect()) {
            assertThat(TestingMeterstoreTables.hotTier().partitions(connection)).filteredOn(partition -> !partition.attached()).hasSize(2);
        }
        assertThat(count(handle, splits(handle))).isEqualTo(rows);
    }

    @Test
    void testPartitionDroppedBeforeItsSplitRanIsAnErrorNamingIt()
            throws Exception
    {
        MeterstoreTableHandle handle = tableHandle();
        List<ConnectorSplit> splits = splits(handle);
        ArchivalCycle archival = TestingArchival.cycle(warehouse, InstantSource.fixed(TestingArchival.LATER));
        assertThat(archival.archiveOnce().kind()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);
        String archived;
        try (Connection connection = warehouse.database().connect()) {
            archived = TestingMeterstoreTables.hotTier().partitions(connection).stream()
                    .filter(partition -> !partition.attached())
                    .map(HotPartition::name)
                    .findFirst()
                    .orElseThrow();
        }
        // past the reader grace the next cycle drops the detached partition
        ArchiveOutcome later = TestingArchival.cycle(warehouse, InstantSource.fixed(TestingArchival.LATER.plus(Duration.ofHours(2)))).archiveOnce();
        assertThat(later.droppedPartitions()).contains(archived);

        assertThatThrownBy(() -> count(handle, splits))
                .isInstanceOfSatisfying(TrinoException.class, e -> assertThat(e.getErrorCode()).isEqualTo(METERSTORE_PARTITION_MISSING.toErrorCode()))
                .hasMessageContaining("'%s.%s'".formatted(SCHEMA, archived))
                .hasMessageContaining("raise the archiver's 'meterstore.reader-grace' above the longest query");
    }

    @Test
    void testExpiryAndOrphanRemovalDuringAQueryPlannedBeforeThem()
            throws Exception
    {
        ArchivalCycle archival = TestingArchival.cycle(warehouse, InstantSource.fixed(TestingArchival.LATER));
        while (archival.archiveOnce().kind() == ArchiveOutcome.Kind.ARCHIVED) {
            // every closed window
        }
        // past the reader grace the archived partitions are dropped, so no hot partition holds on to an archival commit
        assertThat(TestingArchival.cycle(warehouse, InstantSource.fixed(TestingArchival.LATER.plus(Duration.ofHours(2)))).archiveOnce().droppedPartitions()).isNotEmpty();
        try (Connection connection = warehouse.database().connect()) {
            assertThat(TestingMeterstoreTables.hotTier().partitions(connection)).isEmpty();
        }
        MeterstoreTableHandle handle = tableHandle();
        List<ConnectorSplit> splits = splits(handle);
        long planned = handle.snapshotId().orElseThrow();

        // after the plan, a rewrite (as compaction makes) replaces a data file the plan reads
        Table table = warehouse.catalog().loadTable(TableIdentifier.of(SCHEMA, TestingMeterstoreTables.TABLE));
        DataFile replaced = replaceOneDataFile(table);
        Instant rewritten = Instant.ofEpochMilli(table.currentSnapshot().timestampMillis());
        MaintenanceSettings settings = new MaintenanceSettings(new SnapshotRetention(Duration.ZERO, 1), Duration.ZERO, Duration.ofHours(1));
        // files no snapshot references, as a crashed writer leaves them, in the data and the metadata directory
        List<String> orphans = List.of(writeOrphan(table, "data"), writeOrphan(table, "metadata"));
        assertThat(storedFileNames(table)).containsAll(orphans);

        // within the reader grace the planned snapshot stays, and with it the file: orphan removal sees it live in that snapshot
        maintenance(settings, rewritten.plus(Duration.ofMinutes(30))).expire();
        table.refresh();
        assertThat(table.snapshot(planned)).isNotNull();
        // exactly the unreferenced files are gone: every file a kept snapshot reads is still stored
        assertThat(storedFileNames(table)).doesNotContainAnyElementsOf(orphans).containsAll(liveFileNames(table)).contains(fileName(replaced.location()));
        assertThat(storedDataFileNames(table)).containsExactlyInAnyOrderElementsOf(liveDataFileNames(table));
        assertThat(count(handle, splits)).isEqualTo(rows);

        // past it, expiry removes the snapshot and the file only it read: the old plan fails naming the file, never a short answer
        MaintenanceOutcome expired = maintenance(settings, rewritten.plus(Duration.ofHours(2))).expire();
        assertThat(expired.expired().orElseThrow().snapshots()).isPositive();
        table.refresh();
        assertThat(storedFileNames(table)).containsAll(liveFileNames(table)).doesNotContain(fileName(replaced.location()));
        assertThat(storedDataFileNames(table)).containsExactlyInAnyOrderElementsOf(liveDataFileNames(table));
        assertThatThrownBy(() -> count(handle, splits))
                .isInstanceOfSatisfying(TrinoException.class, e -> assertThat(e.getErrorCode()).isEqualTo(METERSTORE_COLD_READ_FAILED.toErrorCode()))
                .hasMessageContaining("'%s'".formatted(replaced.location()));
        // a plan made now reads the rewritten file, every row once
        MeterstoreTableHandle after = tableHandle();
        assertThat(count(after, splits(after))).isEqualTo(rows);

        // and the snapshot it was planned on is gone for FOR VERSION AS OF too, named with the retention
        assertThatThrownBy(() -> connector.getMetadata(SESSION, MeterstoreTransactionHandle.INSTANCE)
                .getTableHandle(SESSION, VERSIONS, Optional.empty(), Optional.of(new ConnectorTableVersion(PointerType.TARGET_ID, BIGINT, planned))))
                .isInstanceOfSatisfying(TrinoException.class, e -> assertThat(e.getErrorCode()).isEqualTo(METERSTORE_SNAPSHOT_NOT_FOUND.toErrorCode()))
                .hasMessage("Table 'metering.readings_versions' has no snapshot %s (the archiver expires snapshots older than 0s, except the newest 1): use a snapshot id from iceberg.metering.\"readings$snapshots\"".formatted(planned));
    }

    private TableMaintenance maintenance(MaintenanceSettings settings, Instant now)
    {
        return new TableMaintenance(warehouse.catalog(), TableIdentifier.of(SCHEMA, TestingMeterstoreTables.TABLE), TestingMeterstoreTables.hotTier(),
                () -> warehouse.database().connect(), settings, InstantSource.fixed(now));
    }

    /** Replaces one data file by a copy of it under another name, republishing W, as a rewrite by compaction would. */
    private static DataFile replaceOneDataFile(Table table)
            throws Exception
    {
        DataFile replaced;
        try (CloseableIterable<FileScanTask> tasks = table.newScan().includeColumnStats().planFiles()) {
            replaced = tasks.iterator().next().file();
        }
        // through the table's own FileIO, so the copy lands where the table's files are: a local directory or a bucket
        String copy = directoryOf(replaced.location()) + "rewritten-" + UUID.randomUUID() + ".parquet";
        try (InputStream source = table.io().newInputFile(replaced.location()).newStream();
                OutputStream target = table.io().newOutputFile(copy).create()) {
            source.transferTo(target);
        }
        table.newRewrite()
                .deleteFile(replaced)
                .addFile(DataFiles.builder(table.spec()).copy(replaced).withPath(copy).build())
                .set(TieringWatermark.WATERMARK_KEY, WatermarkReader.current(table).watermark().toProperty())
                .set(TieringWatermark.ROW_COUNT_KEY, "0")
                .commit();
        return replaced;
    }

    /** Writes a file no snapshot references into directory {@code directory} of the table and returns its name. */
    private static String writeOrphan(Table table, String directory)
            throws Exception
    {
        String name = "orphan-" + UUID.randomUUID() + ".parquet";
        try (OutputStream out = table.io().newOutputFile("%s/%s/%s".formatted(table.location(), directory, name)).create()) {
            out.write(new byte[] {'P', 'A', 'R', '1'});
        }
        return name;
    }

    /** The names of the files stored under the table's location, listed from the storage itself. */
    private static Set<String> storedFileNames(Table table)
    {
        return listedFileNames(table, table.location() + "/");
    }

    private static Set<String> storedDataFileNames(Table table)
    {
        return listedFileNames(table, table.location() + "/data/");
    }

    private static Set<String> listedFileNames(Table table, String prefix)
    {
        Set<String> names = new HashSet<>();
        ((SupportsPrefixOperations) table.io()).listPrefix(prefix).forEach(file -> names.add(fileName(file.location())));
        return names;
    }

    /** The names of the data files any kept snapshot reads. */
    private static Set<String> liveDataFileNames(Table table)
            throws Exception
    {
        Set<String> names = new HashSet<>();
        for (Snapshot snapshot : table.snapshots()) {
            try (CloseableIterable<FileScanTask> tasks = table.newScan().useSnapshot(snapshot.snapshotId()).planFiles()) {
                for (FileScanTask task : tasks) {
                    names.add(fileName(task.file().location()));
                    task.deletes().forEach(delete -> names.add(fileName(delete.location())));
                }
            }
        }
        return names;
    }

    /** The names of every file a kept snapshot reads: its manifest list, its manifests and their data and delete files, and the current metadata file. */
    private static Set<String> liveFileNames(Table table)
            throws Exception
    {
        Set<String> names = new HashSet<>(liveDataFileNames(table));
        for (Snapshot snapshot : table.snapshots()) {
            names.add(fileName(snapshot.manifestListLocation()));
            snapshot.allManifests(table.io()).forEach(manifest -> names.add(fileName(manifest.path())));
        }
        names.add(fileName(((HasTableOperations) table).operations().current().metadataFileLocation()));
        return names;
    }

    private static String directoryOf(String location)
    {
        return location.substring(0, location.lastIndexOf('/') + 1);
    }

    private static String fileName(String location)
    {
        return location.substring(location.lastIndexOf('/') + 1);
    }

    private MeterstoreTableHandle tableHandle()
    {
        return (MeterstoreTableHandle) connector.getMetadata(SESSION, MeterstoreTransactionHandle.INSTANCE)
                .getTableHandle(SESSION, VERSIONS, Optional.empty(), Optional.empty());
    }

    private List<ConnectorSplit> splits(MeterstoreTableHandle handle)
    {
        List<ConnectorSplit> splits = new ArrayList<>();
        try (ConnectorSplitSource source = connector.getSplitManager().getSplits(MeterstoreTransactionHandle.INSTANCE, SESSION, handle, java.util.Set.of(), Constraint.alwaysTrue())) {
            while (!source.isFinished()) {
                splits.addAll(source.getNextBatch(1000, DynamicFilterSnapshot.EMPTY).join());
            }
        }
        return splits;
    }

    private long count(MeterstoreTableHandle handle, List<ConnectorSplit> splits)
    {
        List<ColumnHandle> columns = List.of(MeterstoreTypes.columnHandle(io.meterstore.core.ReadingsColumn.FROM));
        long count = 0;
        for (ConnectorSplit split : splits) {
            try (ConnectorPageSource pageSource = connector.getPageSourceProvider().createPageSource(
                    MeterstoreTransactionHandle.INSTANCE, SESSION, split, handle, Optional.empty(), columns, DynamicFilter.EMPTY, MemoryContext.NO_LIMIT)) {
                while (!pageSource.isFinished()) {
                    SourcePage page = pageSource.getNextSourcePage();
                    if (page != null) {
                        count += page.getPositionCount();
                    }
                }
            }
            catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        return count;
    }
}
