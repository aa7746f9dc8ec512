package io.meterstore.trino;

import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.Reading;
import io.meterstore.core.Sparte;
import io.meterstore.core.Sparte.MeasurementUnit;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsInserts;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.meterstore.trino.base.MeterstoreMetrics;
import io.trino.jdbc.TrinoStatement;
import io.trino.plugin.base.metrics.LongCount;
import io.trino.spi.QueryId;
import io.trino.spi.metrics.Metric;
import io.trino.testing.AbstractTestQueryFramework;
import io.trino.testing.DistributedQueryRunner;
import io.trino.testing.MaterializedRow;
import io.trino.testing.QueryRunner;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_CONFLICTING_REDELIVERY;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_INVALID_READING;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_WRITE_FAILED;
import static io.meterstore.trino.TestingInserts.correction;
import static io.meterstore.trino.TestingInserts.hotRows;
import static io.meterstore.trino.TestingInserts.insert;
import static io.meterstore.trino.TestingInserts.keyPredicate;
import static io.meterstore.trino.TestingInserts.lateCorrection;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * INSERT through Trino: every row validated before anything is written, routed by "from" against the current
 * watermark, redeliveries skipped, conflicting ones refused, and a statement that failed between the tiers completed
 * by running it again. Both tiers are checked directly: PostgreSQL partitions by name, Iceberg through Trino's own
 * Iceberg connector.
 */
