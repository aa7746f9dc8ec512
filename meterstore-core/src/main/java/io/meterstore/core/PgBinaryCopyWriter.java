package io.meterstore.core;

import org.postgresql.copy.CopyIn;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import static java.nio.charset.StandardCharsets.UTF_8;

/**
 * Readings in the input format of {@code COPY ... FROM STDIN (FORMAT binary)}, all columns in storage order, the
 * counterpart of {@link PgBinaryCopyReader}: PostgreSQL parses nothing, which roughly halves its work per row against
 * the text format (timestamptz and numeric input dominate it). Rows collect in one growing buffer that the caller
 * sends to a {@link CopyIn} in chunks ({@link #flushTo}); the stream ends with {@link #finish}. Strings of a workload
 * repeat, so the UTF-8 bytes of short ones are cached (a bounded number).
 */
public final class PgBinaryCopyWriter
{
    // identifiers, codes and scopes repeat from row to row; longer strings (JSON details) rarely do and are not kept
    private static final int CACHE_LIMIT = 10_000;
    private static final int CACHED_LENGTH = 64;
    private static final byte[] SIGNATURE = {'P', 'G', 'C', 'O', 'P', 'Y', '\n', (byte) 0xff, '\r', '\n', 0};
    // timestamptz and date count from 2000-01-01 UTC
    private static final long POSTGRES_EPOCH_SECONDS = 946_684_800L;
    private static final long POSTGRES_EPOCH_DAYS = 10_957L;
    private static final short NUMERIC_POSITIVE = 0x0000;
    private static final short NUMERIC_NEGATIVE = 0x4000;
    private static final BigInteger NUMERIC_BASE = BigInteger.valueOf(10_000);

    private static final long[] POWERS_OF_TEN = {1, 10, 100, 1_000};

    private byte[] buffer;
    private int length;
    private int[] digits = new int[8];
    private final Map<String, byte[]> strings = new HashMap<>();
    private final Map<BigInteger, byte[]> versions = new HashMap<>();

    /** A stream whose buffer starts at {@code capacity} bytes and grows as rows are appended. */
    public PgBinaryCopyWriter(int capacity)
    {
        this(capacity, true);
    }

    private PgBinaryCopyWriter(int capacity, boolean header)
    {
        buffer = new byte[capacity];
        if (header) {
            header();
        }
    }

    /** The bytes buffered and not yet flushed. */
    public int length()
    {
        return length;
    }

    /** The memory the buffer holds. */
    public long retainedBytes()
    {
        return buffer.length;
    }

    /** Appends a row of every column of the reading's table: the readings columns, then its attribute columns ({@link TableColumns}). */
    public void append(Reading reading)
    {
        int16(ReadingsSchema.COLUMNS.size() + reading.attributes().size());
        text(reading.maloId());
        optional(reading.meloId());
        text(reading.obisCode());
        text(reading.sparte().name());
        timestamp(reading.from());
        // a register reading (point table) has no end: NULL
        reading.to().ifPresentOrElse(this::timestamp, () -> int32(-1));
        numeric(reading.value());
        text(reading.unit().name());
        text(reading.quality().name());
        text(reading.resolution());
        text(reading.sourceKind());
        optional(reading.sourceDetail());
        optional(reading.provenance());
        bytes(version(reading.version()));
        text(reading.versionScope());
        timestamp(reading.recordedAt());
        int32(4);
        int32(Math.toIntExact(reading.balancingDay().toEpochDay() - POSTGRES_EPOCH_DAYS));
        for (Optional<String> attribute : reading.attributes()) {
            optional(attribute);
        }
    }

    /** Ends the stream: the rows so far are all of it. */
    public void finish()
    {
        int16(-1);
    }

    /** Sends the buffered bytes to the COPY and empties the buffer. */
    public void flushTo(CopyIn copy)
            throws SQLException
    {
        if (length > 0) {
            copy.writeToCopy(buffer, 0, length);
            length = 0;
        }
    }

    /** Discards what is buffered and starts a new stream, for another COPY statement. */
    public void restart()
    {
        length = 0;
        header();
    }

