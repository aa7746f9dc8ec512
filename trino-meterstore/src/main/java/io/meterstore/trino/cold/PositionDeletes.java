package io.meterstore.trino.cold;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import io.airlift.slice.Slice;
import io.trino.filesystem.Location;
import io.trino.filesystem.TrinoFileSystem;
import io.trino.parquet.Column;
import io.trino.parquet.Field;
import io.trino.parquet.ParquetCorruptionException;
import io.trino.parquet.ParquetDataSource;
import io.trino.parquet.ParquetReaderOptions;
import io.trino.parquet.metadata.ParquetMetadata;
import io.trino.parquet.predicate.TupleDomainParquetPredicate;
import io.trino.parquet.reader.MetadataReader;
import io.trino.parquet.reader.ParquetReader;
import io.trino.parquet.reader.RowGroupInfo;
import io.trino.spi.TrinoException;
import io.trino.spi.block.Block;
import io.trino.spi.connector.SourcePage;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.TupleDomain;
import org.apache.iceberg.MetadataColumns;
import org.apache.iceberg.deletes.Deletes;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.io.MessageColumnIO;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.Type;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.airlift.slice.Slices.utf8Slice;
import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_COLD_READ_FAILED;
import static io.meterstore.trino.cold.IcebergExpressions.DOMAIN_COMPACTION_THRESHOLD;
import static io.trino.memory.context.AggregatedMemoryContext.newSimpleAggregatedMemoryContext;
import static io.trino.parquet.ParquetTypeUtils.constructField;
import static io.trino.parquet.ParquetTypeUtils.getColumnIO;
import static io.trino.parquet.ParquetTypeUtils.getDescriptors;
import static io.trino.parquet.predicate.PredicateUtils.buildPredicate;
import static io.trino.parquet.predicate.PredicateUtils.getFilteredRowGroups;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static org.joda.time.DateTimeZone.UTC;

/**
 * The rows of one data file that Iceberg position delete files remove, read with Trino's Parquet reader as Trino's
 * Iceberg connector reads them: the spec's {@code file_path} and {@code pos} columns, row groups pruned to the data
 * file's path, positions collected into Iceberg's own {@link PositionDeleteIndex}.
 */
final class PositionDeletes
{
    private static final int FILE_PATH_ID = MetadataColumns.DELETE_FILE_PATH.fieldId();
    private static final int POSITION_ID = MetadataColumns.DELETE_FILE_POS.fieldId();

    private PositionDeletes() {}

    static PositionDeleteIndex load(TrinoFileSystem fileSystem, ParquetReaderOptions options, String dataFile, List<ColdDeleteFile> deleteFiles)
    {
        List<Long> positions = new ArrayList<>();
        Slice target = utf8Slice(dataFile);
        for (ColdDeleteFile deleteFile : deleteFiles) {
            try (ParquetDataSource dataSource = new ColdParquetDataSource(fileSystem.newInputFile(Location.of(deleteFile.path()), deleteFile.fileSize()), deleteFile.fileSize(), options)) {
                read(dataSource, options, target, positions);
            }
            catch (FileNotFoundException e) {
                throw new TrinoException(METERSTORE_COLD_READ_FAILED,
                        "Position delete file '%s' of the pinned snapshot does not exist: it was removed after the query planned (snapshot expiry or orphan-file cleanup); run the query again".formatted(deleteFile.path()), e);
            }
            catch (IOException | RuntimeException e) {
                if (e instanceof TrinoException trinoException) {
                    throw trinoException;
                }
                throw new TrinoException(METERSTORE_COLD_READ_FAILED, "Failed to read position delete file '%s' of data file '%s': %s".formatted(deleteFile.path(), dataFile, e.getMessage()), e);
            }
        }
        return Deletes.toPositionIndex(CloseableIterable.withNoopClose(positions));
    }

    private static void read(ParquetDataSource dataSource, ParquetReaderOptions options, Slice target, List<Long> positions)
            throws IOException
    {
        ParquetMetadata metadata = MetadataReader.readFooter(dataSource, options, Optional.empty(), Optional.empty());
        MessageType fileSchema = metadata.getFileMetaData().getSchema();
        Type pathField = field(fileSchema, FILE_PATH_ID, MetadataColumns.DELETE_FILE_PATH.name(), dataSource);
        Type positionField = field(fileSchema, POSITION_ID, MetadataColumns.DELETE_FILE_POS.name(), dataSource);
        MessageType requested = new MessageType(fileSchema.getName(), ImmutableList.of(pathField, positionField));
        Map<List<String>, ColumnDescriptor> descriptors = getDescriptors(fileSchema, requested);
        // a delete file may hold the positions of several data files, sorted by path: skip the row groups of others
        TupleDomain<ColumnDescriptor> onlyTarget = TupleDomain.withColumnDomains(ImmutableMap.of(
                descriptors.get(ImmutableList.of(pathField.getName())), Domain.singleValue(VARCHAR, target)));
        TupleDomainParquetPredicate predicate = buildPredicate(requested, onlyTarget, descriptors, UTC);
        List<RowGroupInfo> rowGroups = getFilteredRowGroups(0, dataSource.getEstimatedSize(), dataSource, metadata, ImmutableList.of(onlyTarget), ImmutableList.of(predicate),
                descriptors, UTC, DOMAIN_COMPACTION_THRESHOLD, options);
        MessageColumnIO columnIO = getColumnIO(fileSchema, requested);
        Field path = constructField(VARCHAR, columnIO.getChild(pathField.getName()))
                .orElseThrow(() -> new ParquetCorruptionException(dataSource.getId(), "Column 'file_path' cannot be read as varchar"));
        Field position = constructField(BIGINT, columnIO.getChild(positionField.getName()))
                .orElseThrow(() -> new ParquetCorruptionException(dataSource.getId(), "Column 'pos' cannot be read as bigint"));
        try (ParquetReader reader = new ParquetReader(
                Optional.ofNullable(metadata.getFileMetaData().getCreatedBy()),
                ImmutableList.of(new Column(pathField.getName(), path), new Column(positionField.getName(), position)),
                false,
                rowGroups,
                dataSource,
                UTC,
                newSimpleAggregatedMemoryContext(),
                options,
                exception -> ColdPageSource.translate(dataSource.getId(), exception),
                Optional.of(predicate),
                Optional.empty(),
                Optional.empty())) {
            for (SourcePage page = reader.nextPage(); page != null; page = reader.nextPage()) {
                Block paths = page.getBlock(0);
                Block rowPositions = page.getBlock(1);
                for (int row = 0; row < page.getPositionCount(); row++) {
                    if (VARCHAR.getSlice(paths, row).equals(target)) {
                        positions.add(BIGINT.getLong(rowPositions, row));
                    }
                }
            }
        }
    }

    /** A top-level column by its Iceberg field id, or by its name in a file written without ids. */
    private static Type field(MessageType schema, int fieldId, String name, ParquetDataSource dataSource)
            throws ParquetCorruptionException
    {
        for (Type field : schema.getFields()) {
            if (field.getId() != null && field.getId().intValue() == fieldId) {
                return field;
            }
        }
        if (schema.containsField(name)) {
            return schema.getType(name);
        }
        throw new ParquetCorruptionException(dataSource.getId(), "Position delete file has no column '%s'", name);
    }
}
