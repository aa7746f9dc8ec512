package io.meterstore.parquet;

import com.google.common.collect.ImmutableList;
import io.trino.parquet.Column;
import io.trino.parquet.Field;
import io.trino.parquet.ParquetReaderOptions;
import io.trino.parquet.metadata.BlockMetadata;
import io.trino.parquet.metadata.ParquetMetadata;
import io.trino.parquet.reader.MetadataReader;
import io.trino.parquet.reader.ParquetReader;
import io.trino.parquet.reader.RowGroupInfo;
import io.trino.spi.block.Block;
import io.trino.spi.connector.SourcePage;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.io.FileIO;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.io.MessageColumnIO;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.Type;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.trino.memory.context.AggregatedMemoryContext.newSimpleAggregatedMemoryContext;
import static io.trino.parquet.ParquetTypeUtils.constructField;
import static io.trino.parquet.ParquetTypeUtils.getColumnIO;
import static io.trino.parquet.ParquetTypeUtils.getDescriptors;
import static io.trino.parquet.metadata.PrunedBlockMetadata.createPrunedColumnsMetadata;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;
import static org.joda.time.DateTimeZone.UTC;

/**
 * The rows of an Iceberg position delete file: the spec's {@code file_path} and {@code pos} columns (found by field id,
 * or by name in a file written without ids), read whole with Trino's Parquet reader. Compaction reads every delete file
 * of a month it rewrites; they are small (a few percent of a month's rows at most).
 */
public final class PositionDeleteRows
{
    private static final int FILE_PATH_ID = MetadataColumns.DELETE_FILE_PATH.fieldId();
    private static final int POSITION_ID = MetadataColumns.DELETE_FILE_POS.fieldId();

    private PositionDeleteRows() {}

    /** Adds each deleted position to the list of its data file in {@code positions}, creating lists as needed. */
    public static void read(FileIO io, String location, long length, Map<String, List<Long>> positions)
            throws IOException
    {
        requireNonNull(positions, "positions is null");
        try (IcebergParquetDataSource source = new IcebergParquetDataSource(io.newInputFile(location, length))) {
            ParquetMetadata metadata = MetadataReader.readFooter(source, Optional.empty());
            MessageType fileSchema = metadata.getFileMetaData().getSchema();
            Type pathField = field(fileSchema, FILE_PATH_ID, MetadataColumns.DELETE_FILE_PATH.name(), location);
            Type positionField = field(fileSchema, POSITION_ID, MetadataColumns.DELETE_FILE_POS.name(), location);
            MessageType requested = new MessageType(fileSchema.getName(), ImmutableList.of(pathField, positionField));
            Map<List<String>, ColumnDescriptor> descriptors = getDescriptors(fileSchema, requested);
            MessageColumnIO columnIO = getColumnIO(fileSchema, requested);
            Field path = constructField(VARCHAR, columnIO.getChild(pathField.getName()))
                    .orElseThrow(() -> new IOException("Column 'file_path' of position delete file '%s' cannot be read as varchar".formatted(location)));
            Field position = constructField(BIGINT, columnIO.getChild(positionField.getName()))
                    .orElseThrow(() -> new IOException("Column 'pos' of position delete file '%s' cannot be read as bigint".formatted(location)));
            List<RowGroupInfo> rowGroups = new ArrayList<>();
            long rowOffset = 0;
            for (BlockMetadata block : metadata.getBlocks()) {
                rowGroups.add(new RowGroupInfo(createPrunedColumnsMetadata(block, source.getId(), descriptors), rowOffset, Optional.empty()));
                rowOffset += block.rowCount();
            }
            try (ParquetReader reader = new ParquetReader(
                    Optional.ofNullable(metadata.getFileMetaData().getCreatedBy()),
                    ImmutableList.of(new Column(pathField.getName(), path), new Column(positionField.getName(), position)),
                    false,
                    rowGroups,
                    source,
                    UTC,
                    newSimpleAggregatedMemoryContext(),
                    ParquetReaderOptions.defaultOptions(),
                    exception -> exception instanceof IOException ioException ? new UncheckedIOException(ioException) : new RuntimeException(exception),
                    Optional.empty(),
                    Optional.empty(),
                    Optional.empty())) {
                for (SourcePage page = reader.nextPage(); page != null; page = reader.nextPage()) {
                    Block paths = page.getBlock(0);
                    Block rowPositions = page.getBlock(1);
                    for (int row = 0; row < page.getPositionCount(); row++) {
                        positions.computeIfAbsent(VARCHAR.getSlice(paths, row).toStringUtf8(), _ -> new ArrayList<>()).add(BIGINT.getLong(rowPositions, row));
                    }
                }
            }
        }
    }

    private static Type field(MessageType schema, int fieldId, String name, String location)
            throws IOException
    {
        for (Type field : schema.getFields()) {
            if (field.getId() != null && field.getId().intValue() == fieldId) {
                return field;
            }
        }
        if (schema.containsField(name)) {
            return schema.getType(name);
        }
        throw new IOException("Position delete file '%s' has no column '%s'".formatted(location, name));
    }
}
