package io.meterstore.benchmark;

import io.airlift.log.Logger;
import io.meterstore.core.HotPartition;
import io.meterstore.core.HotTier;
import io.meterstore.core.MeteringCalendar;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntConsumer;
import java.util.function.IntPredicate;
import java.util.function.Supplier;

import static com.google.common.base.Preconditions.checkState;
import static java.util.Objects.requireNonNull;

/**
 * Today's ingestion as W1 and E1 measure it beside an archival cycle or an erasure: a stream of INSERT statements of
 * about {@value #ROWS} rows each through Trino, one a second (the next at once if one took longer), each a slice of the
 * dataset's meters of its last day moved into the days after it, which no row holds. The same stream runs beside the
 * event and then alone for as many statements; the partitions it created are dropped afterwards, so the kept dataset
 * stays as its marker describes.
 */
final class IngestionStream
{
    static final int ROWS = 1_000;
    private static final Logger log = Logger.get(IngestionStream.class);
    private static final Duration PERIOD = Duration.ofSeconds(1);
    // statements before the event starts, so that it starts beside a running stream
    private static final int LEAD = 3;

    /** One statement of the stream: when it started and ended (System.nanoTime), the rows it wrote, or its error. */
    record Sample(long startNanos, long endNanos, long rows, Optional<String> error)
    {
        double seconds()
        {
            return Medians.seconds(endNanos - startNanos);
        }

        boolean overlaps(long fromNanos, long toNanos)
        {
            return startNanos < toNanos && endNanos > fromNanos;
        }
    }

    /** The stream beside the event and alone: {@code during} are the statements beside that overlapped the event. */
    record Beside<T>(T event, long eventNanos, List<Sample> beside, List<Sample> during, List<Sample> alone)
    {
        long rows()
        {
            return beside.stream().mapToLong(Sample::rows).sum();
        }

        Optional<String> error()
        {
            long errors = beside.stream().filter(sample -> sample.error().isPresent()).count() + alone.stream().filter(sample -> sample.error().isPresent()).count();
            return beside.stream().flatMap(sample -> sample.error().stream())
                    .findFirst()
                    .or(() -> alone.stream().flatMap(sample -> sample.error().stream()).findFirst())
                    .map(first -> "%s INSERTs of today's readings failed, the first: %s".formatted(errors, first));
        }

        double ratio()
        {
            return p95(during) / p95(alone);
        }

        String describe(String what)
        {
            return String.format(Locale.ROOT, """
                    Today's ingestion beside %s: %s INSERT statements of about %,d rows each through Trino, one a second (the next at once when one took longer), each a slice of the meters of the dataset's last day moved into the days after it, %,d rows in all; %s of them overlapped the %.1f s it took. \
                    Their latency: p50 %.3f s, p95 %.3f s (all %s beside it: p95 %.3f s, at most %.3f s); the same stream alone, %s statements: p50 %.3f s, p95 %.3f s, at most %.3f s. p95 ratio %.2f.""",
                    what, beside.size(), ROWS, rows(), during.size(), Medians.seconds(eventNanos),
                    percentile(during, 0.50), p95(during), beside.size(), p95(beside), percentile(beside, 1.0),
                    alone.size(), percentile(alone, 0.50), p95(alone), percentile(alone, 1.0), ratio());
        }
    }

    private final BenchmarkDataset dataset;
    private final Supplier<Connection> trinoConnections;
    private final LocalDate lastDay;
    private final List<List<String>> slices;

    /**
     * @param trinoConnections opens the stream's own JDBC connection to the engine
     * @param excluded meters the stream leaves out: an erased meter's readings are refused ever after
     */
    IngestionStream(BenchmarkSettings settings, BenchmarkDataset dataset, Supplier<Connection> trinoConnections, Set<String> excluded)
    {
        this.dataset = requireNonNull(dataset, "dataset is null");
        this.trinoConnections = requireNonNull(trinoConnections, "trinoConnections is null");
        this.lastDay = BenchmarkSettings.START_DAY.plusDays(settings.days() - 1);
        List<String> maloIds = dataset.generator().maloIds().stream()
                .filter(maloId -> !excluded.contains(maloId) && !dataset.erasedMeters().contains(maloId))
                .toList();
        // a meter's day is about a hundred rows (96 quarter-hours and their corrections): enough meters for ROWS a statement
        long rowsPerMeterDay = Math.max(1, dataset.rows() / ((long) maloIds.size() * settings.days()));
        int metersPerStatement = (int) Math.max(1, Math.round(ROWS / (double) rowsPerMeterDay));
        List<List<String>> slices = new ArrayList<>();
        for (int start = 0; start + metersPerStatement <= maloIds.size(); start += metersPerStatement) {
            slices.add(maloIds.subList(start, start + metersPerStatement));
        }
        this.slices = List.copyOf(slices);
    }

