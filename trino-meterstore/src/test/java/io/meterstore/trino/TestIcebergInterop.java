package io.meterstore.trino;

import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.meterstore.trino.base.MeterstoreErrorCode;
import io.trino.Session;
import io.trino.testing.AbstractTestQueryFramework;
import io.trino.testing.MaterializedResult;
import io.trino.testing.QueryRunner;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.time.LocalDate;

import static org.assertj.core.api.Assertions.assertThat;

/** Trino's own Iceberg connector reads what the archiver wrote, and agrees with MeterStore's cold tier row by row. */
final class TestIcebergInterop
        extends AbstractTestQueryFramework
{
    private static final int ARCHIVED_WINDOWS = 10;

    private TieringWatermark watermark;

    @Override
    protected QueryRunner createQueryRunner()
            throws Exception
    {
        TestingWarehouse warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("interop"));
        Table table = TestingMeterstoreTables.createTables(warehouse);
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(11)
                .meters(40)
                .startDay(LocalDate.of(2026, 10, 24))
                .days(10)
                .correctionsFraction(0.05)
                .build();
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, generator);
        }
        // ten windows: over the autumn DST day (2026-10-25) and across the end of October, into two month partitions
        TestingArchival.archiveWindows(warehouse, ARCHIVED_WINDOWS);
        table.refresh();
        watermark = WatermarkReader.current(table).watermark();
        return MeterstoreQueryRunner.builder(warehouse).build();
    }

    @Test
    void testIcebergConnectorReadsTheColdRows()
    {
        String cold = "SELECT * FROM meterstore.metering.readings_versions WHERE \"from\" < from_iso8601_timestamp('%s')".formatted(watermark.toProperty());
        MaterializedResult coldRows = computeActual(cold);
        assertThat(coldRows.getRowCount()).isPositive();
        assertThat(computeActual("SELECT count(*) FROM iceberg.metering.readings").getOnlyValue()).isEqualTo((long) coldRows.getRowCount());
        // the same rows, every column, in both directions
        assertQueryReturnsEmptyResult("SELECT * FROM iceberg.metering.readings EXCEPT " + cold);
        assertQueryReturnsEmptyResult(cold + " EXCEPT SELECT * FROM iceberg.metering.readings");
        // and the Iceberg table holds nothing at or above the watermark
        assertThat(computeActual("SELECT count(*) FROM iceberg.metering.readings WHERE \"from\" >= from_iso8601_timestamp('%s')".formatted(watermark.toProperty())).getOnlyValue())
                .isEqualTo(0L);
    }

    @Test
    void testIcebergConnectorSeesTheWatermarkInTheSnapshotSummary()
    {
        assertThat(computeActual("SELECT summary['meterstore.tiering_watermark'] FROM iceberg.metering.\"readings$snapshots\" ORDER BY committed_at DESC LIMIT 1").getOnlyValue())
                .isEqualTo(watermark.toProperty());
        assertThat(computeActual("SELECT count(*) FROM iceberg.metering.\"readings$snapshots\"").getOnlyValue()).isEqualTo((long) ARCHIVED_WINDOWS);
        // two month partitions: October and November
        assertThat(computeActual("SELECT count(DISTINCT partition) FROM iceberg.metering.\"readings$files\"").getOnlyValue()).isEqualTo(2L);
    }

    @Test
    void testDynamicFilterOnBothTiersKeepsTheAnswer()
    {
        String meters = "VALUES '%s', '%s', '%s'".formatted(ReadingsGenerator.maloId(2), ReadingsGenerator.maloId(17), ReadingsGenerator.maloId(33));
        String join = """
                SELECT r.malo_id, count(*), sum(r.value), min(r."from"), max(r."from")
                FROM readings_versions r JOIN (%s) m(id) ON r.malo_id = m.id
                GROUP BY 1""".formatted(meters);
        Session withoutDynamicFiltering = Session.builder(getSession())
                .setSystemProperty("enable_dynamic_filtering", "false")
                .build();
        MaterializedResult filtered = computeActual(join);
        // three meters, each with rows in both tiers
        assertThat(filtered.getRowCount()).isEqualTo(3);
        assertThat(filtered).containsExactlyInAnyOrderElementsOf(computeActual(withoutDynamicFiltering, join));
        assertThat(query(join)).matches("""
                SELECT malo_id, count(*), sum(value), min("from"), max("from")
                FROM readings_versions WHERE malo_id IN (%s) GROUP BY 1""".formatted(meters.substring("VALUES ".length())));
    }

    @Test
    void testForVersionAsOfReadsTheColdTierOfThatSnapshot()
    {
        // the fifth archival commit: its watermark is older than the current one
        MaterializedResult snapshot = computeActual("""
                SELECT snapshot_id, summary['meterstore.tiering_watermark']
                FROM iceberg.metering."readings$snapshots" ORDER BY committed_at OFFSET 4 LIMIT 1""");
        long snapshotId = (long) snapshot.getMaterializedRows().getFirst().getField(0);
        String snapshotWatermark = (String) snapshot.getMaterializedRows().getFirst().getField(1);
        assertThat(snapshotWatermark).isNotEqualTo(watermark.toProperty());

        String asOf = "SELECT count(*), sum(value), max(\"from\") FROM readings_versions FOR VERSION AS OF " + snapshotId;
        // exactly what Trino's Iceberg connector reads at that snapshot, and nothing from PostgreSQL
        assertThat(query(asOf)).matches("SELECT count(*), sum(value), max(\"from\") FROM iceberg.metering.readings FOR VERSION AS OF " + snapshotId);
        assertThat(query(asOf)).matches("SELECT count(*), sum(value), max(\"from\") FROM readings_versions WHERE \"from\" < from_iso8601_timestamp('%s')".formatted(snapshotWatermark));
        assertThat((long) computeActual(asOf).getMaterializedRows().getFirst().getField(0))
                .isLessThan((long) computeActual("SELECT count(*) FROM readings_versions").getOnlyValue());
    }

    @Test
    void testForVersionAsOfUnknownSnapshotIsAnError()
    {
        assertThat(query("SELECT count(*) FROM readings_versions FOR VERSION AS OF 4242"))
                .failure()
                .hasErrorCode(MeterstoreErrorCode.METERSTORE_SNAPSHOT_NOT_FOUND)
                .hasMessageContaining("has no snapshot 4242");
        assertThat(query("SELECT count(*) FROM readings FOR VERSION AS OF 4242"))
                .failure()
                .hasErrorCode(MeterstoreErrorCode.METERSTORE_SNAPSHOT_NOT_FOUND);
        assertThat(query("SELECT count(*) FROM readings_versions FOR VERSION AS OF 'main'"))
                .failure()
                .hasMessageContaining("takes an Iceberg snapshot id (bigint)");
    }
}
