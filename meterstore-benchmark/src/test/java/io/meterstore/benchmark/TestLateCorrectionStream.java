package io.meterstore.benchmark;

import io.meterstore.core.CorrectionCommitter;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.TieringWatermark;
import io.meterstore.testing.TestingDatabase;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** What a kept dataset's left-over late corrections are rolled back to, in a real Iceberg table of the JDBC catalogue. */
final class TestLateCorrectionStream
{
    @Test
    void testLeftOverStreamIsRolledBackToTheLastArchivalCommit()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("stream_archival")) {
            Table table = table(database);
            long archival = commit(table, TieringWatermark.ARCHIVED_RANGE_KEY, "[2026-03-01T00:00:00Z, 2026-03-02T00:00:00Z)", "day.parquet");
            commit(table, "meterstore.correction", "1", "stream-1.parquet");
            commit(table, "meterstore.correction", "1", "stream-2.parquet");

            LateCorrectionStream.rollBackLeftOver(table);
            assertThat(table.currentSnapshot().snapshotId()).isEqualTo(archival);
        }
    }

    @Test
    void testErasureIsNeverRolledBack()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("stream_erasure")) {
            Table table = table(database);
            commit(table, TieringWatermark.ARCHIVED_RANGE_KEY, "[2026-03-01T00:00:00Z, 2026-03-02T00:00:00Z)", "day.parquet");
            // E1's erasure of a kept dataset: rolling it back would bring the erased meter's cold rows back
            long erasure = commit(table, CorrectionCommitter.ERASURE_KEY, "96", "erasure.parquet");
            assertThat(rollBackLeftOver(table)).isEqualTo(erasure);

            commit(table, "meterstore.correction", "1", "stream-1.parquet");
            assertThat(rollBackLeftOver(table)).isEqualTo(erasure);
        }
    }

    private static long rollBackLeftOver(Table table)
    {
        LateCorrectionStream.rollBackLeftOver(table);
        table.refresh();
        return table.currentSnapshot().snapshotId();
    }

    private static Table table(TestingDatabase database)
    {
        TestingWarehouse warehouse = TestingWarehouse.create(database);
        return IcebergTableSpec.createIfMissing(warehouse.catalog(), TableIdentifier.of("metering", "readings"));
    }

    /** A commit of one data file (its metadata: the rollback reads only summaries) carrying {@code key} in its summary. */
    private static long commit(Table table, String key, String value, String name)
    {
        DataFile file = DataFiles.builder(table.spec())
                .withPath(table.location() + "/data/" + name)
                .withFormat("PARQUET")
                .withPartitionPath("from_month=674") // months since 1970-01: 2026-03
                .withFileSizeInBytes(1024)
                .withRecordCount(96)
                .build();
        AppendFiles append = table.newAppend().appendFile(file).set(key, value);
        append.commit();
        table.refresh();
        return table.currentSnapshot().snapshotId();
    }
}
