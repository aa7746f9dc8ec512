package io.meterstore.trino.write;

import io.airlift.slice.Slice;
import io.airlift.slice.Slices;
import io.meterstore.core.InvalidReadingException;
import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.Sparte;
import io.meterstore.core.Sparte.MeasurementUnit;
import io.meterstore.core.TableColumn;
import io.meterstore.core.TableColumns;
import io.meterstore.parquet.ReadingsParquetSchema;
import io.meterstore.trino.base.MeterstoreTypes;
import io.trino.spi.Page;
import io.trino.spi.block.Block;
import io.trino.spi.block.BlockBuilder;
import io.trino.spi.type.Int128;
import io.trino.spi.type.LongTimestampWithTimeZone;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.IntFunction;

import static com.google.common.base.Preconditions.checkArgument;
import static io.meterstore.trino.base.MeterstoreTypes.QUANTITY;
import static io.meterstore.trino.base.MeterstoreTypes.TIMESTAMP_TZ_MICROS;
import static io.meterstore.trino.base.MeterstoreTypes.VERSION;
import static io.trino.spi.type.DateType.DATE;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * Rows of Trino pages as {@link Reading}s and back: what INSERT receives, and the pages the Parquet writer takes, a
 * channel per column of the table ({@link TableColumns}): the readings columns, then its attribute columns.
 */
final class ReadingsPages
{
    private ReadingsPages() {}

    /**
     * The blocks of a page by column: a readings column's by the column, absent for one the page does not carry; an
     * attribute column's at its place among the table's attribute columns, null for one the page does not carry.
     */
    record PageBlocks(Map<ReadingsColumn, Block> readings, Block[] attributes, List<String> attributeNames)
    {
        PageBlocks
        {
            requireNonNull(readings, "readings is null");
            requireNonNull(attributes, "attributes is null");
            checkArgument(attributeNames.size() == attributes.length, "attributeNames do not match attributes");
        }

        Block get(ReadingsColumn column)
        {
            return readings.get(column);
        }
    }

    /**
     * The reading at {@code position}; {@code blocks} maps a column to its block, absent for a column the INSERT did not
     * name. recorded_at defaults to {@code statementStart}, balancing_day to the one the calendar computes.
     */
    static Reading read(PageBlocks pageBlocks, int position, Instant statementStart)
    {
        Map<ReadingsColumn, Block> blocks = pageBlocks.readings();
        String maloId = string(blocks, ReadingsColumn.MALO_ID, position).orElseThrow(() -> missing(ReadingsColumn.MALO_ID));
        String obisCode = string(blocks, ReadingsColumn.OBIS_CODE, position).orElseThrow(() -> missing(ReadingsColumn.OBIS_CODE));
        Instant from = instant(blocks, ReadingsColumn.FROM, position).orElseThrow(() -> missing(ReadingsColumn.FROM));
        Sparte sparte = Sparte.parse(string(blocks, ReadingsColumn.SPARTE, position).orElseThrow(() -> missing(ReadingsColumn.SPARTE)));
        return new Reading(
                maloId,
                string(blocks, ReadingsColumn.MELO_ID, position),
                obisCode,
                sparte,
                from,
                // NULL on a point table's register reading; the table's time model decides whether it may be (Reading#requireTimeModel)
                instant(blocks, ReadingsColumn.TO, position),
                value(blocks, position).orElseThrow(() -> missing(ReadingsColumn.VALUE)),
                MeasurementUnit.parse(string(blocks, ReadingsColumn.UNIT, position).orElseThrow(() -> missing(ReadingsColumn.UNIT))),
                Quality.parse(string(blocks, ReadingsColumn.QUALITY, position).orElseThrow(() -> missing(ReadingsColumn.QUALITY))),
                string(blocks, ReadingsColumn.RESOLUTION, position).orElseThrow(() -> missing(ReadingsColumn.RESOLUTION)),
                string(blocks, ReadingsColumn.SOURCE_KIND, position).orElseThrow(() -> missing(ReadingsColumn.SOURCE_KIND)),
                string(blocks, ReadingsColumn.SOURCE_DETAIL, position),
                string(blocks, ReadingsColumn.PROVENANCE, position),
                version(blocks, position).orElseThrow(() -> missing(ReadingsColumn.VERSION)),
                string(blocks, ReadingsColumn.VERSION_SCOPE, position).orElseThrow(() -> missing(ReadingsColumn.VERSION_SCOPE)),
                // one instant for the whole statement: its rows were learned together
                instant(blocks, ReadingsColumn.RECORDED_AT, position).orElse(statementStart),
                date(blocks, position).orElseGet(() -> MeteringCalendar.balancingDay(sparte, from)),
                attributes(pageBlocks, position));
    }

