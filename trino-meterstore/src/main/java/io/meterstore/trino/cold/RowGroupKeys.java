package io.meterstore.trino.cold;

import com.google.common.cache.Cache;
import com.google.common.collect.ImmutableList;
import com.google.common.util.concurrent.UncheckedExecutionException;
import io.meterstore.core.ReadingsColumn;
import io.trino.cache.EvictableCacheBuilder;
import io.trino.filesystem.Location;
import io.trino.filesystem.TrinoFileSystem;
import io.trino.parquet.ParquetDataSource;
import io.trino.parquet.ParquetReaderOptions;
import io.trino.parquet.metadata.BlockMetadata;
import io.trino.parquet.metadata.ColumnChunkMetadata;
import io.trino.parquet.metadata.ParquetMetadata;
import io.trino.parquet.reader.MetadataReader;
import io.trino.spi.TrinoException;
import org.apache.parquet.column.statistics.BinaryStatistics;
import org.apache.parquet.column.statistics.LongStatistics;
import org.apache.parquet.column.statistics.Statistics;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.Type;

import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;

import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_COLD_READ_FAILED;
import static java.util.Objects.requireNonNull;

/**
 * The rows and the malo_id and "from" ranges of every row group of a data file, from its Parquet footer's statistics:
 * where resolution splits can cut a month by malo_id without separating the versions of a key. Data files never change
 * once written, so footers are cached by location.
 */
final class RowGroupKeys
{
    private static final int CACHED_FILES = 4096;

    /** One row group; a range is empty when the footer has no statistics for its column. */
    record RowGroup(long rows, Optional<String> maloIdMin, Optional<String> maloIdMax, Optional<Long> fromMin, Optional<Long> fromMax)
    {
        RowGroup
        {
            requireNonNull(maloIdMin, "maloIdMin is null");
            requireNonNull(maloIdMax, "maloIdMax is null");
            requireNonNull(fromMin, "fromMin is null");
            requireNonNull(fromMax, "fromMax is null");
        }

        boolean hasMaloIdRange()
        {
            return maloIdMin.isPresent() && maloIdMax.isPresent();
        }
    }

    private final ParquetReaderOptions options;
    private final Cache<String, List<RowGroup>> cache = EvictableCacheBuilder.newBuilder()
            .maximumSize(CACHED_FILES)
            .build();

    RowGroupKeys(ParquetReaderOptions options)
    {
        this.options = requireNonNull(options, "options is null");
    }

    List<RowGroup> rowGroups(TrinoFileSystem fileSystem, String path, long fileSize)
    {
        try {
            return cache.get(path, () -> read(fileSystem, path, fileSize));
        }
        catch (ExecutionException | UncheckedExecutionException e) {
            if (e.getCause() instanceof TrinoException trinoException) {
                throw trinoException;
            }
            throw new TrinoException(METERSTORE_COLD_READ_FAILED, "Failed to read the footer of data file '%s' to plan its resolution: %s".formatted(path, e.getCause().getMessage()), e.getCause());
        }
    }

    private List<RowGroup> read(TrinoFileSystem fileSystem, String path, long fileSize)
            throws IOException
    {
        try (ParquetDataSource dataSource = new ColdParquetDataSource(fileSystem.newInputFile(Location.of(path), fileSize), fileSize, options)) {
            ParquetMetadata metadata = MetadataReader.readFooter(dataSource, options, Optional.empty(), Optional.empty());
            MessageType schema = metadata.getFileMetaData().getSchema();
            Optional<String> maloId = columnName(schema, ReadingsColumn.MALO_ID);
            Optional<String> from = columnName(schema, ReadingsColumn.FROM);
            ImmutableList.Builder<RowGroup> rowGroups = ImmutableList.builder();
            for (BlockMetadata block : metadata.getBlocks()) {
                Optional<String> maloIdMin = Optional.empty();
                Optional<String> maloIdMax = Optional.empty();
                Optional<Long> fromMin = Optional.empty();
                Optional<Long> fromMax = Optional.empty();
                for (ColumnChunkMetadata column : block.columns()) {
                    String name = column.getPath().toDotString();
                    Statistics<?> statistics = column.getStatistics();
                    if (statistics == null || statistics.isEmpty() || !statistics.hasNonNullValue()) {
                        continue;
                    }
                    if (maloId.isPresent() && name.equals(maloId.get()) && statistics instanceof BinaryStatistics binary) {
                        maloIdMin = Optional.of(binary.genericGetMin().toStringUsingUTF8());
                        maloIdMax = Optional.of(binary.genericGetMax().toStringUsingUTF8());
                    }
                    if (from.isPresent() && name.equals(from.get()) && statistics instanceof LongStatistics longs) {
                        fromMin = Optional.of(longs.getMin());
                        fromMax = Optional.of(longs.getMax());
                    }
                }
                rowGroups.add(new RowGroup(block.rowCount(), maloIdMin, maloIdMax, fromMin, fromMax));
            }
            return rowGroups.build();
        }
    }

    /** The file's column of {@code column}, by Iceberg field id, or by name in a file written without ids. */
    private static Optional<String> columnName(MessageType schema, ReadingsColumn column)
    {
        for (Type field : schema.getFields()) {
            if (field.getId() != null && field.getId().intValue() == column.fieldId()) {
                return Optional.of(field.getName());
            }
        }
        return schema.containsField(column.columnName()) ? Optional.of(column.columnName()) : Optional.empty();
    }
}
