package io.meterstore.parquet;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import io.airlift.slice.Slice;
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
import io.trino.spi.block.Block;
import io.trino.spi.connector.SourcePage;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.TupleDomain;
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
import static io.trino.parquet.predicate.PredicateUtils.buildPredicate;
import static io.trino.parquet.predicate.PredicateUtils.getFilteredRowGroups;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;
import static org.joda.time.DateTimeZone.UTC;

/**
 * The rows of an Iceberg position delete file: the spec's {@code file_path} and {@code pos} columns (found by field id,
 * or by name in a file written without ids), read with Trino's Parquet reader as Trino's Iceberg connector reads them.
 * Compaction reads every delete file of a month it rewrites, whole; the connector reads the positions of one data file,
 * the row groups of other data files pruned.
 */
public final class PositionDeleteRows
{
    private static final int FILE_PATH_ID = MetadataColumns.DELETE_FILE_PATH.fieldId();
    private static final int POSITION_ID = MetadataColumns.DELETE_FILE_POS.fieldId();
    // as Trino's Iceberg connector; the only domain here is one data file's path
    private static final int DOMAIN_COMPACTION_THRESHOLD = 1000;

    private PositionDeleteRows() {}

    /** Receives each deleted position: the data file's path and the row's position in it. */
    public interface PositionConsumer
    {
        void accept(Slice dataFile, long position);
    }

    /** Adds each deleted position to the list of its data file in {@code positions}, creating lists as needed. */
    public static void read(FileIO io, String location, long length, Map<String, List<Long>> positions)
            throws IOException
    {
        requireNonNull(positions, "positions is null");
        try (IcebergParquetDataSource source = new IcebergParquetDataSource(io.newInputFile(location, length))) {
            read(source, ParquetReaderOptions.defaultOptions(), Optional.empty(),
                    (dataFile, position) -> positions.computeIfAbsent(dataFile.toStringUtf8(), _ -> new ArrayList<>()).add(position));
        }
    }

    /**
     * Hands the deleted positions of {@code source} to {@code consumer}: of every data file, or of {@code dataFile} alone.
     * A failure of the Parquet reader arrives as an {@link UncheckedIOException} or the reader's own runtime exception.
     */
    public static void read(ParquetDataSource source, ParquetReaderOptions options, Optional<Slice> dataFile, PositionConsumer consumer)
            throws IOException
    {
        requireNonNull(dataFile, "dataFile is null");
        requireNonNull(consumer, "consumer is null");
        ParquetMetadata metadata = MetadataReader.readFooter(source, options, Optional.empty(), Optional.empty());
        MessageType fileSchema = metadata.getFileMetaData().getSchema();
        Type pathField = field(fileSchema, FILE_PATH_ID, MetadataColumns.DELETE_FILE_PATH.name(), source);
        Type positionField = field(fileSchema, POSITION_ID, MetadataColumns.DELETE_FILE_POS.name(), source);
        MessageType requested = new MessageType(fileSchema.getName(), ImmutableList.of(pathField, positionField));
        Map<List<String>, ColumnDescriptor> descriptors = getDescriptors(fileSchema, requested);
        // a delete file may hold the positions of several data files, sorted by path: skip the row groups of others
        TupleDomain<ColumnDescriptor> domain = dataFile
                .map(path -> TupleDomain.withColumnDomains(ImmutableMap.of(descriptors.get(ImmutableList.of(pathField.getName())), Domain.singleValue(VARCHAR, path))))
                .orElse(TupleDomain.all());
        TupleDomainParquetPredicate predicate = buildPredicate(requested, domain, descriptors, UTC);
        List<RowGroupInfo> rowGroups = getFilteredRowGroups(0, source.getEstimatedSize(), source, metadata, ImmutableList.of(domain), ImmutableList.of(predicate),
                descriptors, UTC, DOMAIN_COMPACTION_THRESHOLD, options);
        MessageColumnIO columnIO = getColumnIO(fileSchema, requested);
        Field path = constructField(VARCHAR, columnIO.getChild(pathField.getName()))
                .orElseThrow(() -> new ParquetCorruptionException(source.getId(), "Column 'file_path' of a position delete file cannot be read as varchar"));
        Field position = constructField(BIGINT, columnIO.getChild(positionField.getName()))
                .orElseThrow(() -> new ParquetCorruptionException(source.getId(), "Column 'pos' of a position delete file cannot be read as bigint"));
        try (ParquetReader reader = new ParquetReader(
                Optional.ofNullable(metadata.getFileMetaData().getCreatedBy()),
                ImmutableList.of(new Column(pathField.getName(), path), new Column(positionField.getName(), position)),
                false,
                rowGroups,
                source,
                UTC,
                newSimpleAggregatedMemoryContext(),
                options,
                PositionDeleteRows::translate,
                Optional.of(predicate),
                Optional.empty(),
                Optional.empty())) {
            for (SourcePage page = reader.nextPage(); page != null; page = reader.nextPage()) {
                Block paths = page.getBlock(0);
                Block rowPositions = page.getBlock(1);
                for (int row = 0; row < page.getPositionCount(); row++) {
                    Slice rowPath = VARCHAR.getSlice(paths, row);
                    // row groups are pruned by statistics: a kept one may still hold other data files' positions
                    if (dataFile.isEmpty() || dataFile.get().equals(rowPath)) {
                        consumer.accept(rowPath, BIGINT.getLong(rowPositions, row));
                    }
                }
            }
        }
    }

    private static RuntimeException translate(Exception exception)
    {
        return switch (exception) {
            case IOException ioException -> new UncheckedIOException(ioException);
            case RuntimeException runtimeException -> runtimeException;
            default -> new RuntimeException(exception);
        };
    }

    /** A top-level column by its Iceberg field id, or by its name in a file written without ids. */
    private static Type field(MessageType schema, int fieldId, String name, ParquetDataSource source)
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
        throw new ParquetCorruptionException(source.getId(), "Position delete file has no column '%s'", name);
    }
}
