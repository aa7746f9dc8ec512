package io.meterstore.trino.cold;

import io.airlift.slice.Slices;
import io.airlift.units.DataSize;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.TieringWatermark;
import io.meterstore.trino.MeterstoreColumnHandle;
import io.trino.spi.connector.ConnectorSplit;
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
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static com.google.common.collect.ImmutableSet.toImmutableSet;
import static io.meterstore.trino.MeterstoreTypes.TIMESTAMP_TZ_MICROS;
import static io.meterstore.trino.MeterstoreTypes.columnHandle;
import static io.meterstore.trino.MeterstoreTypes.toEpochMicros;
import static io.meterstore.trino.MeterstoreTypes.toTimestamp;
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

    private final ColdSplitPlanner planner = new ColdSplitPlanner(DEFAULT_TARGET_SPLIT_SIZE);
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
        ColdSplitPlan plan = new ColdSplitPlanner(DataSize.ofBytes(1)).plan(table(), Optional.of(januarySnapshot), APRIL, TupleDomain.all());

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
        List<ConnectorSplit> splits = planner.planResolved(table(), Optional.of(lastSnapshot), APRIL, TupleDomain.all());
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

        List<ConnectorSplit> resolving = new ColdSplitPlanner(DataSize.ofBytes(1)).planResolved(table(), Optional.of(corrected), APRIL, TupleDomain.all());
        // January's file and its correction in one split, read whole; the version-1 file at its row groups, unresolved
        assertThat(resolving).filteredOn(ColdFileGroupSplit.class::isInstance)
                .extracting(split -> (Set<String>) ((ColdFileGroupSplit) split).files().stream().map(ColdSplit::path).collect(toImmutableSet()))
                .containsExactlyInAnyOrder(Set.of(january.location(), correctionFile.location()), Set.of(february.location()), Set.of(march.location()));
        assertThat(resolving).filteredOn(ColdSplit.class::isInstance)
                .extracting(split -> ((ColdSplit) split).start())
                .containsExactlyElementsOf(firstVersionsFile.splitOffsets());
        assertThat(firstVersionsFile.splitOffsets()).hasSizeGreaterThan(1);
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
