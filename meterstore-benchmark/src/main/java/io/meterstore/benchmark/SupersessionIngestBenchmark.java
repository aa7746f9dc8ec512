package io.meterstore.benchmark;

import com.google.common.collect.ImmutableList;
import io.airlift.log.Logger;
import io.meterstore.benchmark.BenchmarkResult.Comparison;
import io.meterstore.benchmark.BenchmarkResult.Target;
import io.meterstore.benchmark.BenchmarkResult.Unit;
import io.meterstore.core.HotTier;
import io.meterstore.core.HotTierSupersession;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkState;
import static java.util.Objects.requireNonNull;

/**
 * W3 (issue 32): what the supersession marks cost a writer. One day of readings of up to 1,000 meters INSERTed through
 * Trino into the hot tier (W3), then a correction batch of that day, a higher version of 2 % of its intervals (W3c),
 * with the marks' triggers against the same two INSERTs without them; the rules' triggers and CHECKs stay on for both
 * sides, as W2 keeps the marks on for both of its own. Each round writes a day of its own, {@value #DAYS_AHEAD} days and
 * more ahead, whose partition is created before the round, so that the side without the marks can turn off that
 * partition's triggers as well as the parent's; the partitions are dropped afterwards and the triggers turned on again.
 */
final class SupersessionIngestBenchmark
{
    static final String ID = "W3";
    private static final String CORRECTIONS_ID = "W3c";
    // above W2's days, which the same clean-up drops
    private static final int DAYS_AHEAD = IngestBenchmark.DAYS_AHEAD + 100;
    private static final Logger log = Logger.get(SupersessionIngestBenchmark.class);
    private static final String TITLE = "INSERT one hot day of 1,000 meters, marked";
    private static final String CORRECTIONS_TITLE = "INSERT a 2 % correction batch of that day, marked";
    private static final String LABEL = "with the marks' triggers";
    private static final String PEER = "without them";
    private static final Target TARGET = Target.atMost(1.3);
    private static final DateTimeFormatter LITERAL = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneOffset.UTC);

    private final BenchmarkDataset dataset;
    private final Connection trino;
    private final int rounds;

    SupersessionIngestBenchmark(BenchmarkDataset dataset, Connection trino, int rounds)
    {
        this.dataset = requireNonNull(dataset, "dataset is null");
        this.trino = requireNonNull(trino, "trino is null");
        this.rounds = rounds;
    }

    List<BenchmarkResult> run()
    {
        try {
            return measure();
        }
        catch (Exception e) {
            log.error(e, "W3 failed");
            return List.of(
                    BenchmarkResult.failed(ID, TITLE, LABEL, PEER, Unit.SECONDS, TARGET, e),
                    BenchmarkResult.failed(CORRECTIONS_ID, CORRECTIONS_TITLE, LABEL, PEER, Unit.SECONDS, TARGET, e));
        }
        finally {
            try (Connection postgres = dataset.database().connect()) {
                marks(postgres, BenchmarkDataset.HOT_TIER.qualifiedParent(), true);
                IngestBenchmark.dropAhead(dataset, postgres);
            }
            catch (SQLException e) {
                log.error(e, "W3 could not turn the marks' triggers on again or drop the partitions it created: run bin/archiver create and drop the partitions %s days ahead by hand", IngestBenchmark.DAYS_AHEAD);
            }
        }
    }

    private List<BenchmarkResult> measure()
            throws SQLException
    {
        HotTier hotTier = BenchmarkDataset.HOT_TIER;
        List<String> meters = dataset.generator().maloIds().stream().limit(IngestBenchmark.METERS).toList();
        Instant day = dataset.watermark().instant();
        List<Double> dayWith = new ArrayList<>();
        List<Double> dayWithout = new ArrayList<>();
        List<Double> correctionsWith = new ArrayList<>();
        List<Double> correctionsWithout = new ArrayList<>();
        long rows = -1;
        long corrections = -1;
        try (Connection postgres = dataset.database().connect()) {
            // a warm-up a side, then the rounds, alternating which side goes first
            for (int round = 0; round <= rounds; round++) {
                for (boolean marked : round % 2 == 0 ? List.of(true, false) : List.of(false, true)) {
                    int shift = DAYS_AHEAD + 2 * round + (marked ? 0 : 1);
                    Instant target = day.plus(Duration.ofDays(shift));
                    hotTier.ensurePartition(postgres, target);
                    String partition = hotTier.partitions(postgres).stream()
                            .filter(candidate -> !candidate.start().isAfter(target) && candidate.end().isAfter(target))
                            .findFirst()
                            .orElseThrow(() -> new IllegalStateException("No partition holds " + target))
                            .name();
                    marks(postgres, hotTier.qualifiedParent(), marked);
                    marks(postgres, hotTier.qualifiedPartition(partition), marked);
                    long start = System.nanoTime();
                    long inserted;
                    try (Statement statement = trino.createStatement()) {
                        inserted = statement.executeLargeUpdate(IngestBenchmark.insert(meters, day, shift));
                    }
                    double daySeconds = Medians.seconds(System.nanoTime() - start);
                    start = System.nanoTime();
                    long corrected;
                    try (Statement statement = trino.createStatement()) {
                        corrected = statement.executeLargeUpdate(corrections(meters, target));
                    }
                    double correctionSeconds = Medians.seconds(System.nanoTime() - start);
                    checkState(rows < 0 || (inserted == rows && corrected == corrections), "W3 inserted %s and %s rows in one round and %s and %s in another", rows, corrections, inserted, corrected);
                    rows = inserted;
                    corrections = corrected;
                    log.info("W3 round %s %s: %s rows in %.2f s, %s corrections in %.2f s", round, marked ? LABEL : PEER, inserted, daySeconds, corrected, correctionSeconds);
                    if (round > 0) {
                        (marked ? dayWith : dayWithout).add(daySeconds);
                        (marked ? correctionsWith : correctionsWithout).add(correctionSeconds);
                    }
                }
            }
        }
        String what = "%,d rows a round (%s meters x one day), into a day %s days and more ahead that no row holds, then %,d corrections of it (a higher version of every meter's intervals at 03:00 and 15:00 UTC, %.1f %%), each its own INSERT through Trino; the rules' triggers and CHECKs on for both sides"
                .formatted(rows, meters.size(), DAYS_AHEAD, corrections, 100.0 * corrections / rows);
        return ImmutableList.of(
                new BenchmarkResult(ID, TITLE, LABEL, PEER, Unit.SECONDS, Medians.median(dayWith), Medians.median(dayWithout), TARGET, Comparison.NOT_COMPARABLE, Optional.empty(), List.of(
                        what,
                        "rounds with the marks (s): " + dayWith,
                        "rounds without them (s): " + dayWithout)),
                new BenchmarkResult(CORRECTIONS_ID, CORRECTIONS_TITLE, LABEL, PEER, Unit.SECONDS, Medians.median(correctionsWith), Medians.median(correctionsWithout), TARGET, Comparison.NOT_COMPARABLE, Optional.empty(), List.of(
                        "The same rounds as W3: each correction batch right after its day.",
                        "rounds with the marks (s): " + correctionsWith,
                        "rounds without them (s): " + correctionsWithout)));
    }

    /**
     * A higher version of the intervals at 03:00 and 15:00 UTC of the day from {@code day} of {@code meters} (2 of a
     * day's 96): each key's latest stored version, its value changed, under that version plus one.
     */
    private static String corrections(List<String> meters, Instant day)
    {
        return """
                INSERT INTO meterstore.metering.readings_versions
                SELECT malo_id, max_by(melo_id, version), obis_code, max_by(sparte, version), "from", max_by("to", version), max_by(value, version) + 0.001,
                    max_by(unit, version), max_by(quality, version), max_by(resolution, version), max_by(source_kind, version), max_by(source_detail, version),
                    max_by(provenance, version), CAST(max(version) + 1 AS decimal(20, 0)), max_by(version_scope, version), NULL, NULL
                FROM meterstore.metering.readings_versions
                WHERE "from" >= TIMESTAMP '%1$s UTC' AND "from" < TIMESTAMP '%2$s UTC' AND minute("from") = 0 AND hour(at_timezone("from", 'UTC')) IN (3, 15)
                    AND malo_id IN (%3$s)
                GROUP BY malo_id, obis_code, "from\""""
                .formatted(LITERAL.format(day), LITERAL.format(day.plus(Duration.ofDays(1))),
                        String.join(", ", meters.stream().map(meter -> "'" + meter + "'").toList()));
    }

    /** The marks' triggers of {@code qualifiedTable} on, as create leaves them, or off. */
    private static void marks(Connection postgres, String qualifiedTable, boolean on)
            throws SQLException
    {
        try (Statement statement = postgres.createStatement()) {
            for (String trigger : HotTierSupersession.TRIGGERS) {
                statement.execute("ALTER TABLE %s %s TRIGGER %s".formatted(qualifiedTable, on ? "ENABLE" : "DISABLE", trigger));
            }
        }
    }
}
