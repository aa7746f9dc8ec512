package io.meterstore.trino;

import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
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
}
