package io.meterstore.trino;

import io.meterstore.core.Reading;
import io.meterstore.core.Sparte;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.trino.Session;
import io.trino.operator.OperatorStats;
import io.trino.spi.QueryId;
import io.trino.testing.DistributedQueryRunner;
import io.trino.testing.MaterializedRow;
import io.trino.testing.QueryRunner.MaterializedResultWithPlan;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;
import static io.meterstore.trino.TestingInserts.timestamp;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An INSERT ... SELECT of 2.5 M rows, generated inside Trino, under a query memory cap far below the statement's size:
 * the page sinks stage chunks, finishInsert streams, so the statement completes, its writer's memory reported to
 * Trino and bounded, and every row lands exactly once in the tier its "from" decides. Redelivering two of its days,
 * one each side of W, then changes nothing.
 */
final class TestMeterstoreBoundedInsert
{
    private static final int METERS = 1_000;
    private static final int INTERVALS = 2_500;
    private static final long ROWS = (long) METERS * INTERVALS;
    // far below the ~500 MB of rows the statement carries; the engine's own exchange buffers take some tens of MB of it
    private static final String MEMORY_CAP = "256MB";
    // a chunk being filled and one on its way to PostgreSQL, per writer
    private static final long WRITER_MEMORY_BYTES = 32L << 20;

    /** A timestamp without a zone, read as UTC: sequence() steps through those only. */
    private static String utcTimestamp(Instant instant)
    {
        return timestamp(instant).replace(" UTC'", "'");
    }

