package io.meterstore.trino.write;

import io.airlift.log.Logger;
import io.meterstore.core.ColdFileRole;
import io.meterstore.core.ColdPartitions;
import io.meterstore.core.PartitionMonths;
import io.meterstore.core.Reading;
import io.meterstore.core.ResolutionRule;
import io.meterstore.core.TableColumns;
import io.meterstore.core.WatermarkReader.PinnedWatermark;
import io.meterstore.parquet.PositionDeleteFileWriter;
import io.meterstore.parquet.ResolvedMonthWriter;
import io.meterstore.trino.write.ColdRedeliveryLookup.ScopedKey;
import io.meterstore.trino.write.ColdRedeliveryLookup.StoredWinner;
import io.trino.spi.Page;
import io.trino.spi.connector.ConnectorSession;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.PartitionData;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import static com.google.common.base.Preconditions.checkState;
import static java.util.Objects.requireNonNull;

/**
 * The cold rows of one INSERT into one month of the resolved layout, which they keep resolved, so that
 * {@code readings} goes on reading the month's winners files without resolution: a new version that beats its key's
 * stored winner goes into a winners file, the stored winner is copied into a superseded file and deleted from its
 * winners file by an Iceberg position delete, committed with them ({@link ColdInsertCommit}); a new version that loses
 * goes into a superseded file. Every version stays in {@code readings_versions} exactly once, and Trino's Iceberg
 * connector, which applies the deletes too, reads the same rows.
 * <p>
 * Rows arrive in (malo_id, obis_code, "from", version) order and are decided in batches of whole keys (a key's new
 * versions must meet its stored winner together), each batch with one pruned lookup of its stored winners
 * ({@link ColdRedeliveryLookup#storedWinners}). What stays until the month ends is one row position per superseded
 * winner (8 bytes), from which each winners file's delete file is written, positions ascending.
 */
final class ResolvedMonthCorrection
{
    private static final Logger log = Logger.get(ResolvedMonthCorrection.class);
    // rows decided at once: one bounded batch and its lookup; a batch ends only where a key ends
    private static final int BATCH_ROWS = 8192;
    private static final int PAGE_ROWS = 4096;
    private final ColdRedeliveryLookup lookup;
    private final ConnectorSession session;
    private final Table table;
    private final PinnedWatermark pinned;
    private final YearMonth month;
    private final String namePrefix;
    private final ResolvedMonthWriter writer;
    // the table's columns: a stored winner copied into a superseded file keeps its attribute values
    private final TableColumns columns;
    private final List<Reading> batch = new ArrayList<>(BATCH_ROWS);
    // the positions each winners file of the month loses, by file location
    private final Map<String, Positions> deletedPositions = new TreeMap<>();
    private final List<DeleteFile> deleteFiles = new ArrayList<>();

    ResolvedMonthCorrection(ColdRedeliveryLookup lookup, ConnectorSession session, Table table, PinnedWatermark pinned, YearMonth month, String namePrefix, long targetFileSize)
    {
        this.lookup = requireNonNull(lookup, "lookup is null");
        this.session = requireNonNull(session, "session is null");
        this.table = requireNonNull(table, "table is null");
        this.pinned = requireNonNull(pinned, "pinned is null");
        requireNonNull(month, "month is null");
        this.namePrefix = requireNonNull(namePrefix, "namePrefix is null");
        this.month = month;
        this.writer = new ResolvedMonthWriter(table, month, namePrefix, targetFileSize);
        this.columns = TableColumns.of(table);
    }

    /**
     * Whether every live file of {@code month} in the pinned snapshot is of the resolved layout, as the reader decides it
     * (ColdSplitStream); a month with no file yet is resolved by the files written into it now.
     */
    static boolean resolved(Table table, PinnedWatermark pinned, YearMonth month)
    {
        if (pinned.snapshotId().isEmpty()) {
            return true;
        }
        try (CloseableIterable<FileScanTask> tasks = table.newScan()
                .useSnapshot(pinned.snapshotId().get())
                .filter(PartitionMonths.iceberg(month))
                .planFiles()) {
            return ColdFileRole.resolved(tasks);
        }
        catch (IOException e) {
            throw new UncheckedIOException("Failed to plan the files of Iceberg table '%s'".formatted(table.name()), e);
        }
    }

    /** Adds a row that follows every row added before in (malo_id, obis_code, "from", the key's other columns, version) order; none of them is stored yet. */
    void add(Reading reading)
            throws IOException
    {
        if (batch.size() >= BATCH_ROWS && !sameMergeKey(batch.getLast(), reading)) {
            decide();
        }
        batch.add(reading);
    }

