package io.meterstore.core;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.base.Preconditions.checkState;
import static java.util.Objects.requireNonNull;

/**
 * Reads the output of {@code COPY ... TO STDOUT (FORMAT binary)} a row at a time, straight from the bytes PostgreSQL
 * sends: no text parsing, no value objects. A row's fields are byte ranges of one buffer; the static decoders turn
 * the types of a readings table into the numbers Trino's blocks hold. The format is PostgreSQL's documented binary
 * COPY format: a signature, flags and a header extension, then per row a 16-bit field count and per field a 32-bit
 * length (-1 for NULL) and the value in the type's binary send format, then a field count of -1.
 */
public final class PgBinaryCopyReader
{
    private static final byte[] SIGNATURE = {'P', 'G', 'C', 'O', 'P', 'Y', '\n', (byte) 0xFF, '\r', '\n', 0};
    // PostgreSQL counts timestamps in microseconds and dates in days from 2000-01-01
    private static final long POSTGRES_EPOCH_MICROS = 946_684_800_000_000L;
    private static final int POSTGRES_EPOCH_DAY = 10_957;
    private static final int NUMERIC_NEGATIVE = 0x4000;
    private static final int NUMERIC_NAN = 0xC000;
    private static final int NUMERIC_BASE = 10_000;
    private static final long[] POWERS_OF_TEN = {1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000,
            1_000_000_000, 10_000_000_000L, 100_000_000_000L, 1_000_000_000_000L, 10_000_000_000_000L, 100_000_000_000_000L,
            1_000_000_000_000_000L, 10_000_000_000_000_000L, 100_000_000_000_000_000L, 1_000_000_000_000_000_000L};

    /** The data messages of a COPY, in order; {@code null} after the last. */
    @FunctionalInterface
    public interface Source
    {
        byte[] next()
                throws Exception;
    }

    private final Source source;
    private byte[] buffer = new byte[0];
    private int position;
    private int limit;
    private boolean headerRead;
    private boolean finished;
    private int[] offsets = new int[0];
    private int[] lengths = new int[0];
    private int fieldCount;
    private int rowStart;
    private long rows;

    public PgBinaryCopyReader(Source source)
    {
        this.source = requireNonNull(source, "source is null");
    }

    /** Moves to the next row; {@code false} once the trailer or the end of the data is reached. */
    public boolean nextRow()
            throws Exception
    {
        if (finished) {
            return false;
        }
        if (!headerRead) {
            readHeader();
        }
        if (!ensure(Short.BYTES)) {
            finished = true;
            return false;
        }
        int count = readShort();
        if (count == -1) {
            finished = true;
            // read on to the end of the COPY, so the connection is ready for its next statement
            while (source.next() != null) {
                checkState(false, "Binary COPY data continues after its trailer");
            }
            return false;
        }
        checkState(count >= 0, "Invalid field count %s in binary COPY data", count);
        if (offsets.length < count) {
            offsets = new int[count];
            lengths = new int[count];
        }
        // a row's field ranges must all point into one buffer: gather the whole row before decoding any of it
        rowStart = position;
        int cursor = position;
        for (int field = 0; field < count; field++) {
            cursor = require(cursor, Integer.BYTES, field);
            int length = readInt(cursor);
            cursor += Integer.BYTES;
            if (length > 0) {
                cursor = require(cursor, length, field);
            }
            offsets[field] = cursor;
            lengths[field] = length;
            cursor += Math.max(length, 0);
        }
        position = cursor;
        fieldCount = count;
        rows++;
        return true;
    }

    public int fieldCount()
    {
        return fieldCount;
    }

    public long rows()
    {
        return rows;
    }

    public boolean isNull(int field)
    {
        return lengths[checkField(field)] < 0;
    }

    /** The buffer holding the current row's fields; valid until the next call of {@link #nextRow()}. */
    public byte[] buffer()
    {
        return buffer;
    }

    public int offset(int field)
    {
        return offsets[checkField(field)];
    }

    public int length(int field)
    {
        return lengths[checkField(field)];
    }

    public String text(int field)
    {
        return new String(buffer, offset(field), length(field), StandardCharsets.UTF_8);
    }

