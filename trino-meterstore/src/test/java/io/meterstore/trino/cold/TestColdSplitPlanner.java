package io.meterstore.trino.cold;

import io.airlift.slice.Slices;
import io.airlift.units.DataSize;
import io.meterstore.core.ColdFileRole;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.TieringWatermark;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.meterstore.trino.base.MeterstoreMetrics;
import io.trino.parquet.ParquetReaderOptions;
import io.trino.spi.connector.ConnectorSplit;
import io.trino.spi.security.ConnectorIdentity;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.Range;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.predicate.ValueSet;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.IntStream;

import static com.google.common.collect.ImmutableSet.toImmutableSet;
import static io.meterstore.trino.base.MeterstoreTypes.TIMESTAMP_TZ_MICROS;
import static io.meterstore.trino.base.MeterstoreTypes.columnHandle;
import static io.meterstore.trino.base.MeterstoreTypes.toEpochMicros;
import static io.meterstore.trino.base.MeterstoreTypes.toTimestamp;
import static io.meterstore.trino.cold.ColdSplitPlanner.DEFAULT_TARGET_SPLIT_SIZE;
import static io.meterstore.trino.cold.TestingReadings.maloId;
import static io.meterstore.trino.cold.TestingReadings.readings;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS;

@TestInstance(PER_CLASS)
final class TestColdSplitPlanner
{
    private static final MeterstoreColumnHandle MALO_ID = columnHandle(ReadingsColumn.MALO_ID);
    private static final MeterstoreColumnHandle FROM = columnHandle(ReadingsColumn.FROM);
    private static final List<String> OBIS_CODES = List.of("1-1:1.29.0");
    private static final TieringWatermark APRIL = TieringWatermark.of(Instant.parse("2024-04-01T00:00:00Z"));
    private static final TieringWatermark MARCH = TieringWatermark.of(Instant.parse("2024-03-01T00:00:00Z"));

    private final ColdSplitPlanner planner = planner(DEFAULT_TARGET_SPLIT_SIZE);
    private TestingColdTable coldTable;
    // January 10 (MaLos 1 and 2, four row groups), February 10 (MaLos 3 and 4), March 1 from midnight (MaLo 5);
    // one commit each, so one manifest each
    private DataFile january;
    private DataFile february;
    private DataFile march;
    private long januarySnapshot;
    private long lastSnapshot;

    @BeforeAll
    void setUp()
    {
        coldTable = TestingColdTable.create("cold_split_planner");
        january = coldTable.writeDataFile(readings(List.of(maloId(1), maloId(2)), OBIS_CODES, Instant.parse("2024-01-10T00:00:00Z"), 96), 50);
        february = coldTable.writeDataFile(readings(List.of(maloId(3), maloId(4)), OBIS_CODES, Instant.parse("2024-02-10T00:00:00Z"), 96), 1_000);
        march = coldTable.writeDataFile(readings(List.of(maloId(5)), OBIS_CODES, Instant.parse("2024-03-01T00:00:00Z"), 96), 1_000);
        januarySnapshot = coldTable.append(TieringWatermark.of(Instant.parse("2024-02-01T00:00:00Z")), january);
        coldTable.append(MARCH, february);
        lastSnapshot = coldTable.append(APRIL, march);
    }

    @AfterAll
    void tearDown()
    {
        coldTable.close();
    }

    @Test
    void testTableWithoutSnapshotHasNoSplits()
    {
        assertThat(planner.plan(table(), Optional.empty(), APRIL, TupleDomain.all())).isEqualTo(ColdSplitPlan.EMPTY);
    }

    @Test
    void testPlansEveryFileBelowWatermark()
    {
        ColdSplitPlan plan = planner.plan(table(), Optional.of(lastSnapshot), APRIL, TupleDomain.all());

        // the January file has four row groups; far below the target size, they are one split again
        assertThat(plan.splits()).containsExactlyInAnyOrder(wholeFile(january), wholeFile(february), wholeFile(march));
        assertThat(plan.splits()).allMatch(ColdSplit::coversWholeFile);
        assertThat(plan.dataFiles()).isEqualTo(3);
        assertThat(plan.dataFileBytes()).isEqualTo(january.fileSizeInBytes() + february.fileSizeInBytes() + march.fileSizeInBytes());
        assertThat(plan.dataManifests()).isEqualTo(3);
        assertThat(plan.skippedDataManifests()).isZero();
    }