    /** The values of the attribute columns at {@code position}, in their order; NULL for a column the page does not carry. */
    private static List<Optional<String>> attributes(PageBlocks pageBlocks, int position)
    {
        Block[] blocks = pageBlocks.attributes();
        if (blocks.length == 0) {
            return List.of();
        }
        List<Optional<String>> values = new ArrayList<>(blocks.length);
        for (int attribute = 0; attribute < blocks.length; attribute++) {
            Block block = blocks[attribute];
            if (block == null || block.isNull(position)) {
                values.add(Optional.empty());
                continue;
            }
            Slice value = VARCHAR.getSlice(block, position);
            if (value.indexOfByte(0) >= 0) {
                throw new InvalidReadingException("Column '%s' holds a NUL character, which PostgreSQL text cannot store".formatted(pageBlocks.attributeNames().get(attribute)));
            }
            values.add(Optional.of(value.toStringUtf8()));
        }
        return values;
    }

    /** The blocks of a page of a table of {@code table} whose channels are {@code columns}, by column. */
    static PageBlocks blocks(TableColumns table, List<TableColumn> columns, IntFunction<Block> channel)
    {
        Map<ReadingsColumn, Block> readings = new EnumMap<>(ReadingsColumn.class);
        Block[] attributes = new Block[table.attributes().size()];
        for (int index = 0; index < columns.size(); index++) {
            TableColumn column = columns.get(index);
            Optional<ReadingsColumn> readingsColumn = column.readingsColumn();
            if (readingsColumn.isPresent()) {
                readings.put(readingsColumn.get(), channel.apply(index));
                continue;
            }
            int attribute = table.attributes().indexOf(column);
            checkArgument(attribute >= 0, "Column '%s' is not a column of the table %s", column.name(), table);
            attributes[attribute] = channel.apply(index);
        }
        return new PageBlocks(readings, attributes, table.attributeNames());
    }