    /**
     * Runs the stream beside {@code event} (started once {@value #LEAD} statements ran, the stream going on until it
     * ends), then alone for as many statements. The first day of the stream beside the event is the day after the
     * dataset's last, the stream alone writes days of its own after those.
     */
    <T> Beside<T> beside(Callable<T> event)
            throws Exception
    {
        AtomicBoolean ended = new AtomicBoolean();
        AtomicBoolean started = new AtomicBoolean();
        // the event starts as statement LEAD starts, not in the pause before it: a cycle shorter than the pause (a small
        // dataset's day) would otherwise fall between two statements
        CompletableFuture<List<Sample>> stream = CompletableFuture.supplyAsync(() -> run(0, _ -> !ended.get(), statement -> {
            if (statement >= LEAD) {
                started.set(true);
            }
        }));
        T result;
        long start;
        long end;
        try {
            while (!started.get() && !stream.isDone()) {
                Thread.sleep(10);
            }
            start = System.nanoTime();
            try {
                result = event.call();
            }
            finally {
                end = System.nanoTime();
                ended.set(true);
            }
        }
        finally {
            ended.set(true);
        }
        List<Sample> beside = join(stream);
        List<Sample> during = beside.stream().filter(sample -> sample.overlaps(start, end)).toList();
        checkState(!during.isEmpty(), "No INSERT of the stream overlapped the event");
        int days = daysOf(beside.size());
        List<Sample> alone = run(days, statement -> statement < beside.size(), _ -> {});
        return new Beside<>(result, end - start, beside, during, alone);
    }

    /** The rows the stream wrote, in PostgreSQL's attached partitions: every one is at or above any W the event sets. */
    long hotRows()
            throws SQLException
    {
        try (Connection connection = dataset.database().connect(); Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SELECT count(*) FROM %s WHERE \"from\" >= '%s'".formatted(BenchmarkDataset.HOT_TIER.qualifiedParent(), firstDay()))) {
            checkState(result.next());
            return result.getLong(1);
        }
    }

    /** The first instant of the stream's days. */
    Instant firstDay()
    {
        return MeteringCalendar.startOfLocalDay(lastDay.plusDays(1));
    }

    /** Deletes the stream's rows and drops the partitions it created: those of the days after the dataset's last. */
    void dropCreated()
    {
        HotTier hotTier = BenchmarkDataset.HOT_TIER;
        try (Connection postgres = dataset.database().connect()) {
            // partitions are UTC days: the first hour of a Berlin day lies in the partition of the UTC day before
            try (Statement statement = postgres.createStatement()) {
                statement.executeUpdate("DELETE FROM %s WHERE \"from\" >= '%s'".formatted(hotTier.qualifiedParent(), firstDay()));
            }
            for (HotPartition partition : hotTier.partitions(postgres)) {
                if (!partition.start().isBefore(firstDay())) {
                    if (partition.attached()) {
                        hotTier.detach(postgres, partition.name());
                    }
                    hotTier.drop(postgres, partition.name());
                }
            }
        }
        catch (SQLException e) {
            log.error(e, "The ingestion stream could not drop the partitions it created: drop the partitions from %s on by hand", firstDay());
        }
    }

    /**
     * Statement {@code i} of a run whose first day is {@code firstDay} days after the last: a slice of the meters of a day.
     * {@code starting} is told each statement's index as it is sent, after the pause before it.
     */
    private List<Sample> run(int firstDay, IntPredicate more, IntConsumer starting)
    {
        List<Sample> samples = new ArrayList<>();
        long next = System.nanoTime();
        try (Connection trino = trinoConnections.get(); Statement statement = trino.createStatement()) {
            for (int index = 0; more.test(index); index++) {
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                }
                next = Math.max(next + PERIOD.toNanos(), System.nanoTime());
                int shift = 1 + firstDay + index / slices.size();
                starting.accept(index);
                long start = System.nanoTime();
                try {
                    long rows = statement.executeLargeUpdate(insert(slices.get(index % slices.size()), shift));
                    samples.add(new Sample(start, System.nanoTime(), rows, Optional.empty()));
                }
                catch (SQLException e) {
                    samples.add(new Sample(start, System.nanoTime(), 0, Optional.of(BenchmarkResult.reason(e))));
                }
            }
        }
        catch (SQLException e) {
            throw new IllegalStateException("The ingestion stream lost its connection: " + e.getMessage(), e);
        }
        catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("The ingestion stream was interrupted", e);
        }
        return samples;
    }

    private int daysOf(int statements)
    {
        return (statements + slices.size() - 1) / slices.size();
    }

    /** The last day of {@code meters}, as stored, moved {@code shift} days ahead, its scope restated for its month (as W2's). */
    private String insert(List<String> meters, int shift)
    {
        return IngestBenchmark.insert(meters, MeteringCalendar.startOfLocalDay(lastDay), MeteringCalendar.startOfLocalDay(lastDay.plusDays(1)), shift);
    }

    private static List<Sample> join(CompletableFuture<List<Sample>> stream)
            throws Exception
    {
        try {
            return stream.get();
        }
        catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
    }

    static double p95(List<Sample> samples)
    {
        return percentile(samples, 0.95);
    }

    /** The {@code quantile} of the statements' times without error, in seconds (nearest rank). */
    static double percentile(List<Sample> samples, double quantile)
    {
        List<Double> seconds = new ArrayList<>(samples.stream().filter(sample -> sample.error().isEmpty()).map(Sample::seconds).toList());
        if (seconds.isEmpty()) {
            return Double.NaN;
        }
        Collections.sort(seconds);
        int rank = (int) Math.ceil(quantile * seconds.size());
        return seconds.get(Math.max(0, rank - 1));
    }
}