    @Test
    void testWatermarkExcludesFilesAtOrAfterIt()
    {
        // the March file starts exactly at W: none of its rows is below it
        assertThat(paths(planner.plan(table(), Optional.of(lastSnapshot), MARCH, TupleDomain.all())))
                .containsExactlyInAnyOrder(january.location(), february.location());
        // one quarter hour later, its first interval is below W
        TieringWatermark afterFirstInterval = TieringWatermark.of(Instant.parse("2024-03-01T00:15:00Z"));
        assertThat(paths(planner.plan(table(), Optional.of(lastSnapshot), afterFirstInterval, TupleDomain.all())))
                .containsExactlyInAnyOrder(january.location(), february.location(), march.location());
    }

    @Test
    void testPinnedSnapshotIgnoresLaterCommits()
    {
        assertThat(paths(planner.plan(table(), Optional.of(januarySnapshot), APRIL, TupleDomain.all())))
                .containsExactly(january.location());
    }

    @Test
    void testMaloIdPrunesFiles()
    {
        assertThat(paths(planner.plan(table(), Optional.of(lastSnapshot), APRIL, maloIdIn(maloId(3)))))
                .containsExactly(february.location());
        assertThat(paths(planner.plan(table(), Optional.of(lastSnapshot), APRIL, maloIdIn(maloId(1), maloId(5)))))
                .containsExactlyInAnyOrder(january.location(), march.location());
        assertThat(paths(planner.plan(table(), Optional.of(lastSnapshot), APRIL, maloIdIn(maloId(6))))).isEmpty();
    }

    @Test
    void testFromRangePrunesByMonthAndBounds()
    {
        ColdSplitPlan february = planner.plan(table(), Optional.of(lastSnapshot), APRIL, fromIn("2024-02-01T00:00:00Z", "2024-03-01T00:00:00Z"));
        assertThat(paths(february)).containsExactly(this.february.location());
        // the January and March manifests are skipped on their partition summaries
        assertThat(february.skippedDataManifests()).isEqualTo(2);

        // late January: the month partition matches, the file's bounds (January 10) do not
        ColdSplitPlan lateJanuary = planner.plan(table(), Optional.of(lastSnapshot), APRIL, fromIn("2024-01-20T00:00:00Z", "2024-01-31T00:00:00Z"));
        assertThat(lateJanuary.splits()).isEmpty();
        assertThat(lateJanuary.skippedDataFiles()).isEqualTo(1);
    }

    @Test
    void testNoneConstraintHasNoSplits()
    {
        assertThat(planner.plan(table(), Optional.of(lastSnapshot), APRIL, TupleDomain.none())).isEqualTo(ColdSplitPlan.EMPTY);
    }

    @Test
    void testSplitsAreRowGroupAligned()
    {
        ColdSplitPlan plan = planner(DataSize.ofBytes(1)).plan(table(), Optional.of(januarySnapshot), APRIL, TupleDomain.all());

        assertThat(january.splitOffsets()).hasSize(4);
        assertThat(plan.splits()).extracting(ColdSplit::start).containsExactlyElementsOf(january.splitOffsets());
        assertThat(plan.splits()).allSatisfy(split -> assertThat(split.path()).isEqualTo(january.location()));
        assertThat(plan.splits().getLast().start() + plan.splits().getLast().length()).isEqualTo(january.fileSizeInBytes());
        for (int index = 1; index < plan.splits().size(); index++) {
            ColdSplit previous = plan.splits().get(index - 1);
            assertThat(previous.start() + previous.length()).isEqualTo(plan.splits().get(index).start());
        }
        assertThat(plan.dataFiles()).isEqualTo(1);
    }

