package io.meterstore.trino;

import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.core.HotPartition;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.connector.Connector;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.ConnectorSplit;
import io.trino.spi.connector.ConnectorSplitSource;
import io.trino.spi.connector.Constraint;
import io.trino.spi.connector.DynamicFilter;
import io.trino.spi.connector.DynamicFilterSnapshot;
import io.trino.spi.connector.MemoryContext;
import io.trino.spi.connector.SchemaTableName;
import io.trino.spi.connector.SourcePage;
import io.trino.testing.TestingConnectorContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.time.Duration;
import java.time.InstantSource;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_PARTITION_MISSING;
import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;
import static io.trino.testing.TestingConnectorSession.SESSION;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A query decides its tier split from the watermark at planning and reads the tiers when it executes; an archival
 * commit in between must not take a window out of its answer. Driven through the connector's SPI, so the order of
 * planning, archival and execution is exact.
 */
class TestMeterstoreReaderGrace
{
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
        connector = new MeterstoreConnectorFactory().create("meterstore", MeterstoreQueryRunner.catalogProperties(warehouse), new TestingConnectorContext());
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
