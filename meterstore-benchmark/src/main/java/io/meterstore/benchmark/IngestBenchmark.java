package io.meterstore.benchmark;

import io.airlift.log.Logger;
import io.meterstore.benchmark.BenchmarkResult.Comparison;
import io.meterstore.benchmark.BenchmarkResult.Target;
import io.meterstore.benchmark.BenchmarkResult.Unit;
import io.meterstore.core.HotPartition;
import io.meterstore.core.HotTier;
import io.meterstore.core.HotTierRules;

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
 * W2 (issue 30): one day of readings of up to 1,000 meters INSERTed through Trino into the hot tier, with the rules
 * PostgreSQL keeps (the CHECK constraints and the statement triggers of {@code HotTierRules}) against the same INSERT
 * without them. The rows are a hot day of the dataset's first meters moved {@value #DAYS_AHEAD} days and more ahead,
 * a day no row holds, with their version scope restated for the new month; each round writes another day, and the
 * partitions the rounds created are dropped afterwards, so the kept dataset stays as its marker describes. The rounds
 * alternate the two sides after a warm-up of each.
 */
final class IngestBenchmark
{
    static final String ID = "W2";
    static final int METERS = 1_000;
    static final int DAYS_AHEAD = 400;
    private static final Logger log = Logger.get(IngestBenchmark.class);
    private static final String TITLE = "INSERT one hot day of 1,000 meters";
    private static final String LABEL = "with the hot tier's rules";
    private static final String PEER = "without them";
    private static final Target TARGET = Target.atMost(1.3);
    private static final DateTimeFormatter LITERAL = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneOffset.UTC);

    private final BenchmarkDataset dataset;
    private final Connection trino;
    private final int rounds;

    IngestBenchmark(BenchmarkDataset dataset, Connection trino, int rounds)
    {
        this.dataset = requireNonNull(dataset, "dataset is null");
        this.trino = requireNonNull(trino, "trino is null");
        this.rounds = rounds;
    }

    BenchmarkResult run()
    {
        try {
            return measure();
        }
        catch (Exception e) {
            log.error(e, "W2 failed");
            return BenchmarkResult.failed(ID, TITLE, LABEL, PEER, Unit.SECONDS, TARGET, e);
        }
        finally {
            try (Connection postgres = dataset.database().connect()) {
                rules(postgres, true);
                dropAhead(dataset, postgres);
            }
            catch (SQLException e) {
                log.error(e, "W2 could not restore the hot tier's rules or drop the partitions it created: run bin/archiver create and drop the partitions %s days ahead by hand", DAYS_AHEAD);
            }
        }
    }

    private BenchmarkResult measure()
            throws SQLException
    {
        List<String> meters = dataset.generator().maloIds().stream().limit(METERS).toList();
        Instant day = dataset.watermark().instant();
        List<Double> with = new ArrayList<>();
        List<Double> without = new ArrayList<>();
        long rows = -1;
        try (Connection postgres = dataset.database().connect()) {
            // a warm-up a side, then the rounds, alternating which side goes first
            for (int round = 0; round <= rounds; round++) {
                for (boolean withRules : round % 2 == 0 ? List.of(true, false) : List.of(false, true)) {
                    rules(postgres, withRules);
                    int shift = DAYS_AHEAD + 2 * round + (withRules ? 0 : 1);
                    long start = System.nanoTime();
                    long inserted;
                    try (Statement statement = trino.createStatement()) {
                        inserted = statement.executeLargeUpdate(insert(meters, day, shift));
                    }
                    double seconds = Medians.seconds(System.nanoTime() - start);
                    checkState(rows < 0 || inserted == rows, "W2 inserted %s rows in one round and %s in another", rows, inserted);
                    rows = inserted;
                    log.info("W2 round %s %s: %s rows in %.2f s", round, withRules ? LABEL : PEER, inserted, seconds);
                    if (round > 0) {
                        (withRules ? with : without).add(seconds);
                    }
                }
            }
        }
        double meterstore = Medians.median(with);
        double peer = Medians.median(without);
        List<String> details = List.of(
                "%,d rows a round (%s meters x one day), into a day %s days and more ahead that no row holds".formatted(rows, meters.size(), DAYS_AHEAD),
                "rounds with the rules (s): " + with,
                "rounds without them (s): " + without);
        return new BenchmarkResult(ID, TITLE, LABEL, PEER, Unit.SECONDS, meterstore, peer, TARGET, Comparison.NOT_COMPARABLE, Optional.empty(), details);
    }

    /** The day from {@code day} of {@code meters}, as stored, moved {@code shift} days ahead, its scope restated for its month. */
    static String insert(List<String> meters, Instant day, int shift)
    {
        return insert(meters, day, day.plus(Duration.ofDays(1)), shift);
    }

    /** The rows of {@code meters} from {@code start} to {@code end}, as stored, moved {@code shift} days ahead, their scope restated for their month. */
    static String insert(List<String> meters, Instant start, Instant end, int shift)
    {
        return """
                INSERT INTO meterstore.metering.readings_versions
                SELECT malo_id, melo_id, obis_code, sparte, "from" + INTERVAL '%1$d' DAY, "to" + INTERVAL '%1$d' DAY, value, unit, quality, resolution,
                    source_kind, source_detail, provenance, version,
                    split_part(version_scope, ':', 1) || ':' || format_datetime(at_timezone("from" + INTERVAL '%1$d' DAY, 'Europe/Berlin'), 'yyyy-MM'),
                    NULL, NULL
                FROM meterstore.metering.readings_versions
                WHERE "from" >= TIMESTAMP '%2$s UTC' AND "from" < TIMESTAMP '%3$s UTC' AND malo_id IN (%4$s)"""
                .formatted(shift, LITERAL.format(start), LITERAL.format(end),
                        String.join(", ", meters.stream().map(meter -> "'" + meter + "'").toList()));
    }

    /**
     * The rules on, as create leaves them, or off: their triggers disabled and the CHECK constraints dropped. The
     * supersession marks' triggers stay on either way: they are not the rules.
     */
    private static void rules(Connection postgres, boolean on)
            throws SQLException
    {
        HotTier hotTier = BenchmarkDataset.HOT_TIER;
        try (Statement statement = postgres.createStatement()) {
            for (String trigger : HotTierRules.TRIGGERS) {
                statement.execute("ALTER TABLE %s %s TRIGGER %s".formatted(hotTier.qualifiedParent(), on ? "ENABLE" : "DISABLE", trigger));
            }
        }
        if (on) {
            hotTier.createParent(postgres);
            return;
        }
        try (Statement statement = postgres.createStatement()) {
            for (String check : HotTierRules.CHECKS.keySet()) {
                statement.execute("ALTER TABLE %s DROP CONSTRAINT IF EXISTS %s".formatted(hotTier.qualifiedParent(), check));
            }
        }
    }

    /** Drops the partitions {@value #DAYS_AHEAD} days and more above W that W2's and W3's rounds created. */
    static void dropAhead(BenchmarkDataset dataset, Connection postgres)
            throws SQLException
    {
        HotTier hotTier = BenchmarkDataset.HOT_TIER;
        Instant ahead = dataset.watermark().instant().plus(Duration.ofDays(DAYS_AHEAD));
        for (HotPartition partition : hotTier.partitions(postgres)) {
            if (!partition.start().isBefore(ahead)) {
                hotTier.detach(postgres, partition.name());
                hotTier.drop(postgres, partition.name());
            }
        }
    }
}
