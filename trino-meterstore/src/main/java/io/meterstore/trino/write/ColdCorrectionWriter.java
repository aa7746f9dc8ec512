package io.meterstore.trino.write;

import io.airlift.slice.Slice;
import io.airlift.slice.Slices;
import io.meterstore.core.ColdFileRole;
import io.meterstore.core.CorrectionCommitter;
import io.meterstore.core.CorrectionCommitter.Committed;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.VersionRule;
import io.meterstore.core.WatermarkReader.PinnedWatermark;
import io.meterstore.parquet.MonthFileWriter;
import io.meterstore.parquet.PositionDeleteFileWriter;
import io.meterstore.parquet.ResolvedMonthWriter;
import io.meterstore.trino.MeterstoreColumnHandle;
import io.meterstore.trino.MeterstoreTypes;
import io.meterstore.trino.cold.ColdPageSourceProvider;
import io.meterstore.trino.cold.ColdPageSourceProvider.ReadOptions;
import io.meterstore.trino.cold.ColdSplit;
import io.meterstore.trino.cold.ColdSplitPlanner;
import io.trino.spi.Page;
import io.trino.spi.TrinoException;
import io.trino.spi.block.Block;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.SourcePage;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.Range;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.predicate.ValueSet;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionData;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.util.PropertyUtil;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

import static com.google.common.collect.ImmutableSet.toImmutableSet;
import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_UNSUPPORTED_TABLE_LAYOUT;
import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_WRITE_FAILED;
import static io.meterstore.trino.MeterstoreTypes.TIMESTAMP_TZ_MICROS;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * Writes the cold rows of one INSERT, late corrections below W, and commits them in one snapshot that republishes W.
 * <p>
 * A month in the resolved layout stays resolved, so that {@code readings} keeps reading its winners files without
 * resolution: a new version that beats the key's stored winner goes into a winners file, the stored winner is copied
 * into a superseded file and deleted from its winners file by an Iceberg position delete, in the same commit; a new
 * version that loses goes into a superseded file. Every version stays in {@code readings_versions} exactly once, and
 * Trino's Iceberg connector, which applies the deletes too, reads the same rows. A month that is not resolved (a file
 * archived before the layout, or written by another tool) takes plain sorted files, and is resolved as it is read.
 * <p>
 * Callers hold the archival fence and the cold-write lock, so no other MeterStore writer commits in between; the
 * commit still validates that the data files it deletes from are unchanged since the pinned snapshot.
 */
final class ColdCorrectionWriter
{
    private static final int PAGE_ROWS = 4096;
    private static final List<MeterstoreColumnHandle> ALL_COLUMNS = MeterstoreTypes.columnHandles();
    private static final List<ReadingsColumn> ALL_READINGS_COLUMNS = List.of(ReadingsColumn.values());
    private static final Comparator<Reading> SORT_ORDER = Comparator.comparing(Reading::maloId)
            .thenComparing(Reading::obisCode)
            .thenComparing(Reading::from)
            .thenComparing(Reading::version);

    private final ColdSplitPlanner coldSplitPlanner;
    private final ColdPageSourceProvider coldPageSources;
    private final CorrectionCommitter committer;

    ColdCorrectionWriter(ColdSplitPlanner coldSplitPlanner, ColdPageSourceProvider coldPageSources, CorrectionCommitter committer)
    {
        this.coldSplitPlanner = requireNonNull(coldSplitPlanner, "coldSplitPlanner is null");
        this.coldPageSources = requireNonNull(coldPageSources, "coldPageSources is null");
        this.committer = requireNonNull(committer, "committer is null");
    }

    /** A merge key within its version scope: the versions that compete. */
    private record Key(String maloId, String obisCode, Instant from, String versionScope)
    {
        static Key of(Reading reading)
        {
            return new Key(reading.maloId(), reading.obisCode(), reading.from(), reading.versionScope());
        }
    }

    /** A stored winner and where it lives. */
    private record StoredWinner(Reading reading, String dataFile, long position) {}

