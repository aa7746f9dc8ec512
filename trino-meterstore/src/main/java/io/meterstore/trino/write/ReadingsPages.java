package io.meterstore.trino.write;

import io.airlift.slice.Slices;
import io.meterstore.core.InvalidReadingException;
import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.Sparte;
import io.meterstore.core.Sparte.MeasurementUnit;
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
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.IntFunction;

import static io.meterstore.trino.base.MeterstoreTypes.QUANTITY;
import static io.meterstore.trino.base.MeterstoreTypes.TIMESTAMP_TZ_MICROS;
import static io.meterstore.trino.base.MeterstoreTypes.VERSION;
import static io.trino.spi.type.DateType.DATE;
import static io.trino.spi.type.VarcharType.VARCHAR;

/** Rows of Trino pages as {@link Reading}s and back: what INSERT receives, and the pages the Parquet writer takes. */
final class ReadingsPages
{
    private ReadingsPages() {}

    /**
     * The reading at {@code position}; {@code blocks} maps a column to its block, absent for a column the INSERT did not
     * name. recorded_at defaults to {@code statementStart}, balancing_day to the one the calendar computes.
     */
    static Reading read(Map<ReadingsColumn, Block> blocks, int position, Instant statementStart)
    {
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
                date(blocks, position).orElseGet(() -> MeteringCalendar.balancingDay(sparte, from)));
    }

    /** The blocks of a page whose channels are {@code columns}, by column. */
    static Map<ReadingsColumn, Block> blocks(List<ReadingsColumn> columns, IntFunction<Block> channel)
    {
        Map<ReadingsColumn, Block> blocks = new EnumMap<>(ReadingsColumn.class);
        for (int index = 0; index < columns.size(); index++) {
            blocks.put(columns.get(index), channel.apply(index));
        }
        return blocks;
    }

    /** Readings as a page of all columns in storage order, the layout of a readings data file. */
    static Page toPage(List<Reading> readings)
    {
        ReadingsColumn[] columns = ReadingsColumn.values();
        BlockBuilder[] builders = new BlockBuilder[columns.length];
        for (ReadingsColumn column : columns) {
            builders[column.ordinal()] = ReadingsParquetSchema.trinoType(column.kind()).createBlockBuilder(null, readings.size());
        }
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
