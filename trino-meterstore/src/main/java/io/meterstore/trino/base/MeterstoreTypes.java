package io.meterstore.trino.base;

import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.TableColumn;
import io.meterstore.core.TableColumns;
import io.meterstore.parquet.ReadingsParquetSchema;
import io.trino.spi.block.Block;
import io.trino.spi.block.Fixed12Block;
import io.trino.spi.type.DecimalType;
import io.trino.spi.type.LongTimestampWithTimeZone;
import io.trino.spi.type.TimestampWithTimeZoneType;

import java.time.Instant;
import java.util.List;

import static io.trino.spi.type.DateTimeEncoding.unpackMillisUtc;
import static io.trino.spi.type.TimeZoneKey.UTC_KEY;

/** The Trino types of the readings schema as the connector uses them: column handles, and instants in Trino's encodings. */
public final class MeterstoreTypes
{
    // the types of the readings schema are ReadingsParquetSchema's, which maps each ColumnKind to its Trino type once
    public static final TimestampWithTimeZoneType TIMESTAMP_TZ_MICROS = ReadingsParquetSchema.TIMESTAMP_TZ_MICROS;
    public static final DecimalType QUANTITY = ReadingsParquetSchema.QUANTITY;
    public static final DecimalType VERSION = ReadingsParquetSchema.VERSION;

    private MeterstoreTypes() {}

    public static MeterstoreColumnHandle columnHandle(ReadingsColumn column)
    {
        return columnHandle(TableColumn.of(column));
    }

    public static MeterstoreColumnHandle columnHandle(TableColumn column)
    {
        return new MeterstoreColumnHandle(column, ReadingsParquetSchema.trinoType(column.kind()));
    }

    /** The handles of the readings columns: every stored column of a table without attribute columns. */
    public static List<MeterstoreColumnHandle> columnHandles()
    {
        return columnHandles(TableColumns.READINGS);
    }

    /** The handles of every stored column of a table of {@code columns}, in storage order. */
    public static List<MeterstoreColumnHandle> columnHandles(TableColumns columns)
    {
        return columns.all().stream().map(MeterstoreTypes::columnHandle).toList();
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
