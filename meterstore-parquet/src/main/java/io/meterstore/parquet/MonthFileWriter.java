package io.meterstore.parquet;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import io.meterstore.core.ColdFileRole;
import io.meterstore.core.ColdPartitions;
import io.meterstore.core.TableColumns;
import io.trino.spi.Page;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.Table;

import java.io.IOException;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * Writes the sorted rows of one month into data files of the month's partitions ({@link ColdPartitions}: one per value of
 * the table's identity columns, the month alone for a table without them), starting a new file of a partition once one
 * reaches the table's target size. Each partition's files follow each other in sort order, so each is sorted and their
 * key ranges do not overlap. A table with identity columns keeps one file open per partition the month's rows reach,
 * each buffering a row group. Files of a {@link ColdFileRole} carry it in their names and footers; files without one are
 * the plain sorted files a month that is not resolved takes.
 */
public final class MonthFileWriter
{
    private final Table table;
    private final YearMonth month;
    private final String namePrefix;
    private final Optional<ColdFileRole> role;
    private final long targetFileSize;
    // the channels of the table's identity columns: none for a table without them, whose month is one partition
    private final int[] identityChannels;
    private final List<DataFile> finished = new ArrayList<>();
    // the open file of each partition written to, by its identity columns' values
    private final Map<List<String>, ReadingsFileWriter> open = new LinkedHashMap<>();
    private int sequence;

    /** A writer of plain sorted files, with no role in the resolved layout. */
    public MonthFileWriter(Table table, YearMonth month, String namePrefix, long targetFileSize)
    {
        this(table, month, namePrefix, Optional.empty(), targetFileSize);
    }

    public MonthFileWriter(Table table, YearMonth month, String namePrefix, Optional<ColdFileRole> role, long targetFileSize)
    {
        this.table = requireNonNull(table, "table is null");
        this.month = requireNonNull(month, "month is null");
        this.namePrefix = requireNonNull(namePrefix, "namePrefix is null");
        this.role = requireNonNull(role, "role is null");
        checkArgument(targetFileSize > 0, "targetFileSize must be positive");
        this.targetFileSize = targetFileSize;
        this.identityChannels = TableColumns.of(table).identityChannels();
    }

    /** Whether this writer has written no row yet. */
    public boolean isEmpty()
    {
        return open.isEmpty() && finished.isEmpty();
    }

    /** Rows of every column, sorted; a table's rows of several partitions may come in one page. */
    public void write(Page page)
            throws IOException
    {
        if (page.getPositionCount() == 0) {
            return;
        }
        if (identityChannels.length == 0) {
            write(List.of(), page);
            return;
        }
        // the rows of each partition, in the page's order
        Map<List<String>, Positions> partitions = new LinkedHashMap<>();
        for (int position = 0; position < page.getPositionCount(); position++) {
            partitions.computeIfAbsent(identityValues(page, position), _ -> new Positions(page.getPositionCount())).add(position);
        }
        if (partitions.size() == 1) {
            write(partitions.keySet().iterator().next(), page);
            return;
        }
        for (Map.Entry<List<String>, Positions> partition : partitions.entrySet()) {
            Positions rows = partition.getValue();
            write(partition.getKey(), page.getPositions(rows.positions, 0, rows.count));
        }
    }

    private static final class Positions
    {
        private final int[] positions;
        private int count;

        Positions(int capacity)
        {
            positions = new int[capacity];
        }

        void add(int position)
        {
            positions[count++] = position;
        }
    }

    private void write(List<String> identityValues, Page page)
            throws IOException
    {
        ReadingsFileWriter writer = open.get(identityValues);
        if (writer == null) {
            sequence++;
            String fileName = role.map(fileRole -> fileRole.fileName(namePrefix, sequence)).orElse("%s-%05d.parquet".formatted(namePrefix, sequence));
            Map<String, String> footer = role.map(fileRole -> ImmutableMap.of(ColdFileRole.FOOTER_KEY, fileRole.label())).orElse(ImmutableMap.of());
            writer = new ReadingsFileWriter(table, ColdPartitions.partition(table, month, identityValues), fileName, footer);
            open.put(identityValues, writer);
        }
        writer.write(page);
        if (writer.estimatedBytes() >= targetFileSize) {
            open.remove(identityValues);
            finished.add(writer.finish());
        }
    }

    private List<String> identityValues(Page page, int position)
    {
        String[] values = new String[identityChannels.length];
        for (int index = 0; index < identityChannels.length; index++) {
            // identity columns are required: every row holds a value
            values[index] = VARCHAR.getSlice(page.getBlock(identityChannels[index]), position).toStringUtf8();
        }
        return List.of(values);
    }

    /** Closes the open files; the month's files, none if it had no rows. */
    public List<DataFile> finish()
            throws IOException
    {
        List<ReadingsFileWriter> writers = List.copyOf(open.values());
        open.clear();
        for (ReadingsFileWriter writer : writers) {
            finished.add(writer.finish());
        }
        return ImmutableList.copyOf(finished);
    }

    /** Deletes every file this writer wrote: none of them was committed. */
    public void abort()
    {
        open.values().forEach(ReadingsFileWriter::abort);
        open.clear();
        for (DataFile file : finished) {
            table.io().deleteFile(file.location());
        }
        finished.clear();
    }
}