    @Test
    void testResolvingReadGroupsFilesWhoseFromRangesOverlap()
    {
        // every key of the three files has a different version: no file proves one version per key
        List<ConnectorSplit> splits = winners(planner, lastSnapshot);
        assertThat(splits).hasSize(3).allSatisfy(split -> assertThat(split).isInstanceOf(ColdFileGroupSplit.class));
        assertThat(splits).extracting(split -> ((ColdFileGroupSplit) split).files().getFirst().path())
                .containsExactlyInAnyOrder(january.location(), february.location(), march.location());

        // a late correction to January 10 in a file of its own, and a day whose every row is version 1
        List<Reading> correction = readings(List.of(maloId(2)), OBIS_CODES, Instant.parse("2024-01-10T06:00:00Z"), 4).stream()
                .map(reading -> withVersion(reading, reading.version().add(BigInteger.ONE)))
                .toList();
        List<Reading> firstVersions = readings(List.of(maloId(6)), OBIS_CODES, Instant.parse("2024-03-20T00:00:00Z"), 96).stream()
                .map(reading -> withVersion(reading, BigInteger.ONE))
                .toList();
        DataFile correctionFile = coldTable.writeDataFile(correction, 1_000);
        DataFile firstVersionsFile = coldTable.writeDataFile(firstVersions, 50);
        long corrected = coldTable.append(APRIL, correctionFile, firstVersionsFile);

        List<ConnectorSplit> resolving = winners(planner(DataSize.ofBytes(1)), corrected);
        // January's file and its correction in one split, read whole; the version-1 file at its row groups, unresolved
        assertThat(resolving).filteredOn(ColdFileGroupSplit.class::isInstance)
                .extracting(split -> (Set<String>) ((ColdFileGroupSplit) split).files().stream().map(ColdSplit::path).collect(toImmutableSet()))
                .containsExactlyInAnyOrder(Set.of(january.location(), correctionFile.location()), Set.of(february.location()), Set.of(march.location()));
        assertThat(resolving).filteredOn(ColdSplit.class::isInstance)
                .extracting(split -> ((ColdSplit) split).start())
                .containsExactlyElementsOf(firstVersionsFile.splitOffsets());
        assertThat(firstVersionsFile.splitOffsets()).hasSizeGreaterThan(1);
    }

    @Test
    void testResolvedMonthIsReadFromItsWinnersFilesAlone()
    {
        try (TestingColdTable resolved = TestingColdTable.create("cold_split_planner_resolved")) {
            TieringWatermark july = TieringWatermark.of(Instant.parse("2024-07-01T00:00:00Z"));
            List<Reading> day = readings(List.of(maloId(1), maloId(2), maloId(3)), OBIS_CODES, Instant.parse("2024-06-10T00:00:00Z"), 96);
            // every fourth key has an older version, in the day's superseded file
            List<Reading> older = new ArrayList<>();
            for (int index = 0; index < day.size(); index += 4) {
                older.add(withVersion(day.get(index), day.get(index).version().subtract(BigInteger.TEN)));
            }
            DataFile winnersFile = resolved.writeDataFile(day, 50, ColdFileRole.WINNERS);
            DataFile supersededFile = resolved.writeDataFile(older, 1_000, ColdFileRole.SUPERSEDED);
            long snapshot = resolved.append(july, winnersFile, supersededFile);

            List<ConnectorSplit> winners = splits(planner(DataSize.ofBytes(1)), resolved.table(), snapshot, july, ColdRead.WINNERS, ColdSplitPlanner.DEFAULT_RESOLUTION_SPLIT_ROWS);
            // the winners file at its row groups, read without resolution; the superseded file not at all
            assertThat(winners).allSatisfy(split -> assertThat(split).isInstanceOf(ColdSplit.class));
            assertThat(winners).extracting(split -> ((ColdSplit) split).start()).containsExactlyElementsOf(winnersFile.splitOffsets());
            assertThat(winnersFile.splitOffsets()).hasSizeGreaterThan(1);
            // every version: both files; as of an instant: both files, resolved together
            assertThat(splits(planner, resolved.table(), snapshot, july, ColdRead.VERSIONS, ColdSplitPlanner.DEFAULT_RESOLUTION_SPLIT_ROWS))
                    .extracting(split -> ((ColdSplit) split).path())
                    .containsExactlyInAnyOrder(winnersFile.location(), supersededFile.location());
            assertThat(splits(planner, resolved.table(), snapshot, july, ColdRead.RESOLVED_AS_OF, ColdSplitPlanner.DEFAULT_RESOLUTION_SPLIT_ROWS))
                    .singleElement()
                    .satisfies(split -> assertThat(((ColdFileGroupSplit) split).files()).extracting(ColdSplit::path).containsExactlyInAnyOrder(winnersFile.location(), supersededFile.location()));

            // a file without a role (another tool's, or archived before the layout) makes the month resolve as it is read
            DataFile foreign = resolved.writeDataFile(readings(List.of(maloId(2)), OBIS_CODES, Instant.parse("2024-06-10T08:00:00Z"), 4).stream()
                    .map(reading -> withVersion(reading, BigInteger.ONE))
                    .toList(), 1_000);
            long corrected = resolved.append(july, foreign);
            assertThat(splits(planner, resolved.table(), corrected, july, ColdRead.WINNERS, ColdSplitPlanner.DEFAULT_RESOLUTION_SPLIT_ROWS))
                    .singleElement()
                    .satisfies(split -> assertThat(((ColdFileGroupSplit) split).files()).extracting(ColdSplit::path)
                            .containsExactlyInAnyOrder(winnersFile.location(), supersededFile.location(), foreign.location()));
        }
    }

