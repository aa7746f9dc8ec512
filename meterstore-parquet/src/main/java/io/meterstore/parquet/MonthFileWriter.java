package io.meterstore.parquet;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import io.meterstore.core.ColdFileRole;
import io.trino.spi.Page;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.PartitionData;
import org.apache.iceberg.Table;

import java.io.IOException;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * Writes the sorted rows of one month partition into data files, starting a new file once one reaches the table's
 * target size. Files follow each other in sort order, so each is sorted and their key ranges do not overlap. Files of a
 * {@link ColdFileRole} carry it in their names and footers; files without one are the plain sorted files a month that
 * is not resolved takes.
 */
public final class MonthFileWriter
{
    private final Table table;
    private final PartitionData partition;
    private final String namePrefix;
    private final Optional<ColdFileRole> role;
    private final long targetFileSize;
    private final List<DataFile> finished = new ArrayList<>();
    private Optional<ReadingsFileWriter> current = Optional.empty();
    private int sequence;

    /** A writer of plain sorted files, with no role in the resolved layout. */
    public MonthFileWriter(Table table, PartitionData partition, String namePrefix, long targetFileSize)
    {
        this(table, partition, namePrefix, Optional.empty(), targetFileSize);
    }

    public MonthFileWriter(Table table, PartitionData partition, String namePrefix, Optional<ColdFileRole> role, long targetFileSize)
    {
        this.table = requireNonNull(table, "table is null");
        this.partition = requireNonNull(partition, "partition is null");
        this.namePrefix = requireNonNull(namePrefix, "namePrefix is null");
        this.role = requireNonNull(role, "role is null");
        checkArgument(targetFileSize > 0, "targetFileSize must be positive");
        this.targetFileSize = targetFileSize;
    }

    /** The partition of one month of "from" in a readings table, whose spec IcebergTableSpec.verify checked is exactly month("from"). */
    public static PartitionData monthPartition(Table table, YearMonth month)
    {
        // months since 1970-01
        PartitionData partition = new PartitionData(table.spec().partitionType());
        partition.set(0, (month.getYear() - 1970) * 12 + month.getMonthValue() - 1);
        return partition;
    }

    /** Whether this writer has written no row yet. */
    public boolean isEmpty()
    {
        return current.isEmpty() && finished.isEmpty();
    }

    public void write(Page page)
            throws IOException
    {
        if (page.getPositionCount() == 0) {
            return;
        }
        if (current.isEmpty()) {
            sequence++;
            String fileName = role.map(fileRole -> fileRole.fileName(namePrefix, sequence)).orElse("%s-%05d.parquet".formatted(namePrefix, sequence));
            Map<String, String> footer = role.map(fileRole -> ImmutableMap.of(ColdFileRole.FOOTER_KEY, fileRole.label())).orElse(ImmutableMap.of());
            current = Optional.of(new ReadingsFileWriter(table, partition, fileName, footer));
        }
        ReadingsFileWriter writer = current.get();
        writer.write(page);
        if (writer.estimatedBytes() >= targetFileSize) {
            current = Optional.empty();
            finished.add(writer.finish());
        }
    }

    /** Closes the open file; the month's files, none if it had no rows. */
    public List<DataFile> finish()
            throws IOException
    {
        if (current.isPresent()) {
            ReadingsFileWriter writer = current.get();
            current = Optional.empty();
            finished.add(writer.finish());
        }
        return ImmutableList.copyOf(finished);
    }

    /** Deletes every file this writer wrote: none of them was committed. */
    public void abort()
    {
        current.ifPresent(ReadingsFileWriter::abort);
        current = Optional.empty();
        for (DataFile file : finished) {
            table.io().deleteFile(file.location());
        }
        finished.clear();
    }
}
