package io.meterstore.trino;

import io.meterstore.archiver.maintenance.MaintenanceSettings;
import io.meterstore.archiver.maintenance.ManifestRewrite;
import io.meterstore.archiver.maintenance.OrphanFiles;
import io.meterstore.archiver.maintenance.SnapshotExpiry;
import io.meterstore.core.ColdFileCheck;
import io.meterstore.core.ColdFileRole;
import io.meterstore.core.ColdPartitions;
import io.meterstore.core.LocalFileIo;
import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.SnapshotRetention;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.Readings;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.ReadingsOracle;
import io.meterstore.testing.ReadingsOracle.MeterDay;
import io.meterstore.testing.ReadingsOracle.Totals;
import io.meterstore.testing.ReadingsOracle.View;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.meterstore.trino.base.MeterstoreMetrics;
import io.trino.Session;
import io.trino.testing.AbstractTestQueryFramework;
import io.trino.testing.MaterializedResult;
import io.trino.testing.QueryRunner.MaterializedResultWithPlan;
import io.trino.testing.MaterializedRow;
import io.trino.testing.QueryRunner;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.RewriteFiles;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.io.PositionOutputStream;
import org.apache.iceberg.io.SeekableInputStream;
import org.apache.parquet.format.FileMetaData;
import org.apache.parquet.format.RowGroup;
import org.apache.parquet.format.SchemaElement;
import org.apache.parquet.format.Util;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Predicate;

import static com.google.common.collect.ImmutableSet.toImmutableSet;
import static io.meterstore.testing.ReadingsOracle.all;
import static io.meterstore.testing.ReadingsOracle.fromAtOrAfter;
import static io.meterstore.testing.ReadingsOracle.fromBefore;
import static io.meterstore.testing.ReadingsOracle.fromRange;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The resolved cold layout end to end: archival writes each day's winners apart from the versions they supersede, so
 * {@code readings} reads a resolved month's winners files alone; a stream of late corrections through INSERT keeps the
 * months resolved (a superseded winner moves to a superseded file and is deleted from its winners file by an Iceberg
 * position delete), including a correction that deletes a winner in every row group of a file; a month archived
 * before the layout (plain files) is resolved as it is read, in splits cut by "from" and malo_id ranges. After each
 * step both tables, AS OF and per meter and day equal an independent oracle, and Trino's Iceberg connector reads
 * exactly the cold rows of {@code readings_versions}.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
