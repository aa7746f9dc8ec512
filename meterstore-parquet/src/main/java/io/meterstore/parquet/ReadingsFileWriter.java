package io.meterstore.parquet;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import com.google.common.collect.ImmutableSet;
import com.google.common.io.CountingOutputStream;
import io.airlift.log.Logger;
import io.airlift.units.DataSize;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.TableColumn;
import io.meterstore.core.TableColumns;
import io.trino.parquet.ParquetDataSourceId;
import io.trino.parquet.metadata.BlockMetadata;
import io.trino.parquet.metadata.ColumnChunkMetadata;
import io.trino.parquet.metadata.ParquetMetadata;
import io.trino.parquet.writer.ParquetWriter;
import io.trino.parquet.writer.ParquetWriterOptions;
import io.trino.spi.Page;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.MetricsConfig;
import org.apache.iceberg.MetricsModes;
import org.apache.iceberg.MetricsModes.MetricsMode;
import org.apache.iceberg.PartitionData;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.types.Comparators;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.UnicodeUtil;
import org.apache.parquet.column.statistics.Statistics;
import org.apache.parquet.format.ColumnChunk;
import org.apache.parquet.format.ColumnMetaData;
import org.apache.parquet.format.CompressionCodec;
import org.apache.parquet.format.FileMetaData;
import org.apache.parquet.format.RowGroup;
import org.apache.parquet.io.api.Binary;

import java.io.Closeable;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.base.Preconditions.checkState;
import static java.util.Objects.requireNonNull;

/**
 * Writes one Parquet data file of a readings table with Trino's own Parquet writer (no Hadoop) through the table's
 * FileIO, and describes it as an Iceberg {@link DataFile}: partition, size, row-group offsets and the column metrics
 * readers prune with, computed from exactly the pages written.
 */
