package io.meterstore.trino.cold;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.Lists;
import io.airlift.slice.Slices;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.meterstore.trino.base.MeterstoreTypes;
import io.trino.parquet.ParquetReaderOptions;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.Range;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.predicate.ValueSet;
import org.apache.iceberg.DataFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_COLD_READ_FAILED;
import static io.meterstore.trino.base.MeterstoreTypes.TIMESTAMP_TZ_MICROS;
import static io.meterstore.trino.base.MeterstoreTypes.columnHandle;
import static io.meterstore.trino.base.MeterstoreTypes.toEpochMicros;
import static io.meterstore.trino.base.MeterstoreTypes.toTimestamp;
import static io.meterstore.trino.cold.TestingColdTable.FILE_SYSTEM_FACTORY;
import static io.meterstore.trino.cold.TestingReadings.maloId;
import static io.meterstore.trino.cold.TestingReadings.readings;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static io.trino.testing.TestingConnectorSession.SESSION;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS;

@TestInstance(PER_CLASS)
final class TestColdPageSource
{
    private static final List<MeterstoreColumnHandle> ALL_COLUMNS = MeterstoreTypes.columnHandles();
    private static final MeterstoreColumnHandle MALO_ID = columnHandle(ReadingsColumn.MALO_ID);
    private static final MeterstoreColumnHandle FROM = columnHandle(ReadingsColumn.FROM);
    private static final int ROW_GROUP_ROWS = 50;
    private static final Instant FIRST_FROM = Instant.parse("2024-01-10T00:00:00Z");

    private final ColdPageSourceProvider provider = new ColdPageSourceProvider(FILE_SYSTEM_FACTORY, ParquetReaderOptions.defaultOptions());
    private TestingColdTable coldTable;
    // six MaLos with gaps (3 and 6 are missing), two OBIS codes, half a day each: 576 rows in 12 row groups that straddle MaLos
    private List<Reading> readings;
    private DataFile file;
    // one MaLo, one OBIS code, 200 quarter hours: row groups with disjoint "from" ranges
    private List<Reading> series;
    private DataFile seriesFile;

    @BeforeAll
    void setUp()
    {
        coldTable = TestingColdTable.create("cold_page_source");
        readings = readings(List.of(maloId(1), maloId(2), maloId(4), maloId(5), maloId(7), maloId(8)), List.of("1-1:1.29.0", "1-1:2.29.0"), FIRST_FROM, 48);
        file = coldTable.writeDataFile(readings, ROW_GROUP_ROWS);
        series = readings(List.of(maloId(9)), List.of("1-1:1.29.0"), FIRST_FROM, 200);
        seriesFile = coldTable.writeDataFile(series, ROW_GROUP_ROWS);
    }

    @AfterAll
    void tearDown()
    {
        coldTable.close();
    }

    @Test
    void testReadsEveryColumnExactly()
    {
        List<List<Object>> rows = ColdRows.drain(provider.createPageSource(SESSION, wholeFile(file), ALL_COLUMNS, TupleDomain.all()), ALL_COLUMNS);

        // nulls, negative full-precision quantities, 20-digit versions, microseconds, dates, non-ASCII text: all exact
        assertThat(ColdRows.readings(rows)).containsExactlyElementsOf(readings);
        assertThat(readings).anyMatch(reading -> reading.meloId().isEmpty())
                .anyMatch(reading -> reading.sourceDetail().isEmpty())
                .anyMatch(reading -> reading.provenance().isEmpty())
                .anyMatch(reading -> reading.value().signum() < 0)
                .anyMatch(reading -> reading.version().toString().length() == 20);
    }

    @Test
    void testReadsColumnsInRequestedOrder()
    {
        List<List<Object>> all = ColdRows.drain(provider.createPageSource(SESSION, wholeFile(file), ALL_COLUMNS, TupleDomain.all()), ALL_COLUMNS);
        List<MeterstoreColumnHandle> columns = List.of(
                columnHandle(ReadingsColumn.RECORDED_AT),
                MALO_ID,
                columnHandle(ReadingsColumn.VERSION),
                columnHandle(ReadingsColumn.PROVENANCE),
                MALO_ID,
                columnHandle(ReadingsColumn.BALANCING_DAY),
                columnHandle(ReadingsColumn.VALUE));

        List<List<Object>> rows = ColdRows.drain(provider.createPageSource(SESSION, wholeFile(file), columns, TupleDomain.all()), columns);

        assertThat(rows).containsExactlyElementsOf(all.stream().map(row -> ColdRows.project(row, columns)).toList());
    }

