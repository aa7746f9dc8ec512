package io.meterstore.trino;

import io.meterstore.core.HotTierSupersession;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.meterstore.trino.base.MeterstoreMetrics;
import io.trino.Session;
import io.trino.testing.AbstractTestQueryFramework;
import io.trino.testing.MaterializedResult;
import io.trino.testing.QueryRunner;
import io.trino.testing.QueryRunner.MaterializedResultWithPlan;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static io.meterstore.trino.base.MeterstoreMetrics.COLD_DATA_FILES;
import static io.meterstore.trino.base.MeterstoreMetrics.COLD_DATA_FILES_SKIPPED;
import static io.meterstore.trino.base.MeterstoreMetrics.COLD_ROWS_READ;
import static io.meterstore.trino.base.MeterstoreMetrics.COLD_ROW_GROUPS;
import static io.meterstore.trino.base.MeterstoreMetrics.COLD_ROW_GROUPS_READ;
import static io.meterstore.trino.base.MeterstoreMetrics.COLD_SPLITS;
import static io.meterstore.trino.base.MeterstoreMetrics.HOT_PARTITIONS;
import static io.meterstore.trino.base.MeterstoreMetrics.HOT_PARTITIONS_READ;
import static io.meterstore.trino.base.MeterstoreMetrics.HOT_PARTITIONS_SKIPPED;
import static io.meterstore.trino.base.MeterstoreMetrics.HOT_ROWS_READ;
import static io.meterstore.trino.base.MeterstoreMetrics.HOT_SPLITS;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each read-path pushdown returns the same rows as the query without it, and the query's statistics show what it
 * pruned: hot partitions and cold files by "from", cold row groups and hot rows by malo_id and by a join's dynamic
 * filter, rows by LIMIT.
 */
