package io.meterstore.trino;

import com.google.common.util.concurrent.Futures;
import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.Sparte;
import io.meterstore.core.Sparte.MeasurementUnit;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.trino.Session;
import io.trino.server.DynamicFilterService.DynamicFiltersStats;
import io.trino.testing.AbstractTestQueryFramework;
import io.trino.testing.MaterializedResult;
import io.trino.testing.MaterializedRow;
import io.trino.testing.QueryRunner;
import io.trino.testing.QueryRunner.MaterializedResultWithPlan;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static io.meterstore.trino.MeterstoreQueryRunner.CATALOG;
import static io.meterstore.trino.TestingInserts.lateCorrection;
import static io.meterstore.trino.TestingInserts.literal;
import static io.meterstore.trino.TestingInserts.timestamp;
import static io.meterstore.trino.TestingPlans.scannedTables;
import static io.meterstore.trino.base.MeterstoreMetrics.COLD_DATA_FILES;
import static io.meterstore.trino.base.MeterstoreMetrics.COLD_DATA_FILES_DYNAMIC_FILTER_SKIPPED;
import static io.meterstore.trino.base.MeterstoreMetrics.DYNAMIC_FILTER_WAIT_TIMEOUT_MILLIS;
import static io.meterstore.trino.base.MeterstoreMetrics.COLD_ROW_GROUPS;
import static io.meterstore.trino.base.MeterstoreMetrics.COLD_ROW_GROUPS_READ;
import static io.meterstore.trino.base.MeterstoreMetrics.HOT_PARTITIONS_DYNAMIC_FILTER_SKIPPED;
import static io.meterstore.trino.base.MeterstoreMetrics.HOT_PARTITIONS_READ;
import static io.meterstore.trino.base.MeterstoreMetrics.HOT_ROWS_READ;
import static io.meterstore.trino.base.MeterstoreMetrics.HOT_SPLITS;
import static io.trino.testing.MaterializedResult.DEFAULT_PRECISION;
import static java.util.stream.Collectors.joining;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Joins whose build side becomes a dynamic filter on a MeterStore scan answer exactly as the same query without dynamic
 * filtering, where Trino applies the join itself above an unfiltered scan. The dynamic filter reaches the hot
 * PostgreSQL statements (equality on varchar columns as {@code = ANY(?)}) and the cold Parquet row-group pruning
 * (including "from" ranges and a filter collapsed to a min/max range); each shape runs on {@code readings} and
 * {@code readings_versions}, now and {@code FOR TIMESTAMP AS OF} an instant between the corrections, and some on
 * "from" ranges that cross the watermark.
 * <p>
 * A build side of plain {@code VALUES} lets the planner infer a constant IN list for the probe as well; the same rows
 * behind {@code IF(random() >= 0, x)} are opaque to it, so there only the dynamic filter narrows the scan.
 */