    @Test
    void testSplitsAreProducedInBatches()
    {
        try (ColdSplitStream stream = planner(DataSize.ofBytes(1)).splits(ConnectorIdentity.ofUser("test"), table(), januarySnapshot, APRIL, TupleDomain.all(), ColdRead.VERSIONS, ColdSplitPlanner.DEFAULT_RESOLUTION_SPLIT_ROWS)) {
            // the January file's four row groups, one at a time as asked
            for (int batch = 0; batch < 4; batch++) {
                assertThat(stream.isFinished()).isFalse();
                assertThat(stream.next(1)).hasSize(1);
            }
            assertThat(stream.next(1)).isEmpty();
            assertThat(stream.isFinished()).isTrue();
            assertThat(stream.metrics()).containsEntry(MeterstoreMetrics.COLD_SPLITS, 4L).containsEntry(MeterstoreMetrics.COLD_DATA_FILES, 1L);
        }
    }

    @Test
    void testResolutionSplitsAreCutByFromAndMaloIdRanges()
    {
        try (TestingColdTable cut = TestingColdTable.create("cold_split_planner_cut")) {
            TieringWatermark july = TieringWatermark.of(Instant.parse("2024-07-01T00:00:00Z"));
            List<String> meters = IntStream.rangeClosed(11, 26).mapToObj(TestingReadings::maloId).toList();
            List<DataFile> files = new ArrayList<>();
            Map<String, List<Reading>> rowsByFile = new HashMap<>();
            // six days of sixteen meters in row groups of 96 rows (one meter-day each), archived before the layout
            for (int day = 0; day < 6; day++) {
                List<Reading> rows = readings(meters, OBIS_CODES, Instant.parse("2024-06-03T00:00:00Z").plus(Duration.ofDays(day)), 96);
                DataFile file = cut.writeDataFile(rows, 96);
                files.add(file);
                rowsByFile.put(file.location(), rows);
            }
            // and one correction spanning the six days, of every 25th interval of every meter
            List<Reading> spanning = readings(meters, OBIS_CODES, Instant.parse("2024-06-03T00:00:00Z"), 6 * 96).stream()
                    .filter(reading -> reading.from().getEpochSecond() / 900 % 25 == 0)
                    .map(reading -> withVersion(reading, BigInteger.ONE))
                    .toList();
            DataFile correction = cut.writeDataFile(spanning, 48);
            files.add(correction);
            rowsByFile.put(correction.location(), spanning);
            long snapshot = cut.append(july, files.toArray(DataFile[]::new));

            // a target below a day: the correction straddles every day cut, but holds few rows against a day
            List<ConnectorSplit> byDay = splits(planner, cut.table(), snapshot, july, ColdRead.WINNERS, 1_200);
            assertThat(byDay).hasSize(6).allSatisfy(split -> assertThat(split).isInstanceOf(ColdFileGroupSplit.class));
            assertThat(byDay).allSatisfy(split -> {
                ColdFileGroupSplit group = (ColdFileGroupSplit) split;
                assertThat(group.keys().maloIdLower()).isEmpty();
                assertThat(group.files()).extracting(ColdSplit::path).contains(correction.location());
            });
            assertEveryKeyInExactlyOneSplit(byDay, rowsByFile);

            // a target of a quarter of a day: each day is cut by malo_id as well, at its row groups
            List<ConnectorSplit> byMaloId = splits(planner, cut.table(), snapshot, july, ColdRead.WINNERS, 500);
            assertThat(byMaloId).hasSizeGreaterThan(byDay.size());
            assertThat(byMaloId).anySatisfy(split -> assertThat(((ColdFileGroupSplit) split).keys().maloIdUpper()).isPresent());
            assertEveryKeyInExactlyOneSplit(byMaloId, rowsByFile);
        }
    }

