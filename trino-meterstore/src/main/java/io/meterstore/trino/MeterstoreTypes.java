package io.meterstore.trino;

import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.ReadingsColumn.ColumnKind;
import io.trino.spi.block.Block;
import io.trino.spi.block.Fixed12Block;
import io.trino.spi.type.DateType;
import io.trino.spi.type.DecimalType;
import io.trino.spi.type.TimestampWithTimeZoneType;
import io.trino.spi.type.Type;
import io.trino.spi.type.VarcharType;

import io.trino.spi.type.LongTimestampWithTimeZone;

import java.time.Instant;
import java.util.Arrays;
import java.util.List;

import static io.trino.spi.type.DateTimeEncoding.unpackMillisUtc;
import static io.trino.spi.type.TimeZoneKey.UTC_KEY;

/** The Trino type of each value domain of the readings schema. */
public final class MeterstoreTypes
{
    public static final TimestampWithTimeZoneType TIMESTAMP_TZ_MICROS = TimestampWithTimeZoneType.createTimestampWithTimeZoneType(6);
    public static final DecimalType QUANTITY = DecimalType.createDecimalType(18, 6);
    public static final DecimalType VERSION = DecimalType.createDecimalType(20, 0);

    private MeterstoreTypes() {}

    public static Type trinoType(ColumnKind kind)
    {
        return switch (kind) {
            case STRING -> VarcharType.VARCHAR;
            case TIMESTAMP_TZ -> TIMESTAMP_TZ_MICROS;
            case QUANTITY -> QUANTITY;
            case VERSION -> VERSION;
            case DATE -> DateType.DATE;
        };
    }

    public static MeterstoreColumnHandle columnHandle(ReadingsColumn column)
    {
        return new MeterstoreColumnHandle(column, trinoType(column.kind()));
    }

    public static List<MeterstoreColumnHandle> columnHandles()
    {
        return Arrays.stream(ReadingsColumn.values()).map(MeterstoreTypes::columnHandle).toList();
    }

    public static long toEpochMicros(Instant instant)
    {
        return Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000L), instant.getNano() / 1_000);
    }

    public static Instant fromEpochMicros(long epochMicros)
    {
        return Instant.ofEpochSecond(Math.floorDiv(epochMicros, 1_000_000L), Math.floorMod(epochMicros, 1_000_000L) * 1_000L);
    }

    public static long toEpochMicros(LongTimestampWithTimeZone timestamp)
    {
        return Math.addExact(Math.multiplyExact(timestamp.getEpochMillis(), 1_000L), timestamp.getPicosOfMilli() / 1_000_000);
    }

    /** A timestamp(6) with time zone of a block in microseconds since the epoch, read in place: no object per value. */
    public static long epochMicros(Block block, int position)
    {
        Fixed12Block values = (Fixed12Block) block.getUnderlyingValueBlock();
        int valuePosition = block.getUnderlyingValuePosition(position);
        return unpackMillisUtc(values.getFixed12First(valuePosition)) * 1_000 + values.getFixed12Second(valuePosition) / 1_000_000;
    }

    public static LongTimestampWithTimeZone toTimestamp(long epochMicros)
    {
        return LongTimestampWithTimeZone.fromEpochMillisAndFraction(Math.floorDiv(epochMicros, 1_000L), Math.floorMod(epochMicros, 1_000) * 1_000_000, UTC_KEY);
    }
}
