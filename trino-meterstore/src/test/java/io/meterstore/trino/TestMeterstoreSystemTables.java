package io.meterstore.trino;

import com.google.common.collect.ImmutableMap;
import io.meterstore.archiver.tables.ArchiverConfig;
import io.meterstore.archiver.tables.ArchiverTables;
import io.meterstore.archiver.service.ArchiverScheduler;
import io.meterstore.archiver.service.ArchiverStats;
import io.meterstore.archiver.service.CycleResult;
import io.meterstore.archiver.service.SchedulerConfig;
import io.meterstore.archiver.service.TableArchiverStats;
import io.meterstore.core.HotPartition;
import io.meterstore.core.HotTier;
import io.meterstore.core.Reading;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.TiersConfig;
import io.meterstore.core.WatermarkReader;
import io.meterstore.storage.ColdStorage;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.ReadingsOracle;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.trino.testing.DistributedQueryRunner;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.trino.spi.StandardErrorCode.TABLE_NOT_FOUND;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS;

/**
 * The metadata tables {@code "readings$watermark"}, {@code "$partitions"}, {@code "$archival"}, {@code "$invariant"},
 * {@code "$config"} and {@code "$resolution"} through the Trino JDBC driver, against what the test made: generated
 * readings archived in three windows by the real archiver, a late correction, a partition created ahead of now and one
 * left attached below the watermark, the archiver's own status run.
 */
@TestInstance(PER_CLASS)
final class TestMeterstoreSystemTables
{
    private static final String PASSWORD = "hunter2-secret";
    private static final String URL_PASSWORD = "swordfish-secret";

    private TestingWarehouse warehouse;
    private Table table;
    private DistributedQueryRunner queryRunner;
    private List<Reading> rows;
    private HotTier hotTier;

