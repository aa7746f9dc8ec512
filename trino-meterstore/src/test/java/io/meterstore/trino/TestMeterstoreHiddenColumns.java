package io.meterstore.trino;

import io.meterstore.core.Reading;
import io.meterstore.core.Tier;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.ReadingsOracle;
import io.meterstore.testing.ReadingsOracle.View;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.meterstore.trino.base.FromRange;
import io.trino.testing.AbstractTestQueryFramework;
import io.trino.testing.MaterializedResult;
import io.trino.testing.MaterializedRow;
import io.trino.testing.QueryRunner;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

import static io.meterstore.testing.ReadingsOracle.fromAtOrAfter;
import static io.meterstore.testing.ReadingsOracle.fromBefore;
import static io.meterstore.trino.TestingInserts.timestamp;
import static io.meterstore.trino.TestingPlans.scannedTables;
import static java.util.stream.Collectors.toMap;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * "$tier" and "$watermark", the hidden columns that say what an answer stands on: the tier each row was read from and
 * the W the query was planned against. Rows on both sides of W, some versions recorded after an AS OF instant.
 */
final class TestMeterstoreHiddenColumns
        extends AbstractTestQueryFramework
{
    private static final Instant KNOWN_AT = Instant.parse("2026-03-31T12:00:00Z");
    private static final Instant APRIL = Instant.parse("2026-04-01T00:00:00Z");
    private static final Instant KNOWN_LATER = Instant.parse("2026-04-03T12:00:00Z");
    private static final List<String> TABLES = List.of("readings", "readings_versions");

    private ReadingsOracle oracle;
    private Table table;

    @Override
    protected QueryRunner createQueryRunner()
            throws Exception
    {
        TestingWarehouse warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("hidden_columns"));
        table = TestingMeterstoreTables.createTables(warehouse);
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(431)
                .meters(8)
                .startDay(LocalDate.of(2026, 3, 24))
                .days(12)
                .correctionsFraction(0.08)
                .build();
        oracle = ReadingsOracle.of(generator.iterator());
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, oracle.versions(ReadingsOracle.all()));
        }
        // the first Berlin day starts on 23 March in UTC: nine UTC days up to the end of March, one commit each
        TestingArchival.archiveWindows(warehouse, 9);
        table.refresh();
        assertThat(WatermarkReader.current(table).watermark().instant()).isEqualTo(APRIL);
        return MeterstoreQueryRunner.builder(warehouse).build();
    }

    @Test
    void testEachRowSaysTheTierOfItsFromAtThePinnedWatermark()
    {
        for (String name : TABLES) {
            View view = name.equals("readings") ? View.RESOLVED : View.VERSIONS;
            // the tiers' counts as the oracle has them, on both sides of W
            assertThat(countsByTier("SELECT \"$tier\", count(*) FROM %s GROUP BY \"$tier\"".formatted(name)))
                    .as(name)
                    .isEqualTo(tierCounts(oracle, view));
            // row by row: below W cold, at or above hot, and every row the pinned W
            assertThat(computeActual("""
                    SELECT count(*) FROM %s
                    WHERE "$tier" <> CASE WHEN "from" < %s THEN 'cold' ELSE 'hot' END OR "$watermark" <> %s"""
                    .formatted(name, timestamp(APRIL), timestamp(APRIL))).getOnlyValue())
                    .as(name)
                    .isEqualTo(0L);
            assertThat(computeActual("SELECT DISTINCT \"$watermark\" FROM " + name).getOnlyColumnAsSet())
                    .as(name)
                    .extracting(value -> ((ZonedDateTime) value).toInstant())
                    .containsExactly(APRIL);
            // a row of each tier carries the other columns as a query without the hidden ones reads them
            assertThat(query("SELECT malo_id, \"from\", value, \"$tier\" FROM %s WHERE \"from\" IN (%s, %s)".formatted(name, timestamp(APRIL.minusSeconds(900)), timestamp(APRIL))))
                    .matches("SELECT malo_id, \"from\", value, CAST(CASE WHEN \"from\" < %s THEN 'cold' ELSE 'hot' END AS varchar) FROM %s WHERE \"from\" IN (%s, %s)"
                            .formatted(timestamp(APRIL), name, timestamp(APRIL.minusSeconds(900)), timestamp(APRIL)));
        }
    }

    @Test
    void testAsOfReadsSayTheirTiers()
    {
        // nothing of April was known at t1, some of it two days later
        assertThat(tierCounts(oracle.asKnownAt(KNOWN_AT), View.VERSIONS)).containsOnlyKeys("cold");
        assertThat(tierCounts(oracle.asKnownAt(KNOWN_LATER), View.VERSIONS)).containsOnlyKeys("cold", "hot");
        for (Instant knownAt : List.of(KNOWN_AT, KNOWN_LATER)) {
            ReadingsOracle known = oracle.asKnownAt(knownAt);
            String asOf = "FOR TIMESTAMP AS OF " + timestamp(knownAt);
            for (String name : TABLES) {
                View view = name.equals("readings") ? View.RESOLVED : View.VERSIONS;
                // FOR TIMESTAMP AS OF reads both tiers as they are now, at the current W
                assertThat(countsByTier("SELECT \"$tier\", count(*) FROM %s %s GROUP BY \"$tier\"".formatted(name, asOf)))
                        .as(name + " " + asOf)
                        .isEqualTo(tierCounts(known, view));
                assertThat(computeActual("SELECT DISTINCT \"$watermark\" FROM %s %s".formatted(name, asOf)).getOnlyColumnAsSet())
                        .extracting(value -> ((ZonedDateTime) value).toInstant())
                        .containsExactly(APRIL);
            }
        }

        // FOR VERSION AS OF reads the cold tier of an older snapshot, at the W that snapshot carried
        long snapshotId = (long) computeActual("SELECT snapshot_id FROM iceberg.metering.\"readings$snapshots\" ORDER BY committed_at OFFSET 3 LIMIT 1").getOnlyValue();
        Instant snapshotWatermark = WatermarkReader.ofSnapshot(table, snapshotId).instant();
        assertThat(snapshotWatermark).isBefore(APRIL);
        for (String name : TABLES) {
            MaterializedResult tiers = computeActual("SELECT \"$tier\", \"$watermark\", count(*), max(\"from\") FROM %s FOR VERSION AS OF %s GROUP BY 1, 2".formatted(name, snapshotId));
            MaterializedRow row = tiers.getMaterializedRows().getFirst();
            assertThat(tiers.getRowCount()).as(name).isEqualTo(1);
            assertThat(row.getField(0)).isEqualTo("cold");
            assertThat(((ZonedDateTime) row.getField(1)).toInstant()).isEqualTo(snapshotWatermark);
            assertThat(((ZonedDateTime) row.getField(3)).toInstant()).isBefore(snapshotWatermark);
            assertThat(row.getField(2)).isEqualTo(computeActual("SELECT count(*) FROM %s FOR VERSION AS OF %s".formatted(name, snapshotId)).getOnlyValue());
        }
    }

    @Test
    void testAggregationGroupedByTierCountsEachTier()
    {
        for (String name : TABLES) {
            // the counts per tier computed otherwise: by "from" against W
            assertThat(query("SELECT \"$tier\", count(*), sum(value), min(\"$watermark\") FROM %s GROUP BY \"$tier\"".formatted(name)))
                    .matches("SELECT CAST(CASE WHEN \"from\" < %s THEN 'cold' ELSE 'hot' END AS varchar), count(*), sum(value), %s FROM %s GROUP BY 1".formatted(timestamp(APRIL), timestamp(APRIL), name));
            // the dashboard's total: provisional while any of its rows is hot
            assertThat(query("SELECT sum(value), bool_or(\"$tier\" = 'hot') FROM %s WHERE \"from\" < %s".formatted(name, timestamp(APRIL))))
                    .matches("SELECT sum(value), false FROM %s WHERE \"from\" < %s".formatted(name, timestamp(APRIL)));
            assertThat(query("SELECT sum(value), bool_or(\"$tier\" = 'hot') FROM %s WHERE \"from\" >= %s".formatted(name, timestamp(APRIL.minusSeconds(86_400)))))
                    .matches("SELECT sum(value), true FROM %s WHERE \"from\" >= %s".formatted(name, timestamp(APRIL.minusSeconds(86_400))));
        }
        // a hot-only read of readings_versions pushes count(*) into PostgreSQL; grouped by "$tier", Trino aggregates it
        String hotOnly = "FROM readings_versions WHERE \"from\" >= " + timestamp(APRIL);
        assertThat(countsByTier("SELECT \"$tier\", count(*) %s GROUP BY \"$tier\"".formatted(hotOnly)))
                .isEqualTo(Map.of("hot", oracle.count(View.VERSIONS, fromAtOrAfter(APRIL))));
        assertThat(computeActual("SELECT \"$watermark\", count(*) %s GROUP BY \"$watermark\"".formatted(hotOnly)).getMaterializedRows())
                .singleElement()
                .satisfies(row -> assertThat(((ZonedDateTime) row.getField(0)).toInstant()).isEqualTo(APRIL))
                .satisfies(row -> assertThat(row.getField(1)).isEqualTo(oracle.count(View.VERSIONS, fromAtOrAfter(APRIL))));
        assertThat(scannedTables(getDistributedQueryRunner().executeWithPlan(getSession(), "SELECT count(*) " + hotOnly)))
                .singleElement()
                .satisfies(handle -> assertThat(handle.aggregation()).isPresent());
    }

    @Test
    void testHiddenColumnsAreNotListed()
    {
        List<String> stored = List.of("malo_id", "melo_id", "obis_code", "sparte", "from", "to", "value", "unit", "quality", "resolution",
                "source_kind", "source_detail", "provenance", "version", "version_scope", "recorded_at", "balancing_day");
        for (String name : TABLES) {
            assertThat(computeActual("SELECT * FROM %s LIMIT 1".formatted(name)).getColumnNames()).as(name).isEqualTo(stored);
            assertThat(computeActual("DESCRIBE " + name).getMaterializedRows()).as(name).extracting(row -> row.getField(0)).isEqualTo(stored);
            assertThat(computeActual("SELECT column_name FROM information_schema.columns WHERE table_name = '%s' ORDER BY ordinal_position".formatted(name)).getOnlyColumn().toList())
                    .as(name)
                    .isEqualTo(stored);
            // and selectable by name, beside the stored columns
            assertThat(computeActual("SELECT \"$tier\", \"$watermark\", malo_id FROM %s LIMIT 1".formatted(name)).getTypes().getFirst().getDisplayName()).isEqualTo("varchar");
            assertThat(computeActual("SELECT \"$watermark\" FROM %s LIMIT 1".formatted(name)).getTypes().getFirst().getDisplayName()).isEqualTo("timestamp(6) with time zone");
        }
    }

    @Test
    void testPredicateOnTierReadsThatTierAlone()
    {
        for (String name : TABLES) {
            View view = name.equals("readings") ? View.RESOLVED : View.VERSIONS;
            for (Tier tier : Tier.values()) {
                String value = tier == Tier.COLD ? "cold" : "hot";
                Predicate<Reading> side = tier == Tier.COLD ? fromBefore(APRIL) : fromAtOrAfter(APRIL);
                String sql = "SELECT count(*), min(\"$tier\"), max(\"$tier\") FROM %s WHERE \"$tier\" = '%s'".formatted(name, value);
                QueryRunner.MaterializedResultWithPlan result = getDistributedQueryRunner().executeWithPlan(getSession(), sql);
                MaterializedRow row = result.result().getMaterializedRows().getFirst();
                assertThat(row.getFields()).as(sql).containsExactly(oracle.count(view, side), value, value);
                // the other tier is pruned: the scan's "from" range is this tier's side of W
                assertThat(scannedTables(result)).as(sql).singleElement()
                        .satisfies(handle -> assertThat(FromRange.of(handle.constraint())).isEqualTo(tier.range(APRIL)));
                // with a LIMIT the rows are still this tier's
                assertThat(computeActual("SELECT DISTINCT \"$tier\" FROM (SELECT \"$tier\" FROM %s WHERE \"$tier\" = '%s' LIMIT 5)".formatted(name, value)).getOnlyValue())
                        .isEqualTo(value);
            }
            assertThat(computeActual("SELECT count(*) FROM %s WHERE \"$tier\" NOT IN ('hot', 'cold')".formatted(name)).getOnlyValue()).isEqualTo(0L);
            // a W the query was not planned against reads neither tier
            QueryRunner.MaterializedResultWithPlan otherWatermark = getDistributedQueryRunner().executeWithPlan(getSession(),
                    "SELECT count(*) FROM %s WHERE \"$watermark\" <> %s".formatted(name, timestamp(APRIL)));
            assertThat(otherWatermark.result().getOnlyValue()).isEqualTo(0L);
            assertThat(scannedTables(otherWatermark)).allSatisfy(handle -> assertThat(handle.constraint().isNone()).isTrue());
            assertThat(computeActual("SELECT count(*) FROM %s WHERE \"$watermark\" = %s".formatted(name, timestamp(APRIL))).getOnlyValue())
                    .isEqualTo(oracle.count(view, ReadingsOracle.all()));
        }
    }

    @Test
    void testHiddenColumnsAreNotWritable()
    {
        assertQueryFails("INSERT INTO readings_versions (\"$tier\") VALUES ('hot')", ".*\\$tier.*");
        assertQueryFails("INSERT INTO readings_versions (\"$watermark\") VALUES (TIMESTAMP '2026-04-01 00:00:00 UTC')", ".*\\$watermark.*");
        // an erasure is never chosen by tier: the predicate is one MeterStore cannot apply exactly
        assertQueryFails("DELETE FROM readings_versions WHERE \"$tier\" = 'cold'", "DELETE from 'metering.readings_versions' is refused because its WHERE clause has a condition MeterStore cannot apply exactly.*");
        assertThat(computeActual("SELECT count(*) FROM readings_versions").getOnlyValue()).isEqualTo(oracle.count(View.VERSIONS, ReadingsOracle.all()));
    }

    /** The rows of each tier that has any, as the oracle counts them by "from" against W. */
    private static Map<String, Long> tierCounts(ReadingsOracle oracle, View view)
    {
        return Map.of("cold", oracle.count(view, fromBefore(APRIL)), "hot", oracle.count(view, fromAtOrAfter(APRIL))).entrySet().stream()
                .filter(entry -> entry.getValue() > 0)
                .collect(toMap(Map.Entry::getKey, Map.Entry::getValue));
    }

    private Map<String, Long> countsByTier(String sql)
    {
        return computeActual(sql).getMaterializedRows().stream()
                .collect(toMap(row -> (String) row.getField(0), row -> (Long) row.getField(1)));
    }
}
