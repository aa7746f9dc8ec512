package io.meterstore.trino;

import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.trino.hot.HotPartitionSizes;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.trino.testing.AbstractTestQueryFramework;
import io.trino.testing.MaterializedResult;
import io.trino.testing.MaterializedRow;
import io.trino.testing.QueryRunner;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Table statistics: the row count of both tiers (PostgreSQL's statistics of the hot partitions, the cold snapshot's
 * manifest list) follows loads and archival, narrows with the "from" range, and reaches the cost-based optimizer.
 */
final class TestMeterstoreStatistics
        extends AbstractTestQueryFramework
{
    private static final int METERS = 20;
    private static final LocalDate START = LocalDate.of(2026, 11, 2);
    private static final int DAYS = 6;

    private TestingWarehouse warehouse;
    private Table table;

    @Override
    protected QueryRunner createQueryRunner()
            throws Exception
    {
        warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("statistics"));
        table = TestingMeterstoreTables.createTables(warehouse);
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, generator(START, DAYS, 31));
            analyze(connection);
        }
        TestingArchival.archiveWindows(warehouse, 3);
        return MeterstoreQueryRunner.builder(warehouse).withoutIceberg().build();
    }

    @Test
    void testStatisticsFollowLoadsAndArchival()
            throws Exception
    {
        // the fallback for partitions never analysed assumes the heap bytes per row of generated readings
        try (Connection connection = warehouse.database().connect(); Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SELECT sum(pg_relation_size(oid)) / sum(reltuples) FROM pg_class WHERE relkind = 'r' AND relname LIKE 'readings\\_2%' AND reltuples > 0")) {
            assertThat(result.next()).isTrue();
            // the heap's fill varies from load to load (measured 270 to 400): the constant is a magnitude, not a figure
            assertThat(result.getDouble(1)).as("heap bytes per row of the analysed partitions")
                    .isCloseTo(HotPartitionSizes.ESTIMATED_HEAP_BYTES_PER_ROW, within(HotPartitionSizes.ESTIMATED_HEAP_BYTES_PER_ROW * 0.5));
        }
        // analysed partitions and the manifests' row counts: the estimate is the count
        assertRowCountNearCount("readings_versions", 0.02);
        TieringWatermark watermark = watermark();
        String hot = "(SELECT * FROM readings_versions WHERE \"from\" >= %s)".formatted(literal(watermark.instant()));
        String cold = "(SELECT * FROM readings_versions WHERE \"from\" < %s)".formatted(literal(watermark.instant()));
        assertRowCountNearCount(hot, 0.02);
        assertRowCountNearCount(cold, 0.02);
        long hotRowsBefore = rowCount(hot);
        long coldRowsBefore = rowCount(cold);
        assertThat(hotRowsBefore).isPositive();
        assertThat(coldRowsBefore).isPositive();
        // the resolved table: the same count, an upper bound of its rows
        assertThat(rowCount("readings")).isEqualTo(rowCount("readings_versions"));
        assertThat(rowCount("readings")).isGreaterThanOrEqualTo(count("readings"));

        // two more days in partitions PostgreSQL has no statistics for (reltuples -1): estimated from the heap's size
        ReadingsGenerator later = generator(START.plusDays(DAYS), 2, 37);
        try (Connection connection = warehouse.database().connect(); Statement statement = connection.createStatement()) {
            ReadingsLoader loader = new ReadingsLoader(TestingMeterstoreTables.hotTier());
            loader.ensurePartitions(connection, later.start(), later.end());
            // autovacuum must not analyse them before the assertions
            for (String partition : partitionsNeverAnalysed(statement)) {
                statement.execute("ALTER TABLE %s SET (autovacuum_enabled = false)".formatted(TestingMeterstoreTables.hotTier().qualifiedPartition(partition)));
            }
            loader.load(connection, later);
            assertThat(partitionsNeverAnalysed(statement)).hasSizeGreaterThanOrEqualTo(2);
        }
        long hotRowsLoaded = rowCount(hot);
        assertThat(hotRowsLoaded).isGreaterThan(hotRowsBefore);
        long loaded = count(hot) - count("(SELECT * FROM readings_versions WHERE \"from\" >= %s AND \"from\" < %s)".formatted(literal(watermark.instant()), literal(later.start())));
        // the heap-size fallback is rough, but of the right magnitude
        assertThat((double) (hotRowsLoaded - hotRowsBefore)).isCloseTo(loaded, within(loaded * 0.5));

        // archival moves rows from the hot estimate to the cold one; the watermark moves with them
        try (Connection connection = warehouse.database().connect()) {
            analyze(connection);
        }
        TestingArchival.archiveWindows(warehouse, 2);
        TieringWatermark advanced = watermark();
        assertThat(advanced.instant()).isAfter(watermark.instant());
        long coldRowsAfter = rowCount("(SELECT * FROM readings_versions WHERE \"from\" < %s)".formatted(literal(advanced.instant())));
        long hotRowsAfter = rowCount("(SELECT * FROM readings_versions WHERE \"from\" >= %s)".formatted(literal(advanced.instant())));
        assertThat(coldRowsAfter).isGreaterThan(coldRowsBefore);
        assertThat(coldRowsAfter).isCloseTo(count("(SELECT * FROM readings_versions WHERE \"from\" < %s)".formatted(literal(advanced.instant()))), within(0L));
        assertThat(hotRowsAfter).isLessThan(hotRowsLoaded);
        assertRowCountNearCount("readings_versions", 0.02);
    }

    @Test
    void testRangeNarrowsTheEstimate()
    {
        // one day of a month-wide cold manifest and one hot day: a fraction of the table, not all of it
        Instant watermark = watermark().instant();
        String day = "(SELECT * FROM readings_versions WHERE \"from\" >= %s AND \"from\" < %s)".formatted(literal(watermark.minusSeconds(86_400)), literal(watermark.plusSeconds(86_400)));
        long all = rowCount("readings_versions");
        assertThat(rowCount(day)).isPositive().isLessThan(all / 2);
        assertThat(rowCount("(SELECT * FROM readings_versions WHERE \"from\" >= TIMESTAMP '2100-01-01 00:00:00 UTC')")).isZero();
    }

    @Test
    void testColumnStatistics()
    {
        MaterializedResult stats = computeActual("SHOW STATS FOR readings_versions");
        MaterializedRow from = row(stats, "from");
        // the range covers every "from" there is (the cold side from its month's start), nothing is null
        Instant low = Instant.parse(((String) from.getField(5)).replace(' ', 'T').replace("TUTC", "Z"));
        Instant high = Instant.parse(((String) from.getField(6)).replace(' ', 'T').replace("TUTC", "Z"));
        MaterializedRow bounds = computeActual("SELECT to_unixtime(min(\"from\")), to_unixtime(max(\"from\")) FROM readings_versions").getMaterializedRows().getFirst();
        assertThat(low.getEpochSecond()).isLessThanOrEqualTo((long) (double) bounds.getField(0));
        assertThat(high.getEpochSecond()).isGreaterThanOrEqualTo((long) (double) bounds.getField(1));
        assertThat(low).isAfterOrEqualTo(Instant.parse("2026-11-01T00:00:00Z"));
        assertThat(from.getField(3)).isEqualTo(0.0);
        assertThat(row(stats, "malo_id").getField(3)).isEqualTo(0.0);
        // nullable: unknown
        assertThat(row(stats, "melo_id").getField(3)).isNull();
    }

    @Test
    void testTheOptimizerUsesTheEstimate()
    {
        long rows = rowCount("readings_versions");
        String plan = (String) computeActual("EXPLAIN SELECT malo_id, value FROM readings_versions").getOnlyValue();
        Matcher scan = Pattern.compile("TableScan\\[table = meterstore:.*?readings_versions.*?\\n\\s+Layout.*?\\n\\s+Estimates: \\{rows: ([0-9]+|\\?)", Pattern.DOTALL).matcher(plan);
        assertThat(scan.find()).as(plan).isTrue();
        assertThat(scan.group(1)).as(plan).isEqualTo(Long.toString(rows));
    }

    private void assertRowCountNearCount(String relation, double tolerance)
    {
        long count = count(relation);
        assertThat((double) rowCount(relation)).as("row count estimate of %s", relation).isCloseTo(count, within(count * tolerance));
    }

    private long rowCount(String relation)
    {
        MaterializedResult stats = computeActual("SHOW STATS FOR " + relation);
        // the last row holds the table's row count
        Object rowCount = stats.getMaterializedRows().getLast().getField(4);
        assertThat(rowCount).as("row count of %s", relation).isNotNull();
        return Math.round((double) rowCount);
    }

    private long count(String relation)
    {
        return (long) computeActual("SELECT count(*) FROM " + relation).getOnlyValue();
    }

    private static MaterializedRow row(MaterializedResult stats, String column)
    {
        return stats.getMaterializedRows().stream().filter(row -> column.equals(row.getField(0))).findFirst().orElseThrow();
    }

    private TieringWatermark watermark()
    {
        table.refresh();
        return WatermarkReader.current(table).watermark();
    }

    private static String literal(Instant instant)
    {
        return "from_iso8601_timestamp('%s')".formatted(instant);
    }

    private static ReadingsGenerator generator(LocalDate start, int days, long seed)
    {
        return ReadingsGenerator.builder()
                .seed(seed)
                .meters(METERS)
                .startDay(start)
                .days(days)
                .correctionsFraction(0.05)
                .build();
    }

    private static void analyze(Connection connection)
            throws Exception
    {
        try (Statement statement = connection.createStatement()) {
            statement.execute("ANALYZE " + TestingMeterstoreTables.hotTier().qualifiedParent());
        }
    }

    private static List<String> partitionsNeverAnalysed(Statement statement)
            throws Exception
    {
        List<String> partitions = new ArrayList<>();
        try (ResultSet result = statement.executeQuery("SELECT relname FROM pg_class WHERE relkind = 'r' AND relname LIKE 'readings\\_2%' AND reltuples < 0")) {
            while (result.next()) {
                partitions.add(result.getString(1));
            }
        }
        return partitions;
    }
}