    @BeforeAll
    void setUp()
            throws Exception
    {
        warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("system_tables"));
        table = TestingMeterstoreTables.createTables(warehouse);
        hotTier = TestingMeterstoreTables.hotTier();
        // recent days, so that the lag against the wall clock is a few weeks, whenever the test runs
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(14)
                .meters(4)
                .startDay(LocalDate.now(ZoneOffset.UTC).minusDays(20))
                .days(6)
                .correctionsFraction(0.05)
                .build();
        rows = new ArrayList<>();
        generator.forEach(rows::add);
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(hotTier).load(connection, rows);
        }
        // statistics first: a detached partition is no longer analysed through its parent
        try (Connection connection = warehouse.database().connect(); Statement statement = connection.createStatement()) {
            statement.execute("ANALYZE metering.readings");
        }
        TestingArchival.archiveWindows(warehouse, 3);
        queryRunner = MeterstoreQueryRunner.builder(warehouse)
                .withoutIceberg()
                .withCatalogOverrides(ImmutableMap.of(
                        "meterstore.settlement-lag", "10d",
                        "meterstore.reader-grace", "2h",
                        "meterstore.postgresql.password", PASSWORD,
                        "meterstore.iceberg.jdbc-url", warehouse.database().jdbcUrl() + "?password=" + URL_PASSWORD + "&ApplicationName=catalogue"))
                .build();
    }

    @AfterAll
    void tearDown()
    {
        if (queryRunner != null) {
            queryRunner.close();
        }
    }

    @Test
    void testWatermarkPartitionsAndInvariant()
            throws Exception
    {
        table.refresh();
        TieringWatermark watermark = WatermarkReader.current(table).watermark();
        Snapshot current = table.currentSnapshot();
        List<HotPartition> partitions;
        try (Connection connection = warehouse.database().connect()) {
            partitions = hotTier.partitions(connection);
        }

        // no partition reaches past now: the Rust MeterStore's rule calls that unhealthy (writes would find none)
        Map<String, Object> status = row("SELECT * FROM \"readings$watermark\"");
        assertThat(status.get("table_name")).isEqualTo("metering.readings");
        assertThat(status.get("watermark")).isEqualTo(watermark.instant());
        assertThat(status.get("watermark_snapshot_id")).isEqualTo(current.snapshotId());
        assertThat(status.get("current_snapshot_id")).isEqualTo(current.snapshotId());
        assertThat(status.get("archived_at")).isEqualTo(TestingArchival.LATER);
        assertThat((long) status.get("watermark_lag_seconds")).isBetween(Duration.between(watermark.instant(), Instant.now()).toSeconds() - 600, Duration.between(watermark.instant(), Instant.now()).toSeconds());
        assertThat(status.get("archival_step_seconds")).isEqualTo(86_400L);
        assertThat(status.get("settlement_lag_seconds")).isEqualTo(10 * 86_400L);
        assertThat(status.get("reader_grace_seconds")).isEqualTo(7_200L);
        assertThat(status.get("hot_partitions")).isEqualTo((long) partitions.size());
        assertThat(status.get("partitions_ahead")).isEqualTo(0L);
        assertThat(status.get("invariant_violations")).isEqualTo(0L);
        // two weeks behind: more than the settlement lag (10 days) plus two steps
        assertThat(status.get("behind")).isEqualTo(true);
        assertThat(status.get("healthy")).isEqualTo(false);

        // every partition with its catalogue bounds and state; the archived ones droppable two hours after their commit
        List<Map<String, Object>> listed = rows("SELECT * FROM \"readings$partitions\" ORDER BY partition_start");
        assertThat(listed).extracting(partition -> partition.get("partition")).containsExactlyElementsOf(partitions.stream().map(HotPartition::name).toList());
        for (int index = 0; index < partitions.size(); index++) {
            HotPartition partition = partitions.get(index);
            Map<String, Object> row = listed.get(index);
            long stored = rows.stream().filter(reading -> partition.contains(reading.from())).count();
            assertThat(row.get("partition_start")).isEqualTo(partition.start());
            assertThat(row.get("partition_end")).isEqualTo(partition.end());
            assertThat(row.get("attached")).isEqualTo(partition.attached());
            assertThat(row.get("estimated_rows")).as(partition.name()).isEqualTo(stored);
            assertThat((long) row.get("estimated_bytes")).isPositive();
            if (partition.isBelow(watermark)) {
                assertThat(row.get("state")).isEqualTo("awaiting_drop");
                assertThat(row.get("archived_rows")).isEqualTo(stored);
                assertThat(row.get("archived_at")).isEqualTo(TestingArchival.LATER);
                assertThat(row.get("droppable_at")).isEqualTo(TestingArchival.LATER.plus(Duration.ofHours(2)));
            }
            else {
                assertThat(row.get("state")).isEqualTo("hot");
                assertThat(row.get("droppable_at")).isNull();
            }
        }
        assertThat(listed).filteredOn(row -> row.get("state").equals("awaiting_drop")).hasSize(3);

        // a partition ahead of now: healthy again, though still behind
        Instant tomorrow = Instant.now().plus(Duration.ofDays(1));
        try (Connection connection = warehouse.database().connect()) {
            hotTier.ensurePartition(connection, tomorrow);
        }
        status = row("SELECT partitions_ahead, hot_partitions, healthy FROM \"readings$watermark\"");
        assertThat(status).containsEntry("partitions_ahead", 1L).containsEntry("hot_partitions", partitions.size() + 1L).containsEntry("healthy", true);

        // a partition attached below W breaks the invariant: stranded, named, unhealthy
        Instant belowWatermark = rows.getFirst().from().minus(Duration.ofDays(5));
        String stranded = hotTier.naming().partitionName(hotTier.naming().alignDown(belowWatermark));
        try (Connection connection = warehouse.database().connect()) {
            hotTier.ensurePartition(connection, belowWatermark);
        }
        status = row("SELECT invariant_violations, healthy FROM \"readings$watermark\"");
        assertThat(status).containsEntry("invariant_violations", 1L).containsEntry("healthy", false);
        assertThat(rows("SELECT state FROM \"readings$partitions\" WHERE partition = '%s'".formatted(stranded))).containsExactly(Map.of("state", "stranded"));

        // the fresh check names it; the last check is what the archiver service recorded after its last cycle
        List<Map<String, Object>> fresh = rows("SELECT * FROM \"readings$invariant\" WHERE \"check\" = 'fresh'");
        assertThat(fresh).hasSize(1);
        assertThat(fresh.getFirst()).containsEntry("holds", false).containsEntry("watermark", watermark.instant());
        assertThat((String) fresh.getFirst().get("violation")).contains("Partition '%s' of table 'metering.readings' is attached".formatted(stranded));
        assertThat(rows("SELECT * FROM \"readings$invariant\" WHERE \"check\" = 'last'")).isEmpty();

        runArchiverCycle(watermark.instant().plus(Duration.ofHours(1)));
        List<Map<String, Object>> both = rows("SELECT \"check\", holds, violation FROM \"readings$invariant\" ORDER BY 1");
        assertThat(both).extracting(row -> row.get("check")).containsExactly("fresh", "last");
        assertThat(both.get(1).get("violation")).isEqualTo(both.get(0).get("violation"));

        // the dashboard's alert query of docs/operations.md
        assertThat(rows("""
                SELECT w.table_name, w.healthy, w.behind, w.watermark_lag_seconds > w.settlement_lag_seconds + 2 * w.archival_step_seconds AS lagging,
                       (SELECT count(*) FROM "readings$invariant" i WHERE NOT i.holds AND i."check" = 'fresh') AS violations
                FROM "readings$watermark" w"""))
                .containsExactly(Map.of("table_name", "metering.readings", "healthy", false, "behind", true, "lagging", true, "violations", 1L));
    }

    @Test
    void testArchivalHistory()
            throws SQLException
    {
        table.refresh();
        TieringWatermark watermark = WatermarkReader.current(table).watermark();
        // a late correction below W: a commit of its own that republishes W
        Reading late = TestingInserts.correction(1, rows.get(100).from(), 99_000_000_000_000L, "7.5");
        assertThat(late.from()).isBefore(watermark.instant());
        execute(TestingInserts.insert(late));

        List<Map<String, Object>> commits = rows("SELECT * FROM \"readings$archival\"");
        assertThat(commits).extracting(commit -> commit.get("kind")).containsExactly("correction", "archival", "archival", "archival");
        Map<String, Object> correction = commits.getFirst();
        assertThat(correction).containsEntry("row_count", 1L).containsEntry("files_added", 1L)
                .containsEntry("watermark_before", watermark.instant()).containsEntry("watermark_after", watermark.instant());
        assertThat(correction.get("window_start")).isNull();
        assertThat(correction.get("archived_at")).isNull();
        // newest first: each archival moved W from the previous one's to the end of its window
        for (int index = 1; index < commits.size(); index++) {
            Map<String, Object> commit = commits.get(index);
            Instant start = (Instant) commit.get("window_start");
            Instant end = (Instant) commit.get("window_end");
            assertThat(commit.get("watermark_after")).isEqualTo(end);
            assertThat(commit.get("watermark_before")).isEqualTo(index + 1 < commits.size() ? commits.get(index + 1).get("watermark_after") : Instant.EPOCH);
            assertThat(commit.get("row_count")).isEqualTo(rows.stream().filter(reading -> !reading.from().isBefore(start) && reading.from().isBefore(end)).count());
            // the window's winners, and its superseded versions when it has corrections
            assertThat(commit.get("files_added")).isIn(1L, 2L);
            assertThat(commit.get("archived_at")).isEqualTo(TestingArchival.LATER);
            assertThat(commit.get("partition")).isEqualTo(hotTier.naming().partitionName(hotTier.naming().alignDown(end.minusSeconds(1))));
        }
        assertThat(commits.get(1).get("watermark_after")).isEqualTo(watermark.instant());
    }

    @Test
    void testConfigShowsTheSettingsInForceAndNoSecret()
            throws SQLException
    {
        Map<String, Object> settings = new HashMap<>();
        for (Map<String, Object> row : rows("SELECT setting, value FROM \"readings$config\"")) {
            settings.put((String) row.get("setting"), row.get("value"));
        }
        assertThat(settings).containsEntry("meterstore.settlement-lag", "10.00d")
                .containsEntry("meterstore.reader-grace", "2.00h")
                .containsEntry("meterstore.tables", "readings")
                .containsEntry("meterstore.schema", "metering")
                .containsEntry("meterstore.postgresql.url", warehouse.database().jdbcUrl())
                .containsEntry("meterstore.postgresql.password", "********")
                .containsEntry("meterstore.iceberg.jdbc-url", warehouse.database().jdbcUrl() + "?password=********&ApplicationName=catalogue")
                .containsEntry("archival_step", "86400s")
                .containsEntry("merge_key", "malo_id, obis_code, \"from\"")
                .containsEntry("time_model", "interval");
        assertThat(settings.values()).noneMatch(value -> value != null && (value.toString().contains(PASSWORD) || value.toString().contains(URL_PASSWORD)));
    }

    @Test
    void testResolutionSqlReproducesTheWinners()
            throws SQLException
    {
        Map<String, Object> resolution = new HashMap<>();
        for (Map<String, Object> row : rows("SELECT setting, value FROM \"readings$resolution\"")) {
            resolution.put((String) row.get("setting"), row.get("value"));
        }
        assertThat(resolution).containsEntry("raw_table", "metering.readings_versions").containsEntry("balancing_day_column", "balancing_day");
        String sql = (String) resolution.get("resolution_sql");
        // the published statement, run on the raw rows, gives the winners readings gives, and the oracle
        Map<String, Object> published = row("SELECT count(*) AS rows, sum(value) AS total FROM (" + sql + ")");
        Map<String, Object> resolved = row("SELECT count(*) AS rows, sum(value) AS total FROM readings");
        assertThat(published).isEqualTo(resolved);
        assertThat(published.get("rows")).isEqualTo(ReadingsOracle.of(rows).count(ReadingsOracle.View.RESOLVED, ReadingsOracle.all()) + insertedCorrections());
        assertThat(row("SELECT count(*) AS rows FROM readings_versions").get("rows")).isNotEqualTo(published.get("rows"));
    }

    @Test
    void testUnknownMetadataTable()
    {
        // as on Trino's Iceberg connector: an unknown "T$x" is a table that does not exist
        assertThatThrownBy(() -> rows("SELECT * FROM \"readings$nope\""))
                .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(TABLE_NOT_FOUND.toErrorCode().getCode()))
                .hasMessageContaining("readings$nope").hasMessageContaining("does not exist");
    }

    // a correction testArchivalHistory may have added, a new key of its own (its version differs from the generated ones)
    private long insertedCorrections()
            throws SQLException
    {
        return (long) row("SELECT count(*) AS rows FROM readings_versions WHERE source_kind = 'MANUAL_ENTRY'").get("rows");
    }

    /** One cycle of the archiver service on its own clock, and the invariant check that follows it. */
    private void runArchiverCycle(Instant now)
            throws Exception
    {
        TiersConfig tiers = new TiersConfig()
                .setPostgresqlUrl(warehouse.database().jdbcUrl())
                .setPostgresqlUser(warehouse.database().user())
                .setIcebergWarehouse(warehouse.location());
        InstantSource clock = InstantSource.fixed(now);
        try (ColdStorage storage = ColdStorage.create(warehouse.storageProperties());
                ArchiverTables tables = new ArchiverTables(tiers, new ArchiverConfig(), storage.fileSystemFactory())) {
            ArchiverScheduler scheduler = new ArchiverScheduler(
                    tables,
                    new ArchiverStats(ImmutableMap.of("readings", new TableArchiverStats("metering.readings", clock)), "metering", clock, Optional.empty()),
                    new SchedulerConfig(),
                    clock);
            scheduler.start();
            long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
            while (scheduler.tableInfos().getFirst().lastCycleFinished().isEmpty()) {
                assertThat(System.nanoTime()).as("the archiver's first cycle").isLessThan(deadline);
                Thread.sleep(100);
            }
            // a draining scheduler lets the cycle in flight, and the check at its end, finish
            assertThat(scheduler.drain()).isTrue();
            // with a partition stranded below W the archiver refuses to archive; the check after the cycle runs all the same
            assertThat(scheduler.tableInfos().getFirst().lastResult()).contains(CycleResult.FAILED);
            assertThat(scheduler.tableInfos().getFirst().lastCycle().orElseThrow()).contains("is attached but lies below the watermark");
        }
    }

    private void execute(String sql)
            throws SQLException
    {
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            statement.executeUpdate(sql);
        }
    }

    private Map<String, Object> row(String sql)
            throws SQLException
    {
        List<Map<String, Object>> rows = rows(sql);
        assertThat(rows).hasSize(1);
        return rows.getFirst();
    }

    /** Rows as column name to value; timestamps as instants, decimals without trailing zeros. */
    private List<Map<String, Object>> rows(String sql)
            throws SQLException
    {
        List<Map<String, Object>> rows = new ArrayList<>();
        try (Connection connection = connect(); Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            int columns = result.getMetaData().getColumnCount();
            while (result.next()) {
                Map<String, Object> row = new HashMap<>();
                for (int column = 1; column <= columns; column++) {
                    Object value = result.getObject(column);
                    if (value instanceof Timestamp timestamp) {
                        value = timestamp.toInstant();
                    }
                    if (value instanceof BigDecimal decimal) {
                        value = decimal.stripTrailingZeros();
                    }
                    if (value instanceof ZonedDateTime zoned) {
                        value = zoned.toInstant();
                    }
                    row.put(result.getMetaData().getColumnLabel(column), value);
                }
                rows.add(row);
            }
        }
        return rows;
    }

    private Connection connect()
            throws SQLException
    {
        return DriverManager.getConnection("jdbc:trino://%s/meterstore/metering".formatted(queryRunner.getCoordinator().getAddress()), "system_tables", null);
    }
}