final class TestMeterstorePushdown
        extends AbstractTestQueryFramework
{
    private static final int DAYS = 8;
    private static final int ARCHIVED_WINDOWS = 4;
    private static final int METERS = 40;

    private TieringWatermark watermark;
    private TestingWarehouse warehouse;

    @Override
    protected QueryRunner createQueryRunner()
            throws Exception
    {
        warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("pushdown"));
        Table table = TestingMeterstoreTables.createTables(warehouse);
        // small row groups, so a data file has many and a meter's rows are in few of them
        table.updateProperties().set(TableProperties.PARQUET_ROW_GROUP_SIZE_BYTES, "16384").commit();
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(23)
                .meters(METERS)
                .startDay(LocalDate.of(2026, 11, 2))
                .days(DAYS)
                .correctionsFraction(0.05)
                .build();
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, generator);
            connection.createStatement().execute("ANALYZE " + TestingMeterstoreTables.hotTier().qualifiedParent());
        }
        TestingArchival.archiveWindows(warehouse, ARCHIVED_WINDOWS);
        table.refresh();
        watermark = WatermarkReader.current(table).watermark();
        QueryRunner queryRunner = MeterstoreQueryRunner.builder(warehouse).build();
        // a short list of meters in another catalog: the build side of a join whose dynamic filter prunes both tiers
        queryRunner.execute("CREATE TABLE iceberg.metering.meters AS SELECT * FROM (VALUES '%s', '%s') v(malo_id)".formatted(ReadingsGenerator.maloId(3), ReadingsGenerator.maloId(29)));
        return queryRunner;
    }

    @Test
    void testFromRangePrunesHotPartitionsAndColdFiles()
    {
        // one cold day and one hot day around the watermark
        Instant lower = watermark.instant().minusSeconds(86_400);
        Instant upper = watermark.instant().plusSeconds(86_400);
        String sql = "SELECT malo_id, count(*), sum(value), min(\"from\"), max(\"from\") FROM readings_versions WHERE \"from\" >= from_iso8601_timestamp('%s') AND \"from\" < from_iso8601_timestamp('%s') GROUP BY malo_id"
                .formatted(lower, upper);

        Map<String, Long> pruned = metrics(getSession(), sql);
        Map<String, Long> unpruned = metrics(withoutConnectorPushdown(), sql);
        assertSameResult(sql);

        long hotPartitions = DAYS - ARCHIVED_WINDOWS;
        assertThat(pruned.get(HOT_PARTITIONS)).isGreaterThanOrEqualTo(hotPartitions);
        assertThat(pruned.get(HOT_SPLITS)).isEqualTo(1);
        assertThat(pruned.get(HOT_PARTITIONS_SKIPPED)).isEqualTo(pruned.get(HOT_PARTITIONS) - 1);
        // without pushdown: every partition at or above the watermark (the archived ones stay detached for the reader grace)
        assertThat(unpruned.get(HOT_SPLITS)).isEqualTo(pruned.get(HOT_PARTITIONS) - ARCHIVED_WINDOWS);
        // one archival commit per day, a winners and a superseded file each: only the day below the watermark is read
        long dataFiles = (long) computeActual("SELECT count(*) FROM iceberg.metering.\"readings$files\"").getOnlyValue();
        long lastDayFiles = (long) computeActual("SELECT CAST(summary['added-data-files'] AS bigint) FROM iceberg.metering.\"readings$snapshots\" ORDER BY committed_at DESC LIMIT 1").getOnlyValue();
        assertThat(pruned.get(COLD_DATA_FILES)).isEqualTo(lastDayFiles);
        assertThat(pruned.get(COLD_DATA_FILES_SKIPPED)).isEqualTo(dataFiles - lastDayFiles);
        assertThat(unpruned.get(COLD_DATA_FILES)).isEqualTo(dataFiles);
        assertThat(dataFiles).isGreaterThan(ARCHIVED_WINDOWS);
        assertThat(pruned.get(HOT_ROWS_READ) + pruned.get(COLD_ROWS_READ)).isLessThan(unpruned.get(HOT_ROWS_READ) + unpruned.get(COLD_ROWS_READ));
    }

    @Test
    void testFromRangeHoldingEveryColdRowIsNotFilteredAgain()
    {
        // every cold row lies below W: a range open below that reaches W needs no row filter, in either tier
        for (Instant upper : List.of(watermark.instant(), watermark.instant().plusSeconds(7 * 3_600))) {
            String range = "\"from\" < from_iso8601_timestamp('%s')".formatted(upper);
            for (String sql : List.of(
                    "SELECT count(*) FROM readings_versions WHERE " + range,
                    "SELECT balancing_day, count(*), sum(value) FROM readings_versions WHERE %s GROUP BY 1".formatted(range),
                    "SELECT count(*), sum(value), max(\"from\") FROM readings WHERE " + range)) {
                assertSameResult(sql);
                assertThat(explain(sql)).as(sql).doesNotContain("filterPredicate");
            }
        }
        // a range with a lower bound still needs Trino's filter on the cold rows
        String bounded = "SELECT count(*) FROM readings_versions WHERE \"from\" >= from_iso8601_timestamp('%s') AND \"from\" < from_iso8601_timestamp('%s')"
                .formatted(watermark.instant().minusSeconds(86_400), watermark.instant());
        assertSameResult(bounded);
        assertThat(explain(bounded)).contains("filterPredicate");
        assertThat(computeActual(bounded).getOnlyValue()).isNotEqualTo(computeActual("SELECT count(*) FROM readings_versions WHERE \"from\" < from_iso8601_timestamp('%s')".formatted(watermark.instant())).getOnlyValue());
    }

    @Test
    void testMaloIdEqualityPrunesRowGroupsAndHotRows()
    {
        String meter = ReadingsGenerator.maloId(17);
        String sql = "SELECT count(*), sum(value), min(\"from\"), max(\"from\") FROM readings_versions WHERE malo_id = '%s'".formatted(meter);

        Map<String, Long> pruned = metrics(getSession(), sql);
        Map<String, Long> unpruned = metrics(withoutConnectorPushdown(), sql);
        assertSameResult(sql);

        long meterRows = (long) computeActual(sql).getMaterializedRows().getFirst().getField(0);
        long hotMeterRows = (long) computeActual("SELECT count(*) FROM readings_versions WHERE malo_id = '%s' AND \"from\" >= from_iso8601_timestamp('%s')".formatted(meter, watermark.instant())).getOnlyValue();
        // several row groups per file, and the meter's rows in few of them
        assertThat(pruned.get(COLD_ROW_GROUPS)).isGreaterThan(2L * pruned.get(COLD_SPLITS));
        assertThat(pruned.get(COLD_ROW_GROUPS_READ)).isPositive().isLessThan(pruned.get(COLD_ROW_GROUPS) / 2);
        assertThat(unpruned.get(COLD_ROW_GROUPS_READ)).isEqualTo(unpruned.get(COLD_ROW_GROUPS));
        assertThat(pruned.get(COLD_ROWS_READ)).isLessThan(unpruned.get(COLD_ROWS_READ) / 2);
        // PostgreSQL returns exactly the meter's rows
        assertThat(pruned.get(HOT_ROWS_READ)).isEqualTo(hotMeterRows).isLessThan(meterRows);
        assertThat(unpruned.get(HOT_ROWS_READ)).isGreaterThan(METERS / 2 * hotMeterRows);
    }

    @Test
    void testDynamicFilterPrunesBothTiers()
    {
        // the build side is a real table, so the planner cannot turn it into a constant IN list: only the dynamic filter narrows the scan
        String sql = """
                SELECT r.malo_id, count(*), sum(r.value)
                FROM readings_versions r JOIN iceberg.metering.meters m ON r.malo_id = m.malo_id
                GROUP BY 1""";
        Session withoutDynamicFiltering = Session.builder(getSession())
                .setSystemProperty("enable_dynamic_filtering", "false")
                .build();

        // the engine holds the probe splits back until the filter arrives or this wait passes; it counts from split
        // enumeration, and on a busy machine the build side's stage can take longer than the default second
        Session waiting = Session.builder(getSession())
                .setCatalogSessionProperty(MeterstoreQueryRunner.CATALOG, MeterstoreSessionProperties.DYNAMIC_FILTERING_WAIT_TIMEOUT, "60s")
                .build();
        Map<String, Long> filtered = metrics(waiting, sql);
        Map<String, Long> unfiltered = metrics(withoutDynamicFiltering, sql);
        assertThat(computeActual(waiting, sql)).containsExactlyInAnyOrderElementsOf(computeActual(withoutDynamicFiltering, sql));
        assertThat(computeActual(waiting, sql).getRowCount()).isEqualTo(2);

        long hotMeterRows = (long) computeActual("SELECT count(*) FROM readings_versions WHERE malo_id IN ('%s', '%s') AND \"from\" >= from_iso8601_timestamp('%s')"
                .formatted(ReadingsGenerator.maloId(3), ReadingsGenerator.maloId(29), watermark.instant())).getOnlyValue();
        // PostgreSQL returns exactly the two meters' rows, Parquet only their row groups
        assertThat(filtered.get(HOT_ROWS_READ)).isEqualTo(hotMeterRows);
        assertThat(unfiltered.get(HOT_ROWS_READ)).isGreaterThan(METERS / 4 * hotMeterRows);
        assertThat(filtered.get(COLD_ROW_GROUPS)).isEqualTo(unfiltered.get(COLD_ROW_GROUPS));
        assertThat(filtered.get(COLD_ROW_GROUPS_READ)).isPositive().isLessThan(unfiltered.get(COLD_ROW_GROUPS_READ) / 2);
        assertThat(filtered.get(COLD_ROWS_READ)).isLessThan(unfiltered.get(COLD_ROWS_READ) / 2);
    }

    @Test
    void testLimitStopsBothTiers()
    {
        String sql = "SELECT malo_id, \"from\", value FROM readings_versions LIMIT 7";
        Map<String, Long> limited = metrics(getSession(), sql);
        MaterializedResult rows = computeActual(sql);
        assertThat(rows.getRowCount()).isEqualTo(7);
        // every row exists in the table
        assertThat(computeActual("SELECT count(*) FROM (%s) l JOIN readings_versions r ON l.malo_id = r.malo_id AND l.\"from\" = r.\"from\" AND l.value = r.value".formatted(sql)).getOnlyValue())
                .isNotEqualTo(0L);
        // each hot statement returned at most the limit's rows, each cold split stopped after one page
        assertThat(limited.get(HOT_ROWS_READ)).isLessThanOrEqualTo(7 * limited.get(HOT_SPLITS));
        long allRows = (long) computeActual("SELECT count(*) FROM readings_versions").getOnlyValue();
        assertThat(limited.getOrDefault(COLD_ROWS_READ, 0L)).isLessThan(allRows / 4);
    }

    @Test
    void testFewMetersReadTheirHotPartitionsInOneStatement()
    {
        // a day below the watermark and every hot day: a split per hot partition for a scan
        String range = "\"from\" >= from_iso8601_timestamp('%s')".formatted(watermark.instant().minusSeconds(86_400));
        List<String> fewMeters = IntStream.range(0, MeterstoreSplitManager.ONE_STATEMENT_METERS).mapToObj(ReadingsGenerator::maloId).toList();
        List<String> moreMeters = IntStream.range(0, MeterstoreSplitManager.ONE_STATEMENT_METERS + 1).mapToObj(ReadingsGenerator::maloId).toList();
        for (String table : List.of("readings", "readings_versions")) {
            String sql = "SELECT malo_id, obis_code, \"from\", value FROM %s WHERE malo_id IN (%s) AND %s";
            String few = sql.formatted(table, quoted(fewMeters), range);
            String more = sql.formatted(table, quoted(moreMeters), range);
            Map<String, Long> fewRead = metrics(getSession(), few);
            Map<String, Long> moreRead = metrics(getSession(), more);
            assertSameResult(few);
            assertSameResult(more);
            // every hot partition is marked: one statement reads them all for a few meters, one each for more
            long hotPartitionsRead = moreRead.get(HOT_PARTITIONS_READ);
            assertThat(hotPartitionsRead).isGreaterThan(1);
            assertThat(moreRead.get(HOT_SPLITS)).as(table).isEqualTo(hotPartitionsRead);
            assertThat(fewRead.get(HOT_SPLITS)).as(table).isEqualTo(1);
            assertThat(fewRead.get(HOT_PARTITIONS_READ)).as(table).isEqualTo(hotPartitionsRead);
            assertThat(fewRead.get(HOT_PARTITIONS_SKIPPED)).as(table).isEqualTo(fewRead.get(HOT_PARTITIONS) - hotPartitionsRead);
        }
        // a pushed LIMIT (a read that is hot alone, whose filter the statement enforces) holds for the one statement over all of them
        String limited = "SELECT malo_id, \"from\", value FROM readings_versions WHERE malo_id = '%s' AND \"from\" >= from_iso8601_timestamp('%s') LIMIT 5".formatted(fewMeters.getFirst(), watermark.instant());
        assertThat(computeActual(limited).getRowCount()).isEqualTo(5);
        assertThat(metrics(getSession(), limited).getOrDefault(HOT_ROWS_READ, 0L)).isLessThanOrEqualTo(5);
    }

    private static String quoted(List<String> values)
    {
        return values.stream().map(value -> "'" + value + "'").collect(Collectors.joining(", "));
    }

    @Test
    void testAggregationOverTheHotTierIsPushedIntoPostgresql()
    {
        String hotOnly = "\"from\" >= from_iso8601_timestamp('%s')".formatted(watermark.instant().plusSeconds(3_600));
        String grouped = """
                SELECT balancing_day, obis_code, count(*), count(melo_id), sum(value), min(value), max(value), min("from"), max("from"), max(balancing_day)
                FROM readings_versions WHERE %s GROUP BY balancing_day, obis_code""".formatted(hotOnly);
        // pushed: no aggregation left in Trino's plan, and the same rows as without connector pushdown
        assertThat(query(grouped)).isFullyPushedDown();
        assertThat(query(grouped)).matches(withoutAggregationPushdown(), grouped);
        Map<String, Long> pushed = metrics(getSession(), grouped);
        long groups = computeActual(grouped).getRowCount();
        assertThat(pushed.get(MeterstoreMetrics.HOT_AGGREGATED_ROWS)).isEqualTo(groups);
        assertThat(pushed).doesNotContainKey(HOT_ROWS_READ);

        String global = "SELECT count(*), sum(value), min(\"from\") FROM readings_versions WHERE malo_id IN ('%s', '%s') AND %s"
                .formatted(ReadingsGenerator.maloId(5), ReadingsGenerator.maloId(6), hotOnly);
        assertThat(query(global)).isFullyPushedDown();
        assertThat(query(global)).matches(withoutAggregationPushdown(), global);
        assertThat((long) computeActual(global).getMaterializedRows().getFirst().getField(0)).isPositive();

        // a range that reaches below the watermark is not pushed, the cold tier has part of the answer
        String both = "SELECT count(*), sum(value) FROM readings_versions WHERE \"from\" >= from_iso8601_timestamp('%s')".formatted(watermark.instant().minusSeconds(3_600));
        assertThat(explain(both)).contains("Aggregate[type = PARTIAL");
        // an empty hot range still answers a global aggregation with one row
        String empty = "SELECT count(*), sum(value) FROM readings_versions WHERE \"from\" >= TIMESTAMP '2100-01-01 00:00:00 UTC'";
        assertThat(query(empty)).isFullyPushedDown();
        assertThat(query(empty)).matches("VALUES (BIGINT '0', CAST(NULL AS decimal(38, 6)))");
        // the session property turns it off
        assertThat((String) computeActual(withoutAggregationPushdown(), "EXPLAIN " + grouped).getOnlyValue()).contains("Aggregate[type = PARTIAL");
        assertThat(explain(grouped)).doesNotContain("Aggregate[");
    }

    @Test
    void testReadingsReadsHotWinnersByTheirMarks()
            throws SQLException
    {
        String hotOnly = "\"from\" >= from_iso8601_timestamp('%s')".formatted(watermark.instant());
        // the winners as Trino resolves them from every version, independently of the connector's resolution
        String resolvedByTrino = """
                SELECT malo_id, obis_code, "from", version, value, balancing_day FROM (
                    SELECT *, row_number() OVER (PARTITION BY malo_id, obis_code, "from", version_scope ORDER BY version DESC, recorded_at DESC) AS rank
                    FROM readings_versions%s WHERE %s) WHERE rank = 1""";
        String winners = "SELECT malo_id, obis_code, \"from\", version, value, balancing_day FROM readings%s WHERE %s";
        String grouped = """
                SELECT balancing_day, malo_id, count(*), sum(value), min(value), max("from")
                FROM readings%s WHERE %s GROUP BY balancing_day, malo_id""";
        String groupedByTrino = """
                SELECT balancing_day, malo_id, count(*), sum(value), min(value), max("from")
                FROM (%s) GROUP BY balancing_day, malo_id""";
        List<String> instants = List.of("", " FOR TIMESTAMP AS OF TIMESTAMP '2026-11-08 12:00:00 UTC'", " FOR TIMESTAMP AS OF TIMESTAMP '2026-11-12 00:00:00 UTC'",
                " FOR TIMESTAMP AS OF TIMESTAMP '2026-11-16 06:00:00 UTC'");
        long superseded = (long) computeActual("SELECT count(*) FROM readings_versions WHERE %s".formatted(hotOnly)).getOnlyValue()
                - (long) computeActual("SELECT count(*) FROM readings WHERE %s".formatted(hotOnly)).getOnlyValue();
        assertThat(superseded).isPositive();
        for (String asOf : instants) {
            // every hot partition is marked: its winners read unordered, no partition resolved in key order
            Map<String, Long> scan = metrics(getSession(), winners.formatted(asOf, hotOnly));
            assertThat(scan.get(HOT_PARTITIONS_READ)).isPositive();
            assertThat(scan.get(MeterstoreMetrics.HOT_PARTITIONS_RESOLVED)).as(asOf).isZero();
            assertThat(computeActual(winners.formatted(asOf, hotOnly))).as(asOf).containsExactlyInAnyOrderElementsOf(computeActual(resolvedByTrino.formatted(asOf, hotOnly)));
            // the aggregation is PostgreSQL's, over the winners
            assertThat(query(grouped.formatted(asOf, hotOnly))).as(asOf).isFullyPushedDown();
            assertThat(computeActual(grouped.formatted(asOf, hotOnly))).as(asOf)
                    .containsExactlyInAnyOrderElementsOf(computeActual(groupedByTrino.formatted(resolvedByTrino.formatted(asOf, hotOnly))));
            Map<String, Long> pushed = metrics(getSession(), grouped.formatted(asOf, hotOnly));
            assertThat(pushed).doesNotContainKey(HOT_ROWS_READ);
            assertThat(pushed.get(MeterstoreMetrics.HOT_PARTITIONS_RESOLVED)).as(asOf).isZero();
        }

        // a partition not yet marked is read as before the marks, resolved in key order, with the same answers
        String partition = TestingMeterstoreTables.hotTier().qualifiedPartition(TestingMeterstoreTables.hotTier().naming().partitionName(watermark.instant()));
        try (Connection connection = warehouse.database().connect(); Statement statement = connection.createStatement()) {
            statement.execute("COMMENT ON TABLE %s IS NULL".formatted(partition));
            try {
                for (String asOf : instants) {
                    assertThat(metrics(getSession(), winners.formatted(asOf, hotOnly)).get(MeterstoreMetrics.HOT_PARTITIONS_RESOLVED)).isEqualTo(1L);
                    assertThat(computeActual(winners.formatted(asOf, hotOnly))).containsExactlyInAnyOrderElementsOf(computeActual(resolvedByTrino.formatted(asOf, hotOnly)));
                    assertThat(metrics(getSession(), grouped.formatted(asOf, hotOnly)).get(MeterstoreMetrics.HOT_PARTITIONS_RESOLVED)).isEqualTo(1L);
                    assertThat(computeActual(grouped.formatted(asOf, hotOnly)))
                            .containsExactlyInAnyOrderElementsOf(computeActual(groupedByTrino.formatted(resolvedByTrino.formatted(asOf, hotOnly))));
                }
            }
            finally {
                statement.execute("COMMENT ON TABLE %s IS '%s'".formatted(partition, HotTierSupersession.MARKED_COMMENT));
            }
        }
    }

    private String explain(String sql)
    {
        return (String) computeActual("EXPLAIN " + sql).getOnlyValue();
    }

    private Session withoutAggregationPushdown()
    {
        return Session.builder(getSession())
                .setCatalogSessionProperty(MeterstoreQueryRunner.CATALOG, MeterstoreSessionProperties.AGGREGATION_PUSHDOWN_ENABLED, "false")
                .build();
    }

    private Session withoutConnectorPushdown()
    {
        return Session.builder(getSession())
                .setSystemProperty("allow_pushdown_into_connectors", "false")
                .build();
    }

    private void assertSameResult(String sql)
    {
        assertThat(computeActual(sql)).containsExactlyInAnyOrderElementsOf(computeActual(withoutConnectorPushdown(), sql));
    }

    /** The connector's counts of a query: the table scan's connector metrics, which hold its page sources' and its split source's. */
    private Map<String, Long> metrics(Session session, String sql)
    {
        MaterializedResultWithPlan result = getDistributedQueryRunner().executeWithPlan(session, sql);
        return TestingPlans.connectorCounts(getDistributedQueryRunner(), result);
    }
}
