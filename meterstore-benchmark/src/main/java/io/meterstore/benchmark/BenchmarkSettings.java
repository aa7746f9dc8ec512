package io.meterstore.benchmark;

import com.google.common.collect.ImmutableMap;
import com.google.common.collect.ImmutableSet;

import java.nio.file.Path;
import java.time.LocalDate;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * What one benchmark run measures, from system properties ({@code -Dbenchmark.meters=300}); the defaults are the issue's:
 * 10,000 meters x 60 days, the last 10 of them hot.
 */
public record BenchmarkSettings(
        int meters,
        int days,
        int hotDays,
        int warmUps,
        int rounds,
        Set<String> benchmarks,
        int archivalMeters,
        int archivalRounds,
        String archiverHeap,
        int d1Seconds,
        BenchmarkStorage storage,
        Path directory,
        Path output,
        Optional<Path> probe)
{
    public static final Set<String> ALL = ImmutableSet.of("Q1", "Q2", "Q3", "Q4", "Q5", "Q6", "R1", "R2", "R3", "R1c", "R1h", "R1L", "R3L", "C1", "H1", "H2", "J1", "D1t", "D1w", "D1m", "D1y", "A1", "S1", "D1", "D1g", "W1", "W1n", "W2", "W3", "E1");
    /**
     * The layout the archiver writes the cold tier in. A dataset made by an archiver of another layout is made again:
     * "resolved-1" is winners apart from the versions they supersede (issue 12); datasets from before it lack the key.
     */
    public static final String COLD_LAYOUT = "resolved-1";
    /** How many archived days the late-correction stream of R1L and R3L corrects, one INSERT each. */
    public static final int STREAM_DAYS = 30;
    // fixed, so a kept dataset is the same one on every machine and the month groups do not drift with the date
    public static final long SEED = 2026;
    public static final LocalDate START_DAY = LocalDate.of(2026, 3, 1);
    public static final double CORRECTIONS_FRACTION = 0.02;

    public BenchmarkSettings
    {
        checkArgument(meters >= 100, "benchmark.meters must be at least 100 (Q6 joins a list of 100 meters)");
        checkArgument(hotDays > 0 && days > hotDays + 1, "benchmark.days must exceed benchmark.hot-days by at least two, so both tiers hold whole days");
        checkArgument(warmUps > 0, "benchmark.warmups must be positive: the first warm-up's answers are the ones compared");
        checkArgument(rounds > 0, "benchmark.rounds must be positive");
        checkArgument(archivalMeters > 0 && archivalRounds > 0, "benchmark.a1.meters and benchmark.a1.rounds must be positive");
        checkArgument(d1Seconds > 0, "benchmark.d1.seconds must be positive");
        // D1's corrections go to hot days that stay hot while one archival cycle per number of clients moves W
        checkArgument(!(benchmarks.contains("D1") || benchmarks.contains("D1g")) || hotDays > 4, "D1 and D1g need benchmark.hot-days of at least 5");
        benchmarks = ImmutableSet.copyOf(benchmarks);
        checkArgument(ALL.containsAll(benchmarks), "benchmark.queries must name some of %s, or be 'all'", ALL);
        requireNonNull(archiverHeap, "archiverHeap is null");
        requireNonNull(storage, "storage is null");
        requireNonNull(directory, "directory is null");
        requireNonNull(output, "output is null");
        requireNonNull(probe, "probe is null");
    }

    public static BenchmarkSettings fromSystemProperties()
    {
        String queries = property("benchmark.queries", "all");
        Set<String> benchmarks = queries.equalsIgnoreCase("all")
                ? ALL
                : Arrays.stream(queries.split(",")).map(String::trim).filter(name -> !name.isEmpty()).map(BenchmarkSettings::benchmarkId).collect(ImmutableSet.toImmutableSet());
        String storageName = property("benchmark.storage", "local");
        BenchmarkStorage storage = Arrays.stream(BenchmarkStorage.values())
                .filter(value -> value.name().equalsIgnoreCase(storageName))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("benchmark.storage must be 'local' or 's3', not '%s'".formatted(storageName)));
        return new BenchmarkSettings(
                integer("benchmark.meters", 10_000),
                integer("benchmark.days", 60),
                integer("benchmark.hot-days", 10),
                integer("benchmark.warmups", 3),
                integer("benchmark.rounds", 5),
                benchmarks,
                integer("benchmark.a1.meters", 11_000),
                integer("benchmark.a1.rounds", 3),
                property("benchmark.archiver.heap", "256m"),
                integer("benchmark.d1.seconds", 120),
                storage,
                Path.of(property("benchmark.dir", storage.defaultDirectory())).toAbsolutePath(),
                Path.of(property("benchmark.output", "docs")).toAbsolutePath(),
                probeFile());
    }

    // ids are matched regardless of case: upper-casing alone made R1h and R1c unnameable
    static String benchmarkId(String name)
    {
        return ALL.stream().filter(id -> id.equalsIgnoreCase(name)).findFirst().orElse(name.toUpperCase(Locale.ROOT));
    }

    /** {@code -Dbenchmark.probe=FILE}: statements of one's own to time instead of the benchmark, on either dataset. */
    static Optional<Path> probeFile()
    {
        return Optional.of(property("benchmark.probe", "")).filter(file -> !file.isEmpty()).map(file -> Path.of(file).toAbsolutePath());
    }

    public boolean runs(String benchmark)
    {
        return benchmarks.contains(benchmark);
    }

    public int coldDays()
    {
        return days - hotDays;
    }

    /** What the kept dataset was generated from: a second run reuses it only when all of these match. */
    public Map<String, String> datasetKey()
    {
        return ImmutableMap.<String, String>builder()
                .put("meters", String.valueOf(meters))
                .put("days", String.valueOf(days))
                .put("hot-days", String.valueOf(hotDays))
                .put("seed", String.valueOf(SEED))
                .put("start-day", START_DAY.toString())
                .put("corrections-fraction", String.valueOf(CORRECTIONS_FRACTION))
                .put("cold-layout", COLD_LAYOUT)
                // a local dataset's key predates the storage setting: it stays valid without it
                .putAll(storage == BenchmarkStorage.LOCAL ? ImmutableMap.of() : ImmutableMap.of("storage", storage.name()))
                .buildOrThrow();
    }

    // an unset Maven property arrives as its own ${...} text, which means "the default" too
    static String property(String name, String defaultValue)
    {
        String value = System.getProperty(name);
        if (value == null || value.isBlank() || value.startsWith("${")) {
            return defaultValue;
        }
        return value.trim();
    }

    static int integer(String name, int defaultValue)
    {
        String value = property(name, String.valueOf(defaultValue));
        try {
            return Integer.parseInt(value.replace("_", "").replace(",", ""));
        }
        catch (NumberFormatException e) {
            throw new IllegalArgumentException("System property '%s' must be an integer, not '%s'".formatted(name, value), e);
        }
    }
}