final class TestMeterstoreJoins
        extends AbstractTestQueryFramework
{
    private static final LocalDate START = LocalDate.of(2026, 11, 2);
    private static final int DAYS = 4;
    private static final int METERS = 8;
    // the first Berlin day starts at 2026-11-01 23:00 UTC: three UTC windows archive up to 2026-11-04
    private static final int ARCHIVED_WINDOWS = 3;
    private static final Instant WATERMARK = Instant.parse("2026-11-04T00:00:00Z");
    // the hot partitions are UTC days: the first hot partition ends here
    private static final Instant PARTITION_BOUNDARY = WATERMARK.plus(Duration.ofDays(1));
    private static final Duration QUARTER = Duration.ofMinutes(15);
    // late corrections through INSERT, on both sides of the watermark, learned after everything else
    private static final Instant LATE = Instant.parse("2026-11-20T08:00:00Z");
    // after the first deliveries, before most corrections: a past state of both tables
    private static final Instant KNOWN_AT = Instant.parse("2026-11-06T12:00:00Z");
    // a filter of more distinct values than this becomes a min/max range (Trino's default is 50,000)
    private static final int MAX_DISTINCT_DYNAMIC_FILTER_VALUES = 100;
    private static final int PARALLEL_QUERIES = 4;
    // far below a cold day's rows: resolving reads are cut into "from" and malo_id ranges
    private static final long SMALL_RESOLUTION_SPLIT_ROWS = 300;
    private static final List<String> STRANGE_SOURCE_KINDS = List.of("\u00c4\u00d6", "\ud83d\ude00", "a\"b\\c", "x,y", "{}", "NULL", "", "MSCONS ");
    // never a MaLo-ID: quotes, a backslash, a comma, braces, non-ASCII and spaces, all of which the = ANY array must carry
    private static final String ODD = "a'b\"c\\d,{e} \u00c4\ud83d\ude00 ";
    private static final String COLUMNS = "r.malo_id, r.obis_code, r.\"from\", r.value, r.quality, r.source_kind, r.version, r.recorded_at";
    private static final String KNOWN_AT_SQL = timestamp(KNOWN_AT);

    // the cold tier as it was before the late corrections: FOR VERSION AS OF reads it alone
    private long snapshotBeforeCorrections;

    @Override
    protected QueryRunner createQueryRunner()
            throws Exception
    {
        TestingWarehouse warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("joins"));
        Table table = TestingMeterstoreTables.createTables(warehouse);
        // small row groups, so that a dynamic filter on malo_id or "from" decides which row groups are read
        table.updateProperties().set(TableProperties.PARQUET_ROW_GROUP_SIZE_BYTES, "16384").commit();
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(67)
                .meters(METERS)
                .startDay(START)
                .days(DAYS)
                .correctionsFraction(0.05)
                .build();
        TestingArchival.loadAndArchive(warehouse, generator, variants(generator), ARCHIVED_WINDOWS);
        table.refresh();
        assertThat(WatermarkReader.current(table).watermark().instant()).isEqualTo(WATERMARK);
        assertThat(TestingMeterstoreTables.hotTier().naming().isAligned(PARTITION_BOUNDARY)).isTrue();
        snapshotBeforeCorrections = table.currentSnapshot().snapshotId();
        QueryRunner queryRunner = MeterstoreQueryRunner.builder(warehouse)
                .withoutIceberg()
                .addExtraProperty("dynamic-filtering.max-distinct-values-per-driver", Integer.toString(MAX_DISTINCT_DYNAMIC_FILTER_VALUES))
                .addExtraProperty("dynamic-filtering.partitioned.max-distinct-values-per-driver", Integer.toString(MAX_DISTINCT_DYNAMIC_FILTER_VALUES))
                .build();
        // late corrections of a meter on the last cold day and the first hot days: winners files get position deletes
        List<Reading> late = new ArrayList<>();
        for (LocalDate day : List.of(LocalDate.of(2026, 11, 3), LocalDate.of(2026, 11, 4), LocalDate.of(2026, 11, 5))) {
            List<Reading> readings = generator.readings(5, day);
            for (int index = 0; index < 96; index += 7) {
                late.add(lateCorrection(readings.get(index), LATE, "{\"ticket\":\"late\"}"));
            }
        }
        queryRunner.execute(TestingInserts.insertAsRecorded(late));
        return queryRunner;
    }

    @Test
    void testDynamicFilterReachesBothTiers()
    {
        for (String table : List.of("readings_versions", "readings")) {
            // the rows of the two meters PostgreSQL holds for the table: every version, or the winners its marks name
            long hotRowsOfMeters = (long) computeActual("SELECT count(*) FROM %s WHERE malo_id IN (%s, %s) AND \"from\" >= %s"
                    .formatted(table, meter(3), meter(5), timestamp(WATERMARK))).getOnlyValue();
            assertThat(hotRowsOfMeters).isPositive();
            String sql = "SELECT %s FROM %s r JOIN %s ON r.malo_id = v.id".formatted(COLUMNS, table, opaque(meter(3), meter(5), literal(ODD)));
            MaterializedResultWithPlan filtered = getDistributedQueryRunner().executeWithPlan(dynamicFiltering(), sql);
            MaterializedResultWithPlan unfiltered = getDistributedQueryRunner().executeWithPlan(withoutDynamicFiltering(), sql);
            differences(sql, filtered.result(), unfiltered.result(), false).ifPresent(failure -> {
                throw new AssertionError(failure);
            });
            assertThat(filtered.result().getRowCount()).as(sql).isGreaterThanOrEqualTo(2 * DAYS * 96);
            // nothing but the dynamic filter narrowed the scan: the planner saw no constant IN list
            assertThat(scannedTables(filtered)).as(sql).singleElement().satisfies(handle -> assertThat(handle.constraint().isAll()).isTrue());
            DynamicFiltersStats stats = getDynamicFilteringStats(filtered.queryId());
            assertThat(stats.getDynamicFiltersCompleted()).as(sql).isPositive();
            assertThat(stats.getDynamicFilterDomainStats()).as(sql).anySatisfy(domain -> assertThat(domain.getSimplifiedDomain()).contains("ranges=3").contains(ReadingsGenerator.maloId(3)));

            Map<String, Long> with = metrics(filtered);
            Map<String, Long> without = metrics(unfiltered);
            // PostgreSQL returned exactly the two meters' rows, Parquet only their row groups; a file whose malo_id
            // bounds miss both meters is not even scheduled
            assertThat(with.get(HOT_ROWS_READ)).as(sql).isEqualTo(hotRowsOfMeters);
            assertThat(without.get(HOT_ROWS_READ)).as(sql).isGreaterThan(3 * hotRowsOfMeters);
            assertThat(with.get(COLD_ROW_GROUPS)).as(sql).isLessThanOrEqualTo(without.get(COLD_ROW_GROUPS));
            assertThat(with.get(COLD_ROW_GROUPS_READ)).as(sql).isPositive().isLessThan(without.get(COLD_ROW_GROUPS_READ));
        }
    }

    @Test
    void testNoWaitForAFilterThePredicateHoldsAlready()
    {
        // a build side of constant rows: the planner infers the IN list for the scan, which plans its splits by it
        String visible = "SELECT %s FROM readings r JOIN (VALUES %s, %s) v(id) ON r.malo_id = v.id".formatted(COLUMNS, meter(3), meter(5));
        // the same meters the planner cannot see: only the dynamic filter can prune, so the splits wait for it
        String hidden = "SELECT %s FROM readings r JOIN %s ON r.malo_id = v.id".formatted(COLUMNS, opaque(meter(3), meter(5)));
        MaterializedResultWithPlan listed = getDistributedQueryRunner().executeWithPlan(dynamicFiltering(), visible);
        MaterializedResultWithPlan filtered = getDistributedQueryRunner().executeWithPlan(dynamicFiltering(), hidden);
        assertThat(listed.result().getMaterializedRows()).containsExactlyInAnyOrderElementsOf(filtered.result().getMaterializedRows());
        assertThat(scannedTables(listed)).singleElement().satisfies(handle -> assertThat(handle.constraint().isAll()).isFalse());
        assertThat(metrics(listed).get(DYNAMIC_FILTER_WAIT_TIMEOUT_MILLIS)).as(visible).isZero();
        assertThat(metrics(filtered).get(DYNAMIC_FILTER_WAIT_TIMEOUT_MILLIS)).as(hidden).isEqualTo(10_000);
    }

    @Test
    void testJoinsOnMeters()
    {
        String meters = String.join(", ", meter(0), meter(3), meter(5), meter(METERS), literal(ODD), literal(ReadingsGenerator.maloId(3) + " "), literal(" " + ReadingsGenerator.maloId(3)), meter(999));
        String pairs = String.join(", ",
                pair(meter(0), "'1-1:1.29.0'"),
                pair(meter(0), "'1-1:2.29.0'"),
                pair(meter(3), "'1-1:2.29.0'"),
                pair(meter(5), "'1-1:1.29.0'"),
                pair(meter(METERS), "'6-0:1.0.0'"),
                pair(literal(ODD), "'1-1:1.29.0'"));
        String around = "r.\"from\" >= %s AND r.\"from\" < %s".formatted(timestamp(WATERMARK.minusSeconds(7_200)), timestamp(WATERMARK.plusSeconds(7_200)));
        String kinds = STRANGE_SOURCE_KINDS.subList(2, STRANGE_SOURCE_KINDS.size()).stream().map(TestingInserts::literal).collect(joining(", ")) + ", 'not there'";
        String kindsAndQualities = "(SELECT IF(random() >= 0, kind) AS kind, IF(random() >= 0, quality) AS quality FROM (VALUES %s) p(kind, quality)) v".formatted(String.join(", ",
                pair("'MSCONS'", "'MEASURED'"),
                pair("'MSCONS'", "'ESTIMATED'"),
                pair("'MSCONS'", "'SUBSTITUTED'"),
                pair("'VIRTUAL_METER'", "'MEASURED'"),
                pair(literal(STRANGE_SOURCE_KINDS.getFirst()), "'PRELIMINARY'")));
        List<Check> checks = new ArrayList<>();
        for (String table : List.of("readings_versions", "readings")) {
            String historical = "%s FOR VERSION AS OF %s".formatted(table, snapshotBeforeCorrections);
            checks.add(Check.rows("SELECT %s FROM %s r JOIN %s ON r.malo_id = v.id".formatted(COLUMNS, historical, opaque(meters))));
            checks.add(Check.rows("SELECT r.malo_id, r.source_kind, r.quality, count(*), sum(r.value), max(r.version) FROM %s r JOIN %s ON r.source_kind = v.kind AND r.quality = v.quality GROUP BY 1, 2, 3"
                    .formatted(historical, kindsAndQualities)));
        }
        for (String table : tables(0, 2)) {
            checks.add(Check.rows("SELECT %s FROM %s r JOIN (VALUES %s) v(id) ON r.malo_id = v.id".formatted(COLUMNS, table, meters)));
        }
        for (String table : tables(0, 4)) {
            checks.add(Check.rows("SELECT %s FROM %s r JOIN %s ON r.malo_id = v.id".formatted(COLUMNS, table, opaque(meters))));
        }
        for (String table : tables(2, 2)) {
            checks.add(Check.rows("SELECT %s FROM %s r JOIN %s ON r.malo_id = v.id WHERE %s".formatted(COLUMNS, table, opaque(meters), around)));
        }
        for (String table : tables(1, 2)) {
            checks.add(Check.rows("SELECT %s FROM %s r JOIN (VALUES %s) v(id, obis) ON r.malo_id = v.id AND r.obis_code = v.obis".formatted(COLUMNS, table, pairs)));
        }
        for (String table : tables(3, 2)) {
            checks.add(Check.rows("SELECT %s FROM %s r JOIN %s ON r.malo_id = v.id AND r.obis_code = v.obis".formatted(COLUMNS, table, opaquePairs(pairs))));
        }
        for (String table : tables(1, 1)) {
            checks.add(Check.ordered("SELECT %s FROM %s r JOIN %s ON r.malo_id = v.id ORDER BY r.malo_id, r.obis_code, r.\"from\" DESC, r.version LIMIT 25".formatted(COLUMNS, table, opaque(meters))));
        }
        for (String table : List.of("readings_versions", "readings_versions FOR TIMESTAMP AS OF " + KNOWN_AT_SQL)) {
            // strange strings that do occur, in a varchar column the hot statements take as = ANY(?); readings keeps it for after resolution
            checks.add(Check.rows("SELECT %s FROM %s r JOIN %s ON r.source_kind = v.id".formatted(COLUMNS, table, opaque(kinds))));
        }
        for (String table : tables(0, 4)) {
            // columns outside the merge key: an older version matches where a correction, the winner, does not; before
            // resolution such a filter would let the older version win
            checks.add(Check.rows("SELECT r.malo_id, r.source_kind, r.quality, count(*), sum(r.value), max(r.version) FROM %s r JOIN %s ON r.source_kind = v.kind AND r.quality = v.quality GROUP BY 1, 2, 3"
                    .formatted(table, kindsAndQualities)));
        }
        assertSameAnswers(checks);
    }

    @Test
    void testJoinsOnFrom()
    {
        String instants = Stream.of(
                        timestamp(WATERMARK.minus(QUARTER)),
                        timestamp(WATERMARK),
                        timestamp(WATERMARK.plus(QUARTER)),
                        timestamp(PARTITION_BOUNDARY.minus(QUARTER)),
                        timestamp(PARTITION_BOUNDARY),
                        timestamp(Instant.parse("2026-11-02T10:00:00Z")),
                        // 2026-11-05 01:30 UTC, in another zone
                        "TIMESTAMP '2026-11-05 02:30:00 Europe/Berlin'",
                        // off the quarter-hour grid, and after the last day
                        timestamp(WATERMARK.plus(Duration.ofMinutes(7))),
                        timestamp(Instant.parse("2026-12-01T00:00:00Z")))
                .collect(joining(", "));
        String meterInstants = String.join(", ",
                pair(meter(5), timestamp(WATERMARK.minus(QUARTER))),
                pair(meter(5), timestamp(WATERMARK)),
                pair(meter(5), timestamp(Instant.parse("2026-11-03T00:45:00Z"))),
                pair(meter(3), timestamp(PARTITION_BOUNDARY)),
                pair(meter(0), timestamp(PARTITION_BOUNDARY.minus(QUARTER))),
                pair(literal(ODD), timestamp(WATERMARK)));
        List<Check> checks = new ArrayList<>();
        for (String table : tables(1, 2)) {
            checks.add(Check.rows("SELECT %s FROM %s r JOIN (VALUES %s) v(t) ON r.\"from\" = v.t".formatted(COLUMNS, table, instants)));
        }
        for (String table : tables(0, 4)) {
            checks.add(Check.rows("SELECT %s FROM %s r JOIN %s ON r.\"from\" = v.t".formatted(COLUMNS, table, opaqueColumn("t", instants))));
            checks.add(Check.rows("SELECT %s FROM %s r JOIN (SELECT IF(random() >= 0, id) AS id, IF(random() >= 0, t) AS t FROM (VALUES %s) p(id, t)) v ON r.malo_id = v.id AND r.\"from\" = v.t"
                    .formatted(COLUMNS, table, meterInstants)));
        }
        assertSameAnswers(checks);
    }

    @Test
    void testJoinsOnOtherColumnsAndTypes()
    {
        // build sides whose type differs from the column's: Trino casts the build side, or the probe side (a dynamic
        // filter with a cast, which the engine translates into the column's type before the connector sees it)
        String paddedMeters = opaque("CAST(%s AS char(12))".formatted(meter(3)), "CAST(%s AS char(11))".formatted(meter(5)), "CAST('x' AS char(12))");
        String around = "\"from\" >= %s AND \"from\" < %s".formatted(timestamp(WATERMARK.minusSeconds(3_600)), timestamp(WATERMARK.plusSeconds(3_600)));
        String doubles = "(SELECT DISTINCT CAST(value AS double) AS x FROM readings_versions WHERE malo_id = %s AND %s) v".formatted(meter(3), around);
        String decimals = "(SELECT DISTINCT CAST(value AS decimal(20, 8)) + DECIMAL '0.00000001' * IF(random() < 0, 1, 0) AS x FROM readings_versions WHERE malo_id = %s AND %s) v".formatted(meter(4), around);
        String days = opaqueColumn("d", "TIMESTAMP '2026-11-03 00:00:00.000', TIMESTAMP '2026-11-04 00:00:00.000', TIMESTAMP '2026-11-05 12:00:00.000'");
        String nanos = opaqueColumn("t", "%s, TIMESTAMP '2026-11-04 00:00:00.000000001 UTC', TIMESTAMP '2026-11-03 23:45:00.000000000 UTC', TIMESTAMP '2026-11-05 01:00:00.000000000 Europe/Berlin'".formatted(timestamp(PARTITION_BOUNDARY)));
        // versions learned late, and versions learned the day before KNOWN_AT
        String versions = "(SELECT version AS x FROM readings_versions WHERE (recorded_at = %s OR recorded_at BETWEEN %s AND %s) AND malo_id IN (%s, %s) AND IF(random() >= 0, true)) v"
                .formatted(timestamp(LATE), timestamp(KNOWN_AT.minus(Duration.ofDays(1))), KNOWN_AT_SQL, meter(2), meter(5));
        String recorded = "(SELECT DISTINCT recorded_at AS x FROM readings_versions WHERE quality = 'CORRECTED' AND malo_id IN (%s, %s) AND IF(random() >= 0, true)) v".formatted(meter(2), meter(5));
        String qualities = opaque("'MEASURED'", "'SUBSTITUTED'", "'corrected'");
        List<String> shapes = List.of(
                "SELECT %s FROM %%s r JOIN %s ON r.malo_id = v.id".formatted(COLUMNS, paddedMeters),
                "SELECT %s FROM %%s r JOIN %s ON r.value = v.x".formatted(COLUMNS, doubles),
                "SELECT %s FROM %%s r JOIN %s ON r.value = v.x".formatted(COLUMNS, decimals),
                "SELECT r.malo_id, r.balancing_day, count(*), sum(r.value) FROM %%s r JOIN %s ON r.balancing_day = v.d GROUP BY 1, 2".formatted(days),
                "SELECT %s FROM %%s r JOIN %s ON r.\"from\" = v.t".formatted(COLUMNS, nanos),
                "SELECT %s FROM %%s r JOIN %s ON r.version = v.x".formatted(COLUMNS, versions),
                "SELECT %s FROM %%s r JOIN %s ON r.recorded_at = v.x".formatted(COLUMNS, recorded),
                "SELECT r.malo_id, r.quality, count(*), sum(r.value) FROM %%s r JOIN %s ON r.quality = v.id GROUP BY 1, 2".formatted(qualities));
        // each shape on two of the four reads, every read in four shapes
        List<Check> checks = new ArrayList<>();
        for (int index = 0; index < shapes.size(); index++) {
            for (String table : tables(index, 2)) {
                checks.add(Check.rows(shapes.get(index).formatted(table)));
            }
        }
        assertSameAnswers(checks);
    }

    @Test
    void testSemiAndAntiJoins()
    {
        String meters = String.join(", ", meter(1), meter(5), meter(METERS), literal(ODD), meter(999));
        String pairs = String.join(", ", pair(meter(0), "'1-1:2.29.0'"), pair(meter(2), "'1-1:1.29.0'"), pair(meter(5), "'1-1:2.29.0'"), pair(literal(ODD), "'1-1:1.29.0'"));
        List<Check> checks = new ArrayList<>();
        for (String table : tables(0, 4)) {
            checks.add(Check.rows("SELECT %s FROM %s r WHERE r.malo_id IN (SELECT id FROM %s)".formatted(COLUMNS, table, opaque(meters))));
            // the build side is a scan of the same table: the keys the late corrections touched
            checks.add(Check.rows("SELECT %s FROM %s r WHERE EXISTS (SELECT 1 FROM readings_versions c WHERE c.malo_id = r.malo_id AND c.obis_code = r.obis_code AND c.\"from\" = r.\"from\" AND c.recorded_at = %s)"
                    .formatted(COLUMNS, table, timestamp(LATE))));
        }
        for (String table : tables(1, 2)) {
            checks.add(Check.rows("SELECT %s FROM %s r WHERE r.malo_id IN (%s) AND r.\"from\" >= %s AND r.\"from\" < %s"
                    .formatted(COLUMNS, table, "SELECT id FROM " + opaque(meters), timestamp(WATERMARK.minus(Duration.ofDays(1))), timestamp(PARTITION_BOUNDARY.plus(QUARTER)))));
        }
        // no dynamic filter for an anti join: Trino's own answer, as a check that nothing else differs
        for (String table : tables(0, 2)) {
            checks.add(Check.rows("SELECT %s FROM %s r WHERE r.malo_id NOT IN (SELECT id FROM %s)".formatted(COLUMNS, table, opaque(meters))));
        }
        for (String table : tables(2, 2)) {
            checks.add(Check.rows("SELECT %s FROM %s r WHERE NOT EXISTS (SELECT 1 FROM (VALUES %s) p(id, obis) WHERE p.id = r.malo_id AND p.obis = r.obis_code)".formatted(COLUMNS, table, pairs)));
        }
        // every version that no later version of its key supersedes
        for (String versions : List.of("readings_versions", "readings_versions FOR TIMESTAMP AS OF " + KNOWN_AT_SQL)) {
            checks.add(Check.rows("SELECT %s FROM %s r WHERE NOT EXISTS (SELECT 1 FROM %s n WHERE n.malo_id = r.malo_id AND n.obis_code = r.obis_code AND n.\"from\" = r.\"from\" AND n.version > r.version)"
                    .formatted(COLUMNS, versions, versions)));
        }
        assertSameAnswers(checks);
    }

    @Test
    void testWinnersJoinedWithTheirVersions()
    {
        String readingsAsOf = "readings FOR TIMESTAMP AS OF " + KNOWN_AT_SQL;
        String versionsAsOf = "readings_versions FOR TIMESTAMP AS OF " + KNOWN_AT_SQL;
        String key = "w.malo_id = v.malo_id AND w.obis_code = v.obis_code AND w.\"from\" = v.\"from\"";
        String counts = """
                SELECT w.malo_id, w.obis_code, w.balancing_day, count(*) AS versions, count(DISTINCT w."from") AS keys, count_if(v.version = w.version) AS winners,
                    count_if(v.version > w.version) AS newer, sum(w.value) AS winner_sum, sum(v.value) AS versions_sum
                FROM %s w JOIN %s v ON %s
                GROUP BY 1, 2, 3""";
        String late = "SELECT w.malo_id, w.\"from\", w.version, w.value, v.version, v.value, v.recorded_at FROM %s w JOIN %s v ON %s WHERE w.recorded_at = %s";
        String corrected = "SELECT w.malo_id, w.\"from\", w.version, v.version, v.quality FROM %s w JOIN %s v ON %s WHERE w.quality = 'CORRECTED' AND w.\"from\" >= %s AND w.\"from\" < %s";
        List<Check> checks = List.of(
                Check.rows(counts.formatted("readings", "readings_versions", key)),
                Check.rows(counts.formatted(readingsAsOf, versionsAsOf, key)),
                Check.rows(counts.formatted(readingsAsOf, "readings_versions", key)),
                Check.rows(counts.formatted("readings_versions", "readings", key)),
                Check.rows(late.formatted("readings", "readings_versions", key, timestamp(LATE))),
                Check.rows(late.formatted("readings", versionsAsOf, key, timestamp(LATE))),
                Check.rows(corrected.formatted("readings", "readings_versions", key, timestamp(WATERMARK.minus(Duration.ofDays(1))), timestamp(WATERMARK.plus(Duration.ofDays(1))))),
                Check.rows(corrected.formatted(readingsAsOf, versionsAsOf, key, timestamp(WATERMARK.minus(Duration.ofDays(1))), timestamp(WATERMARK.plus(Duration.ofDays(1))))));
        assertSameAnswers(checks);
        // every winner met its own version, and none met a newer one
        MaterializedResult current = computeActual(dynamicFiltering(), counts.formatted("readings", "readings_versions", key));
        assertThat(current.getMaterializedRows()).allSatisfy(row -> {
            assertThat(row.getField(5)).isEqualTo(row.getField(4));
            assertThat(row.getField(6)).isEqualTo(0L);
        });
    }

    @Test
    void testEmptyBuildSide()
    {
        String nothing = "(SELECT id FROM (VALUES %s, %s) t(id) WHERE random() < 0) v".formatted(meter(3), meter(4));
        String noInstant = "(SELECT t FROM (VALUES %s, %s) p(t) WHERE random() < 0) v".formatted(timestamp(WATERMARK), timestamp(WATERMARK.minus(QUARTER)));
        // PostgreSQL text cannot hold a NUL: a filter of such values only leaves nothing for the hot statement to match
        String nul = opaque("chr(0)", "concat(%s, chr(0))".formatted(meter(3)));
        List<Check> checks = new ArrayList<>();
        for (String table : tables(0, 4)) {
            checks.add(Check.empty("SELECT %s FROM %s r JOIN %s ON r.malo_id = v.id".formatted(COLUMNS, table, nothing)));
            checks.add(Check.rows("SELECT count(*), sum(r.value), max(r.\"from\") FROM %s r JOIN %s ON r.malo_id = v.id".formatted(table, nothing)));
        }
        for (String table : tables(0, 2)) {
            checks.add(Check.empty("SELECT %s FROM %s r JOIN (SELECT malo_id AS id FROM readings_versions WHERE value > 1000000) v ON r.malo_id = v.id".formatted(COLUMNS, table)));
            checks.add(Check.empty("SELECT %s FROM %s r WHERE r.malo_id IN (SELECT id FROM %s)".formatted(COLUMNS, table, nothing)));
        }
        for (String table : tables(2, 2)) {
            checks.add(Check.empty("SELECT %s FROM %s r JOIN %s ON r.\"from\" = v.t".formatted(COLUMNS, table, noInstant)));
            checks.add(Check.empty("SELECT %s FROM %s r JOIN %s ON r.malo_id = v.id".formatted(COLUMNS, table, nul)));
        }
        assertSameAnswers(checks);
        assertThat(computeActual(dynamicFiltering(), "SELECT count(*), sum(r.value) FROM readings r JOIN %s ON r.malo_id = v.id".formatted(nothing)).getMaterializedRows())
                .containsExactly(row(0L, null));
    }

    @Test
    void testDynamicFilterPrunesPartitionsAndFiles()
    {
        // two meters over one UTC day, opaque to the planner: only the dynamic filters on malo_id and "from" narrow the scan
        for (LocalDate day : List.of(LocalDate.of(2026, 11, 3), LocalDate.of(2026, 11, 5))) {
            Instant start = day.atStartOfDay(ZoneOffset.UTC).toInstant();
            String meterDay = "(SELECT IF(random() >= 0, m.id) AS id, IF(random() >= 0, %s + x * INTERVAL '15' MINUTE) AS t FROM (VALUES %s, %s) m(id) CROSS JOIN UNNEST(sequence(0, 95)) s(x)) v"
                    .formatted(timestamp(start), meter(3), meter(5));
            for (String table : tables(0, 4)) {
                String sql = "SELECT %s FROM %s r JOIN %s ON r.malo_id = v.id AND r.\"from\" = v.t".formatted(COLUMNS, table, meterDay);
                MaterializedResultWithPlan filtered = getDistributedQueryRunner().executeWithPlan(dynamicFiltering(), sql);
                MaterializedResultWithPlan unfiltered = getDistributedQueryRunner().executeWithPlan(withoutDynamicFiltering(), sql);
                assertThat(filtered.result().getMaterializedRows()).as(sql)
                        .isNotEmpty()
                        .containsExactlyInAnyOrderElementsOf(unfiltered.result().getMaterializedRows());

                // the hot partitions and Iceberg files whose "from" range misses the day are not even scheduled
                Map<String, Long> pruned = metrics(filtered);
                Map<String, Long> unpruned = metrics(unfiltered);
                long hotPartitionsRead = pruned.getOrDefault(HOT_PARTITIONS_READ, 0L);
                long coldFiles = pruned.getOrDefault(COLD_DATA_FILES, 0L);
                assertThat(hotPartitionsRead).as(sql).isLessThan(unpruned.get(HOT_PARTITIONS_READ));
                assertThat(pruned.get(HOT_PARTITIONS_DYNAMIC_FILTER_SKIPPED)).as(sql).isEqualTo(unpruned.get(HOT_PARTITIONS_READ) - hotPartitionsRead);
                assertThat(coldFiles).as(sql).isLessThan(unpruned.get(COLD_DATA_FILES));
                assertThat(pruned.get(COLD_DATA_FILES_DYNAMIC_FILTER_SKIPPED)).as(sql).isEqualTo(unpruned.get(COLD_DATA_FILES) - coldFiles);
                assertThat(unpruned.get(HOT_PARTITIONS_DYNAMIC_FILTER_SKIPPED)).as(sql).isZero();
                assertThat(unpruned.get(COLD_DATA_FILES_DYNAMIC_FILTER_SKIPPED)).as(sql).isZero();
            }
        }
    }

    @Test
    void testDynamicFilterNarrowsTheSplitOfAFewMeters()
    {
        // one meter named outright: its hot partitions are one split, one statement. The second hot day's instants,
        // opaque to the planner, leave that split the one partition that holds them
        String secondHotDay = "(SELECT IF(random() >= 0, %s + x * INTERVAL '15' MINUTE) AS t FROM UNNEST(sequence(0, 95)) s(x)) v"
                .formatted(timestamp(PARTITION_BOUNDARY));
        for (String table : tables(0, 4)) {
            String sql = "SELECT %s FROM %s r JOIN %s ON r.\"from\" = v.t WHERE r.malo_id = %s".formatted(COLUMNS, table, secondHotDay, meter(3));
            MaterializedResultWithPlan filtered = getDistributedQueryRunner().executeWithPlan(dynamicFiltering(), sql);
            MaterializedResultWithPlan unfiltered = getDistributedQueryRunner().executeWithPlan(withoutDynamicFiltering(), sql);
            assertThat(filtered.result().getMaterializedRows()).as(sql)
                    .isNotEmpty()
                    .containsExactlyInAnyOrderElementsOf(unfiltered.result().getMaterializedRows());

            Map<String, Long> narrowed = metrics(filtered);
            Map<String, Long> whole = metrics(unfiltered);
            assertThat(whole.get(HOT_SPLITS)).as(sql).isEqualTo(1);
            assertThat(whole.get(HOT_PARTITIONS_READ)).as(sql).isEqualTo(2);
            assertThat(narrowed.get(HOT_SPLITS)).as(sql).isEqualTo(1);
            assertThat(narrowed.get(HOT_PARTITIONS_READ)).as(sql).isEqualTo(1);
            assertThat(narrowed.get(HOT_PARTITIONS_DYNAMIC_FILTER_SKIPPED)).as(sql).isEqualTo(1);
        }
    }

    @Test
    void testManyValuesBecomeARange()
    {
        // more distinct values than a dynamic filter keeps (each driver of the build side sees part of them, so far more
        // than the limit): Trino sends their min and max
        String range = many(3_000, meter(3), meter(4));
        String discrete = many(60, meter(3), meter(4), meter(6));
        String outside = many(3_000);
        String instants = "(SELECT %s + x * INTERVAL '15' MINUTE AS t FROM UNNEST(sequence(-150, 149)) s(x)) v".formatted(timestamp(WATERMARK));
        List<Check> checks = new ArrayList<>();
        for (String table : tables(0, 4)) {
            checks.add(Check.rows("SELECT %s FROM %s r JOIN %s ON r.malo_id = v.id".formatted(COLUMNS, table, range)));
        }
        for (String table : tables(1, 2)) {
            checks.add(Check.rows("SELECT %s FROM %s r JOIN %s ON r.malo_id = v.id".formatted(COLUMNS, table, discrete)));
            checks.add(Check.empty("SELECT %s FROM %s r JOIN %s ON r.malo_id = v.id".formatted(COLUMNS, table, outside)));
        }
        for (String table : tables(3, 2)) {
            checks.add(Check.rows("SELECT r.malo_id, r.balancing_day, count(*), sum(r.value), max(r.version) FROM %s r JOIN %s ON r.\"from\" = v.t GROUP BY 1, 2".formatted(table, instants)));
        }
        assertSameAnswers(checks);

        // the range reaches the cold pruning, not the hot statement; the discrete list reaches both
        String sql = "SELECT %s FROM readings_versions r JOIN %s ON r.malo_id = v.id";
        long hotRows = (long) computeActual("SELECT count(*) FROM readings_versions WHERE \"from\" >= " + timestamp(WATERMARK)).getOnlyValue();
        long hotRowsOfMeters = (long) computeActual("SELECT count(*) FROM readings_versions WHERE malo_id IN (%s, %s, %s) AND \"from\" >= %s"
                .formatted(meter(3), meter(4), meter(6), timestamp(WATERMARK))).getOnlyValue();
        Map<String, Long> ranged = metrics(getDistributedQueryRunner().executeWithPlan(dynamicFiltering(), sql.formatted(COLUMNS, range)));
        Map<String, Long> listed = metrics(getDistributedQueryRunner().executeWithPlan(dynamicFiltering(), sql.formatted(COLUMNS, discrete)));
        Map<String, Long> unfiltered = metrics(getDistributedQueryRunner().executeWithPlan(withoutDynamicFiltering(), sql.formatted(COLUMNS, range)));
        assertThat(ranged.get(HOT_ROWS_READ)).isEqualTo(hotRows);
        assertThat(ranged.get(COLD_ROW_GROUPS_READ)).isPositive().isLessThan(unfiltered.get(COLD_ROW_GROUPS_READ));
        assertThat(listed.get(HOT_ROWS_READ)).isEqualTo(hotRowsOfMeters);
        assertThat(listed.get(COLD_ROW_GROUPS_READ)).isPositive().isLessThan(unfiltered.get(COLD_ROW_GROUPS_READ));
    }

    @Test
    void testAggregationsAboveJoins()
    {
        String meters = opaque(meter(1), meter(3), meter(5), meter(METERS), literal(ODD));
        String hot = "\"from\" >= " + timestamp(WATERMARK);
        String around = "r.\"from\" >= %s AND r.\"from\" < %s".formatted(timestamp(WATERMARK.minusSeconds(7_200)), timestamp(WATERMARK.plusSeconds(7_200)));
        List<Check> checks = new ArrayList<>();
        for (String table : tables(0, 4)) {
            checks.add(Check.rows("SELECT r.malo_id, r.balancing_day, count(*), sum(r.value), max(r.version) FROM %s r JOIN %s ON r.malo_id = v.id GROUP BY 1, 2".formatted(table, meters)));
            checks.add(Check.rows("SELECT count(*), sum(r.value), min(r.\"from\"), max(r.\"from\") FROM %s r JOIN %s ON r.malo_id = v.id WHERE %s".formatted(table, meters, around)));
        }
        for (String table : tables(0, 2)) {
            checks.add(Check.rows("SELECT r.malo_id, count(*), sum(r.value) FROM %s r JOIN %s ON r.malo_id = v.id WHERE r.%s GROUP BY 1".formatted(table, meters, hot)));
        }
        for (String table : tables(1, 2)) {
            // the build side is kept whole, the scan still takes the filter: a meter without rows counts zero
            checks.add(Check.rows("SELECT v.id, count(r.malo_id), sum(r.value) FROM %s r RIGHT JOIN %s ON r.malo_id = v.id GROUP BY 1".formatted(table, meters)));
        }
        // a read of readings_versions that is hot alone aggregates in PostgreSQL; the dynamic filter meets the pushed aggregation
        String pushed = "SELECT a.malo_id, a.obis_code, a.c, a.s FROM (SELECT malo_id, obis_code, count(*) AS c, sum(value) AS s FROM readings_versions WHERE %s GROUP BY 1, 2) a JOIN %s ON a.malo_id = v.id"
                .formatted(hot, meters);
        String pushedFiltered = "SELECT a.malo_id, a.c, a.s FROM (SELECT malo_id, count(*) AS c, sum(value) AS s FROM readings_versions WHERE %s AND malo_id IN (%s, %s, %s) GROUP BY 1) a JOIN %s ON a.malo_id = v.id"
                .formatted(hot, meter(3), meter(4), meter(5), meters);
        // a join on an aggregate: the dynamic filter names a column PostgreSQL computes
        String onAggregate = "SELECT a.malo_id, a.c FROM (SELECT malo_id, count(*) AS c FROM readings_versions WHERE %s GROUP BY 1) a JOIN (SELECT count(*) AS c FROM readings_versions WHERE %s AND malo_id = %s) b ON a.c = b.c"
                .formatted(hot, hot, meter(3));
        String global = "SELECT count(*), sum(value) FROM readings_versions WHERE %s AND malo_id IN (SELECT id FROM %s)".formatted(hot, meters);
        checks.addAll(List.of(Check.rows(pushed), Check.rows(pushedFiltered), Check.rows(onAggregate), Check.rows(global)));
        assertSameAnswers(checks);
        for (String sql : List.of(pushed, pushedFiltered, onAggregate)) {
            assertThat(scannedTables(getDistributedQueryRunner().executeWithPlan(dynamicFiltering(), sql)))
                    .as(sql)
                    .anySatisfy(handle -> assertThat(handle.aggregation()).isPresent());
        }
    }

    // ------------------------------------------------------------------ comparison

    /** {@code count} of the four reads from the {@code first}-th on, round: the shapes share them out among themselves. */
    private static List<String> tables(int first, int count)
    {
        List<String> tables = List.of(
                "readings_versions",
                "readings",
                "readings_versions FOR TIMESTAMP AS OF " + KNOWN_AT_SQL,
                "readings FOR TIMESTAMP AS OF " + KNOWN_AT_SQL);
        return IntStream.range(first, first + count).mapToObj(index -> tables.get(index % tables.size())).toList();
    }

    /** Runs every check with and without dynamic filtering, a few at a time, and fails with every query that differed. */
    private void assertSameAnswers(List<Check> checks)
    {
        ExecutorService executor = Executors.newFixedThreadPool(PARALLEL_QUERIES);
        List<String> failures = new ArrayList<>();
        try {
            List<Future<Optional<String>>> outcomes = new ArrayList<>();
            for (int index = 0; index < checks.size(); index++) {
                Check check = checks.get(index);
                // every other check cuts AS OF and unresolved cold months into small key ranges, which the filter meets too
                boolean smallResolutionSplits = index % 2 == 1;
                outcomes.add(executor.submit(() -> run(check, smallResolutionSplits)));
            }
            for (Future<Optional<String>> outcome : outcomes) {
                Futures.getUnchecked(outcome).ifPresent(failures::add);
            }
        }
        finally {
            executor.shutdownNow();
        }
        // each failure names its query; a check that must find rows and found none is one too
        assertThat(failures).as("%s of %s joins differ with dynamic filtering", failures.size(), checks.size()).isEmpty();
    }

    /** What differs between the query's answers with and without dynamic filtering, naming the query; empty if nothing. */
    private Optional<String> run(Check check, boolean smallResolutionSplits)
    {
        String sql = smallResolutionSplits ? "%s%n  -- %s = %s".formatted(check.sql(), MeterstoreSessionProperties.RESOLUTION_SPLIT_ROWS, SMALL_RESOLUTION_SPLIT_ROWS) : check.sql();
        MaterializedResult expected;
        try {
            expected = computeActual(withResolutionSplits(withoutDynamicFiltering(), smallResolutionSplits), check.sql());
        }
        catch (RuntimeException e) {
            return Optional.of("%s%n  failed without dynamic filtering: %s".formatted(sql, e.getMessage()));
        }
        MaterializedResult actual;
        try {
            actual = computeActual(withResolutionSplits(dynamicFiltering(), smallResolutionSplits), check.sql());
        }
        catch (RuntimeException e) {
            return Optional.of("%s%n  failed with dynamic filtering: %s".formatted(sql, e.getMessage()));
        }
        Optional<String> failure = differences(sql, actual, expected, check.ordered());
        if (failure.isEmpty() && check.expectEmpty() && expected.getRowCount() != 0) {
            failure = Optional.of("%s%n  expected no rows, both runs returned %s".formatted(sql, expected.getRowCount()));
        }
        if (failure.isEmpty() && !check.expectEmpty() && expected.getRowCount() == 0) {
            failure = Optional.of("%s%n  returned no rows with or without dynamic filtering: the check is vacuous".formatted(sql));
        }
        return failure;
    }

    /** The rows that differ, as a multiset difference, a few of each side; empty if none. */
    private static Optional<String> differences(String sql, MaterializedResult actual, MaterializedResult expected, boolean ordered)
    {
        List<MaterializedRow> actualRows = actual.getMaterializedRows();
        List<MaterializedRow> expectedRows = expected.getMaterializedRows();
        if (ordered ? actualRows.equals(expectedRows) : counts(actualRows).equals(counts(expectedRows))) {
            return Optional.empty();
        }
        List<MaterializedRow> missing = difference(expectedRows, actualRows);
        List<MaterializedRow> extra = difference(actualRows, expectedRows);
        return Optional.of("%s%n  with dynamic filtering %s rows, without %s%s; missing %s: %s%n  extra %s: %s".formatted(
                sql, actualRows.size(), expectedRows.size(), missing.isEmpty() && extra.isEmpty() ? ", the same rows in another order" : "",
                missing.size(), missing.stream().limit(5).toList(),
                extra.size(), extra.stream().limit(5).toList()));
    }

    private static Map<MaterializedRow, Integer> counts(List<MaterializedRow> rows)
    {
        Map<MaterializedRow, Integer> counts = new HashMap<>();
        rows.forEach(row -> counts.merge(row, 1, Integer::sum));
        return counts;
    }

    private static List<MaterializedRow> difference(List<MaterializedRow> rows, List<MaterializedRow> minus)
    {
        Map<MaterializedRow, Integer> remaining = counts(minus);
        List<MaterializedRow> difference = new ArrayList<>();
        for (MaterializedRow row : rows) {
            if (remaining.merge(row, -1, Integer::sum) < 0) {
                difference.add(row);
            }
        }
        return difference;
    }

    private Session dynamicFiltering()
    {
        return Session.builder(getSession())
                .setSystemProperty("enable_dynamic_filtering", "true")
                // the engine holds the probe splits back until the filters arrive, so that they narrow every split
                .setCatalogSessionProperty(CATALOG, MeterstoreSessionProperties.DYNAMIC_FILTERING_WAIT_TIMEOUT, "10s")
                .build();
    }

    private Session withoutDynamicFiltering()
    {
        return Session.builder(getSession())
                .setSystemProperty("enable_dynamic_filtering", "false")
                .build();
    }

    private static Session withResolutionSplits(Session session, boolean small)
    {
        if (!small) {
            return session;
        }
        return Session.builder(session)
                .setCatalogSessionProperty(CATALOG, MeterstoreSessionProperties.RESOLUTION_SPLIT_ROWS, Long.toString(SMALL_RESOLUTION_SPLIT_ROWS))
                .build();
    }

    /** The connector's counts of a query: every operator's connector metrics, which hold its page sources' and split sources'. */
    private Map<String, Long> metrics(MaterializedResultWithPlan result)
    {
        return TestingPlans.connectorCounts(getDistributedQueryRunner(), result);
    }

    // ------------------------------------------------------------------ build sides

    /** Rows of one column {@code id}, as relation {@code v}, that the planner cannot see through. */
    private static String opaque(String... values)
    {
        return opaqueColumn("id", String.join(", ", values));
    }

    private static String opaqueColumn(String column, String values)
    {
        return "(SELECT IF(random() >= 0, %s) AS %s FROM (VALUES %s) p(%s)) v".formatted(column, column, values, column);
    }

    private static String opaquePairs(String pairs)
    {
        return "(SELECT IF(random() >= 0, id) AS id, IF(random() >= 0, obis) AS obis FROM (VALUES %s) p(id, obis)) v".formatted(pairs);
    }

    /** {@code count} made-up MaLo-IDs just above meter 3's and {@code meters}, as relation {@code v(id)}. */
    private static String many(int count, String... meters)
    {
        String generated = "SELECT concat(%s, '#', format('%%04d', x)) FROM UNNEST(sequence(1, %s)) s(x)".formatted(meter(3), count);
        if (meters.length == 0) {
            return "(%s) v(id)".formatted(generated);
        }
        return "(SELECT id FROM (VALUES %s) p(id) UNION ALL %s) v".formatted(String.join(", ", meters), generated);
    }

    private static String pair(String first, String second)
    {
        return "(%s, %s)".formatted(first, second);
    }

    private static String meter(int meter)
    {
        return literal(ReadingsGenerator.maloId(meter));
    }

    private static MaterializedRow row(Object... values)
    {
        return new MaterializedRow(DEFAULT_PRECISION, Arrays.asList(values));
    }

    // ------------------------------------------------------------------ data

    /**
     * Rows the generator never writes: meter 0's feed-in under a second OBIS code (so that a meter and an OBIS code
     * each occur without occurring together), and heat of a meter of its own whose source kinds are strange strings.
     */
    private static List<Reading> variants(ReadingsGenerator generator)
    {
        List<Reading> variants = new ArrayList<>();
        for (LocalDate day : generator.localDays()) {
            for (Reading reading : generator.readings(0, day)) {
                variants.add(new Reading(reading.maloId(), reading.meloId(), "1-1:2.29.0", Sparte.STROM, reading.from(), reading.to(), reading.value().negate(), MeasurementUnit.KWH,
                        reading.quality(), reading.resolution(), "VIRTUAL_METER", reading.sourceDetail(), reading.provenance(), reading.version(), reading.versionScope(), reading.recordedAt(), reading.balancingDay()));
            }
            for (Reading reading : generator.readings(1, day)) {
                int interval = Math.toIntExact(reading.from().getEpochSecond() / 900);
                variants.add(new Reading(ReadingsGenerator.maloId(METERS), Optional.empty(), "6-0:1.0.0", Sparte.WAERME, reading.from(), reading.to(), reading.value(), MeasurementUnit.KWH,
                        Quality.PRELIMINARY, reading.resolution(), STRANGE_SOURCE_KINDS.get(interval % STRANGE_SOURCE_KINDS.size()), reading.sourceDetail(), reading.provenance(), reading.version(),
                        Reading.versionScope(ReadingsGenerator.DEFAULT_OPERATOR_ID, Sparte.WAERME, reading.from()), reading.recordedAt(), MeteringCalendar.balancingDay(Sparte.WAERME, reading.from())));
            }
        }
        return variants;
    }

    /** A query compared with and without dynamic filtering; some must find no rows, the others some. */
    private record Check(String sql, boolean expectEmpty, boolean ordered)
    {
        static Check rows(String sql)
        {
            return new Check(sql, false, false);
        }

        static Check empty(String sql)
        {
            return new Check(sql, true, false);
        }

        /** A query with ORDER BY: the rows must come in the same order. */
        static Check ordered(String sql)
        {
            return new Check(sql, false, true);
        }
    }
}