class TestMeterstoreInsert
        extends AbstractTestQueryFramework
{
    private static final int ARCHIVED_WINDOWS = 3;

    private TestingWarehouse warehouse;
    private Table table;
    private ReadingsGenerator generator;
    private TieringWatermark watermark;

    @Override
    protected QueryRunner createQueryRunner()
            throws Exception
    {
        warehouse = deployment().warehouse(TestingPostgresServer.shared().createDatabase("insert"));
        table = TestingMeterstoreTables.createTables(warehouse);
        generator = ReadingsGenerator.builder()
                .seed(5)
                .meters(6)
                .startDay(LocalDate.of(2026, 3, 1))
                .days(6)
                .correctionsFraction(0.02)
                .build();
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, generator);
        }
        TestingArchival.archiveWindows(warehouse, ARCHIVED_WINDOWS);
        table.refresh();
        watermark = WatermarkReader.current(table).watermark();
        DistributedQueryRunner queryRunner = deployment().queryRunner(warehouse).build();
        Map<String, String> shortLock = new HashMap<>(MeterstoreQueryRunner.catalogProperties(warehouse));
        shortLock.put("meterstore.postgresql.lock-timeout", "700ms");
        queryRunner.createCatalog("short_lock", "meterstore", shortLock);
        return queryRunner;
    }

    protected TestingDeployment deployment()
    {
        return TestingDeployment.SINGLE_NODE;
    }

    /** A quarter-hour {@code days} after the watermark's day (negative: before it) and {@code quarters} into it. */
    private Instant interval(int days, int quarters)
    {
        return watermark.instant().plus(Duration.ofDays(days)).plus(Duration.ofMinutes(15L * quarters));
    }

    private long icebergRows(Reading reading)
    {
        return (long) computeActual("SELECT count(*) FROM iceberg.metering.readings WHERE " + keyPredicate(reading)).getOnlyValue();
    }

    private long hot(Reading reading)
            throws Exception
    {
        try (Connection connection = warehouse.database().connect()) {
            return hotRows(connection, reading);
        }
    }

    /** Fails unless the staging tables of finished statements are gone, succeeded or failed; Trino cleans a failed query up just after its client saw the failure. */
    private void assertNoStagingTables()
            throws Exception
    {
        long staging = -1;
        for (int attempt = 0; attempt < 100 && staging != 0; attempt++) {
            if (attempt > 0) {
                Thread.sleep(100);
            }
            try (Connection connection = warehouse.database().connect();
                    ResultSet result = connection.createStatement().executeQuery("SELECT count(*) FROM pg_class WHERE relname LIKE 'meterstore\\_insert\\_%'")) {
                result.next();
                staging = result.getLong(1);
            }
        }
        assertThat(staging).as("staging tables left behind").isZero();
    }

    private long snapshots()
    {
        return (long) computeActual("SELECT count(*) FROM iceberg.metering.\"readings$snapshots\"").getOnlyValue();
    }

    private long versionsRows()
    {
        return (long) computeActual("SELECT count(*) FROM readings_versions").getOnlyValue();
    }

    @Test
    void testRoutesByWatermark()
            throws Exception
    {
        Reading cold = correction(0, interval(-2, 7), 1, "1.250000");
        Reading coldOtherMonth = correction(0, interval(-3, 7), 1, "0.5");
        Reading hot = correction(0, interval(1, 9), 1, "2.5");
        assertThat(cold.from()).isBefore(watermark.instant());
        assertThat(hot.from()).isAfter(watermark.instant());
        long snapshotsBefore = snapshots();

        assertUpdate(insert(hot, cold, coldOtherMonth), 3);

        assertThat(hot(hot)).isEqualTo(1);
        assertThat(icebergRows(hot)).isZero();
        assertThat(icebergRows(cold)).isEqualTo(1);
        assertThat(hot(cold)).isZero();
        assertThat(icebergRows(coldOtherMonth)).isEqualTo(1);
        // one commit, republishing the watermark unchanged, one sorted file per month partition
        assertThat(snapshots()).isEqualTo(snapshotsBefore + 1);
        MaterializedRow summary = computeActual("""
                SELECT summary['meterstore.tiering_watermark'], summary['added-data-files'], summary['meterstore.row_count']
                FROM iceberg.metering."readings$snapshots" ORDER BY committed_at DESC LIMIT 1""").getMaterializedRows().getFirst();
        assertThat(summary.getFields()).containsExactly(watermark.toProperty(), "2", "2");
        table.refresh();
        assertThat(WatermarkReader.current(table).watermark()).isEqualTo(watermark);

        // recorded_at: one instant for the statement; balancing_day: computed from the Berlin calendar
        List<MaterializedRow> rows = computeActual("SELECT recorded_at, balancing_day, value FROM readings_versions WHERE malo_id = '%s' AND version = 1 ORDER BY \"from\"".formatted(hot.maloId())).getMaterializedRows();
        assertThat(rows).hasSize(3);
        assertThat(rows.stream().map(row -> row.getField(0)).distinct()).hasSize(1);
        assertThat(((ZonedDateTime) rows.getFirst().getField(0)).toInstant()).isAfter(generator.end());
        assertThat(rows.get(2).getField(1)).isEqualTo(MeteringCalendar.balancingDay(Sparte.STROM, hot.from()));
        // and MeterStore reads each exactly once, from its tier
        assertThat(computeActual("SELECT count(*) FROM readings_versions WHERE " + keyPredicate(cold)).getOnlyValue()).isEqualTo(1L);
        assertThat(computeActual("SELECT count(*) FROM readings_versions WHERE " + keyPredicate(hot)).getOnlyValue()).isEqualTo(1L);
    }

    @Test
    void testProvidedRecordedAtIsKept()
            throws Exception
    {
        Reading hot = correction(1, interval(2, 3), 1, "3");
        String sql = insert(hot).replace(", NULL, NULL)", ", TIMESTAMP '2026-03-20 10:00:00.123456 UTC', DATE '%s')".formatted(hot.balancingDay()));
        assertUpdate(sql, 1);
        assertThat(computeActual("SELECT CAST(recorded_at AS varchar) FROM readings_versions WHERE " + keyPredicate(hot)).getOnlyValue())
                .isEqualTo("2026-03-20 10:00:00.123456 UTC");
    }

    @Test
    void testInvalidRowsFailTheStatementAndWriteNothing()
            throws Exception
    {
        Reading good = correction(2, interval(1, 1), 1, "1");
        Reading goodCold = correction(2, interval(-1, 1), 1, "1");
        long rowsBefore = versionsRows();
        long snapshotsBefore = snapshots();
        record Case(String sql, String message) {}
        Reading bad = correction(2, interval(1, 2), 1, "1");
        String badRow = TestingInserts.values(bad);
        String maloId = bad.maloId();
        String wrongCheckDigit = maloId.substring(0, 10) + (char) ('0' + (maloId.charAt(10) - '0' + 1) % 10);
        List<Case> cases = List.of(
                new Case(badRow.replace("'" + maloId + "'", "'" + wrongCheckDigit + "'"), "check digit"),
                new Case(badRow.replace("'1-1:1.29.0'", "'1-1:1.29.0*255'"), "is not canonical: store it as '1-1:1.29.0'"),
                new Case(badRow.replace("'KWH'", "'M3'"), "Unit M3 does not fit sparte STROM"),
                new Case(badRow.replace(TestingInserts.timestamp(bad.end()), TestingInserts.timestamp(bad.from().plus(Duration.ofMinutes(10)))), "is not on the PT15M grid"),
                new Case(badRow.replace(TestingInserts.timestamp(bad.from()), TestingInserts.timestamp(bad.from().plus(Duration.ofMinutes(15)))), "is empty or reversed"),
                new Case(badRow.replace(bad.versionScope(), "9900000000003:2025-01"), "does not cover the interval"),
                new Case(badRow.replace(", NULL, NULL)", ", NULL, DATE '2020-01-01')"), "Balancing day 2020-01-01"));
        for (Case invalid : cases) {
            // the bad row among good rows of both tiers: nothing of the statement is written
            String sql = "INSERT INTO readings_versions VALUES %s, %s, %s".formatted(TestingInserts.values(good), invalid.sql(), TestingInserts.values(goodCold));
            assertThat(query(sql))
                    .failure()
                    .hasErrorCode(METERSTORE_INVALID_READING)
                    .hasMessageContaining("(malo_id '")
                    .hasMessageContaining("obis_code '")
                    .hasMessageContaining("version 1)")
                    .hasMessageContaining(invalid.message())
                    .hasMessageContaining("nothing was written");
        }
        // a required column left NULL: Trino itself refuses the row before any writer runs
        assertThat(query("INSERT INTO readings_versions VALUES %s, %s".formatted(TestingInserts.values(good), badRow.replace("'MANUAL_ENTRY'", "NULL"))))
                .failure()
                .hasMessageContaining("NULL value not allowed for NOT NULL column: source_kind");
        assertThat(versionsRows()).isEqualTo(rowsBefore);
        assertThat(snapshots()).isEqualTo(snapshotsBefore);
        assertThat(hot(good)).isZero();
        assertThat(icebergRows(goodCold)).isZero();
        assertNoStagingTables();
    }

    @Test
    void testUnitsByObisCodeAndSparte()
            throws Exception
    {
        // kWh or MWh for energy, kW for a maximum register (D = 6), kvarh for reactive energy (C = 3 to 8), kvar for its maximum
        List<Reading> fitting = List.of(
                withUnit(correction(70, interval(1, 4), 1, "1.5"), Sparte.STROM, "1-1:1.29.0", MeasurementUnit.MWH),
                withUnit(correction(70, interval(1, 4), 1, "42"), Sparte.STROM, "1-1:1.6.0", MeasurementUnit.KW),
                withUnit(correction(70, interval(-1, 4), 1, "0.75"), Sparte.STROM, "1-1:3.29.0", MeasurementUnit.KVARH),
                withUnit(correction(70, interval(-1, 4), 1, "12"), Sparte.STROM, "1-1:4.6.0", MeasurementUnit.KVAR));
        assertUpdate(insert(fitting), 4);
        for (Reading reading : fitting) {
            assertThat(computeActual("SELECT unit FROM readings WHERE " + keyPredicate(reading)).getOnlyValue()).isEqualTo(reading.unit().name());
        }
        assertThat(hot(fitting.get(1))).isEqualTo(1);
        assertThat(icebergRows(fitting.get(3))).isEqualTo(1);

        long rowsBefore = versionsRows();
        long snapshotsBefore = snapshots();
        Reading good = correction(71, interval(1, 1), 1, "1");
        Reading goodCold = correction(71, interval(-1, 1), 1, "1");
        record Case(Reading reading, String message) {}
        for (Instant from : List.of(interval(1, 2), interval(-1, 2))) {
            Reading bad = correction(71, from, 1, "1");
            List<Case> cases = List.of(
                    new Case(withUnit(bad, Sparte.STROM, "1-1:1.6.0", MeasurementUnit.KWH), "Unit KWH does not fit OBIS code '1-1:1.6.0' of sparte STROM: the code measures a demand (maximum register, D = 6); use KW"),
                    new Case(withUnit(bad, Sparte.STROM, "1-1:1.29.0", MeasurementUnit.KW), "Unit KW does not fit OBIS code '1-1:1.29.0' of sparte STROM: the code measures an energy or a volume; use KWH or MWH"),
                    new Case(withUnit(bad, Sparte.STROM, "1-1:3.29.0", MeasurementUnit.KWH), "the code measures reactive energy (electricity, C = 3 to 8); use KVARH"),
                    new Case(withUnit(bad, Sparte.STROM, "1-1:3.6.0", MeasurementUnit.KVARH), "maximum register D = 6); use KVAR"),
                    new Case(withUnit(bad, Sparte.STROM, "1-1:1.29.0", MeasurementUnit.M3), "Unit M3 does not fit sparte STROM: electricity is KWH, MWH, KW, KVARH or KVAR; under OBIS code '1-1:1.29.0', which measures an energy or a volume, use KWH or MWH"),
                    new Case(withUnit(bad, Sparte.GAS, "7-20:3.1.0", MeasurementUnit.KVARH), "Unit KVARH does not fit sparte GAS: gas is KWH, MWH, KW or M3"),
                    new Case(withUnit(bad, Sparte.WASSER, "8-0:1.29.0", MeasurementUnit.KWH), "Unit KWH does not fit sparte WASSER: water is M3"),
                    new Case(withUnit(bad, Sparte.WASSER, "8-0:1.6.0", MeasurementUnit.M3), "for which water has no unit (water is M3)"));
            for (Case invalid : cases) {
                // the bad row among good rows of both tiers: nothing of the statement is written
                assertThat(query(insert(good, invalid.reading(), goodCold)))
                        .failure()
                        .hasErrorCode(METERSTORE_INVALID_READING)
                        .hasMessageContaining(invalid.message())
                        .hasMessageContaining("nothing was written");
            }
        }
        assertThat(versionsRows()).isEqualTo(rowsBefore);
        assertThat(snapshots()).isEqualTo(snapshotsBefore);
        assertThat(hot(good)).isZero();
        assertThat(icebergRows(goodCold)).isZero();
    }

    private static Reading withUnit(Reading reading, Sparte sparte, String obisCode, MeasurementUnit unit)
    {
        return new Reading(reading.maloId(), reading.meloId(), obisCode, sparte, reading.from(), reading.to(), reading.value(), unit, reading.quality(),
                reading.resolution(), reading.sourceKind(), reading.sourceDetail(), reading.provenance(), reading.version(),
                Reading.versionScope(ReadingsGenerator.DEFAULT_OPERATOR_ID, sparte, reading.from()), reading.recordedAt(), MeteringCalendar.balancingDay(sparte, reading.from()));
    }

    @Test
    void testRecordedAtInTheFutureIsRefused()
            throws Exception
    {
        Reading hot = correction(6, interval(1, 60), 1, "1");
        Reading cold = correction(6, interval(-1, 60), 1, "1");
        long rowsBefore = versionsRows();
        long snapshotsBefore = snapshots();
        // a sender whose clock runs ahead, or a typo: "as known at" would not know the version until 2099
        String future = TestingInserts.values(hot).replace(", NULL, NULL)", ", TIMESTAMP '2099-01-01 00:00:00 UTC', NULL)");
        assertThat(query("INSERT INTO readings_versions VALUES %s, %s".formatted(TestingInserts.values(cold), future)))
                .failure()
                .hasErrorCode(METERSTORE_INVALID_READING)
                .hasMessageContaining("(malo_id '%s'".formatted(hot.maloId()))
                .hasMessageContaining("recorded_at 2099-01-01T00:00:00Z lies after the statement's start")
                .hasMessageContaining("plus the tolerated clock skew of 1.00m ('meterstore.max-clock-skew')")
                .hasMessageContaining("nothing was written");
        assertThat(versionsRows()).isEqualTo(rowsBefore);
        assertThat(snapshots()).isEqualTo(snapshotsBefore);
        assertThat(hot(hot)).isZero();
        assertThat(icebergRows(cold)).isZero();

        // a clock a few seconds ahead is within the tolerated skew, and the value is kept as given
        Instant ahead = Instant.now().plusSeconds(5).truncatedTo(ChronoUnit.MICROS);
        assertUpdate(insert(hot).replace(", NULL, NULL)", ", %s, NULL)".formatted(TestingInserts.timestamp(ahead))), 1);
        assertThat(((ZonedDateTime) computeActual("SELECT recorded_at FROM readings_versions WHERE " + keyPredicate(hot)).getOnlyValue()).toInstant()).isEqualTo(ahead);
    }

    @Test
    void testRedeliveryIsANoOpInBothTiers()
            throws Exception
    {
        Reading hot = correction(3, interval(1, 20), 1, "4.5");
        Reading cold = correction(3, interval(-2, 20), 1, "4.5");
        // through the JDBC driver: the update count is every row the statement carried, the metrics what it wrote
        assertThat(insertThroughJdbc(insert(hot, cold))).isEqualTo(new InsertReport(2, 1, 1, 0));
        long snapshotsAfterFirst = snapshots();
        long rowsAfterFirst = versionsRows();

        // the same versions again, also twice within one statement, with another recorded_at: nothing changes
        assertThat(insertThroughJdbc(insert(hot, cold, hot))).isEqualTo(new InsertReport(3, 0, 0, 3));
        assertThat(insertThroughJdbc(insert(hot, cold).replace(", NULL, NULL)", ", TIMESTAMP '2026-04-01 00:00:00 UTC', NULL)"))).isEqualTo(new InsertReport(2, 0, 0, 2));
        assertThat(hot(hot)).isEqualTo(1);
        assertThat(icebergRows(cold)).isEqualTo(1);
        assertThat(versionsRows()).isEqualTo(rowsAfterFirst);
        assertThat(snapshots()).isEqualTo(snapshotsAfterFirst);
    }

    @Test
    void testColumnArraysAsJsonStoreWhatValuesStores()
            throws Exception
    {
        // a hot and a cold row whose source_detail JSON and SQL must both escape, melo_id and provenance NULL
        Instant recordedAt = Instant.parse("2026-03-20T08:00:00Z");
        String sourceDetail = "Ticket \"K-1\" \\ O'Brien\nZählerwechsel";
        Reading hot = lateCorrection(correction(5, interval(1, 41), 1, "2.5"), recordedAt, sourceDetail);
        Reading cold = lateCorrection(correction(5, interval(-2, 41), 1, "2.5"), recordedAt, sourceDetail);
        assertThat(insertThroughJdbc(ReadingsInserts.insertAsRecorded(List.of(hot, cold)))).isEqualTo(new InsertReport(2, 1, 1, 0));

        // the same rows as one JSON text a column: every column the same, so both are redeliveries
        assertThat(insertThroughJdbc(ReadingsInserts.insertAsRecordedJson(List.of(hot, cold)))).isEqualTo(new InsertReport(2, 0, 0, 2));
        assertThat(computeActual("SELECT DISTINCT source_detail FROM readings_versions WHERE " + keyPredicate(hot) + " OR " + keyPredicate(cold)).getOnlyValue())
                .isEqualTo(sourceDetail);
        assertThat(hot(hot)).isEqualTo(1);
        assertThat(icebergRows(cold)).isEqualTo(1);
        // and one column changed in the JSON form is another payload of the stored version
        Reading changed = lateCorrection(correction(5, interval(1, 41), 1, "2.5"), recordedAt, sourceDetail + "!");
        assertThatThrownBy(() -> insertThroughJdbc(ReadingsInserts.insertAsRecordedJson(List.of(changed))))
                .hasMessageContaining("already written with different values (source_detail");
    }

    /** Trino's update count, and the connector's metrics of the statement: rows written to each tier, redelivered rows skipped. */
    private record InsertReport(long updateCount, long hotRowsWritten, long coldRowsWritten, long redeliveredRowsSkipped) {}

    private InsertReport insertThroughJdbc(String sql)
            throws Exception
    {
        DistributedQueryRunner queryRunner = getDistributedQueryRunner();
        try (Connection connection = DriverManager.getConnection("jdbc:trino://%s/meterstore/metering".formatted(queryRunner.getCoordinator().getAddress()), "writer", null);
                Statement statement = connection.createStatement()) {
            AtomicReference<String> id = new AtomicReference<>();
            statement.unwrap(TrinoStatement.class).setProgressMonitor(stats -> id.set(stats.getQueryId()));
            long updateCount = statement.executeLargeUpdate(sql);
            QueryId queryId = new QueryId(id.get());
            Map<String, Metric<?>> metrics = queryRunner.getCoordinator().getQueryManager().getFullQueryInfo(queryId)
                    .getQueryStats().getCatalogMetadataMetrics().get(MeterstoreQueryRunner.CATALOG).getMetrics();
            return new InsertReport(
                    updateCount,
                    ((LongCount) metrics.get(MeterstoreMetrics.HOT_ROWS_WRITTEN)).getTotal(),
                    ((LongCount) metrics.get(MeterstoreMetrics.COLD_ROWS_WRITTEN)).getTotal(),
                    ((LongCount) metrics.get(MeterstoreMetrics.REDELIVERED_ROWS_SKIPPED)).getTotal());
        }
    }

    @Test
    void testConflictingRedeliveryIsRefused()
            throws Exception
    {
        Reading hot = correction(4, interval(1, 30), 1, "7");
        Reading cold = correction(4, interval(-2, 30), 1, "7");
        assertUpdate(insert(hot, cold), 2);
        long rowsBefore = versionsRows();
        long snapshotsBefore = snapshots();
        Reading fresh = correction(4, interval(1, 31), 1, "1");
        Reading freshCold = correction(4, interval(-2, 31), 1, "1");

        for (Reading changed : List.of(correction(4, hot.from(), 1, "8"), correction(4, cold.from(), 1, "8"))) {
            assertThat(query(insert(fresh, changed, freshCold)))
                    .failure()
                    .hasErrorCode(METERSTORE_CONFLICTING_REDELIVERY)
                    .hasMessageContaining("Reading (malo_id '%s', obis_code '1-1:1.29.0', \"from\" %s, version 1)".formatted(changed.maloId(), TieringWatermark.formatInstant(changed.from())))
                    .hasMessageContaining("value 7.000000, now 8")
                    .hasMessageContaining("nothing of this statement was written");
        }
        // a statement that contradicts itself
        assertThat(query(insert(fresh, correction(4, fresh.from(), 1, "2"))))
                .failure()
                .hasErrorCode(METERSTORE_CONFLICTING_REDELIVERY)
                .hasMessageContaining("the statement itself carries it twice");
        assertThat(versionsRows()).isEqualTo(rowsBefore);
        assertThat(snapshots()).isEqualTo(snapshotsBefore);
        assertThat(hot(fresh)).isZero();
        assertThat(icebergRows(freshCold)).isZero();
        assertNoStagingTables();
    }

    @Test
    void testFailureBetweenTiersThenRerun()
            throws Exception
    {
        Reading hot = correction(5, interval(1, 40), 1, "9.75");
        Reading cold = correction(5, interval(-1, 40), 1, "9.75");
        String sql = insert(hot, cold);
        System.setProperty("meterstore.failpoint", "insert-between-tiers");
        try {
            assertThat(query(sql))
                    .failure()
                    .hasErrorCode(METERSTORE_WRITE_FAILED)
                    .hasMessageContaining("insert-between-tiers");
        }
        finally {
            System.clearProperty("meterstore.failpoint");
        }
        // Iceberg is committed first: the cold row landed, the hot row was rolled back
        assertThat(icebergRows(cold)).isEqualTo(1);
        assertThat(hot(hot)).isZero();
        assertThat(hot(cold)).isZero();
        assertNoStagingTables();

        assertUpdate(sql, 2);
        assertThat(icebergRows(cold)).isEqualTo(1);
        assertThat(hot(hot)).isEqualTo(1);
        assertThat(icebergRows(hot)).isZero();
        assertThat(computeActual("SELECT count(*), sum(value) FROM readings_versions WHERE malo_id = '%s' AND version = 1".formatted(hot.maloId())).getMaterializedRows().getFirst().getFields())
                .containsExactly(2L, new BigDecimal("19.500000"));
    }

    @Test
    void testPartitionCreationWaitsTheConfiguredLockTimeout()
            throws Exception
    {
        // a day without a partition yet: the INSERT creates it, under the catalog's lock timeout
        Reading reading = correction(7, interval(4, 5), 1, "3.5");
        String sql = insert(reading).replace("INTO readings_versions", "INTO short_lock.metering.readings_versions");
        try (Connection blocker = warehouse.database().connect()) {
            blocker.setAutoCommit(false);
            // another creator of the table's partitions holds the DDL lock
            try (PreparedStatement lock = blocker.prepareStatement("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))")) {
                lock.setString(1, "meterstore.ddl:%s.readings".formatted(MeterstoreQueryRunner.SCHEMA));
                lock.execute();
            }
            assertThat(query(sql))
                    .failure()
                    .hasErrorCode(METERSTORE_WRITE_FAILED)
                    .hasMessageContaining("another session held a conflicting lock for longer than 'meterstore.postgresql.lock-timeout' (700ms)")
                    .hasMessageContaining("run it again");
            blocker.rollback();
        }
        assertThat(hot(reading)).isZero();
        assertUpdate(sql, 1);
        assertThat(hot(reading)).isEqualTo(1);
    }

    @Test
    void testInsertIntoResolvedTableIsRefused()
    {
        long versions = (long) computeActual("SELECT count(*) FROM readings_versions").getOnlyValue();
        // readings shows winners only: a write there would have no meaning a reader could see
        assertThat(query(insert(correction(0, interval(1, 50), 1, "1")).replace("INTO readings_versions", "INTO readings")))
                .failure()
                .hasMessageContaining("shows only the winning version of each reading and cannot be written: INSERT into 'readings_versions'");
        assertThat(computeActual("SELECT count(*) FROM readings_versions").getOnlyValue()).isEqualTo(versions);
    }
}