    @Test
    void testMillionsOfRowsUnderAMemoryCap()
            throws Exception
    {
        TestingWarehouse warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("bounded_insert"));
        Table table = TestingMeterstoreTables.createTables(warehouse);
        ReadingsGenerator generator = ReadingsGenerator.builder().seed(13).meters(1).startDay(LocalDate.of(2026, 3, 1)).days(3).build();
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, generator);
        }
        TestingArchival.archiveWindows(warehouse, 2);
        table.refresh();
        TieringWatermark watermark = WatermarkReader.current(table).watermark();
        // one day below W, the rest above it, all in March in Berlin (one version scope)
        Instant start = TestingArchival.alignedToUtcDay(watermark.instant()).minus(Duration.ofDays(1));
        assertThat(start).isAfterOrEqualTo(Instant.parse("2026-02-28T23:00:00Z"));
        Instant end = start.plus(Duration.ofMinutes(15L * (INTERVALS - 1)));
        assertThat(end).isBefore(Instant.parse("2026-03-29T00:00:00Z"));
        long coldIntervals = Duration.between(start, watermark.instant()).toMinutes() / 15;

        List<String> maloIds = IntStream.range(1_000, 1_000 + METERS).mapToObj(ReadingsGenerator::maloId).toList();
        String versionScope = Reading.versionScope(ReadingsGenerator.DEFAULT_OPERATOR_ID, Sparte.STROM, start);
        // every value is a whole number of quarter kWh from the interval's minute and the meter's position
        String insert = """
                INSERT INTO readings_versions
                SELECT malo_id, NULL, '1-1:1.29.0', 'STROM', "from", "from" + INTERVAL '15' MINUTE,
                       CAST(minute("from") + meter AS decimal(18, 6)) / 4, 'KWH', 'MEASURED', 'PT15M', 'MSCONS', NULL, NULL,
                       DECIMAL '1', '%s', NULL, NULL
                FROM UNNEST(ARRAY[%s]) WITH ORDINALITY AS m(malo_id, meter)
                CROSS JOIN (SELECT with_timezone(utc, 'UTC') AS "from" FROM UNNEST(sequence(%s, %s, INTERVAL '15' MINUTE)) AS t(utc))"""
                .formatted(versionScope, maloIds.stream().map(id -> "'" + id + "'").collect(Collectors.joining(", ")), utcTimestamp(start), utcTimestamp(end));
        // sum over meters 1..METERS and the minutes 0, 15, 30, 45 of each hour, the intervals a multiple of four
        BigDecimal expectedSum = BigDecimal.valueOf(INTERVALS / 4 * ((long) METERS * (0 + 15 + 30 + 45) + 4L * METERS * (METERS + 1) / 2)).divide(BigDecimal.valueOf(4));

        try (DistributedQueryRunner queryRunner = MeterstoreQueryRunner.builder(warehouse).build()) {
            Session capped = Session.builder(queryRunner.getDefaultSession())
                    .setSystemProperty("query_max_memory_per_node", MEMORY_CAP)
                    .setSystemProperty("query_max_memory", MEMORY_CAP)
                    .build();
            MaterializedResultWithPlan result = queryRunner.executeWithPlan(capped, insert);
            assertThat(result.result().getUpdateCount()).hasValue(ROWS);

            // the writer's memory is the page sinks' (TableWriterOperator reports getMemoryUsage): a staged chunk, not the statement
            QueryId queryId = result.queryId();
            List<OperatorStats> writers = queryRunner.getCoordinator().getQueryManager().getFullQueryInfo(queryId).getQueryStats().getOperatorSummaries().stream()
                    .filter(operator -> operator.getOperatorType().equals("TableWriterOperator"))
                    .toList();
            assertThat(writers).isNotEmpty();
            long writerPeak = writers.stream().mapToLong(operator -> operator.getPeakUserMemoryReservation().toBytes()).max().orElseThrow();
            assertThat(writerPeak).isBetween(1L << 20, WRITER_MEMORY_BYTES);

            // every row once, in the tier its "from" decides
            String ours = "malo_id IN (%s)".formatted(maloIds.stream().map(id -> "'" + id + "'").collect(Collectors.joining(", ")));
            MaterializedRow total = queryRunner.execute("SELECT count(*), sum(value) FROM readings_versions WHERE " + ours).getMaterializedRows().getFirst();
            assertThat(total.getField(0)).isEqualTo(ROWS);
            assertThat((BigDecimal) total.getField(1)).isEqualByComparingTo(expectedSum);
            assertThat(queryRunner.execute("SELECT count(*), min(\"from\") >= %s, max(\"from\") < %s FROM iceberg.metering.readings WHERE %s"
                    .formatted(timestamp(start), timestamp(watermark.instant()), ours)).getMaterializedRows().getFirst().getFields())
                    .containsExactly(METERS * coldIntervals, true, true);
            try (Connection connection = warehouse.database().connect();
                    PreparedStatement statement = connection.prepareStatement("SELECT count(*), min(\"from\") >= ? FROM %s.readings WHERE version = 1".formatted(SCHEMA))) {
                statement.setObject(1, watermark.instant().atOffset(ZoneOffset.UTC));
                try (ResultSet hot = statement.executeQuery()) {
                    hot.next();
                    assertThat(hot.getLong(1)).isEqualTo(ROWS - METERS * coldIntervals);
                    assertThat(hot.getBoolean(2)).isTrue();
                }
                // the staging table went with the statement's commit
                try (ResultSet staging = connection.createStatement().executeQuery("SELECT count(*) FROM pg_class WHERE relname LIKE 'meterstore\\_insert\\_%'")) {
                    staging.next();
                    assertThat(staging.getLong(1)).isZero();
                }
            }

            // a redelivery of two days, one each side of W and many lookup chunks each: nothing new, nothing changed
            long snapshots = (long) queryRunner.execute("SELECT count(*) FROM iceberg.metering.\"readings$snapshots\"").getOnlyValue();
            String twoDays = "%s AND \"from\" < %s".formatted(ours, timestamp(watermark.instant().plus(Duration.ofDays(1))));
            long redelivered = (long) queryRunner.execute("SELECT count(*) FROM readings_versions WHERE " + twoDays).getOnlyValue();
            assertThat(redelivered).isEqualTo(METERS * (coldIntervals + 96));
            assertThat(queryRunner.execute("INSERT INTO readings_versions SELECT * FROM readings_versions WHERE " + twoDays).getUpdateCount()).hasValue(redelivered);
            assertThat(queryRunner.execute("SELECT count(*), sum(value) FROM readings_versions WHERE " + ours).getMaterializedRows().getFirst()).isEqualTo(total);
            assertThat(queryRunner.execute("SELECT count(*) FROM iceberg.metering.\"readings$snapshots\"").getOnlyValue()).isEqualTo(snapshots);
        }
    }
}
