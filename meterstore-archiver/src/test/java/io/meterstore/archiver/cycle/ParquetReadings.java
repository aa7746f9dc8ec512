package io.meterstore.archiver.cycle;

import com.google.common.collect.ImmutableList;
import io.meterstore.core.LocalFileIo;
import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.Sparte;
import io.meterstore.core.Sparte.MeasurementUnit;
import io.meterstore.parquet.ReadingsParquetSchema;
import io.trino.parquet.AbstractParquetDataSource;
import io.trino.parquet.Column;
import io.trino.parquet.ParquetDataSourceId;
import io.trino.parquet.ParquetReaderOptions;
import io.trino.parquet.ParquetTypeUtils;
import io.trino.parquet.metadata.BlockMetadata;
import io.trino.parquet.metadata.ParquetMetadata;
import io.trino.parquet.reader.MetadataReader;
import io.trino.parquet.reader.ParquetReader;
import io.trino.parquet.reader.RowGroupInfo;
import io.trino.spi.block.Block;
import io.trino.spi.connector.SourcePage;
import io.trino.spi.type.Int128;
import io.trino.spi.type.LongTimestampWithTimeZone;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.format.FileMetaData;
import org.apache.parquet.format.Util;
import org.apache.parquet.io.MessageColumnIO;
import org.apache.parquet.schema.MessageType;
import org.joda.time.DateTimeZone;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.meterstore.parquet.ReadingsParquetSchema.QUANTITY;
import static io.meterstore.parquet.ReadingsParquetSchema.TIMESTAMP_TZ_MICROS;
import static io.meterstore.parquet.ReadingsParquetSchema.VERSION;
import static io.trino.memory.context.AggregatedMemoryContext.newSimpleAggregatedMemoryContext;
import static io.trino.parquet.metadata.PrunedBlockMetadata.createPrunedColumnsMetadata;
import static io.trino.spi.type.DateType.DATE;
import static io.trino.spi.type.VarcharType.VARCHAR;

/** Reads a data file the archiver wrote back into {@link Reading}s, with Trino's own Parquet reader. */
public final class ParquetReadings
{
    private ParquetReadings() {}