    /** Every row of every file lies in the key range of exactly one split, and that split reads its file. */
    private static void assertEveryKeyInExactlyOneSplit(List<ConnectorSplit> splits, Map<String, List<Reading>> rowsByFile)
    {
        rowsByFile.forEach((file, rows) -> {
            for (Reading reading : rows) {
                long owners = splits.stream()
                        .map(ColdFileGroupSplit.class::cast)
                        .filter(split -> split.keys().matcher().contains(Slices.utf8Slice(reading.maloId()), toEpochMicros(reading.from())))
                        .peek(split -> assertThat(split.files()).extracting(ColdSplit::path).as("split owning %s at %s", reading.maloId(), reading.from()).contains(file))
                        .count();
                assertThat(owners).as("splits owning %s at %s", reading.maloId(), reading.from()).isEqualTo(1);
            }
        });
    }

    private static List<ConnectorSplit> splits(ColdSplitPlanner planner, Table table, long snapshotId, TieringWatermark watermark, ColdRead read, long resolutionSplitRows)
    {
        try (ColdSplitStream stream = planner.splits(ConnectorIdentity.ofUser("test"), table, snapshotId, watermark, TupleDomain.all(), read, resolutionSplitRows)) {
            return stream.all();
        }
    }

    private List<ConnectorSplit> winners(ColdSplitPlanner planner, long snapshotId)
    {
        try (ColdSplitStream stream = planner.splits(ConnectorIdentity.ofUser("test"), table(), snapshotId, APRIL, TupleDomain.all(), ColdRead.WINNERS, ColdSplitPlanner.DEFAULT_RESOLUTION_SPLIT_ROWS)) {
            return stream.all();
        }
    }

    private static ColdSplitPlanner planner(DataSize targetSplitSize)
    {
        return new ColdSplitPlanner(targetSplitSize, TestingColdTable.FILE_SYSTEM_FACTORY, ParquetReaderOptions.defaultOptions());
    }

    private static Reading withVersion(Reading reading, BigInteger version)
    {
        return new Reading(reading.maloId(), reading.meloId(), reading.obisCode(), reading.sparte(), reading.from(), reading.to(), reading.value(), reading.unit(),
                reading.quality(), reading.resolution(), reading.sourceKind(), reading.sourceDetail(), reading.provenance(), version, reading.versionScope(),
                reading.recordedAt(), reading.balancingDay());
    }

    private Table table()
    {
        return coldTable.table();
    }

    private static List<String> paths(ColdSplitPlan plan)
    {
        return plan.splits().stream().map(ColdSplit::path).toList();
    }

    /** A split of all row groups: from the first split offset (after the magic bytes) to the end of the file. */
    private static ColdSplit wholeFile(DataFile file)
    {
        long start = file.splitOffsets().getFirst();
        return new ColdSplit(file.location(), start, file.fileSizeInBytes() - start, file.fileSizeInBytes(), file.recordCount());
    }

    private static TupleDomain<MeterstoreColumnHandle> maloIdIn(String... maloIds)
    {
        List<Object> values = Arrays.stream(maloIds).map(maloId -> (Object) Slices.utf8Slice(maloId)).toList();
        return TupleDomain.withColumnDomains(Map.of(MALO_ID, Domain.create(ValueSet.copyOf(VARCHAR, values), false)));
    }

    private static TupleDomain<MeterstoreColumnHandle> fromIn(String inclusiveStart, String exclusiveEnd)
    {
        Range range = Range.range(
                TIMESTAMP_TZ_MICROS,
                toTimestamp(toEpochMicros(Instant.parse(inclusiveStart))),
                true,
                toTimestamp(toEpochMicros(Instant.parse(exclusiveEnd))),
                false);
        return TupleDomain.withColumnDomains(Map.of(FROM, Domain.create(ValueSet.ofRanges(range), false)));
    }
}
