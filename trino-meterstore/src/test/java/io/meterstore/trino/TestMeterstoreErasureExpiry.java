package io.meterstore.trino;

import io.meterstore.archiver.maintenance.MaintenanceOutcome;
import io.meterstore.archiver.maintenance.MaintenanceSettings;
import io.meterstore.archiver.maintenance.TableMaintenance;
import io.meterstore.core.ColdFileRole;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.SnapshotRetention;
import io.meterstore.core.TableColumns;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.parquet.LiveRowsMerge;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.trino.spi.block.Block;
import io.trino.testing.AbstractTestQueryFramework;
import io.trino.testing.QueryRunner;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;
import static io.meterstore.trino.TestingInserts.timestamp;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_SNAPSHOT_NOT_FOUND;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real DELETE made physical by the archiver: once the reader grace has passed, {@code expire} expires the snapshots
 * that still referenced the files the DELETE rewrote, whatever the snapshot retention says; Trino's Parquet reader over
 * every file left in the warehouse (position deletes not applied) finds no row of the erased meter, and
 * {@code FOR VERSION AS OF} an expired snapshot names the erasure.
 */
final class TestMeterstoreErasureExpiry
        extends AbstractTestQueryFramework
{
    private TestingWarehouse warehouse;
    private Table table;

    @Override
    protected QueryRunner createQueryRunner()
            throws Exception
    {
        warehouse = TestingDeployment.SINGLE_NODE.warehouse(TestingPostgresServer.shared().createDatabase("erasure_expiry"));
        table = TestingMeterstoreTables.createTables(warehouse);
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(17)
                .meters(3)
                .startDay(LocalDate.of(2026, 3, 1))
                .days(3)
                .correctionsFraction(0.02)
                .build();
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, generator);
        }
        TestingArchival.archiveWindows(warehouse, 3);
        return MeterstoreQueryRunner.builder(warehouse)
                .withCatalogOverrides(Map.of("meterstore.erasure.hmac-key", TestMeterstoreErasure.HMAC_KEY))
                .build();
    }

    @Test
    void testErasureExpiresTheSnapshotsThatHeldItsRows()
            throws Exception
    {
        String malo = ReadingsGenerator.maloId(1);
        table.refresh();
        TieringWatermark watermark = WatermarkReader.current(table).watermark();
        long snapshotBefore = table.currentSnapshot().snapshotId();
        long erased = count("readings_versions WHERE malo_id = '%s'".formatted(malo));
        long others = count("readings_versions WHERE malo_id <> '%s'".formatted(malo));
        long hotOthers = count("readings_versions WHERE malo_id <> '%s' AND \"from\" >= %s".formatted(malo, timestamp(watermark.instant())));
        assertThat(count("readings_versions WHERE malo_id = '%s' AND \"from\" < %s".formatted(malo, timestamp(watermark.instant())))).isPositive();
        assertUpdate("DELETE FROM readings_versions WHERE malo_id = '%s'".formatted(malo), erased);
        // the files the DELETE rewrote are still in the warehouse: the snapshots before it reference them
        assertThat(rowsOnDisk(malo)).isPositive();

        table.refresh();
        Instant now = Instant.ofEpochMilli(table.currentSnapshot().timestampMillis()).plus(Duration.ofHours(2));
        TableMaintenance maintenance = new TableMaintenance(warehouse.catalog(), TableIdentifier.of(SCHEMA, TestingMeterstoreTables.TABLE), TestingMeterstoreTables.hotTier(),
                () -> warehouse.database().connect(), new MaintenanceSettings(SnapshotRetention.DEFAULT, Duration.ofDays(3), Duration.ofHours(1)), InstantSource.fixed(now));
        // the archived days are still detached below W, awaiting their drop, which counts their rows against the
        // archival commits that hold the erased rows: the erasure waits for the drop
        MaintenanceOutcome waiting = maintenance.expire();
        assertThat(waiting.erasures().orElseThrow().erasures()).isEmpty();
        assertThat(waiting.erasures().orElseThrow().awaiting()).hasSize(1);
        assertThat(rowsOnDisk(malo)).isPositive();
        assertThat(count("readings_versions FOR VERSION AS OF %s".formatted(snapshotBefore))).isEqualTo(others - hotOthers);

        // the next cycle past the grace drops them (and archives the last day); then the erasure becomes physical
        assertThat(TestingArchival.cycle(warehouse, InstantSource.fixed(TestingArchival.LATER.plus(Duration.ofHours(2)))).archiveOnce().droppedPartitions()).hasSize(3);
        TieringWatermark archived = WatermarkReader.current(warehouse.catalog().loadTable(TableIdentifier.of(SCHEMA, TestingMeterstoreTables.TABLE))).watermark();
        MaintenanceOutcome outcome = maintenance.expire();
        long erasureId = (long) computeActual("SELECT max(erasure_id) FROM \"readings$erasures\"").getOnlyValue();
        assertThat(outcome.erasures().orElseThrow().erasures()).containsExactly(erasureId);
        assertThat(computeActual("SELECT physically_completed_at IS NOT NULL FROM \"readings$erasures\" WHERE erasure_id = %s".formatted(erasureId)).getOnlyValue()).isEqualTo(true);

        // no file left holds a row of the erased meter; every other row is still there
        assertThat(rowsOnDisk(malo)).isZero();
        assertThat(count("readings_versions WHERE malo_id <> '%s'".formatted(malo))).isEqualTo(others);
        assertThat(count("iceberg.metering.readings WHERE malo_id = '%s'".formatted(malo))).isZero();
        assertThat(query("SELECT count(*) FROM readings_versions FOR VERSION AS OF %s".formatted(snapshotBefore)))
                .failure()
                .hasErrorCode(METERSTORE_SNAPSHOT_NOT_FOUND)
                .hasMessage("Snapshot %s of table 'metering.readings_versions' was expired by erasure %s, which removed rows it held (see \"readings_versions$erasures\"): use a snapshot id from iceberg.metering.\"readings$snapshots\""
                        .formatted(snapshotBefore, erasureId));
        assertThat(WatermarkReader.current(warehouse.catalog().loadTable(TableIdentifier.of(SCHEMA, TestingMeterstoreTables.TABLE))).watermark()).isEqualTo(archived);
    }

    /** Rows of {@code malo} in every Parquet file in the warehouse, referenced or not, read whole with Trino's Parquet reader. */
    private long rowsOnDisk(String malo)
            throws IOException
    {
        List<Path> files;
        try (Stream<Path> walk = Files.walk(warehouse.directory())) {
            // the data files: a position delete file holds only locations and positions
            files = walk.filter(path -> path.getFileName().toString().endsWith(".parquet"))
                    .filter(path -> !ColdFileRole.of(path.toUri().toString()).equals(Optional.of(ColdFileRole.POSITION_DELETES)))
                    .toList();
        }
        AtomicLong rows = new AtomicLong();
        for (Path file : files) {
            LiveRowsMerge.merge(TableColumns.READINGS, warehouse.fileIo(), List.of(new LiveRowsMerge.LiveFile(file.toUri().toString(), Files.size(file), new long[0])), 1024, page -> {
                Block maloIds = page.getBlock(ReadingsColumn.MALO_ID.ordinal());
                for (int position = 0; position < page.getPositionCount(); position++) {
                    if (VARCHAR.getSlice(maloIds, position).toStringUtf8().equals(malo)) {
                        rows.incrementAndGet();
                    }
                }
            });
        }
        return rows.get();
    }

    private long count(String from)
    {
        return (long) computeActual("SELECT count(*) FROM " + from).getOnlyValue();
    }
}