final class TestMeterstoreResolvedLayout
        extends AbstractTestQueryFramework
{
    private static final LocalDate START = LocalDate.of(2026, 3, 24);
    // the first Berlin day starts at 2026-03-23 23:00 UTC: eleven UTC windows archive up to 2026-04-03, March and April
    private static final int ARCHIVED_WINDOWS = 11;
    private static final Instant FIRST_STREAM = Instant.parse("2026-05-02T08:00:00Z");
    private static final Instant SECOND_STREAM = Instant.parse("2026-05-03T08:00:00Z");
    private static final Instant THIRD_STREAM = Instant.parse("2026-05-04T08:00:00Z");
    private static final YearMonth MARCH = YearMonth.of(2026, 3);
    private static final YearMonth APRIL = YearMonth.of(2026, 4);
    // a resolution split of this many rows is a fraction of a day of this table: months are cut by "from" and malo_id
    private static final String SMALL_SPLITS = "700";

    private TestingWarehouse warehouse;
    private Table table;
    private final List<Reading> delivered = new ArrayList<>();

    @Override
    protected QueryRunner createQueryRunner()
            throws Exception
    {
        warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("resolved_layout"));
        table = TestingMeterstoreTables.createTables(warehouse);
        // small row groups: an archived day's winners file has several
        table.updateProperties().set(TableProperties.PARQUET_ROW_GROUP_SIZE_BYTES, "16384").commit();
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(1212)
                .meters(24)
                .startDay(START)
                .days(14)
                .correctionsFraction(0.06)
                .build();
        generator.forEach(delivered::add);
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, generator);
        }
        TestingArchival.archiveWindows(warehouse, ARCHIVED_WINDOWS);
        // April as a table archived before the resolved layout has it: the same rows in files without a role
        rewriteAsPlainFiles(APRIL);
        return MeterstoreQueryRunner.builder(warehouse).build();
    }

    @Test
    @Order(1)
    void testArchivedMonthIsReadFromItsWinnersAlone()
    {
        assertMatchesOracle(List.of());
        Map<String, Long> march = metrics(getSession(), "SELECT count(*), sum(value) FROM readings WHERE " + month(MARCH));
        assertThat(march.get(MeterstoreMetrics.COLD_MONTHS_RESOLVED)).isEqualTo(1);
        assertThat(march.get(MeterstoreMetrics.COLD_MONTHS_RESOLVING)).isZero();
        assertThat(march.get(MeterstoreMetrics.COLD_RESOLUTION_SPLITS)).isZero();
        assertThat(march.getOrDefault(MeterstoreMetrics.COLD_ROW_GROUPS_RESOLVED, 0L)).isZero();
        // every archived day of March is a winners file and a superseded file; readings reads the winners alone
        assertThat(march.get(MeterstoreMetrics.COLD_DATA_FILES)).isEqualTo(march.get(MeterstoreMetrics.COLD_SPLITS));
        Map<String, Long> marchVersions = metrics(getSession(), "SELECT count(*), sum(value) FROM readings_versions WHERE " + month(MARCH));
        assertThat(marchVersions.get(MeterstoreMetrics.COLD_DATA_FILES)).isGreaterThan(march.get(MeterstoreMetrics.COLD_DATA_FILES));

        // April's files carry no role: the month is resolved as it is read
        Map<String, Long> april = metrics(getSession(), "SELECT count(*), sum(value) FROM readings WHERE " + month(APRIL));
        assertThat(april.get(MeterstoreMetrics.COLD_MONTHS_RESOLVING)).isEqualTo(1);
        assertThat(april.get(MeterstoreMetrics.COLD_ROW_GROUPS_RESOLVED)).isPositive();
    }

    @Test
    @Order(2)
    void testLateCorrectionStreamKeepsMonthsResolvedAndExact()
            throws Exception
    {
        ReadingsOracle before = oracle();
        // new versions of archived winners on two March days and one April day, in one statement (two month partitions)
        List<Reading> first = new ArrayList<>();
        first.addAll(corrections(before, utcDay("2026-03-26"), 5, 1_000, FIRST_STREAM));
        first.addAll(corrections(before, utcDay("2026-03-29"), 9, 1_000, FIRST_STREAM));
        first.addAll(corrections(before, utcDay("2026-04-01"), 7, 1_000, FIRST_STREAM));
        insert(first);
        assertMatchesOracle(List.of(FIRST_STREAM.minusSeconds(1)));

        // corrections of those corrections, late older versions that lose to the stored winner, and a day at or above W
        ReadingsOracle afterFirst = oracle();
        List<Reading> second = new ArrayList<>();
        second.addAll(corrections(afterFirst, reading -> first.stream().anyMatch(correction -> sameKey(correction, reading)) && reading.from().getEpochSecond() / 900 % 2 == 0, 1, 2_000, SECOND_STREAM));
        second.addAll(corrections(afterFirst, utcDay("2026-03-30"), 11, -1, SECOND_STREAM));
        second.addAll(corrections(afterFirst, utcDay("2026-04-05"), 6, 1_000, SECOND_STREAM));
        insert(second);
        assertMatchesOracle(List.of(FIRST_STREAM.minusSeconds(1), SECOND_STREAM.minusSeconds(1)));

        // March stays resolved: its winners files minus the deletes, several splits, nothing resolved
        Map<String, Long> march = metrics(getSession(), "SELECT count(*), sum(value) FROM readings WHERE " + month(MARCH));
        assertThat(march.get(MeterstoreMetrics.COLD_MONTHS_RESOLVED)).isEqualTo(1);
        assertThat(march.get(MeterstoreMetrics.COLD_SPLITS)).isGreaterThan(1);
        assertThat(march.get(MeterstoreMetrics.COLD_DELETE_FILES)).isPositive();
        assertThat(march.get(MeterstoreMetrics.COLD_ROWS_DELETED)).isPositive();
        assertThat(march.getOrDefault(MeterstoreMetrics.COLD_ROW_GROUPS_RESOLVED, 0L)).isZero();
        // April, archived before the layout and corrected by a file spanning its days, is not read serially
        Session smallSplits = smallSplits();
        Map<String, Long> april = metrics(smallSplits, "SELECT count(*), sum(value) FROM readings WHERE " + month(APRIL));
        assertThat(april.get(MeterstoreMetrics.COLD_MONTHS_RESOLVING)).isEqualTo(1);
        assertThat(april.get(MeterstoreMetrics.COLD_RESOLUTION_SPLITS)).isGreaterThan(1);
        assertThat(april.get(MeterstoreMetrics.COLD_ROW_GROUPS_RESOLVED)).isPositive();
        assertThat(coldFileRoles(APRIL)).doesNotContain(ColdFileRole.WINNERS, ColdFileRole.SUPERSEDED);
    }

    @Test
    @Order(3)
    void testFurtherArchivalKeepsTheAnswers()
            throws Exception
    {
        TieringWatermark before = watermark();
        // the next three windows, one of them holding the hot corrections of the stream
        TestingArchival.archiveWindows(warehouse, 3);
        assertThat(watermark().instant()).isAfter(before.instant());
        assertMatchesOracle(List.of(FIRST_STREAM.minusSeconds(1), SECOND_STREAM.minusSeconds(1)));
    }

    @Test
    @Order(4)
    void testCorrectionSupersedingAWinnerInEveryRowGroupOfAFile()
            throws Exception
    {
        // a day no correction has touched yet: its winners file's rows in file order are its rows in sort order
        Predicate<Reading> day = utcDay("2026-03-28");
        DataFile winners = dataFiles(MARCH).stream()
                .filter(file -> ColdFileRole.of(file.location()).orElseThrow() == ColdFileRole.WINNERS)
                .filter(file -> deletesOf(file).isEmpty())
                .filter(file -> (long) computeActual("SELECT count(*) FROM iceberg.metering.readings WHERE \"$path\" = '%s' AND \"from\" >= TIMESTAMP '2026-03-28 00:00:00 UTC' AND \"from\" < TIMESTAMP '2026-03-29 00:00:00 UTC'".formatted(file.location())).getOnlyValue() == file.recordCount())
                .findFirst()
                .orElseThrow();
        List<Long> rowGroupStarts = rowGroupStarts(winners);
        assertThat(rowGroupStarts).hasSizeGreaterThan(2);
        List<MaterializedRow> rows = computeActual("""
                SELECT malo_id, "from" FROM iceberg.metering.readings WHERE "$path" = '%s'
                ORDER BY malo_id, obis_code, "from", version""".formatted(winners.location())).getMaterializedRows();
        assertThat(rows).hasSize((int) winners.recordCount());
        // the first and the last row of every row group
        Set<Long> positions = new HashSet<>();
        for (int group = 0; group < rowGroupStarts.size(); group++) {
            positions.add(rowGroupStarts.get(group));
            positions.add((group + 1 < rowGroupStarts.size() ? rowGroupStarts.get(group + 1) : winners.recordCount()) - 1);
        }
        Set<String> keys = new HashSet<>();
        for (long position : positions) {
            MaterializedRow row = rows.get((int) position);
            keys.add(row.getField(0) + "@" + ((ZonedDateTime) row.getField(1)).toInstant());
        }
        ReadingsOracle before = oracle();
        List<Reading> corrections = corrections(before, day.and(reading -> keys.contains(reading.maloId() + "@" + reading.from())), 1, 3_000, THIRD_STREAM);
        assertThat(corrections).hasSize(positions.size());
        insert(corrections);

        // one delete file against that winners file, deleting exactly those rows
        List<DeleteFile> deletes = deletesOf(winners);
        assertThat(deletes).singleElement().satisfies(delete -> assertThat(delete.recordCount()).isEqualTo(positions.size()));
        assertThat(ColdFileRole.of(deletes.getFirst().location())).contains(ColdFileRole.POSITION_DELETES);
        Map<String, Long> read = metrics(getSession(), "SELECT count(*), sum(value) FROM readings WHERE \"from\" >= TIMESTAMP '2026-03-28 00:00:00 UTC' AND \"from\" < TIMESTAMP '2026-03-29 00:00:00 UTC'");
        // the day's winners file and the stream's files that overlap it, whose deletes apply too
        assertThat(read.get(MeterstoreMetrics.COLD_ROWS_DELETED)).isGreaterThanOrEqualTo(positions.size());
        assertThat(read.getOrDefault(MeterstoreMetrics.COLD_ROW_GROUPS_RESOLVED, 0L)).isZero();
        assertMatchesOracle(List.of(FIRST_STREAM.minusSeconds(1), THIRD_STREAM.minusSeconds(1)));

        // every file of the month, archived or written by the corrections, stays ordinary Parquet with its sort order declared
        List<DataFile> files = dataFiles(MARCH);
        assertThat(files).extracting(file -> ColdFileRole.of(file.location()).orElseThrow()).contains(ColdFileRole.WINNERS, ColdFileRole.SUPERSEDED);
        assertThat(files).anyMatch(file -> file.location().contains("/insert-"));
        for (DataFile file : files) {
            assertThat(file.sortOrderId()).as(file.location()).isEqualTo(table.sortOrder().orderId());
            FileMetaData footer = footer(file.location());
            assertThat(footer.getRow_groups()).as(file.location()).isNotEmpty().allSatisfy(rowGroup -> assertThat(rowGroup.getSorting_columns())
                    .extracting(column -> footer.getSchema().get(column.getColumn_idx() + 1).getName() + (column.isDescending() ? " DESC" : " ASC"))
                    .containsExactly("malo_id ASC", "obis_code ASC", "from ASC", "version ASC"));
            assertThat(footer.getKey_value_metadata()).as(file.location())
                    .anySatisfy(entry -> assertThat(entry.getKey() + "=" + entry.getValue()).isEqualTo(ColdFileRole.FOOTER_KEY + "=" + ColdFileRole.of(file.location()).orElseThrow().label()));
        }
        // and the delete files are Iceberg's position delete files: the data file's path and a row position
        assertThat(deletes).allSatisfy(delete -> assertThat(footer(delete.location()).getSchema()).extracting(SchemaElement::getName).containsExactly("table", "file_path", "pos"));
    }

    @Test
    @Order(5)
    void testMaintenanceKeepsLiveDeleteFiles()
            throws Exception
    {
        Set<String> deletes = liveDeleteFiles();
        assertThat(deletes).isNotEmpty();
        table.refresh();
        Set<String> deleteManifests = table.currentSnapshot().deleteManifests(table.io()).stream().map(ManifestFile::path).collect(toImmutableSet());

        // manifests one per month: the data manifests rewritten, the corrections' delete manifests (all of one month here) merged into one
        assertThat(deleteManifests).hasSizeGreaterThan(1);
        assertThat(new ManifestRewrite().rewrite(table)).isPresent();
        table.refresh();
        assertThat(table.currentSnapshot().deleteManifests(table.io()).stream().map(ManifestFile::path).collect(toImmutableSet()))
                .hasSize(1)
                .doesNotContainAnyElementsOf(deleteManifests);
        assertThat(liveDeleteFiles()).isEqualTo(deletes);
        // every snapshot but the current one expires, then every file no snapshot references goes, whatever its age
        Instant later = Instant.ofEpochMilli(table.currentSnapshot().timestampMillis()).plus(Duration.ofDays(1));
        assertThat(SnapshotExpiry.expire(table, later, new MaintenanceSettings(new SnapshotRetention(Duration.ZERO, 1), Duration.ofHours(1), Duration.ofHours(1)), List.of()).deletedFiles()).isPositive();
        assertThat(OrphanFiles.remove(table, later, Duration.ofHours(1)).listed()).isPositive();
        assertThat(liveDeleteFiles()).isEqualTo(deletes);
        assertThat(deletes).allSatisfy(location -> assertThat(LocalFileIo.path(location)).exists());

        // the same answers: no superseded winner comes back, none is lost
        ReadingsOracle oracle = oracle();
        Instant watermark = watermark().instant();
        for (View view : View.values()) {
            String relation = view == View.VERSIONS ? "readings_versions" : "readings";
            assertThat(summary(getSession(), "SELECT count(*), sum(value) FROM %s WHERE \"from\" < %s".formatted(relation, literal(watermark))))
                    .as(relation + " cold").isEqualTo(totals(oracle, view, fromBefore(watermark)));
        }
        assertThat(computeActual("SELECT count(*) FROM iceberg.metering.readings").getOnlyValue()).isEqualTo(oracle.count(View.VERSIONS, fromBefore(watermark)));

        // a delete file lost by hand is named by the archiver's status check, as a data file is
        String lost = deletes.iterator().next();
        byte[] content = Files.readAllBytes(LocalFileIo.path(lost));
        Files.delete(LocalFileIo.path(lost));
        try {
            assertThat(ColdFileCheck.damagedFiles(table)).containsExactly("'%s' does not exist".formatted(lost));
        }
        finally {
            Files.write(LocalFileIo.path(lost), content);
        }
        assertThat(ColdFileCheck.damagedFiles(table)).isEmpty();
    }

    /** The delete files the current snapshot applies, by location. */
    private Set<String> liveDeleteFiles()
    {
        table.refresh();
        Set<String> deletes = new HashSet<>();
        try (CloseableIterable<FileScanTask> planned = table.newScan().planFiles()) {
            planned.forEach(task -> task.deletes().forEach(delete -> deletes.add(delete.location())));
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return deletes;
    }

    private void assertMatchesOracle(List<Instant> knownAt)
    {
        ReadingsOracle oracle = oracle();
        Instant watermark = watermark().instant();
        Instant lower = watermark.minusSeconds(50 * 3_600);
        Instant upper = watermark.plusSeconds(26 * 3_600);
        for (View view : View.values()) {
            String relation = view == View.VERSIONS ? "readings_versions" : "readings";
            assertThat(summary(getSession(), "SELECT count(*), sum(value) FROM %s WHERE \"from\" < %s".formatted(relation, literal(watermark)))).as(relation + " cold").isEqualTo(totals(oracle, view, fromBefore(watermark)));
            assertThat(summary(getSession(), "SELECT count(*), sum(value) FROM %s WHERE \"from\" >= %s".formatted(relation, literal(watermark)))).as(relation + " hot").isEqualTo(totals(oracle, view, fromAtOrAfter(watermark)));
            assertThat(summary(getSession(), "SELECT count(*), sum(value) FROM %s WHERE \"from\" >= %s AND \"from\" < %s".formatted(relation, literal(lower), literal(upper))))
                    .as(relation + " across W").isEqualTo(totals(oracle, view, fromRange(lower, upper)));
            assertThat(totalsByMeterDay(getSession(), relation)).as(relation + " per meter and day").isEqualTo(oracle.totalsByMeterDay(view, all()));
        }
        // resolution splits cut into parts of a fraction of a day give the same winners
        assertThat(totalsByMeterDay(smallSplits(), "readings")).as("readings per meter and day, small resolution splits").isEqualTo(oracle.totalsByMeterDay(View.RESOLVED, all()));
        for (Instant instant : knownAt) {
            ReadingsOracle known = oracle.asKnownAt(instant);
            String asOf = " FOR TIMESTAMP AS OF " + literal(instant);
            assertThat(summary(getSession(), "SELECT count(*), sum(value) FROM readings_versions" + asOf)).isEqualTo(totals(known, View.VERSIONS, all()));
            assertThat(totalsByMeterDay(getSession(), "readings" + asOf)).as("readings as of %s", instant).isEqualTo(known.totalsByMeterDay(View.RESOLVED, all()));
            assertThat(totalsByMeterDay(smallSplits(), "readings" + asOf)).as("readings as of %s, small resolution splits", instant).isEqualTo(known.totalsByMeterDay(View.RESOLVED, all()));
        }
        // the winners as the ROW_NUMBER definition has them, every column
        String rowNumber = """
                SELECT malo_id, melo_id, obis_code, sparte, "from", "to", value, unit, quality, resolution, source_kind, source_detail,
                       provenance, version, version_scope, recorded_at, balancing_day
                FROM (SELECT *, row_number() OVER (PARTITION BY malo_id, obis_code, "from", version_scope ORDER BY version DESC, recorded_at DESC) AS rank
                      FROM readings_versions)
                WHERE rank = 1""";
        assertQueryReturnsEmptyResult("SELECT * FROM readings EXCEPT " + rowNumber);
        assertQueryReturnsEmptyResult(rowNumber + " EXCEPT SELECT * FROM readings");
        // Trino's Iceberg connector reads the table as a plain Iceberg table: exactly the cold rows of readings_versions
        String cold = "SELECT * FROM meterstore.metering.readings_versions WHERE \"from\" < " + literal(watermark);
        assertQueryReturnsEmptyResult("SELECT * FROM iceberg.metering.readings EXCEPT " + cold);
        assertQueryReturnsEmptyResult(cold + " EXCEPT SELECT * FROM iceberg.metering.readings");
        assertThat(computeActual("SELECT count(*) FROM iceberg.metering.readings").getOnlyValue()).isEqualTo(oracle.count(View.VERSIONS, fromBefore(watermark)));
    }

    /**
     * New versions of every {@code every}-th winner matching {@code filter}: {@code versionStep} above the winner's
     * version, or, when negative, below it (an older version delivered late, which loses), recorded at {@code recordedAt}.
     */
    private static List<Reading> corrections(ReadingsOracle oracle, Predicate<Reading> filter, int every, long versionStep, Instant recordedAt)
    {
        List<Reading> winners = oracle.resolved(filter).stream().sorted(Readings.SORT_ORDER).toList();
        List<Reading> corrections = new ArrayList<>();
        for (int index = 0; index < winners.size(); index += every) {
            Reading winner = winners.get(index);
            corrections.add(new Reading(winner.maloId(), winner.meloId(), winner.obisCode(), winner.sparte(), winner.from(), winner.to(),
                    winner.value().add(new BigDecimal("0.125")), winner.unit(), Quality.CORRECTED, winner.resolution(), "MANUAL_ENTRY",
                    winner.sourceDetail(), winner.provenance(), winner.version().add(BigInteger.valueOf(versionStep)), winner.versionScope(), recordedAt, winner.balancingDay()));
        }
        return corrections;
    }

    /** Late corrections through the Trino JDBC driver, as production delivers them. */
    private void insert(List<Reading> readings)
            throws SQLException
    {
        try (Connection connection = DriverManager.getConnection("jdbc:trino://%s/meterstore/metering".formatted(getDistributedQueryRunner().getCoordinator().getAddress()), "stream", null);
                Statement statement = connection.createStatement()) {
            assertThat(statement.executeUpdate(TestingInserts.insertAsRecorded(readings))).isEqualTo(readings.size());
        }
        delivered.addAll(readings);
    }

    private ReadingsOracle oracle()
    {
        return ReadingsOracle.of(delivered);
    }

    private TieringWatermark watermark()
    {
        table.refresh();
        return WatermarkReader.current(table).watermark();
    }

    private Session smallSplits()
    {
        return Session.builder(getSession())
                .setCatalogSessionProperty(MeterstoreQueryRunner.CATALOG, MeterstoreSessionProperties.RESOLUTION_SPLIT_ROWS, SMALL_SPLITS)
                .build();
    }

    private Totals summary(Session session, String sql)
    {
        MaterializedRow row = computeActual(session, sql).getMaterializedRows().getFirst();
        return new Totals((long) row.getField(0), row.getField(1) == null ? BigDecimal.ZERO.setScale(6) : ((BigDecimal) row.getField(1)).setScale(6));
    }

    private SortedMap<MeterDay, Totals> totalsByMeterDay(Session session, String relation)
    {
        MaterializedResult result = computeActual(session, """
                SELECT malo_id, CAST(date("from" AT TIME ZONE 'Europe/Berlin') AS varchar), count(*), sum(value)
                FROM %s GROUP BY 1, 2""".formatted(relation));
        SortedMap<MeterDay, Totals> totals = new TreeMap<>();
        for (MaterializedRow row : result.getMaterializedRows()) {
            totals.put(new MeterDay((String) row.getField(0), LocalDate.parse((String) row.getField(1))), new Totals((long) row.getField(2), ((BigDecimal) row.getField(3)).setScale(6)));
        }
        return totals;
    }

    private static Totals totals(ReadingsOracle oracle, View view, Predicate<? super Reading> filter)
    {
        return new Totals(oracle.count(view, filter), oracle.sum(view, filter).setScale(6));
    }

    /** The connector's counts of a query, from its table scan's connector metrics. */
    private Map<String, Long> metrics(Session session, String sql)
    {
        MaterializedResultWithPlan result = getDistributedQueryRunner().executeWithPlan(session, sql);
        return TestingPlans.connectorCounts(getDistributedQueryRunner(), result);
    }

    private static String month(YearMonth month)
    {
        Instant start = month.atDay(1).atStartOfDay().toInstant(ZoneOffset.UTC);
        Instant end = month.plusMonths(1).atDay(1).atStartOfDay().toInstant(ZoneOffset.UTC);
        return "\"from\" >= %s AND \"from\" < %s".formatted(literal(start), literal(end));
    }

    private static String literal(Instant instant)
    {
        return "from_iso8601_timestamp('%s')".formatted(instant);
    }

    private static Predicate<Reading> utcDay(String day)
    {
        Instant start = LocalDate.parse(day).atStartOfDay().toInstant(ZoneOffset.UTC);
        return fromRange(start, start.plusSeconds(86_400));
    }

    private static boolean sameKey(Reading left, Reading right)
    {
        return left.maloId().equals(right.maloId()) && left.obisCode().equals(right.obisCode()) && left.from().equals(right.from()) && left.versionScope().equals(right.versionScope());
    }

    private List<DataFile> dataFiles(YearMonth month)
    {
        List<DataFile> files = new ArrayList<>();
        for (FileScanTask task : tasks(month)) {
            files.add(task.file());
        }
        return files;
    }

    private List<DeleteFile> deletesOf(DataFile file)
    {
        return tasks(monthOf(file)).stream().filter(task -> task.file().location().equals(file.location())).findFirst().orElseThrow().deletes();
    }

    private Set<ColdFileRole> coldFileRoles(YearMonth month)
    {
        Set<ColdFileRole> roles = new HashSet<>();
        for (FileScanTask task : tasks(month)) {
            ColdFileRole.of(task.file().location()).ifPresent(roles::add);
        }
        return roles;
    }

    private List<FileScanTask> tasks(YearMonth month)
    {
        table.refresh();
        List<FileScanTask> tasks = new ArrayList<>();
        // with the column bounds, which a copy of a file must keep
        try (CloseableIterable<FileScanTask> planned = table.newScan().includeColumnStats().planFiles()) {
            for (FileScanTask task : planned) {
                if (monthOf(task.file()).equals(month)) {
                    tasks.add(task);
                }
            }
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return tasks;
    }

    /** The month partition of a data file. */
    private static YearMonth monthOf(DataFile file)
    {
        return ColdPartitions.month(file);
    }

    /** The first row of each row group of a data file, from its Parquet footer. */
    private static List<Long> rowGroupStarts(DataFile file)
    {
        List<Long> starts = new ArrayList<>();
        long start = 0;
        for (RowGroup rowGroup : footer(file.location()).getRow_groups()) {
            starts.add(start);
            start += rowGroup.getNum_rows();
        }
        return starts;
    }

    /** The Parquet footer of a file, as any Parquet reader reads it. */
    private static FileMetaData footer(String location)
    {
        try {
            byte[] bytes = Files.readAllBytes(LocalFileIo.path(location));
            int footerLength = ByteBuffer.wrap(bytes, bytes.length - 8, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
            return Util.readFileMetaData(new ByteArrayInputStream(bytes, bytes.length - 8 - footerLength, footerLength));
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Replaces every file of {@code month} by a copy under a plain name, as a table archived before the resolved layout holds it. */
    private void rewriteAsPlainFiles(YearMonth month)
    {
        Set<DataFile> originals = new HashSet<>(dataFiles(month));
        Set<DataFile> copies = new HashSet<>();
        for (DataFile original : originals) {
            String location = original.location().replaceAll("\\.(winners|superseded)\\.parquet$", "-$1-plain.parquet");
            copy(table.io().newInputFile(original.location()), table.io().newOutputFile(location));
            copies.add(DataFiles.builder(table.spec()).copy(original).withPath(location).build());
        }
        RewriteFiles rewrite = table.newRewrite();
        originals.forEach(rewrite::deleteFile);
        copies.forEach(rewrite::addFile);
        rewrite.commit();
        assertThat(coldFileRoles(month)).isEmpty();
    }

    private static void copy(InputFile input, OutputFile output)
    {
        try (SeekableInputStream in = input.newStream(); PositionOutputStream out = output.create()) {
            in.transferTo(out);
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