    @Test
    void testCountWithoutColumns()
    {
        // the manifest's record count: the file is not opened
        assertThat(ColdRows.countPositions(provider.createPageSource(SESSION, wholeFile(file), List.of(), TupleDomain.all())))
                .isEqualTo(readings.size());
        // split by row group: each split counts its own row groups from the footer
        long positions = 0;
        for (ColdSplit split : rowGroupSplits(file)) {
            positions += ColdRows.countPositions(provider.createPageSource(SESSION, split, List.of(), TupleDomain.all()));
        }
        assertThat(positions).isEqualTo(readings.size());
        // a predicate still skips row groups without reading a column
        assertThat(ColdRows.countPositions(provider.createPageSource(SESSION, wholeFile(file), List.of(), maloIdIs(maloId(1)))))
                .isEqualTo(rowsOfRowGroupsHolding(maloId(1)));
    }

    @Test
    void testEachRowGroupIsReadByExactlyOneSplit()
    {
        List<ColdSplit> rowGroupSplits = rowGroupSplits(file);
        assertThat(rowGroupSplits).hasSize(readings.size() / ROW_GROUP_ROWS + 1);
        assertThat(readAll(rowGroupSplits)).containsExactlyElementsOf(readings);

        // ranges that ignore row-group boundaries still read every row group once: the one whose start they contain
        List<ColdSplit> byteRanges = new ArrayList<>();
        long rangeLength = file.fileSizeInBytes() / 37;
        for (long start = 0; start < file.fileSizeInBytes(); start += rangeLength) {
            byteRanges.add(new ColdSplit(file.location(), start, Math.min(rangeLength, file.fileSizeInBytes() - start), file.fileSizeInBytes(), file.recordCount()));
        }
        assertThat(byteRanges).hasSizeGreaterThan(rowGroupSplits.size());
        assertThat(readAll(byteRanges)).containsExactlyElementsOf(readings);
    }

    @Test
    void testMaloIdPredicateSkipsRowGroups()
    {
        ConnectorPageSource source = provider.createPageSource(SESSION, wholeFile(file), ALL_COLUMNS, maloIdIs(maloId(4)));
        List<Reading> read = ColdRows.readings(ColdRows.drain(source, ALL_COLUMNS));

        // rows are not filtered here, but only the row groups holding MaLo 4 are read
        assertThat(read).containsAll(readings.stream().filter(reading -> reading.maloId().equals(maloId(4))).toList());
        assertThat(source.getCompletedPositions()).hasValue(rowsOfRowGroupsHolding(maloId(4)));
        assertThat((long) read.size()).isEqualTo(rowsOfRowGroupsHolding(maloId(4))).isLessThan(readings.size());
        assertThat(source.getCompletedBytes()).isPositive();
        assertThat(source.getReadTimeNanos()).isPositive();
    }

    @Test
    void testAbsentMaloIdWithinStatisticsSkipsEveryRowGroup()
    {
        // MaLo 3 lies between the minimum and maximum of the row group where MaLo 2 ends and MaLo 4 begins:
        // the statistics cannot exclude it, the bloom filter and dictionary can
        assertThat(rowsOfRowGroupsSpanning(maloId(3))).isPositive();

        ConnectorPageSource source = provider.createPageSource(SESSION, wholeFile(file), ALL_COLUMNS, maloIdIs(maloId(3)));
        assertThat(ColdRows.drain(source, ALL_COLUMNS)).isEmpty();
        assertThat(source.getCompletedPositions()).hasValue(0);
    }

    @Test
    void testFromRangeSkipsRowGroups()
    {
        Instant from = FIRST_FROM.plus(Duration.ofMinutes(15 * 120));
        TupleDomain<MeterstoreColumnHandle> fromOnwards = TupleDomain.withColumnDomains(Map.of(
                FROM, Domain.create(ValueSet.ofRanges(Range.greaterThanOrEqual(TIMESTAMP_TZ_MICROS, toTimestamp(toEpochMicros(from)))), false)));

        ConnectorPageSource source = provider.createPageSource(SESSION, wholeFile(seriesFile), ALL_COLUMNS, fromOnwards);
        List<Reading> read = ColdRows.readings(ColdRows.drain(source, ALL_COLUMNS));

        // row groups of 50: interval 120 lies in the third; the first two are skipped
        assertThat(read).containsExactlyElementsOf(series.subList(100, 200));
    }

