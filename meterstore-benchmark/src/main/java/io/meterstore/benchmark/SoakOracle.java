package io.meterstore.benchmark;

import io.meterstore.core.Reading;
import io.meterstore.testing.ReadingsOracle;
import io.meterstore.testing.ReadingsOracle.MeterDay;
import io.meterstore.testing.ReadingsOracle.Totals;

import java.time.Duration;
import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeSet;

import static com.google.common.base.Preconditions.checkState;
import static java.util.Objects.requireNonNull;

/**
 * The soak's independent record: every version the driver sent and the store accepted, less what it erased, resolved by
 * meterstore-testing's {@link ReadingsOracle} (plain Java over the rows, no code of the connector or the archiver).
 * It is told what was written before the statement is sent, so a write path that loses a row is caught, not copied.
 * The readings' retention it applies by its own rule ({@link #swept}).
 */
final class SoakOracle
{
    /** One DELETE of a meter's readings with "from" in [lower, upper). */
    record Erasure(String maloId, Instant lower, Instant upper)
    {
        Erasure
        {
            requireNonNull(maloId, "maloId is null");
            requireNonNull(lower, "lower is null");
            requireNonNull(upper, "upper is null");
        }

        boolean covers(Reading reading)
        {
            return reading.maloId().equals(maloId) && !reading.from().isBefore(lower) && reading.from().isBefore(upper);
        }
    }

    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

    private final List<Reading> rows = new ArrayList<>();
    private final List<Erasure> erasures = new ArrayList<>();
    // every reading with "from" before this is past the retention, removed and refused from then on
    private Instant retainedFrom = Instant.EPOCH;
    private Optional<ReadingsOracle> resolved = Optional.empty();
    // the time spent resolving the record, which grows with it: the run counts it as the oracle's, not the store's
    private long resolvingNanos;

    void written(Collection<Reading> readings)
    {
        rows.addAll(readings);
        resolved = Optional.empty();
    }

    void erased(Erasure erasure)
    {
        erasures.add(requireNonNull(erasure, "erasure is null"));
        rows.removeIf(erasure::covers);
        resolved = Optional.empty();
    }

    /** Takes {@code erasure} off the suppression list; its rows stay gone until they are written again. */
    void lifted(Erasure erasure)
    {
        checkState(erasures.remove(requireNonNull(erasure, "erasure is null")), "Erasure %s was not recorded", erasure);
    }

    /**
     * The retention's sweep at {@code now}, by docs/operations.md's rule and not the archiver's code: the cut is the
     * start of the Berlin day {@code days} before now's, and every UTC month of "from" (Iceberg's partition) that ends
     * at or before it is removed, every version of every meter, and refused from then on. Returns the versions removed.
     */
    long swept(Instant now, int days)
    {
        Instant cut = retentionCut(now, days);
        // the first UTC month not wholly before the cut: the one the cut lies in
        Instant kept = YearMonth.from(cut.atZone(ZoneOffset.UTC)).atDay(1).atStartOfDay(ZoneOffset.UTC).toInstant();
        if (!kept.isAfter(retainedFrom)) {
            return 0;
        }
        retainedFrom = kept;
        int before = rows.size();
        rows.removeIf(reading -> reading.from().isBefore(kept));
        resolved = Optional.empty();
        return before - rows.size();
    }

    /** The cut of a retention of {@code days} at {@code now}: the start of the Berlin day {@code days} before now's. */
    static Instant retentionCut(Instant now, int days)
    {
        return now.atZone(BERLIN).toLocalDate().minusDays(days).atStartOfDay(BERLIN).toInstant();
    }

    /** Every reading with "from" before this was removed by the retention (the epoch before a sweep removed a month). */
    Instant retainedFrom()
    {
        return retainedFrom;
    }

    /** Whether an INSERT of {@code reading} is refused as erased: by a DELETE not lifted, or in a month the retention removed. */
    boolean isErased(Reading reading)
    {
        return reading.from().isBefore(retainedFrom) || erasures.stream().anyMatch(erasure -> erasure.covers(reading));
    }

    /** Whether {@code reading} lies in a month the retention removed. */
    boolean isSwept(Reading reading)
    {
        return reading.from().isBefore(retainedFrom);
    }

    ReadingsOracle oracle()
    {
        if (resolved.isEmpty()) {
            long start = System.nanoTime();
            resolved = Optional.of(ReadingsOracle.of(rows));
            resolvingNanos += System.nanoTime() - start;
        }
        return resolved.get();
    }

    /** The time spent so far resolving the record into a {@link ReadingsOracle}. */
    Duration resolvingTime()
    {
        return Duration.ofNanos(resolvingNanos);
    }

    /**
     * The first (meter, day) whose count or sum differs between what the oracle expects and what the store answered,
     * described for the run's failure: the meter, the day, expected and actual.
     */
    static Optional<String> firstDifference(String question, SortedMap<MeterDay, Totals> expected, SortedMap<MeterDay, Totals> actual)
    {
        TreeSet<MeterDay> keys = new TreeSet<>(expected.keySet());
        keys.addAll(actual.keySet());
        for (MeterDay key : keys) {
            Totals wanted = expected.getOrDefault(key, Totals.EMPTY);
            Totals found = actual.getOrDefault(key, Totals.EMPTY);
            if (wanted.count() != found.count() || wanted.sum().compareTo(found.sum()) != 0) {
                return Optional.of("%s: meter %s, day %s: expected %s rows summing to %s, actual %s rows summing to %s"
                        .formatted(question, key.maloId(), key.day(), wanted.count(), wanted.sum().toPlainString(), found.count(), found.sum().toPlainString()));
            }
        }
        return Optional.empty();
    }
}
