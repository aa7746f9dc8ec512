package io.meterstore.testing;

import io.meterstore.core.HotTier;
import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.PgBinaryCopyWriter;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsSchema;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * Loads readings into the hot tier the fast way: the partitions a batch needs through {@link HotTier#ensurePartition},
 * then one {@code COPY ... FROM STDIN (FORMAT binary)} into the parent, streamed in 512 KiB chunks so no batch is
 * ever held whole. Each batch commits on its own when the connection is in auto-commit mode.
 */
public final class ReadingsLoader
{
    private static final int CHUNK_BYTES = 512 * 1024;

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
            PgBinaryCopyWriter writer = new PgBinaryCopyWriter(CHUNK_BYTES + 64 * 1024);
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
}
