package io.meterstore.trino.cold;

import com.google.common.collect.ImmutableMap;
import io.meterstore.core.ColdFileRole;
import io.meterstore.core.IcebergCatalogs;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.TieringWatermark;
import io.meterstore.storage.ForwardingFileIo;
import io.meterstore.testing.TestingDatabase;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.meterstore.trino.base.MeterstoreTypes;
import io.trino.filesystem.Location;
import io.trino.filesystem.TrinoFileSystem;
import io.trino.filesystem.TrinoFileSystemFactory;
import io.trino.filesystem.local.LocalFileSystem;
import io.trino.parquet.writer.ParquetWriter;
import io.trino.parquet.writer.ParquetWriterOptions;
import io.trino.spi.Page;
import io.trino.spi.block.Block;
import io.trino.spi.block.BlockBuilder;
import io.trino.spi.type.Int128;
import io.trino.spi.type.LongTimestampWithTimeZone;
import io.trino.spi.type.TimeZoneKey;
import io.trino.spi.type.Type;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.PartitionData;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Comparators;
import org.apache.iceberg.types.Conversions;
import org.apache.parquet.format.ColumnMetaData;
import org.apache.parquet.format.CompressionCodec;
import org.apache.parquet.format.RowGroup;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.LogicalTypeAnnotation.TimeUnit;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type.Repetition;
import org.apache.parquet.schema.Types;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.collect.ImmutableList.toImmutableList;
import static com.google.common.io.MoreFiles.deleteRecursively;
import static com.google.common.io.RecursiveDeleteOption.ALLOW_INSECURE;
import static io.airlift.slice.Slices.utf8Slice;
import static io.meterstore.trino.base.MeterstoreTypes.toEpochMicros;
import static java.util.Objects.requireNonNull;

/**
 * A readings table in a real Iceberg JDBC catalogue on the embedded PostgreSQL, with metadata and manifests written and
 * read through {@link ForwardingFileIo} over Trino's local file system, and data files written by Trino's Parquet writer
 * the way the archiver writes them: Iceberg field ids, ZSTD, bloom filters on malo_id and obis_code, column bounds and
 * split offsets in the manifest.
 */