    /**
     * Writes and commits {@code cold}, versions none of which the pinned snapshot holds yet (the caller checked).
     * The caller owns nothing on failure: every file written here is deleted unless the commit's outcome is unknown.
     */
    Committed write(ConnectorSession session, Table table, PinnedWatermark pinned, List<Reading> cold, String namePrefix)
            throws IOException
    {
        long targetFileSize = PropertyUtil.propertyAsLong(table.properties(), TableProperties.WRITE_TARGET_FILE_SIZE_BYTES, IcebergTableSpec.TARGET_FILE_SIZE_BYTES);
        Map<YearMonth, List<Reading>> byMonth = new TreeMap<>();
        for (Reading reading : cold) {
            byMonth.computeIfAbsent(YearMonth.from(reading.from().atOffset(ZoneOffset.UTC)), month -> new ArrayList<>()).add(reading);
        }
        // every file is listed here as soon as it is complete, so that a failure deletes it
        List<DataFile> dataFiles = new ArrayList<>();
        List<DeleteFile> deleteFiles = new ArrayList<>();
        try {
            for (Map.Entry<YearMonth, List<Reading>> month : byMonth.entrySet()) {
                List<Reading> rows = month.getValue().stream().sorted(SORT_ORDER).toList();
                String monthPrefix = namePrefix + "-" + month.getKey();
                if (resolved(table, pinned, month.getKey())) {
                    writeResolved(session, table, pinned, month.getKey(), rows, monthPrefix, targetFileSize, dataFiles, deleteFiles);
                }
                else {
                    writePlain(table, month.getKey(), rows, monthPrefix, targetFileSize, dataFiles);
                }
            }
            return committer.commit(table, dataFiles, deleteFiles, pinned.snapshotId());
        }
        catch (CommitStateUnknownException e) {
            // the files may be part of a snapshot now: keep them; running the statement again finds out and skips what landed
            throw e;
        }
        catch (IOException | RuntimeException e) {
            deleteQuietly(table, dataFiles.stream().map(DataFile::location).toList(), e);
            deleteQuietly(table, deleteFiles.stream().map(DeleteFile::location).toList(), e);
            throw e;
        }
    }

    /**
     * Whether every live file of the month in the pinned snapshot is of the resolved layout, as the reader decides it
     * (ColdSplitStream); a month with no file yet is resolved by the files written now.
     */
    private static boolean resolved(Table table, PinnedWatermark pinned, YearMonth month)
    {
        if (pinned.snapshotId().isEmpty()) {
            return true;
        }
        Instant start = month.atDay(1).atStartOfDay().toInstant(ZoneOffset.UTC);
        Instant end = month.plusMonths(1).atDay(1).atStartOfDay().toInstant(ZoneOffset.UTC);
        try (CloseableIterable<FileScanTask> tasks = table.newScan()
                .useSnapshot(pinned.snapshotId().get())
                .filter(Expressions.and(
                        Expressions.greaterThanOrEqual(ReadingsColumn.FROM.columnName(), MeterstoreTypes.toEpochMicros(start)),
                        Expressions.lessThan(ReadingsColumn.FROM.columnName(), MeterstoreTypes.toEpochMicros(end))))
                .planFiles()) {
            for (FileScanTask task : tasks) {
                if (ColdFileRole.of(task.file().location()).filter(role -> role != ColdFileRole.POSITION_DELETES).isEmpty()) {
                    return false;
                }
                for (DeleteFile delete : task.deletes()) {
                    if (!ColdFileRole.of(delete.location()).equals(Optional.of(ColdFileRole.POSITION_DELETES))) {
                        return false;
                    }
                }
            }
            return true;
        }
        catch (IOException e) {
            throw new UncheckedIOException("Failed to plan the files of Iceberg table '%s'".formatted(table.name()), e);
        }
    }