    private void header()
    {
        bytes(SIGNATURE);
        int32(0);
        int32(0);
    }

    private void optional(Optional<String> value)
    {
        if (value.isEmpty()) {
            int32(-1);
            return;
        }
        text(value.get());
    }

    private void text(String value)
    {
        if (value.length() > CACHED_LENGTH) {
            field(value.getBytes(UTF_8));
            return;
        }
        if (strings.size() > CACHE_LIMIT) {
            strings.clear();
        }
        field(strings.computeIfAbsent(value, key -> key.getBytes(UTF_8)));
    }

    private void timestamp(Instant instant)
    {
        int32(8);
        long micros = Math.addExact(Math.multiplyExact(instant.getEpochSecond() - POSTGRES_EPOCH_SECONDS, 1_000_000L), instant.getNano() / 1_000);
        int64(micros);
    }

    private byte[] version(BigInteger version)
    {
        if (versions.size() > CACHE_LIMIT) {
            versions.clear();
        }
        return versions.computeIfAbsent(version, key -> {
            PgBinaryCopyWriter encoder = new PgBinaryCopyWriter(64, false);
            encoder.numeric(new BigDecimal(key));
            return Arrays.copyOf(encoder.buffer, encoder.length);
        });
    }

    /** A numeric field in its wire form: base-10000 digits, most significant first, the weight of the first, the sign and the display scale. */
    private void numeric(BigDecimal value)
    {
        int scale = Math.max(value.scale(), 0);
        BigInteger unscaled = value.setScale(scale).unscaledValue().abs();
        // align the fraction to whole base-10000 digits
        int padding = (4 - scale % 4) % 4;
        int fractionDigits = (scale + padding) / 4;
        int count = 0;
        if (unscaled.bitLength() < 50) {
            for (long rest = unscaled.longValue() * POWERS_OF_TEN[padding]; rest != 0; rest /= 10_000) {
                digits = count < digits.length ? digits : Arrays.copyOf(digits, digits.length * 2);
                digits[count++] = (int) (rest % 10_000);
            }
        }
        else {
            for (BigInteger rest = unscaled.multiply(BigInteger.valueOf(POWERS_OF_TEN[padding])); rest.signum() != 0; ) {
                BigInteger[] quotientAndRemainder = rest.divideAndRemainder(NUMERIC_BASE);
                digits = count < digits.length ? digits : Arrays.copyOf(digits, digits.length * 2);
                digits[count++] = quotientAndRemainder[1].intValue();
                rest = quotientAndRemainder[0];
            }
        }
        // digits[] is least significant first; the weight counts the base-10000 digits before the point, minus one
        int weight = count - fractionDigits - 1;
        int low = 0;
        while (low < count && digits[low] == 0) {
            low++;
        }
        int significant = count - low;
        int32(8 + 2 * significant);
        int16(significant);
        int16(significant == 0 ? 0 : weight);
        int16(value.signum() < 0 ? NUMERIC_NEGATIVE : NUMERIC_POSITIVE);
        int16(scale);
        for (int index = count - 1; index >= low; index--) {
            int16(digits[index]);
        }
    }

    private void field(byte[] value)
    {
        int32(value.length);
        bytes(value);
    }

    private void bytes(byte[] value)
    {
        ensure(value.length);
        System.arraycopy(value, 0, buffer, length, value.length);
        length += value.length;
    }

    private void int16(int value)
    {
        ensure(2);
        buffer[length++] = (byte) (value >>> 8);
        buffer[length++] = (byte) value;
    }

    private void int32(int value)
    {
        ensure(4);
        buffer[length++] = (byte) (value >>> 24);
        buffer[length++] = (byte) (value >>> 16);
        buffer[length++] = (byte) (value >>> 8);
        buffer[length++] = (byte) value;
    }

    private void int64(long value)
    {
        int32((int) (value >>> 32));
        int32((int) value);
    }

    private void ensure(int bytes)
    {
        if (length + bytes > buffer.length) {
            buffer = Arrays.copyOf(buffer, Math.max(buffer.length * 2, length + bytes));
        }
    }
}