final class TestingColdTable
        implements AutoCloseable
{
    static final TrinoFileSystem FILE_SYSTEM = new LocalFileSystem(Path.of("/"));
    static final TrinoFileSystemFactory FILE_SYSTEM_FACTORY = identity -> FILE_SYSTEM;

    private final TestingWarehouse warehouse;
    private final Table table;

    private TestingColdTable(TestingWarehouse warehouse, Table table)
    {
        this.warehouse = requireNonNull(warehouse, "warehouse is null");
        this.table = requireNonNull(table, "table is null");
    }

    static TestingColdTable create(String name)
    {
        TestingDatabase database = TestingPostgresServer.shared().createDatabase(name);
        TestingWarehouse warehouse = TestingWarehouse.create(database);
        Catalog catalog = IcebergCatalogs.jdbc(warehouse.catalogSpec(), properties -> new ForwardingFileIo(FILE_SYSTEM));
        Table table = IcebergTableSpec.createIfMissing(catalog, TableIdentifier.of("meterstore", "readings"));
        return new TestingColdTable(warehouse, table);
    }

    Table table()
    {
        table.refresh();
        return table;
    }

    /** Commits the files in one snapshot carrying {@code watermark}, as an archival commit does; returns its id. */
    long append(TieringWatermark watermark, DataFile... files)
    {
        AppendFiles append = table.newFastAppend();
        for (DataFile file : files) {
            append.appendFile(file);
        }
        append.set(TieringWatermark.WATERMARK_KEY, watermark.toProperty()).commit();
        return table().currentSnapshot().snapshotId();
    }

    /** Writes {@code readings} (one month of "from", in sort-key order) as one Parquet data file of the table. */
    DataFile writeDataFile(List<Reading> readings, int rowGroupRows)
    {
        return writeDataFile(readings, rowGroupRows, List.of(ReadingsColumn.values()), true, Optional.empty());
    }

    /** As {@link #writeDataFile(List, int)}, named as a file of {@code role} in the resolved layout. */
    DataFile writeDataFile(List<Reading> readings, int rowGroupRows, ColdFileRole role)
    {
        return writeDataFile(readings, rowGroupRows, List.of(ReadingsColumn.values()), true, Optional.of(role));
    }

    /**
     * As {@link #writeDataFile(List, int)}, with only {@code columns} (a file written before a column was added) and
     * optionally without field ids (a file written by a tool that does not record them).
     */
    DataFile writeDataFile(List<Reading> readings, int rowGroupRows, List<ReadingsColumn> columns, boolean fieldIds)
    {
        return writeDataFile(readings, rowGroupRows, columns, fieldIds, Optional.empty());
    }

    private DataFile writeDataFile(List<Reading> readings, int rowGroupRows, List<ReadingsColumn> columns, boolean fieldIds, Optional<ColdFileRole> role)
    {
        checkArgument(!readings.isEmpty(), "readings is empty");
        YearMonth month = YearMonth.from(readings.getFirst().from().atZone(ZoneOffset.UTC));
        checkArgument(readings.stream().allMatch(reading -> YearMonth.from(reading.from().atZone(ZoneOffset.UTC)).equals(month)), "readings span more than one month");

        String name = role.map(fileRole -> fileRole.fileName(UUID.randomUUID().toString(), 1)).orElse(UUID.randomUUID() + ".parquet");
        Location location = Location.of(table.location()).appendPath("data/from_month=%s/%s".formatted(month, name));
        ParquetWriter writer;
        try {
            // the writer owns the stream and closes it with the footer
            writer = new ParquetWriter(
                    FILE_SYSTEM.newOutputFile(location).create(),
                    messageType(columns, fieldIds),
                    primitiveTypes(columns),
                    ParquetWriterOptions.builder()
                            .setMaxRowGroupRowCount(rowGroupRows)
                            .setBloomFilterColumns(Set.of(ReadingsColumn.MALO_ID.columnName(), ReadingsColumn.OBIS_CODE.columnName()))
                            .build(),
                    CompressionCodec.ZSTD,
                    "meterstore-test",
                    Optional.empty(),
                    Optional.empty());
            writer.write(page(readings, columns));
            writer.close();
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }

        PartitionData partition = new PartitionData(table.spec().partitionType());
        partition.set(0, (month.getYear() - 1970) * 12 + month.getMonthValue() - 1);
        try {
            return DataFiles.builder(table.spec())
                    .withPath(location.toString())
                    .withFormat(FileFormat.PARQUET)
                    .withFileSizeInBytes(FILE_SYSTEM.newInputFile(location).length())
                    .withRecordCount(readings.size())
                    .withPartition(partition)
                    .withMetrics(metrics(readings, columns))
                    .withSplitOffsets(splitOffsets(writer.getFileMetaData().getRow_groups()))
                    .withSortOrder(table.sortOrder())
                    .build();
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close()
    {
        warehouse.database().close();
        try {
            deleteRecursively(warehouse.directory(), ALLOW_INSECURE);
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The layout the archiver writes: every column with its Iceberg field id and Iceberg's physical type. */
    private static MessageType messageType(List<ReadingsColumn> columns, boolean fieldIds)
    {
        Types.MessageTypeBuilder builder = Types.buildMessage();
        for (ReadingsColumn column : columns) {
            Repetition repetition = column.nullable() ? Repetition.OPTIONAL : Repetition.REQUIRED;
            Types.PrimitiveBuilder<PrimitiveType> type = switch (column.kind()) {
                case STRING -> Types.primitive(PrimitiveTypeName.BINARY, repetition).as(LogicalTypeAnnotation.stringType());
                case TIMESTAMP_TZ -> Types.primitive(PrimitiveTypeName.INT64, repetition).as(LogicalTypeAnnotation.timestampType(true, TimeUnit.MICROS));
                case QUANTITY -> Types.primitive(PrimitiveTypeName.INT64, repetition).as(LogicalTypeAnnotation.decimalType(6, 18));
                case VERSION -> Types.primitive(PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY, repetition).length(9).as(LogicalTypeAnnotation.decimalType(0, 20));
                case DATE -> Types.primitive(PrimitiveTypeName.INT32, repetition).as(LogicalTypeAnnotation.dateType());
            };
            builder.addField((fieldIds ? type.id(column.fieldId()) : type).named(column.columnName()));
        }
        return builder.named("table");
    }

    private static Map<List<String>, Type> primitiveTypes(List<ReadingsColumn> columns)
    {
        ImmutableMap.Builder<List<String>, Type> types = ImmutableMap.builder();
        for (ReadingsColumn column : columns) {
            types.put(List.of(column.columnName()), MeterstoreTypes.columnHandle(column).type());
        }
        return types.buildOrThrow();
    }

    private static Page page(List<Reading> readings, List<ReadingsColumn> columns)
    {
        Block[] blocks = new Block[columns.size()];
        for (int channel = 0; channel < columns.size(); channel++) {
            MeterstoreColumnHandle column = MeterstoreTypes.columnHandle(columns.get(channel));
            BlockBuilder builder = column.type().createBlockBuilder(null, readings.size());
            for (Reading reading : readings) {
                Object value = icebergValue(columns.get(channel), reading);
                if (value == null) {
                    builder.appendNull();
                    continue;
                }
                switch (column.column().kind()) {
                    case STRING -> column.type().writeSlice(builder, utf8Slice((String) value));
                    // written in Berlin time: Parquet keeps the instant, the zone is not stored
                    case TIMESTAMP_TZ -> column.type().writeObject(builder, LongTimestampWithTimeZone.fromEpochMillisAndFraction(
                            Math.floorDiv((long) value, 1_000L), (int) Math.floorMod((long) value, 1_000L) * 1_000_000, TimeZoneKey.getTimeZoneKey("Europe/Berlin")));
                    case QUANTITY -> column.type().writeLong(builder, ((BigDecimal) value).unscaledValue().longValueExact());
                    case VERSION -> column.type().writeObject(builder, Int128.valueOf(((BigDecimal) value).unscaledValue()));
                    case DATE -> column.type().writeLong(builder, (int) value);
                }
            }
            blocks[channel] = builder.build();
        }
        return new Page(readings.size(), blocks);
    }

    /** A column's value in a reading as Iceberg represents it (the form {@link Conversions} takes), or null. */
    static Object icebergValue(ReadingsColumn column, Reading reading)
    {
        return switch (column) {
            case MALO_ID -> reading.maloId();
            case MELO_ID -> reading.meloId().orElse(null);
            case OBIS_CODE -> reading.obisCode();
            case SPARTE -> reading.sparte().name();
            case FROM -> toEpochMicros(reading.from());
            case TO -> toEpochMicros(reading.end());
            case VALUE -> reading.value().setScale(6);
            case UNIT -> reading.unit().name();
            case QUALITY -> reading.quality().name();
            case RESOLUTION -> reading.resolution();
            case SOURCE_KIND -> reading.sourceKind();
            case SOURCE_DETAIL -> reading.sourceDetail().orElse(null);
            case PROVENANCE -> reading.provenance().orElse(null);
            case VERSION -> new BigDecimal(reading.version());
            case VERSION_SCOPE -> reading.versionScope();
            case RECORDED_AT -> toEpochMicros(reading.recordedAt());
            case BALANCING_DAY -> (int) reading.balancingDay().toEpochDay();
        };
    }

    /** Value counts, null counts and exact lower and upper bounds of every column, as the manifest carries them. */
    private static Metrics metrics(List<Reading> readings, List<ReadingsColumn> columns)
    {
        Map<Integer, Long> valueCounts = new HashMap<>();
        Map<Integer, Long> nullCounts = new HashMap<>();
        Map<Integer, ByteBuffer> lowerBounds = new HashMap<>();
        Map<Integer, ByteBuffer> upperBounds = new HashMap<>();
        for (ReadingsColumn column : columns) {
            Comparator<Object> order = Comparators.forType(column.icebergType().asPrimitiveType());
            List<Object> values = readings.stream()
                    .map(reading -> icebergValue(column, reading))
                    .filter(Objects::nonNull)
                    .sorted(order)
                    .collect(toImmutableList());
            valueCounts.put(column.fieldId(), (long) readings.size());
            nullCounts.put(column.fieldId(), (long) (readings.size() - values.size()));
            if (!values.isEmpty()) {
                lowerBounds.put(column.fieldId(), Conversions.toByteBuffer(column.icebergType(), values.getFirst()));
                upperBounds.put(column.fieldId(), Conversions.toByteBuffer(column.icebergType(), values.getLast()));
            }
        }
        return new Metrics((long) readings.size(), null, valueCounts, nullCounts, null, lowerBounds, upperBounds);
    }

    /** Where each row group starts: its first column chunk's dictionary page, or its first data page. */
    private static List<Long> splitOffsets(List<RowGroup> rowGroups)
    {
        return rowGroups.stream()
                .map(rowGroup -> {
                    ColumnMetaData first = rowGroup.getColumns().getFirst().getMeta_data();
                    return first.isSetDictionary_page_offset() && first.getDictionary_page_offset() > 0 && first.getDictionary_page_offset() < first.getData_page_offset()
                            ? first.getDictionary_page_offset()
                            : first.getData_page_offset();
                })
                .collect(toImmutableList());
    }
}