    @Test
    void testColumnMissingFromFileReadsAsNull()
    {
        List<ReadingsColumn> written = Arrays.stream(ReadingsColumn.values())
                .filter(column -> column != ReadingsColumn.PROVENANCE && column != ReadingsColumn.SOURCE_DETAIL)
                .toList();
        DataFile olderFile = coldTable.writeDataFile(series.subList(0, 10), ROW_GROUP_ROWS, written, true);

        List<Reading> read = ColdRows.readings(ColdRows.drain(provider.createPageSource(SESSION, wholeFile(olderFile), ALL_COLUMNS, TupleDomain.all()), ALL_COLUMNS));

        assertThat(read).containsExactlyElementsOf(series.subList(0, 10).stream()
                .map(reading -> new Reading(reading.maloId(), reading.meloId(), reading.obisCode(), reading.sparte(), reading.from(), reading.to(), reading.value(), reading.unit(),
                        reading.quality(), reading.resolution(), reading.sourceKind(), Optional.empty(), Optional.empty(), reading.version(), reading.versionScope(),
                        reading.recordedAt(), reading.balancingDay()))
                .toList());
    }

    @Test
    void testFileWithoutFieldIdsIsReadByName()
    {
        DataFile foreignFile = coldTable.writeDataFile(series.subList(0, 10), ROW_GROUP_ROWS, List.of(ReadingsColumn.values()), false);

        assertThat(ColdRows.readings(ColdRows.drain(provider.createPageSource(SESSION, wholeFile(foreignFile), ALL_COLUMNS, TupleDomain.all()), ALL_COLUMNS)))
                .containsExactlyElementsOf(series.subList(0, 10));
    }

    @Test
    void testNonePredicateReadsNothing()
    {
        assertThat(ColdRows.drain(provider.createPageSource(SESSION, wholeFile(file), ALL_COLUMNS, TupleDomain.none()), ALL_COLUMNS)).isEmpty();
    }

    @Test
    void testMissingFileNamesTheFile()
    {
        String missing = file.location().replace(".parquet", "-missing.parquet");
        assertThatThrownBy(() -> provider.createPageSource(SESSION, new ColdSplit(missing, 0, 100, 100, 1), ALL_COLUMNS, TupleDomain.all()))
                .isInstanceOfSatisfying(TrinoException.class, e -> assertThat(e.getErrorCode()).isEqualTo(METERSTORE_COLD_READ_FAILED.toErrorCode()))
                .hasMessage(("Data file '%s' of the pinned snapshot does not exist: it was removed after the query planned (snapshot expiry or orphan-file cleanup), or by hand; "
                        + "run the query again, and if it fails again restore the file from a backup (the archiver's 'status' lists every missing data file)").formatted(missing));
    }

    private List<Reading> readAll(List<ColdSplit> splits)
    {
        List<Reading> read = new ArrayList<>();
        for (ColdSplit split : splits) {
            read.addAll(ColdRows.readings(ColdRows.drain(provider.createPageSource(SESSION, split, ALL_COLUMNS, TupleDomain.all()), ALL_COLUMNS)));
        }
        return read;
    }

    private static TupleDomain<MeterstoreColumnHandle> maloIdIs(String maloId)
    {
        return TupleDomain.withColumnDomains(Map.of(MALO_ID, Domain.singleValue(VARCHAR, Slices.utf8Slice(maloId))));
    }

    /** The rows of the row groups (chunks of {@link #ROW_GROUP_ROWS} in file order) that hold {@code maloId}. */
    private long rowsOfRowGroupsHolding(String maloId)
    {
        long rows = 0;
        for (List<Reading> rowGroup : Lists.partition(readings, ROW_GROUP_ROWS)) {
            if (rowGroup.stream().anyMatch(reading -> reading.maloId().equals(maloId))) {
                rows += rowGroup.size();
            }
        }
        return rows;
    }

    /** The rows of the row groups whose malo_id minimum and maximum enclose {@code maloId}. */
    private long rowsOfRowGroupsSpanning(String maloId)
    {
        long rows = 0;
        for (List<Reading> rowGroup : Lists.partition(readings, ROW_GROUP_ROWS)) {
            if (rowGroup.getFirst().maloId().compareTo(maloId) < 0 && rowGroup.getLast().maloId().compareTo(maloId) > 0) {
                rows += rowGroup.size();
            }
        }
        return rows;
    }

    private static ColdSplit wholeFile(DataFile file)
    {
        return new ColdSplit(file.location(), 0, file.fileSizeInBytes(), file.fileSizeInBytes(), file.recordCount());
    }

    /** One split per row group, from the split offsets the manifest records. */
    private static List<ColdSplit> rowGroupSplits(DataFile file)
    {
        List<Long> offsets = file.splitOffsets();
        ImmutableList.Builder<ColdSplit> splits = ImmutableList.builder();
        for (int index = 0; index < offsets.size(); index++) {
            long end = index + 1 < offsets.size() ? offsets.get(index + 1) : file.fileSizeInBytes();
            splits.add(new ColdSplit(file.location(), offsets.get(index), end - offsets.get(index), file.fileSizeInBytes(), file.recordCount()));
        }
        return splits.build();
    }
}