final class ReadingsFileWriter
        implements Closeable
{
    private static final Logger log = Logger.get(ReadingsFileWriter.class);
    private static final String CREATED_BY = "meterstore-archiver";

    private final Table table;
    // the table's columns, its attribute columns after the readings columns: the channels of every page written
    private final TableColumns columns;
    private final PartitionData partition;
    private final String location;
    private final CountingOutputStream output;
    private final SortingColumnsFooter footer;
    private final ParquetWriter writer;
    private final SortOrderCheck sortOrder;
    private long rows;
    private boolean closed;

    /**
     * @param keyValueMetadata entries for the footer's key-value metadata, e.g. the file's {@link io.meterstore.core.ColdFileRole}
     */
    ReadingsFileWriter(Table table, PartitionData partition, String fileName, Map<String, String> keyValueMetadata)
    {
        this.table = requireNonNull(table, "table is null");
        this.columns = TableColumns.of(table);
        this.sortOrder = new SortOrderCheck(columns.keyChannels());
        this.partition = requireNonNull(partition, "partition is null");
        this.location = table.locationProvider().newDataLocation(table.spec(), partition, fileName);
        this.output = new CountingOutputStream(table.io().newOutputFile(location).create());
        // the sort order goes into the footer too, when the rows arrived in it
        this.footer = new SortingColumnsFooter(output, columns.keyChannels(), this::sortedByReadingsKey, keyValueMetadata);
        try {
            this.writer = new ParquetWriter(
                    footer,
                    ReadingsParquetSchema.messageType(columns),
                    ReadingsParquetSchema.primitiveTypes(columns),
                    writerOptions(table),
                    CompressionCodec.ZSTD,
                    CREATED_BY,
                    Optional.empty(),
                    Optional.empty());
        }
        catch (RuntimeException e) {
            closeQuietly(output);
            table.io().deleteFile(location);
            throw e;
        }
    }

    String location()
    {
        return location;
    }

    long rows()
    {
        return rows;
    }

    /** Bytes written plus an estimate of what is buffered for the open row group. */
    long estimatedBytes()
    {
        return writer.getEstimatedWrittenBytes();
    }

    void write(Page page)
            throws IOException
    {
        checkState(!closed, "writer is closed");
        checkArgument(page.getChannelCount() == columns.size(), "page has %s channels, expected %s (%s)", page.getChannelCount(), columns.size(), columns);
        sortOrder.add(page);
        writer.write(page);
        rows += page.getPositionCount();
    }

    /** Closes the file and describes it for the commit. */
    DataFile finish()
            throws IOException
    {
        close();
        FileMetaData footer = writer.getFileMetaData();
        List<Long> splitOffsets = footer.getRow_groups().stream()
                .map(ReadingsFileWriter::startingPosition)
                .collect(ImmutableList.toImmutableList());
        return DataFiles.builder(table.spec())
                .withPath(location)
                .withFormat(FileFormat.PARQUET)
                .withPartition(partition)
                .withFileSizeInBytes(output.getCount())
                .withMetrics(metrics(footer))
                .withSplitOffsets(splitOffsets)
                .withSortOrder(declaredSortOrder())
                .build();
    }

    /** The table's sort order if it is the readings sort key and the rows arrived in it, else unsorted: never a false claim. */
    private SortOrder declaredSortOrder()
    {
        if (!sortedByReadingsKey()) {
            if (!sortOrder.sorted()) {
                log.warn("Rows of '%s' did not arrive in byte order of malo_id and obis_code, so the file is not declared sorted: give those PostgreSQL columns COLLATE \"C\"", location);
            }
            return SortOrder.unsorted();
        }
        return table.sortOrder();
    }

    private boolean sortedByReadingsKey()
    {
        return table.sortOrder().sameOrder(IcebergTableSpec.sortOrder(table.schema(), columns.keyNames())) && sortOrder.sorted();
    }

    @Override
    public void close()
            throws IOException
    {
        if (closed) {
            return;
        }
        closed = true;
        footer.holdTail();
        writer.close();
    }

    /** Closes the file, swallowing what that throws, and deletes it: the file was never committed. */
    void abort()
    {
        try {
            close();
        }
        catch (IOException | RuntimeException ignored) {
            // the file is deleted below either way
        }
        table.io().deleteFile(location);
    }

    private static void closeQuietly(Closeable closeable)
    {
        try {
            closeable.close();
        }
        catch (IOException | RuntimeException ignored) {
            // the file is deleted after this
        }
    }

    /**
     * The file's Iceberg metrics from the footer the Parquet writer has just written, as Trino's Iceberg connector takes
     * them: the writer computes every column chunk's null count and bounds anyway, so they are not computed twice. A
     * column some row group has no statistics for (a value too long for them) gets neither null count nor bounds, which
     * readers take as unknown: never a bound that does not hold.
     */
    private Metrics metrics(FileMetaData footer)
            throws IOException
    {
        List<BlockMetadata> rowGroups = new ParquetMetadata(footer, new ParquetDataSourceId(location), Optional.empty()).getBlocks();
        MetricsConfig metricsConfig = MetricsConfig.forTable(table);
        Map<Integer, Long> columnSizes = new HashMap<>();
        Map<Integer, Long> valueCounts = new HashMap<>();
        Map<Integer, Long> nullCounts = new HashMap<>();
        Map<Integer, ByteBuffer> lowerBounds = new HashMap<>();
        Map<Integer, ByteBuffer> upperBounds = new HashMap<>();
        for (int index = 0; index < columns.size(); index++) {
            TableColumn column = columns.all().get(index);
            int fieldId = column.fieldId();
            MetricsMode mode = metricsConfig.columnMode(column.name());
            if (mode instanceof MetricsModes.None) {
                continue;
            }
            Comparator<Object> order = Comparators.forType(column.icebergType().asPrimitiveType());
            long size = 0;
            long nulls = 0;
            boolean complete = true;
            Object lower = null;
            Object upper = null;
            for (BlockMetadata rowGroup : rowGroups) {
                ColumnChunkMetadata chunk = rowGroup.columns().get(index);
                size += chunk.getTotalSize();
                Statistics<?> statistics = chunk.getStatistics();
                if (statistics == null || statistics.isEmpty()) {
                    complete = false;
                    continue;
                }
                nulls += statistics.getNumNulls();
                if (statistics.hasNonNullValue()) {
                    Object min = icebergValue(column, statistics.genericGetMin());
                    Object max = icebergValue(column, statistics.genericGetMax());
                    lower = lower == null || order.compare(min, lower) < 0 ? min : lower;
                    upper = upper == null || order.compare(max, upper) > 0 ? max : upper;
                }
            }
            columnSizes.put(fieldId, size);
            // Iceberg's value count includes nulls
            valueCounts.put(fieldId, rows);
            if (!complete) {
                continue;
            }
            nullCounts.put(fieldId, nulls);
            if (mode instanceof MetricsModes.Counts || lower == null) {
                continue;
            }
            if (mode instanceof MetricsModes.Truncate truncate && column.kind() == ReadingsColumn.ColumnKind.STRING) {
                // a truncated lower bound is a prefix; a truncated upper bound is incremented, or absent when it cannot be
                lower = UnicodeUtil.truncateStringMin((String) lower, truncate.length());
                upper = UnicodeUtil.truncateStringMax((String) upper, truncate.length());
            }
            lowerBounds.put(fieldId, Conversions.toByteBuffer(column.icebergType(), lower));
            if (upper != null) {
                upperBounds.put(fieldId, Conversions.toByteBuffer(column.icebergType(), upper));
            }
        }
        return new Metrics(
                rows,
                ImmutableMap.copyOf(columnSizes),
                ImmutableMap.copyOf(valueCounts),
                ImmutableMap.copyOf(nullCounts),
                ImmutableMap.of(),
                ImmutableMap.copyOf(lowerBounds),
                ImmutableMap.copyOf(upperBounds));
    }

    /**
     * A Parquet statistic as the Java type Iceberg's {@code Conversions} expects: a String for strings, micros as Long for
     * timestamptz, Integer days for date, a BigDecimal for decimals (INT32, INT64 or a big-endian FIXED_LEN_BYTE_ARRAY).
     */
    private static Object icebergValue(TableColumn column, Object value)
    {
        return switch (column.kind()) {
            case STRING -> ((Binary) value).toStringUsingUTF8();
            case TIMESTAMP_TZ -> (Long) value;
            case DATE -> (Integer) value;
            case QUANTITY, VERSION -> new BigDecimal(
                    value instanceof Binary binary ? new BigInteger(binary.getBytes()) : BigInteger.valueOf(((Number) value).longValue()),
                    ((Types.DecimalType) column.icebergType()).scale());
        };
    }

    /** Where a row group starts: its first column chunk's dictionary page, or its first data page. */
    private static long startingPosition(RowGroup rowGroup)
    {
        ColumnChunk first = rowGroup.getColumns().getFirst();
        ColumnMetaData metaData = first.getMeta_data();
        if (metaData.isSetDictionary_page_offset() && metaData.getDictionary_page_offset() > 0) {
            return Math.min(metaData.getDictionary_page_offset(), metaData.getData_page_offset());
        }
        return metaData.getData_page_offset();
    }

    private static ParquetWriterOptions writerOptions(Table table)
    {
        ParquetWriterOptions.Builder options = ParquetWriterOptions.builder()
                .setMaxRowGroupRowCount(IcebergTableSpec.ROW_GROUP_ROWS)
                .setBloomFilterColumns(bloomFilterColumns(table));
        // Iceberg's own row-group size property, when a table sets it, caps the row group's bytes as well
        String rowGroupBytes = table.properties().get(TableProperties.PARQUET_ROW_GROUP_SIZE_BYTES);
        if (rowGroupBytes != null) {
            options.setMaxBlockSize(DataSize.ofBytes(Long.parseLong(rowGroupBytes)));
        }
        return options.build();
    }

    /** The columns the table asks bloom filters for; {@link IcebergTableSpec} sets malo_id and obis_code. */
    private static Set<String> bloomFilterColumns(Table table)
    {
        ImmutableSet.Builder<String> columns = ImmutableSet.builder();
        for (ReadingsColumn column : ReadingsColumn.values()) {
            String enabled = table.properties().get(TableProperties.PARQUET_BLOOM_FILTER_COLUMN_ENABLED_PREFIX + column.columnName());
            if (Boolean.parseBoolean(enabled)) {
                columns.add(column.columnName());
            }
        }
        return columns.build();
    }
}
