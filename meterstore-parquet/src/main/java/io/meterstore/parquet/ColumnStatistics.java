package io.meterstore.parquet;

import io.airlift.slice.Slice;
import io.meterstore.core.ReadingsColumn;
import io.trino.spi.block.Block;
import io.trino.spi.type.Int128;
import io.trino.spi.type.LongTimestampWithTimeZone;

import java.math.BigDecimal;
import java.util.Optional;
import java.util.function.LongFunction;

import static io.meterstore.parquet.ReadingsParquetSchema.QUANTITY;
import static io.meterstore.parquet.ReadingsParquetSchema.TIMESTAMP_TZ_MICROS;
import static io.meterstore.parquet.ReadingsParquetSchema.VERSION;
import static io.trino.spi.type.DateType.DATE;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.lang.Math.multiplyExact;
import static java.util.Objects.requireNonNull;

/**
 * The null count and the bounds of one column over every page written to one file, with the bounds in the Java type
 * Iceberg's {@code Conversions} expects: micros as Long for timestamptz, BigDecimal for decimals, Integer days for date,
 * a CharSequence for strings. Readers prune files with these bounds, so they must hold every value written.
 */
abstract sealed class ColumnStatistics
{
    private static final long PICOSECONDS_PER_MICROSECOND = 1_000_000;
    private static final long MICROSECONDS_PER_MILLISECOND = 1_000;

    private final ReadingsColumn column;
    private long nullCount;

    private ColumnStatistics(ReadingsColumn column)
    {
        this.column = requireNonNull(column, "column is null");
    }

    static ColumnStatistics create(ReadingsColumn column)
    {
        return switch (column.kind()) {
            case STRING -> new StringStatistics(column);
            case TIMESTAMP_TZ -> new LongStatistics(column, (block, position) -> toMicros((LongTimestampWithTimeZone) TIMESTAMP_TZ_MICROS.getObject(block, position)), micros -> micros);
            case QUANTITY -> new LongStatistics(column, QUANTITY::getLong, unscaled -> BigDecimal.valueOf(unscaled, QUANTITY.getScale()));
            case DATE -> new LongStatistics(column, DATE::getLong, days -> Math.toIntExact(days));
            case VERSION -> new Int128Statistics(column);
        };
    }

    ReadingsColumn column()
    {
        return column;
    }

    long nullCount()
    {
        return nullCount;
    }

    void add(Block block)
    {
        boolean mayHaveNull = block.mayHaveNull();
        for (int position = 0; position < block.getPositionCount(); position++) {
            if (mayHaveNull && block.isNull(position)) {
                nullCount++;
            }
            else {
                addValue(block, position);
            }
        }
    }

    abstract void addValue(Block block, int position);

    abstract Optional<Object> lowerBound();

    abstract Optional<Object> upperBound();

    static long toMicros(LongTimestampWithTimeZone timestamp)
    {
        return multiplyExact(timestamp.getEpochMillis(), MICROSECONDS_PER_MILLISECOND) + timestamp.getPicosOfMilli() / PICOSECONDS_PER_MICROSECOND;
    }

    private static final class StringStatistics
            extends ColumnStatistics
    {
        // UTF-8 bytes compared unsigned: code point order, the order Iceberg and Parquet compare strings in
        private Slice min;
        private Slice max;

        StringStatistics(ReadingsColumn column)
        {
            super(column);
        }

        @Override
        void addValue(Block block, int position)
        {
            Slice value = VARCHAR.getSlice(block, position);
            if (min == null || value.compareTo(min) < 0) {
                // a copy: the page's buffer is not retained past the page
                min = value.copy();
            }
            if (max == null || value.compareTo(max) > 0) {
                max = value.copy();
            }
        }

        @Override
        Optional<Object> lowerBound()
        {
            return Optional.ofNullable(min).map(Slice::toStringUtf8);
        }

        @Override
        Optional<Object> upperBound()
        {
            return Optional.ofNullable(max).map(Slice::toStringUtf8);
        }
    }

    private static final class LongStatistics
            extends ColumnStatistics
    {
        private final LongReader reader;
        private final LongFunction<Object> toIceberg;
        private boolean seen;
        private long min = Long.MAX_VALUE;
        private long max = Long.MIN_VALUE;

        LongStatistics(ReadingsColumn column, LongReader reader, LongFunction<Object> toIceberg)
        {
            super(column);
            this.reader = requireNonNull(reader, "reader is null");
            this.toIceberg = requireNonNull(toIceberg, "toIceberg is null");
        }

        @Override
        void addValue(Block block, int position)
        {
            long value = reader.read(block, position);
            seen = true;
            min = Math.min(min, value);
            max = Math.max(max, value);
        }

        @Override
        Optional<Object> lowerBound()
        {
            return seen ? Optional.of(toIceberg.apply(min)) : Optional.empty();
        }

        @Override
        Optional<Object> upperBound()
        {
            return seen ? Optional.of(toIceberg.apply(max)) : Optional.empty();
        }

        interface LongReader
        {
            long read(Block block, int position);
        }
    }

    private static final class Int128Statistics
            extends ColumnStatistics
    {
        private Int128 min;
        private Int128 max;

        Int128Statistics(ReadingsColumn column)
        {
            super(column);
        }

        @Override
        void addValue(Block block, int position)
        {
            Int128 value = (Int128) VERSION.getObject(block, position);
            if (min == null || value.compareTo(min) < 0) {
                min = value;
            }
            if (max == null || value.compareTo(max) > 0) {
                max = value;
            }
        }

        @Override
        Optional<Object> lowerBound()
        {
            return Optional.ofNullable(min).map(value -> new BigDecimal(value.toBigInteger(), VERSION.getScale()));
        }

        @Override
        Optional<Object> upperBound()
        {
            return Optional.ofNullable(max).map(value -> new BigDecimal(value.toBigInteger(), VERSION.getScale()));
        }
    }
}