    /** Decides the last batch and closes the month's files: its data files, and its delete files in {@code deletes}. */
    List<DataFile> finish(List<DeleteFile> deletes)
            throws IOException
    {
        decide();
        List<DataFile> files = writer.finish().all();
        int sequence = 0;
        for (Map.Entry<String, Positions> file : deletedPositions.entrySet()) {
            sequence++;
            // a delete file lies in the partition of the data file it deletes from, or Iceberg does not apply it
            deleteFiles.add(PositionDeleteFileWriter.write(table, file.getValue().partition(), ColdFileRole.POSITION_DELETES.fileName(namePrefix, sequence), file.getKey(), file.getValue().sorted()));
        }
        deletedPositions.clear();
        deletes.addAll(deleteFiles);
        return files;
    }

    /** Deletes every file written; none was committed. */
    void abort()
    {
        batch.clear();
        deletedPositions.clear();
        try {
            writer.abort();
        }
        finally {
            for (DeleteFile file : deleteFiles) {
                try {
                    table.io().deleteFile(file.location());
                }
                catch (RuntimeException e) {
                    log.warn(e, "Cannot delete uncommitted delete file '%s'; it is an orphan now", file.location());
                }
            }
            deleteFiles.clear();
        }
    }

    /** Splits the batch's rows, whole keys, into winners and superseded against the stored winners, and writes both. */
    private void decide()
            throws IOException
    {
        if (batch.isEmpty()) {
            return;
        }
        Map<ScopedKey, StoredWinner> stored = lookup.storedWinners(session, table, pinned, batch);
        List<Reading> winners = new ArrayList<>();
        List<Reading> superseded = new ArrayList<>();
        int start = 0;
        while (start < batch.size()) {
            int end = start + 1;
            while (end < batch.size() && sameMergeKey(batch.get(start), batch.get(end))) {
                end++;
            }
            List<Reading> keyRows = batch.subList(start, end);
            // a key delivered under two version scopes competes in each
            Map<String, Reading> bestByScope = new TreeMap<>();
            for (Reading reading : keyRows) {
                bestByScope.merge(reading.versionScope(), reading, (left, right) -> ResolutionRule.beats(right, left) ? right : left);
            }
            for (Reading reading : keyRows) {
                if (reading != bestByScope.get(reading.versionScope())) {
                    superseded.add(reading);
                    continue;
                }
                Optional<StoredWinner> winner = Optional.ofNullable(stored.get(ScopedKey.of(reading, columns)));
                if (winner.isPresent() && !ResolutionRule.beats(reading, winner.get().reading())) {
                    // an older version delivered late: it never showed in readings, and does not now
                    superseded.add(reading);
                    continue;
                }
                winners.add(reading);
                winner.ifPresent(previous -> {
                    // the superseded winner moves: a copy for readings_versions, a position delete for readings
                    superseded.add(previous.reading());
                    deletedPositions.computeIfAbsent(previous.dataFile(), _ -> new Positions(ColdPartitions.partition(table, month, columns.identityValues(previous.reading()))))
                            .add(previous.position());
                });
            }
            start = end;
        }
        batch.clear();
        // a batch's keys all follow the previous batch's, so each stream stays sorted across batches
        write(columns, winners, writer::writeWinners);
        superseded.sort(columns.sortOrder());
        write(columns, superseded, writer::writeSuperseded);
    }

    // every version scope of a merge key: the rows that arrive together
    private boolean sameMergeKey(Reading reading, Reading other)
    {
        return columns.sameMergeKey(reading, other);
    }

    private interface PageWriter
    {
        void write(Page page)
                throws IOException;
    }

    private static void write(TableColumns columns, List<Reading> readings, PageWriter pageWriter)
            throws IOException
    {
        for (int start = 0; start < readings.size(); start += PAGE_ROWS) {
            pageWriter.write(ReadingsPages.toPage(columns, readings.subList(start, Math.min(readings.size(), start + PAGE_ROWS))));
        }
    }

    /** Row positions of one data file, unboxed. */
    /** The positions one data file loses, and its partition: the month's, of its rows' identity columns' values. */
    private static final class Positions
    {
        private final PartitionData partition;
        private long[] values = new long[16];
        private int size;

        Positions(PartitionData partition)
        {
            this.partition = partition;
        }

        PartitionData partition()
        {
            return partition;
        }

        void add(long position)
        {
            if (size == values.length) {
                values = Arrays.copyOf(values, size * 2);
            }
            values[size++] = position;
        }

        long[] sorted()
        {
            checkState(size > 0, "no positions");
            long[] result = Arrays.copyOf(values, size);
            Arrays.sort(result);
            return result;
        }
    }
}