    private static void writePlain(Table table, YearMonth month, List<Reading> rows, String prefix, long targetFileSize, List<DataFile> dataFiles)
            throws IOException
    {
        // sorted rows, one writer per month partition: each file is sorted by (malo_id, obis_code, "from", version) and says so
        MonthFileWriter writer = new MonthFileWriter(table, MonthFileWriter.monthPartition(table, month), prefix, targetFileSize);
        try {
            writeSorted(rows, writer::write);
            dataFiles.addAll(writer.finish());
        }
        catch (IOException | RuntimeException e) {
            writer.abort();
            throw e;
        }
    }

    private void writeResolved(
            ConnectorSession session,
            Table table,
            PinnedWatermark pinned,
            YearMonth month,
            List<Reading> rows,
            String prefix,
            long targetFileSize,
            List<DataFile> dataFiles,
            List<DeleteFile> deleteFiles)
            throws IOException
    {
        Map<Key, StoredWinner> stored = storedWinners(session, table, pinned, rows);
        List<Reading> winners = new ArrayList<>();
        List<Reading> superseded = new ArrayList<>();
        Map<String, List<Long>> deletedPositions = new TreeMap<>();
        // the rows of one key are adjacent in sort order; its best new version competes with the stored winner
        int start = 0;
        while (start < rows.size()) {
            Key key = Key.of(rows.get(start));
            int end = start;
            Reading best = rows.get(start);
            List<Reading> keyRows = new ArrayList<>();
            while (end < rows.size() && rows.get(end).maloId().equals(key.maloId()) && rows.get(end).obisCode().equals(key.obisCode()) && rows.get(end).from().equals(key.from())) {
                keyRows.add(rows.get(end));
                end++;
            }
            // a key delivered under two version scopes competes in each
            Map<String, Reading> bestByScope = new TreeMap<>();
            for (Reading reading : keyRows) {
                bestByScope.merge(reading.versionScope(), reading, (left, right) -> VersionRule.beats(right, left) ? right : left);
            }
            for (Reading reading : keyRows) {
                Reading scopeBest = bestByScope.get(reading.versionScope());
                if (reading != scopeBest) {
                    superseded.add(reading);
                    continue;
                }
                Optional<StoredWinner> winner = Optional.ofNullable(stored.get(Key.of(reading)));
                if (winner.isPresent() && !VersionRule.beats(reading, winner.get().reading())) {
                    // an older version delivered late: it never showed in readings, and does not now
                    superseded.add(reading);
                    continue;
                }
                winners.add(reading);
                winner.ifPresent(previous -> {
                    // the superseded winner moves: a copy for readings_versions, a position delete for readings
                    superseded.add(previous.reading());
                    deletedPositions.computeIfAbsent(previous.dataFile(), file -> new ArrayList<>()).add(previous.position());
                });
            }
            start = end;
        }

        // a winners file of this month lies in this month's partition, as its deletes must
        PartitionData partition = MonthFileWriter.monthPartition(table, month);
        ResolvedMonthWriter writer = new ResolvedMonthWriter(table, partition, prefix, targetFileSize);
        try {
            writeSorted(winners, writer::writeWinners);
            writeSorted(superseded, writer::writeSuperseded);
            dataFiles.addAll(writer.finish().all());
        }
        catch (IOException | RuntimeException e) {
            writer.abort();
            throw e;
        }
        int sequence = 0;
        for (Map.Entry<String, List<Long>> file : deletedPositions.entrySet()) {
            long[] positions = file.getValue().stream().mapToLong(Long::longValue).sorted().toArray();
            sequence++;
            deleteFiles.add(PositionDeleteFileWriter.write(table, partition, ColdFileRole.POSITION_DELETES.fileName(prefix, sequence), file.getKey(), positions));
        }
    }

    private interface PageWriter
    {
        void write(Page page)
                throws IOException;
    }

    private static void writeSorted(List<Reading> readings, PageWriter writer)
            throws IOException
    {
        List<Reading> sorted = readings.stream().sorted(SORT_ORDER).toList();
        for (int start = 0; start < sorted.size(); start += PAGE_ROWS) {
            writer.write(ReadingsPages.toPage(sorted.subList(start, Math.min(sorted.size(), start + PAGE_ROWS))));
        }
    }

