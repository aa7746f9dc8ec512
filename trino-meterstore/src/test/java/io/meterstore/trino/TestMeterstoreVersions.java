package io.meterstore.trino;

import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.ReadingsOracle;
import io.meterstore.testing.ReadingsOracle.Totals;
import io.meterstore.testing.ReadingsOracle.View;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.trino.testing.AbstractTestQueryFramework;
import io.trino.testing.MaterializedResult;
import io.trino.testing.MaterializedRow;
import io.trino.testing.QueryRunner;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.math.BigDecimal;
import java.sql.Connection;
import java.time.Instant;
import java.time.LocalDate;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Predicate;

import static io.meterstore.testing.ReadingsOracle.all;
import static io.meterstore.testing.ReadingsOracle.fromRange;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * Versions resolved by the connector, and reads as known at an earlier instant. A March settlement is computed while
 * only the deliveries up to t1 are known; the rest arrive (originals of later days and corrections), the days up to the end of March are
 * archived (up to the end of March), and the settlement rerun AS OF t1 returns exactly the first numbers while the current one is corrected.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
final class TestMeterstoreVersions
        extends AbstractTestQueryFramework
{
    private static final Instant KNOWN_AT = Instant.parse("2026-03-31T12:00:00Z");
    private static final Instant MARCH = Instant.parse("2026-03-01T00:00:00Z");
    private static final Instant APRIL = Instant.parse("2026-04-01T00:00:00Z");
    private static final String SETTLEMENT = """
            SELECT malo_id, count(*), sum(value) FROM readings %s
            WHERE "from" >= TIMESTAMP '2026-03-01 00:00:00 UTC' AND "from" < TIMESTAMP '2026-04-01 00:00:00 UTC'
            GROUP BY malo_id""";
    private static final String AS_OF = "FOR TIMESTAMP AS OF TIMESTAMP '2026-03-31 12:00:00 UTC'";

    private ReadingsOracle oracle;
    private SortedMap<String, Totals> firstSettlement;
    private Instant watermark;

    @Override
    protected QueryRunner createQueryRunner()
            throws Exception
    {
        TestingWarehouse warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("versions"));
        Table table = TestingMeterstoreTables.createTables(warehouse);
        // 30 meters x 12 Berlin days from 2026-03-24: the spring DST day, the end of the settlement month, 8 % corrections
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(331)
                .meters(30)
                .startDay(LocalDate.of(2026, 3, 24))
                .days(12)
                .correctionsFraction(0.08)
                .build();
        oracle = ReadingsOracle.of(generator.iterator());
        ReadingsLoader loader = new ReadingsLoader(TestingMeterstoreTables.hotTier());
        try (Connection connection = warehouse.database().connect()) {
            loader.load(connection, oracle.versions(reading -> !reading.recordedAt().isAfter(KNOWN_AT)));
        }
        QueryRunner queryRunner = MeterstoreQueryRunner.builder(warehouse).build();
        // the settlement as run at t1, from what was known then
        firstSettlement = totalsByMeter(queryRunner.execute(SETTLEMENT.formatted("")));

        // later deliveries and corrections arrive, and the settled days move to Iceberg
        try (Connection connection = warehouse.database().connect()) {
            loader.load(connection, oracle.versions(reading -> reading.recordedAt().isAfter(KNOWN_AT)));
        }
        // the first Berlin day starts on 23 March in UTC: nine UTC days up to the end of March
        TestingArchival.archiveWindows(warehouse, 9);
        table.refresh();
        watermark = WatermarkReader.current(table).watermark().instant();
        assertThat(watermark).isEqualTo(APRIL);
        return queryRunner;
    }

    @Test
    @Order(1)
    void testSettlementRerunAsOfReturnsTheFirstNumbers()
    {
        Predicate<Reading> march = fromRange(MARCH, APRIL);
        assertThat(firstSettlement).isEqualTo(oracle.asKnownAt(KNOWN_AT).totalsByMeter(View.RESOLVED, march));
        // corrections and the last day of March arrived since: the current settlement differs, and is the corrected one
        SortedMap<String, Totals> current = totalsByMeter(computeActual(SETTLEMENT.formatted("")));
        assertThat(current).isEqualTo(oracle.totalsByMeter(View.RESOLVED, march));
        assertThat(current).isNotEqualTo(firstSettlement);
        // rerun as known at t1, now from Iceberg: exactly the first numbers
        assertThat(totalsByMeter(computeActual(SETTLEMENT.formatted(AS_OF)))).isEqualTo(firstSettlement);
    }

    @Test
    @Order(1)
    void testVersionsAsOfSpanBothTiers()
    {
        ReadingsOracle known = oracle.asKnownAt(KNOWN_AT);
        assertThat(known.count(View.VERSIONS, all())).isLessThan(oracle.count(View.VERSIONS, all()));
        assertThat(summary("SELECT count(*), sum(value) FROM readings_versions " + AS_OF)).isEqualTo(totals(known, View.VERSIONS, all()));
        assertThat(summary("SELECT count(*), sum(value) FROM readings " + AS_OF)).isEqualTo(totals(known, View.RESOLVED, all()));
        // every version recorded after t1 is gone, in both tiers
        assertThat(computeActual("SELECT count(*) FROM readings_versions %s WHERE recorded_at > TIMESTAMP '2026-03-31 12:00:00 UTC'".formatted(AS_OF)).getOnlyValue()).isEqualTo(0L);
        // the hot tier holds no row known at t1 (April had not been delivered), the cold tier holds them all
        assertThat(summary("SELECT count(*), sum(value) FROM readings_versions %s WHERE \"from\" < TIMESTAMP '2026-04-01 00:00:00 UTC'".formatted(AS_OF)))
                .isEqualTo(totals(known, View.VERSIONS, all()));
    }

    @Test
    @Order(1)
    void testReadingsIsTheWinningVersionOfEachKey()
    {
        assertThat(summary("SELECT count(*), sum(value) FROM readings")).isEqualTo(totals(oracle, View.RESOLVED, all()));
        assertThat(oracle.count(View.RESOLVED, all())).isLessThan(oracle.count(View.VERSIONS, all()));
        // every column of every row, as the ROW_NUMBER definition over every version has it, in both tiers
        String rowNumber = """
                SELECT malo_id, melo_id, obis_code, sparte, "from", "to", value, unit, quality, resolution, source_kind, source_detail,
                       provenance, version, version_scope, recorded_at, balancing_day
                FROM (SELECT *, row_number() OVER (PARTITION BY malo_id, obis_code, "from", version_scope ORDER BY version DESC, recorded_at DESC) AS rank
                      FROM readings_versions)
                WHERE rank = 1""";
        assertQueryReturnsEmptyResult("SELECT * FROM readings EXCEPT " + rowNumber);
        assertQueryReturnsEmptyResult(rowNumber + " EXCEPT SELECT * FROM readings");
    }

    @Test
    @Order(1)
    void testPredicatesOnOtherColumnsApplyAfterResolution()
    {
        // a corrected interval whose original was measured: filtering before resolution would return the original
        Predicate<Reading> measured = reading -> reading.quality() == Quality.MEASURED;
        assertThat(oracle.count(View.VERSIONS, measured)).isGreaterThan(oracle.count(View.RESOLVED, measured) + 10);
        assertThat(summary("SELECT count(*), sum(value) FROM readings WHERE quality = 'MEASURED'")).isEqualTo(totals(oracle, View.RESOLVED, measured));
        assertThat(summary("SELECT count(*), sum(value) FROM readings WHERE quality = 'MEASURED' AND \"from\" >= TIMESTAMP '2026-04-01 00:00:00 UTC'"))
                .isEqualTo(totals(oracle, View.RESOLVED, measured.and(reading -> !reading.from().isBefore(APRIL))));
    }

    @Test
    @Order(1)
    void testForVersionAsOfResolvesThatSnapshot()
    {
        long snapshotId = (long) computeActual("SELECT snapshot_id FROM iceberg.metering.\"readings$snapshots\" ORDER BY committed_at OFFSET 3 LIMIT 1").getOnlyValue();
        assertThat(query("SELECT count(*), sum(value), max(\"from\") FROM readings FOR VERSION AS OF " + snapshotId))
                .matches("""
                        SELECT count(*), sum(value), max("from")
                        FROM (SELECT *, row_number() OVER (PARTITION BY malo_id, obis_code, "from", version_scope ORDER BY version DESC, recorded_at DESC) AS rank
                              FROM iceberg.metering.readings FOR VERSION AS OF %s)
                        WHERE rank = 1""".formatted(snapshotId));
    }

    @Test
    @Order(2)
    void testLateCorrectionInAnotherDataFileWins()
    {
        // a new version of one archived interval, appended by another writer in a file of its own
        String key = "malo_id = '%s' AND \"from\" = TIMESTAMP '2026-03-27 10:00:00 UTC'".formatted(ReadingsGenerator.maloId(7));
        MaterializedRow before = computeActual("SELECT value, version FROM readings WHERE " + key).getMaterializedRows().getFirst();
        long resolvedBefore = (long) computeActual("SELECT count(*) FROM readings").getOnlyValue();
        long versionsBefore = (long) computeActual("SELECT count(*) FROM readings_versions").getOnlyValue();
        assertUpdate("""
                INSERT INTO iceberg.metering.readings
                SELECT malo_id, melo_id, obis_code, sparte, "from", "to", value + 1, unit, 'SUBSTITUTED', resolution, source_kind, source_detail,
                       provenance, version + 1, version_scope, TIMESTAMP '2026-05-02 08:00:00 UTC', balancing_day
                FROM meterstore.metering.readings WHERE\s""" + key, 1);
        assertThat(computeActual("SELECT count(*) FROM iceberg.metering.\"readings$files\" WHERE record_count = 1").getOnlyValue()).isEqualTo(1L);

        assertThat(computeActual("SELECT value, quality FROM readings WHERE " + key).getMaterializedRows())
                .extracting(row -> row.getField(0), row -> row.getField(1))
                .containsExactly(tuple(((BigDecimal) before.getField(0)).add(BigDecimal.ONE), "SUBSTITUTED"));
        // one more version, the same keys: the old winner of the corrected key is no longer shown
        assertThat(computeActual("SELECT count(*) FROM readings_versions").getOnlyValue()).isEqualTo(versionsBefore + 1);
        assertThat(computeActual("SELECT count(*) FROM readings").getOnlyValue()).isEqualTo(resolvedBefore);
        // and its value as known before the correction is still there
        assertThat(computeActual("SELECT value FROM readings FOR TIMESTAMP AS OF TIMESTAMP '2026-05-01 00:00:00 UTC' WHERE " + key).getOnlyValue()).isEqualTo(before.getField(0));
    }

    private static SortedMap<String, Totals> totalsByMeter(MaterializedResult result)
    {
        SortedMap<String, Totals> totals = new TreeMap<>();
        for (MaterializedRow row : result.getMaterializedRows()) {
            totals.put((String) row.getField(0), new Totals((long) row.getField(1), ((BigDecimal) row.getField(2)).setScale(6)));
        }
        return totals;
    }

    private Totals summary(String sql)
    {
        MaterializedRow row = computeActual(sql).getMaterializedRows().getFirst();
        return new Totals((long) row.getField(0), row.getField(1) == null ? BigDecimal.ZERO.setScale(6) : ((BigDecimal) row.getField(1)).setScale(6));
    }

    private static Totals totals(ReadingsOracle oracle, View view, Predicate<? super Reading> filter)
    {
        return new Totals(oracle.count(view, filter), oracle.sum(view, filter).setScale(6));
    }
}
