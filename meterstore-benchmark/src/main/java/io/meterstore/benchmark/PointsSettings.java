package io.meterstore.benchmark;

import com.google.common.collect.ImmutableMap;

import java.nio.file.Path;
import java.time.LocalDate;
import java.util.Map;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static io.meterstore.benchmark.BenchmarkSettings.integer;
import static io.meterstore.benchmark.BenchmarkSettings.property;
import static java.util.Objects.requireNonNull;

/**
 * The point-table benchmark P1 of issue 31, from system properties ({@code -Dbenchmark.dataset=points}): a point table of
 * {@code meters} meters' daily register readings over {@code days} Berlin days (10,000 x 730 by default, 7.3 M readings).
 * Develop on a smaller shape ({@code -Dbenchmark.points.meters=300 -Dbenchmark.points.days=60}).
 *
 * @param probe statements of one's own to time on the dataset instead of the benchmark ({@code -Dbenchmark.probe=FILE})
 */
public record PointsSettings(int meters, int days, int warmUps, int rounds, Path directory, Path output, Optional<Path> probe)
{
    public static final long SEED = 2026;
    /** The first reading: two years from here end on 30 November 2026, 24 whole balancing months. */
    public static final LocalDate START_DAY = LocalDate.of(2024, 12, 1);
    /** The last Berlin days stay hot, as in production: W is where the archiver's cycle stopped before them. */
    public static final int HOT_DAYS = 3;
    /** Days loaded into PostgreSQL at a time and archived before the next load, as the years dataset does. */
    public static final int CHUNK_DAYS = 30;
    /** Archived days between two runs of the archiver's maintenance ({@code expire}, then {@code compact}). */
    public static final int MAINTENANCE_EVERY = 7;

    public PointsSettings
    {
        checkArgument(meters > 0, "benchmark.points.meters must be positive, not %s", meters);
        checkArgument(days > CHUNK_DAYS + HOT_DAYS, "benchmark.points.days must exceed %s (a chunk of %s days and the %s hot days), not %s: at least two balancing months", CHUNK_DAYS + HOT_DAYS, CHUNK_DAYS, HOT_DAYS, days);
        // the hot days must follow the last month's first reading, which the peer reads from the cold tier alone
        LocalDate lastDay = START_DAY.plusDays(days - 1);
        checkArgument(lastDay.withDayOfMonth(1).plusDays(HOT_DAYS).isBefore(START_DAY.plusDays(days)),
                "benchmark.points.days must not end the readings in the first %s days of a month (%s days end on %s): that month's first reading would be hot, where Trino's Iceberg connector cannot read it; take a few days more or fewer",
                HOT_DAYS, days, lastDay);
        checkArgument(warmUps > 0, "benchmark.warmups must be positive, not %s", warmUps);
        checkArgument(rounds > 0, "benchmark.rounds must be positive, not %s", rounds);
        requireNonNull(directory, "directory is null");
        requireNonNull(output, "output is null");
        requireNonNull(probe, "probe is null");
    }

    public static PointsSettings fromSystemProperties()
    {
        return new PointsSettings(
                integer("benchmark.points.meters", 10_000),
                integer("benchmark.points.days", 730),
                integer("benchmark.warmups", 3),
                integer("benchmark.rounds", 5),
                Path.of(property("benchmark.points.dir", "var/benchmark-points")).toAbsolutePath(),
                Path.of(property("benchmark.output", "docs")).toAbsolutePath(),
                BenchmarkSettings.probeFile());
    }

    /** The Berlin day after the last reading. */
    public LocalDate endDay()
    {
        return START_DAY.plusDays(days);
    }

    /** What the kept dataset was generated from: a run reuses it only when all of these match. */
    public Map<String, String> datasetKey()
    {
        return ImmutableMap.<String, String>builder()
                .put("meters", String.valueOf(meters))
                .put("days", String.valueOf(days))
                .put("seed", String.valueOf(SEED))
                .put("start-day", START_DAY.toString())
                .put("hot-days", String.valueOf(HOT_DAYS))
                .put("chunk-days", String.valueOf(CHUNK_DAYS))
                .put("maintenance-every", String.valueOf(MAINTENANCE_EVERY))
                .put("corrected-one-in", String.valueOf(RegisterReadings.CORRECTED_ONE_IN))
                .put("late-corrected-one-in", String.valueOf(PointsDataset.LATE_CORRECTED_ONE_IN))
                .buildOrThrow();
    }
}
