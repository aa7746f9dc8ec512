package io.meterstore.parquet;

import com.google.common.collect.ImmutableMap;
import com.google.common.io.CountingOutputStream;
import io.meterstore.core.ColdFileRole;
import io.trino.parquet.writer.ParquetWriter;
import io.trino.parquet.writer.ParquetWriterOptions;
import io.trino.spi.Page;
import io.trino.spi.block.Block;
import io.trino.spi.block.BlockBuilder;
import io.trino.spi.block.LongArrayBlock;
import io.trino.spi.block.RunLengthEncodedBlock;
import io.trino.spi.type.Type;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileMetadata;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;
import org.apache.parquet.format.CompressionCodec;
import org.apache.parquet.format.FileMetaData;
import org.apache.parquet.format.RowGroup;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type.Repetition;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static io.airlift.slice.Slices.utf8Slice;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * Writes an Iceberg position delete file against one data file, as Trino's Iceberg connector writes them: Parquet with
 * the spec's {@code file_path} and {@code pos} columns, positions ascending, the data file named as the referenced
 * data file and as exact bounds of {@code file_path}, so that every reader applies it to that file alone.
 */
public final class PositionDeleteFileWriter
{
    private static final int FILE_PATH_ID = MetadataColumns.DELETE_FILE_PATH.fieldId();
    private static final int POSITION_ID = MetadataColumns.DELETE_FILE_POS.fieldId();
    private static final int PAGE_ROWS = 4096;

    private PositionDeleteFileWriter() {}

    /**
     * @param partition the partition of the data file
     * @param fileName the delete file's name, which marks its role ({@link ColdFileRole#POSITION_DELETES})
     * @param positions the row positions to delete, ascending, without repeats
     */
    public static DeleteFile write(Table table, StructLike partition, String fileName, String dataFile, long[] positions)
            throws IOException
    {
        requireNonNull(table, "table is null");
        requireNonNull(partition, "partition is null");
        requireNonNull(dataFile, "dataFile is null");
        checkArgument(ColdFileRole.of(fileName).equals(Optional.of(ColdFileRole.POSITION_DELETES)), "fileName does not mark a position delete file: %s", fileName);
        checkArgument(positions.length > 0, "positions is empty");
        for (int index = 1; index < positions.length; index++) {
            checkArgument(positions[index - 1] < positions[index], "positions must ascend without repeats");
        }
        String location = table.locationProvider().newDataLocation(table.spec(), partition, fileName);
        CountingOutputStream output = new CountingOutputStream(table.io().newOutputFile(location).create());
        FileMetaData footer;
        try {
            ParquetWriter writer = new ParquetWriter(
                    output,
                    messageType(),
                    ImmutableMap.<List<String>, Type>of(List.of(MetadataColumns.DELETE_FILE_PATH.name()), VARCHAR, List.of(MetadataColumns.DELETE_FILE_POS.name()), BIGINT),
                    ParquetWriterOptions.builder().build(),
                    CompressionCodec.ZSTD,
                    "meterstore",
                    Optional.empty(),
                    Optional.empty());
            BlockBuilder pathBuilder = VARCHAR.createBlockBuilder(null, 1);
            VARCHAR.writeSlice(pathBuilder, utf8Slice(dataFile));
            Block path = pathBuilder.build();
            for (int start = 0; start < positions.length; start += PAGE_ROWS) {
                int count = Math.min(PAGE_ROWS, positions.length - start);
                writer.write(new Page(count,
                        RunLengthEncodedBlock.create(path, count),
                        new LongArrayBlock(count, Optional.empty(), Arrays.copyOfRange(positions, start, start + count))));
            }
            writer.close();
            footer = writer.getFileMetaData();
        }
        catch (IOException | RuntimeException e) {
            closeQuietly(output);
            table.io().deleteFile(location);
            throw e;
        }
        return FileMetadata.deleteFileBuilder(table.spec())
                .ofPositionDeletes()
                .withPath(location)
                .withFormat(FileFormat.PARQUET)
                .withPartition(partition)
                .withFileSizeInBytes(output.getCount())
                .withRecordCount(positions.length)
                .withMetrics(metrics(footer, dataFile, positions))
                .withReferencedDataFile(dataFile)
                .build();
    }

    private static MessageType messageType()
    {
        return org.apache.parquet.schema.Types.buildMessage()
                .addField(org.apache.parquet.schema.Types.primitive(PrimitiveTypeName.BINARY, Repetition.REQUIRED)
                        .as(LogicalTypeAnnotation.stringType())
                        .id(FILE_PATH_ID)
                        .named(MetadataColumns.DELETE_FILE_PATH.name()))
                .addField(org.apache.parquet.schema.Types.primitive(PrimitiveTypeName.INT64, Repetition.REQUIRED)
                        .id(POSITION_ID)
                        .named(MetadataColumns.DELETE_FILE_POS.name()))
                .named("table");
    }

    /** Full bounds on both columns, as Iceberg's own writers keep them for position deletes. */
    private static Metrics metrics(FileMetaData footer, String dataFile, long[] positions)
    {
        long pathBytes = 0;
        long positionBytes = 0;
        for (RowGroup rowGroup : footer.getRow_groups()) {
            pathBytes += rowGroup.getColumns().get(0).getMeta_data().getTotal_compressed_size();
            positionBytes += rowGroup.getColumns().get(1).getMeta_data().getTotal_compressed_size();
        }
        long rows = positions.length;
        return new Metrics(
                rows,
                ImmutableMap.of(FILE_PATH_ID, pathBytes, POSITION_ID, positionBytes),
                ImmutableMap.of(FILE_PATH_ID, rows, POSITION_ID, rows),
                ImmutableMap.of(FILE_PATH_ID, 0L, POSITION_ID, 0L),
                ImmutableMap.of(),
                ImmutableMap.of(
                        FILE_PATH_ID, Conversions.toByteBuffer(Types.StringType.get(), dataFile),
                        POSITION_ID, Conversions.toByteBuffer(Types.LongType.get(), positions[0])),
                ImmutableMap.of(
                        FILE_PATH_ID, Conversions.toByteBuffer(Types.StringType.get(), dataFile),
                        POSITION_ID, Conversions.toByteBuffer(Types.LongType.get(), positions[positions.length - 1])));
    }

    private static void closeQuietly(OutputStream output)
    {
        try {
            output.close();
        }
        catch (IOException | RuntimeException ignored) {
            // the file is deleted after this
        }
    }
}