    /** A timestamptz field in microseconds since the Unix epoch. */
    public long timestampMicros(int field)
    {
        checkArgument(length(field) == Long.BYTES, "field %s is not a timestamp", field);
        return readLong(offset(field)) + POSTGRES_EPOCH_MICROS;
    }

    /** A date field in days since the Unix epoch. */
    public int epochDay(int field)
    {
        checkArgument(length(field) == Integer.BYTES, "field %s is not a date", field);
        return readInt(offset(field)) + POSTGRES_EPOCH_DAY;
    }

    /**
     * A numeric field as the unscaled value at {@code scale}, exactly.
     *
     * @throws ArithmeticException if it has more fraction digits than {@code scale}, or does not fit a long
     */
    public long numericUnscaled(int field, int scale)
    {
        Numeric numeric = numeric(field);
        long unscaled = 0;
        for (int digit = 0; digit < numeric.digits(); digit++) {
            int value = digit(numeric, digit);
            if (value == 0) {
                continue;
            }
            // each base-10000 digit stands for its place down from the weight: its share of the value at 10^-scale
            int exponent = 4 * (numeric.weight() - digit) + scale;
            if (exponent >= 0) {
                unscaled = Math.addExact(unscaled, Math.multiplyExact(value, powerOfTen(exponent)));
            }
            else if (exponent > -4 && value % POWERS_OF_TEN[-exponent] == 0) {
                unscaled += value / POWERS_OF_TEN[-exponent];
            }
            else {
                throw new ArithmeticException("numeric value has more than %s fraction digits".formatted(scale));
            }
        }
        return numeric.negative() ? -unscaled : unscaled;
    }

    /**
     * Whether {@link #numericUnscaled} holds this numeric field at {@code scale} for certain: its integer digit groups
     * (four decimal digits each) and the scale come to at most 18 digits, so the unscaled value is below 10^18. At scale 0
     * that is every whole number of up to 16 digits, as a version taken from epoch microseconds; longer ones are left to
     * {@link #numericUnscaledBig} even where a long would hold them.
     */
    public boolean numericFitsLong(int field, int scale)
    {
        return 4 * (numeric(field).weight() + 1) + scale <= 18;
    }

    /** A numeric field as the unscaled value at {@code scale}, exactly, of any size. */
    public BigInteger numericUnscaledBig(int field, int scale)
    {
        Numeric numeric = numeric(field);
        BigInteger unscaled = BigInteger.ZERO;
        for (int digit = 0; digit < numeric.digits(); digit++) {
            unscaled = unscaled.multiply(BigInteger.valueOf(NUMERIC_BASE)).add(BigInteger.valueOf(digit(numeric, digit)));
        }
        int exponent = 4 * (numeric.weight() - numeric.digits() + 1) + scale;
        if (exponent >= 0) {
            unscaled = unscaled.multiply(BigInteger.TEN.pow(exponent));
        }
        else {
            BigInteger[] quotient = unscaled.divideAndRemainder(BigInteger.TEN.pow(-exponent));
            if (quotient[1].signum() != 0) {
                throw new ArithmeticException("numeric value has more than %s fraction digits".formatted(scale));
            }
            unscaled = quotient[0];
        }
        return numeric.negative() ? unscaled.negate() : unscaled;
    }

    private Numeric numeric(int field)
    {
        int offset = offset(field);
        checkArgument(length(field) >= 4 * Short.BYTES, "field %s is not a numeric", field);
        int digits = readShort(offset);
        int weight = (short) readShort(offset + 2);
        int sign = readShort(offset + 4);
        if (sign == NUMERIC_NAN || (sign != 0 && sign != NUMERIC_NEGATIVE)) {
            throw new ArithmeticException("numeric value is not a finite number");
        }
        checkArgument(length(field) == 4 * Short.BYTES + digits * Short.BYTES, "field %s is not a numeric", field);
        return new Numeric(offset + 4 * Short.BYTES, digits, weight, sign == NUMERIC_NEGATIVE);
    }

