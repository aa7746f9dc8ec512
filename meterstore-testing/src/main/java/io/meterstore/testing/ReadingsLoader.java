package io.meterstore.testing;

import io.meterstore.core.HotTier;
import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsSchema;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static com.google.common.base.Preconditions.checkArgument;
import static java.nio.charset.StandardCharsets.UTF_8;
import static java.util.Objects.requireNonNull;

/**
 * Loads readings into the hot tier the fast way: the partitions a batch needs through {@link HotTier#ensurePartition},
 * then one {@code COPY ... FROM STDIN (FORMAT binary)} into the parent, streamed in 512 KiB chunks so no batch is
 * ever held whole. Each batch commits on its own when the connection is in auto-commit mode.
 */
public final class ReadingsLoader
{
    private static final int CHUNK_BYTES = 512 * 1024;
    private static final int CACHE_LIMIT = 100_000;

    private final HotTier hotTier;

    public ReadingsLoader(HotTier hotTier)
    {
        this.hotTier = requireNonNull(hotTier, "hotTier is null");
    }

    public HotTier hotTier()
    {
        return hotTier;
    }

    /** Loads every day of the workload, a day at a time; returns the rows copied. */
    public long load(Connection connection, ReadingsGenerator generator)
            throws SQLException
    {
        long rows = 0;
        for (LocalDate day : generator.localDays()) {
            rows += loadDay(connection, generator, day);
        }
        return rows;
    }

    /**
     * Loads every day of the workload over {@code parallelism} connections, each taking a contiguous run of days (so
     * two connections rarely fill the same partition); returns the rows copied. PostgreSQL parses and indexes each COPY
     * on one core, so a second connection is what uses a second core.
     */
    public long load(ConnectionFactory connections, ReadingsGenerator generator, int parallelism)
            throws SQLException
    {
        requireNonNull(connections, "connections is null");
        checkArgument(parallelism > 0, "parallelism must be positive");
        List<LocalDate> days = generator.localDays();
        int workers = Math.min(parallelism, days.size());
        ExecutorService executor = Executors.newFixedThreadPool(workers, Thread.ofPlatform().name("readings-loader-", 0).daemon().factory());
        try {
            List<Future<Long>> results = new ArrayList<>();
            for (int worker = 0; worker < workers; worker++) {
                List<LocalDate> run = days.subList(worker * days.size() / workers, (worker + 1) * days.size() / workers);
                results.add(executor.submit(() -> {
                    long rows = 0;
                    try (Connection connection = connections.connect()) {
                        for (LocalDate day : run) {
                            rows += loadDay(connection, generator, day);
                        }
                    }
                    return rows;
                }));
            }
            long rows = 0;
            for (Future<Long> result : results) {
                rows += getUnchecked(result);
            }
            return rows;
        }
        finally {
            executor.shutdownNow();
        }
    }

    private static long getUnchecked(Future<Long> result)
            throws SQLException
    {
        try {
            return result.get();
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SQLException("Interrupted while loading readings", e);
        }
        catch (ExecutionException e) {
            if (e.getCause() instanceof SQLException sqlException) {
                throw sqlException;
            }
            throw new SQLException("Loading readings failed: " + e.getCause(), e.getCause());
        }
    }

    /** Loads one Berlin day of the workload (streamed from the generator, never materialised); returns the rows copied. */
    public long loadDay(Connection connection, ReadingsGenerator generator, LocalDate day)
            throws SQLException
    {
        // a Berlin day straddles two UTC days, so it needs the partitions of both
        ensurePartitions(connection, MeteringCalendar.startOfLocalDay(day), MeteringCalendar.startOfLocalDay(day.plusDays(1)));
        return copy(connection, generator.iterator(day));
    }

    /** Loads any readings, creating the partitions of all their intervals first; returns the rows copied. */
    public long load(Connection connection, Collection<Reading> readings)
            throws SQLException
    {
        SortedSet<Instant> starts = new TreeSet<>();
        for (Reading reading : readings) {
            starts.add(hotTier.naming().alignDown(reading.from()));
        }
        for (Instant start : starts) {
            hotTier.ensurePartition(connection, start);
        }
        return copy(connection, readings.iterator());
    }

    /** Creates every partition that holds a "from" in [lower, upper); returns how many this call created. */
    public int ensurePartitions(Connection connection, Instant lower, Instant upper)
            throws SQLException
    {
        int created = 0;
        for (Instant start = hotTier.naming().alignDown(lower); start.isBefore(upper); start = start.plus(hotTier.naming().step())) {
            if (hotTier.ensurePartition(connection, start)) {
                created++;
            }
        }
        return created;
    }

    /** COPYs the readings into the parent table; their partitions must exist. Returns the rows copied. */
    public long copy(Connection connection, Iterator<Reading> readings)
            throws SQLException
    {
        String sql = "COPY %s (%s) FROM STDIN (FORMAT binary)".formatted(hotTier.qualifiedParent(), ReadingsSchema.postgresColumnList());
        CopyIn copy = connection.unwrap(PGConnection.class).getCopyAPI().copyIn(sql);
        try {
            BinaryRowWriter writer = new BinaryRowWriter();
            while (readings.hasNext()) {
                writer.append(readings.next());
                if (writer.length() >= CHUNK_BYTES) {
                    writer.flushTo(copy);
                }
            }
            writer.finish();
            writer.flushTo(copy);
            return copy.endCopy();
        }
        finally {
            if (copy.isActive()) {
                copy.cancelCopy();
            }
        }
    }

    /** Opens a fresh connection for each loading worker, e.g. {@code TestingDatabase::connect}. */
    @FunctionalInterface
    public interface ConnectionFactory
    {
        Connection connect()
                throws SQLException;
    }

    /**
     * Rows in COPY's binary format: PostgreSQL parses nothing, which roughly halves its work per row against the text
     * format (timestamptz and numeric input dominate it). Strings of a workload repeat, so their UTF-8 bytes are cached.
     */
    private static final class BinaryRowWriter
    {
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

        BinaryRowWriter()
        {
            this(CHUNK_BYTES + 64 * 1024);
            bytes(SIGNATURE);
            int32(0);
            int32(0);
        }

        private BinaryRowWriter(int capacity)
        {
            buffer = new byte[capacity];
        }

        int length()
        {
            return length;
        }

        void append(Reading reading)
        {
            int16(ReadingsSchema.COLUMNS.size());
            text(reading.maloId());
            optional(reading.meloId());
            text(reading.obisCode());
            text(reading.sparte().name());
            timestamp(reading.from());
            timestamp(reading.to());
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
        }

        void finish()
        {
            int16(-1);
        }

        void flushTo(CopyIn copy)
                throws SQLException
        {
            if (length > 0) {
                copy.writeToCopy(buffer, 0, length);
                length = 0;
            }
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
                BinaryRowWriter encoder = new BinaryRowWriter(64);
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
}
