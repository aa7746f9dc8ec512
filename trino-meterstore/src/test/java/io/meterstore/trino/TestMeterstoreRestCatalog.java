package io.meterstore.trino;

import com.google.common.base.Throwables;
import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchivalSettings;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.core.IcebergCatalogs;
import io.meterstore.core.IcebergCatalogs.RestCatalogSpec;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.storage.ColdStorage;
import io.meterstore.storage.ForwardingFileIo;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingRestCatalog;
import io.meterstore.testing.TestingS3Server;
import io.meterstore.testing.TestingWarehouse;
import io.trino.spi.security.ConnectorIdentity;
import io.trino.testing.AbstractTestQueryFramework;
import io.trino.testing.DistributedQueryRunner;
import io.trino.testing.QueryRunner;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.OutputFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import java.io.Closeable;
import java.io.IOException;
import java.net.ServerSocket;
import java.sql.Connection;
import java.time.Instant;
import java.time.InstantSource;
import java.time.LocalDate;
import java.util.HashMap;
import java.util.Map;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_CATALOG_UNAVAILABLE;
import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;
import static java.util.stream.Collectors.toMap;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The cold tables in an Iceberg REST catalogue (Iceberg's reference server over PostgreSQL, metadata and data in an S3
 * bucket): archival commits through it carry the watermark in their summaries, the connector and Trino's Iceberg
 * connector read them, INSERT commits below W through it, and a commit conflict is retried by MeterStore's own loop.
 */