    /** The sorting columns each row group's footer entry declares, as "column ASC|DESC NULLS FIRST|LAST". */
    static List<List<String>> sortingColumns(String location)
            throws IOException
    {
        byte[] bytes = Files.readAllBytes(LocalFileIo.path(location));
        int footerLength = ByteBuffer.wrap(bytes, bytes.length - 8, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
        FileMetaData footer = Util.readFileMetaData(new ByteArrayInputStream(bytes, bytes.length - 8 - footerLength, footerLength));
        List<String> names = Arrays.stream(ReadingsColumn.values()).map(ReadingsColumn::columnName).toList();
        return footer.getRow_groups().stream()
                .map(rowGroup -> rowGroup.getSorting_columns() == null ? List.<String>of() : rowGroup.getSorting_columns().stream()
                        .map(column -> "%s %s NULLS %s".formatted(names.get(column.getColumn_idx()), column.isDescending() ? "DESC" : "ASC", column.isNulls_first() ? "FIRST" : "LAST"))
                        .toList())
                .toList();
    }

    /** The footer's key-value metadata. */
    static Map<String, String> keyValueMetadata(String location)
            throws IOException
    {
        byte[] bytes = Files.readAllBytes(LocalFileIo.path(location));
        int footerLength = ByteBuffer.wrap(bytes, bytes.length - 8, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
        FileMetaData footer = Util.readFileMetaData(new ByteArrayInputStream(bytes, bytes.length - 8 - footerLength, footerLength));
        Map<String, String> entries = new HashMap<>();
        if (footer.isSetKey_value_metadata()) {
            footer.getKey_value_metadata().forEach(entry -> entries.put(entry.getKey(), entry.getValue()));
        }
        return entries;
    }

    public static List<Reading> read(String location)
            throws IOException
    {
        Path path = LocalFileIo.path(location);
        try (LocalParquetDataSource source = new LocalParquetDataSource(path)) {
            ParquetMetadata metadata = MetadataReader.readFooter(source, Optional.empty());
            MessageType schema = metadata.getFileMetaData().getSchema();
            MessageColumnIO columnIO = ParquetTypeUtils.getColumnIO(schema, schema);
            ImmutableList.Builder<Column> columns = ImmutableList.builder();
            for (ReadingsColumn column : ReadingsColumn.values()) {
                columns.add(new Column(column.columnName(), ParquetTypeUtils.constructField(
                        ReadingsParquetSchema.trinoType(column.kind()),
                        ParquetTypeUtils.lookupColumnByName(columnIO, column.columnName())).orElseThrow()));
            }
            Map<List<String>, ColumnDescriptor> descriptors = ParquetTypeUtils.getDescriptors(schema, schema);
            ImmutableList.Builder<RowGroupInfo> rowGroups = ImmutableList.builder();
            long rowOffset = 0;
            for (BlockMetadata block : metadata.getBlocks()) {
                rowGroups.add(new RowGroupInfo(createPrunedColumnsMetadata(block, source.getId(), descriptors), rowOffset, Optional.empty()));
                rowOffset += block.rowCount();
            }
            ImmutableList.Builder<Reading> readings = ImmutableList.builder();
            try (ParquetReader reader = new ParquetReader(
                    Optional.ofNullable(metadata.getFileMetaData().getCreatedBy()),
                    columns.build(),
                    false,
                    rowGroups.build(),
                    source,
                    DateTimeZone.UTC,
                    newSimpleAggregatedMemoryContext(),
                    ParquetReaderOptions.defaultOptions(),
                    exception -> new RuntimeException(exception),
                    Optional.empty(),
                    Optional.empty(),
                    Optional.empty())) {
                for (SourcePage page = reader.nextPage(); page != null; page = reader.nextPage()) {
                    for (int position = 0; position < page.getPositionCount(); position++) {
                        readings.add(reading(page, position));
                    }
                }
            }
            return readings.build();
        }
    }

    /** The Parquet schema of a data file, as its footer declares it. */
    static MessageType schema(String location)
            throws IOException
    {
        try (LocalParquetDataSource source = new LocalParquetDataSource(LocalFileIo.path(location))) {
            return MetadataReader.readFooter(source, Optional.empty()).getFileMetaData().getSchema();
        }
    }

    private static Reading reading(SourcePage page, int position)
    {
        return new Reading(
                string(page, ReadingsColumn.MALO_ID, position).orElseThrow(),
                string(page, ReadingsColumn.MELO_ID, position),
                string(page, ReadingsColumn.OBIS_CODE, position).orElseThrow(),
                Sparte.parse(string(page, ReadingsColumn.SPARTE, position).orElseThrow()),
                instant(page, ReadingsColumn.FROM, position),
                instant(page, ReadingsColumn.TO, position),
                BigDecimal.valueOf(QUANTITY.getLong(block(page, ReadingsColumn.VALUE), position), QUANTITY.getScale()),
                MeasurementUnit.parse(string(page, ReadingsColumn.UNIT, position).orElseThrow()),
                Quality.parse(string(page, ReadingsColumn.QUALITY, position).orElseThrow()),
                string(page, ReadingsColumn.RESOLUTION, position).orElseThrow(),
                string(page, ReadingsColumn.SOURCE_KIND, position).orElseThrow(),
                string(page, ReadingsColumn.SOURCE_DETAIL, position),
                string(page, ReadingsColumn.PROVENANCE, position),
                ((Int128) VERSION.getObject(block(page, ReadingsColumn.VERSION), position)).toBigInteger(),
                string(page, ReadingsColumn.VERSION_SCOPE, position).orElseThrow(),
                instant(page, ReadingsColumn.RECORDED_AT, position),
                LocalDate.ofEpochDay(DATE.getLong(block(page, ReadingsColumn.BALANCING_DAY), position)));
    }

    private static Block block(SourcePage page, ReadingsColumn column)
    {
        return page.getBlock(column.ordinal());
    }

    private static Optional<String> string(SourcePage page, ReadingsColumn column, int position)
    {
        Block block = block(page, column);
        if (block.isNull(position)) {
            return Optional.empty();
        }
        return Optional.of(VARCHAR.getSlice(block, position).toStringUtf8());
    }

    private static Instant instant(SourcePage page, ReadingsColumn column, int position)
    {
        LongTimestampWithTimeZone value = (LongTimestampWithTimeZone) TIMESTAMP_TZ_MICROS.getObject(block(page, column), position);
        return Instant.ofEpochMilli(value.getEpochMillis()).plusNanos(value.getPicosOfMilli() / 1_000);
    }

    private static final class LocalParquetDataSource
            extends AbstractParquetDataSource
    {
        private final RandomAccessFile file;

        LocalParquetDataSource(Path path)
                throws IOException
        {
            super(new ParquetDataSourceId(path.toString()), Files.size(path), ParquetReaderOptions.defaultOptions());
            this.file = new RandomAccessFile(path.toFile(), "r");
        }

        @Override
        protected void readInternal(long position, byte[] buffer, int bufferOffset, int bufferLength)
                throws IOException
        {
            file.seek(position);
            file.readFully(buffer, bufferOffset, bufferLength);
        }

        @Override
        public void close()
                throws IOException
        {
            file.close();
        }
    }
}