    /** Readings of a table of {@code columns} as a page of all its columns in storage order, the layout of its data files. */
    static Page toPage(TableColumns columns, List<Reading> readings)
    {
        BlockBuilder[] builders = new BlockBuilder[columns.size()];
        for (int channel = 0; channel < builders.length; channel++) {
            builders[channel] = ReadingsParquetSchema.trinoType(columns.all().get(channel).kind()).createBlockBuilder(null, readings.size());
        }
        int attributes = columns.attributes().size();
        for (Reading reading : readings) {
            writeString(builders[ReadingsColumn.MALO_ID.ordinal()], Optional.of(reading.maloId()));
            writeString(builders[ReadingsColumn.MELO_ID.ordinal()], reading.meloId());
            writeString(builders[ReadingsColumn.OBIS_CODE.ordinal()], Optional.of(reading.obisCode()));
            writeString(builders[ReadingsColumn.SPARTE.ordinal()], Optional.of(reading.sparte().name()));
            writeInstant(builders[ReadingsColumn.FROM.ordinal()], reading.from());
            reading.to().ifPresentOrElse(to -> writeInstant(builders[ReadingsColumn.TO.ordinal()], to), builders[ReadingsColumn.TO.ordinal()]::appendNull);
            QUANTITY.writeLong(builders[ReadingsColumn.VALUE.ordinal()], reading.value().setScale(QUANTITY.getScale()).unscaledValue().longValueExact());
            writeString(builders[ReadingsColumn.UNIT.ordinal()], Optional.of(reading.unit().name()));
            writeString(builders[ReadingsColumn.QUALITY.ordinal()], Optional.of(reading.quality().name()));
            writeString(builders[ReadingsColumn.RESOLUTION.ordinal()], Optional.of(reading.resolution()));
            writeString(builders[ReadingsColumn.SOURCE_KIND.ordinal()], Optional.of(reading.sourceKind()));
            writeString(builders[ReadingsColumn.SOURCE_DETAIL.ordinal()], reading.sourceDetail());
            writeString(builders[ReadingsColumn.PROVENANCE.ordinal()], reading.provenance());
            VERSION.writeObject(builders[ReadingsColumn.VERSION.ordinal()], Int128.valueOf(reading.version()));
            writeString(builders[ReadingsColumn.VERSION_SCOPE.ordinal()], Optional.of(reading.versionScope()));
            writeInstant(builders[ReadingsColumn.RECORDED_AT.ordinal()], reading.recordedAt());
            DATE.writeLong(builders[ReadingsColumn.BALANCING_DAY.ordinal()], reading.balancingDay().toEpochDay());
            checkArgument(reading.attributes().size() == attributes, "Reading %s carries %s attribute values, its table has %s attribute columns", RowDescription.describe(reading), reading.attributes().size(), attributes);
            for (int attribute = 0; attribute < attributes; attribute++) {
                writeString(builders[columns.attributeChannel(attribute)], reading.attributes().get(attribute));
            }
        }
        Block[] blocks = new Block[builders.length];
        for (int index = 0; index < builders.length; index++) {
            blocks[index] = builders[index].build();
        }
        return new Page(readings.size(), blocks);
    }

    private static InvalidReadingException missing(ReadingsColumn column)
    {
        return new InvalidReadingException("Column '%s' is required but NULL".formatted(column.columnName()));
    }

    private static Optional<Block> block(Map<ReadingsColumn, Block> blocks, ReadingsColumn column, int position)
    {
        Block block = blocks.get(column);
        if (block == null || block.isNull(position)) {
            return Optional.empty();
        }
        return Optional.of(block);
    }

    private static Optional<String> string(Map<ReadingsColumn, Block> blocks, ReadingsColumn column, int position)
    {
        return block(blocks, column, position).map(block -> VARCHAR.getSlice(block, position).toStringUtf8());
    }

    private static Optional<Instant> instant(Map<ReadingsColumn, Block> blocks, ReadingsColumn column, int position)
    {
        return block(blocks, column, position).map(block -> MeterstoreTypes.fromEpochMicros(MeterstoreTypes.toEpochMicros((LongTimestampWithTimeZone) TIMESTAMP_TZ_MICROS.getObject(block, position))));
    }

    private static Optional<BigDecimal> value(Map<ReadingsColumn, Block> blocks, int position)
    {
        return block(blocks, ReadingsColumn.VALUE, position).map(block -> BigDecimal.valueOf(QUANTITY.getLong(block, position), QUANTITY.getScale()));
    }

    private static Optional<BigInteger> version(Map<ReadingsColumn, Block> blocks, int position)
    {
        return block(blocks, ReadingsColumn.VERSION, position).map(block -> ((Int128) VERSION.getObject(block, position)).toBigInteger());
    }

    private static Optional<LocalDate> date(Map<ReadingsColumn, Block> blocks, int position)
    {
        return block(blocks, ReadingsColumn.BALANCING_DAY, position).map(block -> LocalDate.ofEpochDay(DATE.getInt(block, position)));
    }

    private static void writeString(BlockBuilder builder, Optional<String> value)
    {
        if (value.isEmpty()) {
            builder.appendNull();
            return;
        }
        VARCHAR.writeSlice(builder, Slices.utf8Slice(value.get()));
    }

    private static void writeInstant(BlockBuilder builder, Instant instant)
    {
        TIMESTAMP_TZ_MICROS.writeObject(builder, MeterstoreTypes.toTimestamp(MeterstoreTypes.toEpochMicros(instant)));
    }
}