final class TestMeterstoreRestCatalog
        extends AbstractTestQueryFramework
{
    private static final TableIdentifier READINGS = TableIdentifier.of(SCHEMA, TestingMeterstoreTables.TABLE);
    private static final String REST_TOKEN = "rest-bearer-token-7c1d";

    private TestingRestCatalog restCatalog;
    private TestingWarehouse warehouse;
    private Table table;
    private long rows;

    @Override
    protected QueryRunner createQueryRunner()
            throws Exception
    {
        restCatalog = TestingRestCatalog.start(TestingWarehouse.onS3(TestingPostgresServer.shared().createDatabase("rest_catalog"), TestingS3Server.shared()));
        warehouse = restCatalog.warehouse();
        table = TestingMeterstoreTables.createTables(warehouse);
        try (Connection connection = warehouse.database().connect()) {
            rows = new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, ReadingsGenerator.builder()
                    .seed(15)
                    .meters(5)
                    .startDay(LocalDate.of(2026, 5, 4))
                    .days(4)
                    .correctionsFraction(0.02)
                    .build());
        }
        TestingArchival.archiveWindows(warehouse, 1);
        DistributedQueryRunner queryRunner = MeterstoreQueryRunner.builder(warehouse).build();
        Map<String, String> unreachable = new HashMap<>(MeterstoreQueryRunner.catalogProperties(warehouse));
        unreachable.put("meterstore.iceberg.rest-catalog.uri", "http://127.0.0.1:" + closedPort());
        unreachable.put("meterstore.iceberg.rest-catalog.oauth2.token", REST_TOKEN);
        queryRunner.createCatalog("rest_down", "meterstore", unreachable);
        // the same catalogue with a bearer token (the reference server accepts any)
        Map<String, String> withToken = new HashMap<>(MeterstoreQueryRunner.catalogProperties(warehouse));
        withToken.put("meterstore.iceberg.rest-catalog.oauth2.token", REST_TOKEN);
        queryRunner.createCatalog("rest_token", "meterstore", withToken);
        return queryRunner;
    }

    @AfterAll
    void stopRestCatalog()
    {
        if (restCatalog != null) {
            restCatalog.close();
        }
    }

    @Test
    void testArchivalThroughRestIsReadByBothConnectors()
    {
        table.refresh();
        Snapshot archived = table.currentSnapshot();
        // the watermark and its companions survive the REST commit path into the snapshot summary
        assertThat(archived.summary()).containsKeys(
                "meterstore.tiering_watermark", "meterstore.row_count", "meterstore.archived_range", "meterstore.archival_step", "meterstore.archived_at");
        TieringWatermark watermark = WatermarkReader.current(table).watermark();
        assertThat(watermark.instant()).isAfter(Instant.EPOCH);
        long cold = Long.parseLong(archived.summary().get("total-records"));
        assertThat(cold).isPositive();

        assertThat(computeActual("SELECT count(*) FROM readings_versions").getOnlyValue()).isEqualTo(rows);
        assertThat(computeActual("SELECT count(*) FROM readings_versions WHERE \"from\" < from_iso8601_timestamp('%s')".formatted(watermark.instant())).getOnlyValue()).isEqualTo(cold);
        // Trino's Iceberg connector, through the same REST catalogue, sees the same files and the same summary
        assertThat(computeActual("SELECT count(*) FROM iceberg.metering.readings").getOnlyValue()).isEqualTo(cold);
        assertThat(computeActual("SELECT summary['meterstore.tiering_watermark'] FROM iceberg.metering.\"readings$snapshots\" WHERE snapshot_id = %s".formatted(archived.snapshotId())).getOnlyValue())
                .isEqualTo(archived.summary().get("meterstore.tiering_watermark"));
    }

    @Test
    void testInsertBelowWatermarkCommitsThroughRest()
    {
        table.refresh();
        long snapshots = table.snapshots().spliterator().estimateSize();
        TieringWatermark watermark = WatermarkReader.current(table).watermark();
        String maloId = (String) computeActual("SELECT min(malo_id) FROM readings_versions WHERE \"from\" < from_iso8601_timestamp('%s')".formatted(watermark.instant())).getOnlyValue();
        String obis = (String) computeActual("SELECT min(obis_code) FROM readings_versions WHERE malo_id = '%s'".formatted(maloId)).getOnlyValue();
        assertUpdate("""
                INSERT INTO readings_versions (malo_id, obis_code, sparte, "from", "to", value, unit, quality, resolution, source_kind, version, version_scope)
                SELECT malo_id, obis_code, sparte, "from", "to", value + 1, unit, 'SUBSTITUTED', resolution, 'MANUAL_ENTRY', version + 7, version_scope
                FROM readings_versions WHERE malo_id = '%s' AND obis_code = '%s' AND "from" = (SELECT min("from") FROM readings_versions WHERE malo_id = '%1$s' AND obis_code = '%2$s')
                """.formatted(maloId, obis), 1);
        table.refresh();
        // one more snapshot, committed through the REST catalogue, republishing W unchanged
        assertThat(table.snapshots().spliterator().estimateSize()).isEqualTo(snapshots + 1);
        assertThat(WatermarkReader.current(table).watermark()).isEqualTo(watermark);
        assertThat(computeActual("SELECT count(*) FROM iceberg.metering.readings WHERE malo_id = '%s' AND quality = 'SUBSTITUTED' AND source_kind = 'MANUAL_ENTRY'".formatted(maloId)).getOnlyValue()).isEqualTo(1L);
    }

    @Test
    void testCommitConflictIsRetriedByOurLoop()
            throws Exception
    {
        // the moment the cycle writes its data file, another client commits to the table: the REST catalogue refuses
        // the cycle's commit (409), and the cycle's own loop commits again on the new base
        AtomicBoolean raced = new AtomicBoolean();
        long before = (long) computeActual("SELECT count(*) FROM readings_versions").getOnlyValue();
        Catalog other = warehouse.catalog();
        try (ColdStorage storage = ColdStorage.create(warehouse.storageProperties())) {
            FileIO racing = new ForwardingFileIo(storage.fileSystemFactory().create(ConnectorIdentity.ofUser("test")))
            {
                @Override
                public OutputFile newOutputFile(String path)
                {
                    if (path.endsWith(".parquet") && raced.compareAndSet(false, true)) {
                        other.loadTable(READINGS).newAppend().commit();
                    }
                    return super.newOutputFile(path);
                }
            };
            Catalog catalog = IcebergCatalogs.rest(new RestCatalogSpec("meterstore", restCatalog.uri(), Optional.empty(), Optional.empty(), Optional.empty()), properties -> racing);
            try {
                ArchiveOutcome outcome = new ArchivalCycle(catalog, READINGS, TestingMeterstoreTables.hotTier(), () -> warehouse.database().connect(), ArchivalSettings.DEFAULTS, InstantSource.fixed(TestingArchival.LATER))
                        .archiveOnce();
                assertThat(raced).isTrue();
                assertThat(outcome.kind()).as(outcome.describe()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);
            }
            finally {
                ((Closeable) catalog).close();
                ((Closeable) other).close();
            }
        }
        table.refresh();
        Snapshot archival = table.currentSnapshot();
        Snapshot intervening = table.snapshot(archival.parentId());
        // the archival snapshot landed on the other client's, and carries a watermark past the one it started from
        assertThat(intervening.summary()).doesNotContainKey("meterstore.tiering_watermark");
        assertThat(TieringWatermark.fromSummary(archival.summary())).isPresent();
        // moved, not copied: every version once
        assertThat(computeActual("SELECT count(*) FROM readings_versions").getOnlyValue()).isEqualTo(before);
    }

    @Test
    void testUnreachableRestCatalogNamesTheSetting()
    {
        assertThat(query("SELECT count(*) FROM rest_down.metering.readings_versions"))
                .failure()
                .hasErrorCode(METERSTORE_CATALOG_UNAVAILABLE)
                .hasMessageContaining("Cannot open the Iceberg catalogue 'meterstore'")
                .hasMessageContaining("meterstore.iceberg.rest-catalog.uri");
    }

    @Test
    void testCredentialsAreNeverShown()
    {
        List<String> secrets = List.of(TestingS3Server.SECRET_KEY, REST_TOKEN);
        // $config masks the secrets it has and holds no storage credential at all
        Map<String, String> settings = computeActual("SELECT setting, value FROM rest_token.metering.\"readings$config\"").getMaterializedRows().stream()
                .collect(toMap(row -> (String) row.getField(0), row -> String.valueOf(row.getField(1))));
        assertThat(settings).containsEntry("meterstore.iceberg.rest-catalog.oauth2.token", "********");
        assertThat(settings.values()).allSatisfy(value -> assertThat(value).doesNotContain(secrets));
        assertThat((String) computeActual("SHOW CREATE TABLE rest_token.metering.readings").getOnlyValue()).doesNotContain(secrets);
        // nor does an error
        assertThat(query("SELECT count(*) FROM rest_down.metering.readings_versions"))
                .failure()
                .satisfies(failure -> assertThat(failure).hasStackTraceContaining("meterstore.iceberg.rest-catalog.uri"))
                .satisfies(failure -> assertThat(Throwables.getStackTraceAsString(failure)).doesNotContain(secrets));
    }

    private static int closedPort()
            throws IOException
    {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