    private int digit(Numeric numeric, int digit)
    {
        return readShort(numeric.firstDigit() + digit * Short.BYTES);
    }

    private record Numeric(int firstDigit, int digits, int weight, boolean negative) {}

    private static long powerOfTen(int exponent)
    {
        if (exponent >= POWERS_OF_TEN.length) {
            throw new ArithmeticException("numeric value does not fit a long");
        }
        return POWERS_OF_TEN[exponent];
    }

    private int checkField(int field)
    {
        checkArgument(field >= 0 && field < fieldCount, "field %s of a row with %s fields", field, fieldCount);
        return field;
    }

    private void readHeader()
            throws Exception
    {
        headerRead = true;
        if (!ensure(SIGNATURE.length + 2 * Integer.BYTES)) {
            throw new IllegalStateException("Binary COPY data has no header");
        }
        if (!Arrays.equals(buffer, position, position + SIGNATURE.length, SIGNATURE, 0, SIGNATURE.length)) {
            throw new IllegalStateException("Not binary COPY data: the signature is missing");
        }
        position += SIGNATURE.length;
        // flags: bit 16 would mean OIDs are included, which PostgreSQL 12 and later never send
        int flags = readInt(position);
        checkState((flags & (1 << 16)) == 0, "Binary COPY data with OIDs is not supported");
        int extension = readInt(position + Integer.BYTES);
        position += 2 * Integer.BYTES;
        if (!ensure(extension)) {
            throw new IllegalStateException("Binary COPY header extension is truncated");
        }
        position += extension;
    }

    /**
     * Makes {@code bytes} bytes from {@code cursor} available without losing the row read so far: when more messages
     * are needed the row moves to the start of a new buffer, and so do the offsets of its fields read so far.
     *
     * @return the cursor, moved with the row
     */
    private int require(int cursor, int bytes, int fieldsRead)
            throws Exception
    {
        int needed = cursor - rowStart + bytes;
        if (limit - rowStart >= needed) {
            return cursor;
        }
        int shift = -rowStart;
        if (!ensureFrom(rowStart, needed)) {
            throw new IllegalStateException("Binary COPY data ends inside a row");
        }
        for (int field = 0; field < fieldsRead; field++) {
            offsets[field] += shift;
        }
        rowStart = 0;
        return cursor + shift;
    }

    /** Whether {@code bytes} bytes are available from {@code position}, reading more messages as needed. */
    private boolean ensure(int bytes)
            throws Exception
    {
        return ensureFrom(position, bytes);
    }

    /** As {@link #ensure}, keeping the bytes from {@code start}: afterwards they start at {@code position}. */
    private boolean ensureFrom(int start, int bytes)
            throws Exception
    {
        if (limit - start >= bytes) {
            position = start;
            return true;
        }
        // PostgreSQL sends the header, every row and the trailer as messages of their own; joining is the rare path
        byte[] joined = Arrays.copyOfRange(buffer, start, limit);
        while (joined.length < bytes) {
            byte[] next = source.next();
            if (next == null) {
                buffer = joined;
                position = 0;
                limit = joined.length;
                return false;
            }
            if (joined.length == 0) {
                joined = next;
            }
            else {
                byte[] both = Arrays.copyOf(joined, joined.length + next.length);
                System.arraycopy(next, 0, both, joined.length, next.length);
                joined = both;
            }
        }
        buffer = joined;
        position = 0;
        limit = joined.length;
        return true;
    }

    private int readShort()
    {
        int value = readShort(position);
        position += Short.BYTES;
        return (short) value == -1 ? -1 : value;
    }

    private int readShort(int offset)
    {
        return ((buffer[offset] & 0xFF) << 8) | (buffer[offset + 1] & 0xFF);
    }

    private int readInt(int offset)
    {
        return ((buffer[offset] & 0xFF) << 24) | ((buffer[offset + 1] & 0xFF) << 16) | ((buffer[offset + 2] & 0xFF) << 8) | (buffer[offset + 3] & 0xFF);
    }

    private long readLong(int offset)
    {
        return ((long) readInt(offset) << 32) | (readInt(offset + 4) & 0xFFFF_FFFFL);
    }
}