    /**
     * The live winner of every key of {@code rows} in the month's winners files, with its file and row position: read
     * from the pinned snapshot, position deletes applied, row groups pruned by the malo_ids and "from" range involved.
     */
    private Map<Key, StoredWinner> storedWinners(ConnectorSession session, Table table, PinnedWatermark pinned, List<Reading> rows)
    {
        Set<Key> wanted = rows.stream().map(Key::of).collect(toImmutableSet());
        Set<Slice> maloIds = rows.stream().map(reading -> Slices.utf8Slice(reading.maloId())).collect(toImmutableSet());
        Instant minFrom = rows.stream().map(Reading::from).min(Instant::compareTo).orElseThrow();
        Instant maxFrom = rows.stream().map(Reading::from).max(Instant::compareTo).orElseThrow();
        TupleDomain<MeterstoreColumnHandle> constraint = TupleDomain.withColumnDomains(Map.of(
                MeterstoreTypes.columnHandle(ReadingsColumn.MALO_ID), Domain.multipleValues(VARCHAR, List.copyOf(maloIds)),
                MeterstoreTypes.columnHandle(ReadingsColumn.FROM), Domain.create(ValueSet.ofRanges(Range.range(TIMESTAMP_TZ_MICROS,
                        MeterstoreTypes.toTimestamp(MeterstoreTypes.toEpochMicros(minFrom)), true,
                        MeterstoreTypes.toTimestamp(MeterstoreTypes.toEpochMicros(maxFrom)), true)), false)));
        Map<Key, StoredWinner> stored = new HashMap<>();
        for (ColdSplit split : coldSplitPlanner.plan(table, pinned.snapshotId(), pinned.watermark(), constraint).splits()) {
            if (!ColdFileRole.of(split.path()).equals(Optional.of(ColdFileRole.WINNERS))) {
                continue;
            }
            try (ConnectorPageSource source = coldPageSources.createPageSource(session, split, ALL_COLUMNS, constraint, ReadOptions.ROW_POSITIONS)) {
                while (!source.isFinished()) {
                    SourcePage page = source.getNextSourcePage();
                    if (page == null) {
                        continue;
                    }
                    Map<ReadingsColumn, Block> blocks = ReadingsPages.blocks(ALL_READINGS_COLUMNS, page::getBlock);
                    Block positions = page.getBlock(ALL_COLUMNS.size());
                    for (int position = 0; position < page.getPositionCount(); position++) {
                        Reading reading = ReadingsPages.read(blocks, position, Instant.EPOCH);
                        Key key = Key.of(reading);
                        if (!wanted.contains(key)) {
                            continue;
                        }
                        StoredWinner winner = new StoredWinner(reading, split.path(), BIGINT.getLong(positions, position));
                        StoredWinner previous = stored.putIfAbsent(key, winner);
                        if (previous != null) {
                            throw new TrinoException(METERSTORE_UNSUPPORTED_TABLE_LAYOUT,
                                    "Reading %s has a live row in two winners files of table '%s' ('%s' and '%s'), which the resolved layout rules out: the month was changed by another tool; rewrite it (rewrite_data_files) and run the statement again"
                                            .formatted(RowDescription.describe(reading), table.name(), previous.dataFile(), split.path()));
                        }
                    }
                }
            }
            catch (IOException e) {
                throw new TrinoException(METERSTORE_WRITE_FAILED, "Reading Iceberg data file '%s' of '%s' failed: %s".formatted(split.path(), table.name(), e.getMessage()), e);
            }
        }
        return stored;
    }

    private static void deleteQuietly(Table table, List<String> locations, Throwable failure)
    {
        for (String location : locations) {
            try {
                table.io().deleteFile(location);
            }
            catch (RuntimeException e) {
                failure.addSuppressed(e);
            }
        }
    }
}
