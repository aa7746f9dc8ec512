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
import static io.meterstore.benchmark.BenchmarkSettings.integer;
import static io.meterstore.benchmark.BenchmarkSettings.property;
import static java.util.Objects.requireNonNull;

/**
 * The "years" benchmark of issue 13, from system properties ({@code -Dbenchmark.dataset=years}): 1,000 meters x 730
 * days archived day by day, with a late-correction INSERT for each of the last 90 days. Develop on a smaller shape
 * ({@code -Dbenchmark.years.meters=50 -Dbenchmark.years.days=120 -Dbenchmark.years.correction-days=20}).
 *
 * @param chunkDays days loaded into PostgreSQL at a time and archived before the next load, so the hot tier never holds
 * more than a chunk
 * @param maintenanceEvery archived days between two runs of the archiver's maintenance ({@code expire}, {@code compact}),
 * as a service archiving one day a day with that maintenance interval runs it
 * @param probe statements of one's own to time on the dataset instead of the benchmark ({@code -Dbenchmark.probe=FILE}, as
 * {@link ProbeQueries} reads them)
 */
public record YearsSettings(
        int meters,
        int days,
        int correctionDays,
        int chunkDays,
        int maintenanceEvery,
        int rounds,
        Set<String> benchmarks,
        Path directory,
        Path output,
        Optional<Path> probe)
{
    public static final Set<String> ALL = ImmutableSet.of("Y1", "Y2", "Y3", "Y4", "Y4D", "Y5");
    /**
     * What runs unless asked otherwise: Y1, Y2 and Y4's data files wait for month compaction; Y5 removes months for good,
     * so the next run makes the dataset again.
     */
    public static final Set<String> DEFAULT = ImmutableSet.of("Y3", "Y4");
    public static final long SEED = 2026;
    public static final LocalDate START_DAY = LocalDate.of(2024, 6, 1);
    /** Y3 compares planning after this many archival commits with planning after all of them. */
    public static final int EARLY_COMMITS = 60;
    /** 2 % of the intervals of a day: one key in 50 by a hash of (malo_id, "from"). */
    public static final int CORRECTED_ONE_IN = 50;
    public static final int CORRECTION_MIN_DAYS_BACK = 5;
    public static final int CORRECTION_MAX_DAYS_BACK = 40;

    public YearsSettings
    {
        checkArgument(meters > 0, "benchmark.years.meters must be positive");
        checkArgument(days > EARLY_COMMITS + CORRECTION_MAX_DAYS_BACK, "benchmark.years.days must exceed %s", EARLY_COMMITS + CORRECTION_MAX_DAYS_BACK);
        checkArgument(correctionDays >= 0 && correctionDays <= days - EARLY_COMMITS - CORRECTION_MAX_DAYS_BACK, "benchmark.years.correction-days must leave the first %s days without corrections", EARLY_COMMITS + CORRECTION_MAX_DAYS_BACK);
        checkArgument(chunkDays > 1, "benchmark.years.chunk-days must be at least 2");
        checkArgument(maintenanceEvery > 0, "benchmark.years.maintenance-every must be positive");
        checkArgument(rounds > 0, "benchmark.rounds must be positive");
        benchmarks = ImmutableSet.copyOf(benchmarks);
        checkArgument(ALL.containsAll(benchmarks), "benchmark.queries must name some of %s for the years dataset", ALL);
        requireNonNull(directory, "directory is null");
        requireNonNull(output, "output is null");
        requireNonNull(probe, "probe is null");
    }

    public static YearsSettings fromSystemProperties()
    {
        String queries = property("benchmark.queries", "all");
        Set<String> benchmarks = queries.equalsIgnoreCase("all")
                ? DEFAULT
                : Arrays.stream(queries.split(",")).map(String::trim).filter(name -> !name.isEmpty()).map(name -> name.toUpperCase(Locale.ROOT)).collect(ImmutableSet.toImmutableSet());
        return new YearsSettings(
                integer("benchmark.years.meters", 1_000),
                integer("benchmark.years.days", 730),
                integer("benchmark.years.correction-days", 90),
                integer("benchmark.years.chunk-days", 30),
                integer("benchmark.years.maintenance-every", 7),
                integer("benchmark.rounds", 5),
                benchmarks,
                Path.of(property("benchmark.years.dir", "var/benchmark-years")).toAbsolutePath(),
                Path.of(property("benchmark.output", "docs")).toAbsolutePath(),
                BenchmarkSettings.probeFile());
    }

    public boolean runs(String benchmark)
    {
        return benchmarks.contains(benchmark);
    }

    /** The day Y3's one-day query reads: the 30th, archived well before the 60th commit and never corrected. */
    public LocalDate planDay()
    {
        return START_DAY.plusDays(30);
    }

    /** The first day whose archival is followed by a correction INSERT. */
    public LocalDate firstCorrectionDay()
    {
        return START_DAY.plusDays(days - correctionDays);
    }

    /** What the kept dataset was generated from: a run reuses it only when all of these match. */
    public Map<String, String> datasetKey()
    {
        return ImmutableMap.<String, String>builder()
                .put("meters", String.valueOf(meters))
                .put("days", String.valueOf(days))
                .put("correction-days", String.valueOf(correctionDays))
                .put("chunk-days", String.valueOf(chunkDays))
                .put("maintenance-every", String.valueOf(maintenanceEvery))
                .put("seed", String.valueOf(SEED))
                .put("start-day", START_DAY.toString())
                .put("corrections-fraction", String.valueOf(BenchmarkSettings.CORRECTIONS_FRACTION))
                .buildOrThrow();
    }
}
