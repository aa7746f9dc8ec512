package io.meterstore.testing;

import io.meterstore.core.Reading;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * The expected answers for a workload, computed in plain Java over the rows themselves: no SQL, no connector, no code
 * shared with the resolution under test. Holds every row (sized for test workloads up to ~1 M rows; the generator
 * shares strings, instants and versions between rows, so a row costs little more than its record and its value).
 * <p>
 * The resolved view keeps, per merge key (malo_id, obis_code, "from"; with melo_id and the identity columns for a table
 * whose shape keys by them, {@link #of(Iterable, boolean, int)}) and version scope, the version with the highest
 * {@code version}, ties broken by the latest {@code recorded_at}. Filters of the resolved view apply to the winners, as
 * a WHERE clause over {@code readings} does; use {@link #asKnownAt} to look at what was known at an instant.
 */
public final class ReadingsOracle
{
    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");
    private static final int SCALE = Reading.VALUE_SCALE;

    private final Reading[] readings;
    private final boolean meloKeyed;
    private final int identityColumns;
    private final BitSet winners;

    private ReadingsOracle(Reading[] readings, boolean meloKeyed, int identityColumns)
    {
        this.readings = readings;
        this.meloKeyed = meloKeyed;
        this.identityColumns = identityColumns;
        this.winners = resolve(readings, meloKeyed, identityColumns);
    }

    public static ReadingsOracle of(Iterable<Reading> readings)
    {
        return of(readings.iterator());
    }

    /**
     * The oracle of a table whose merge key has melo_id ({@code meloKeyed}) and its first {@code identityColumns}
     * attribute values (its identity columns, which a reading carries first) besides malo_id, obis_code and "from".
     */
    public static ReadingsOracle of(Iterable<Reading> readings, boolean meloKeyed, int identityColumns)
    {
        checkArgument(identityColumns >= 0, "identityColumns is negative");
        List<Reading> rows = new ArrayList<>();
        readings.forEach(reading -> rows.add(requireNonNull(reading, "reading is null")));
        return new ReadingsOracle(rows.toArray(Reading[]::new), meloKeyed, identityColumns);
    }

    public static ReadingsOracle of(Iterator<Reading> readings)
    {
        List<Reading> rows = new ArrayList<>();
        readings.forEachRemaining(reading -> rows.add(requireNonNull(reading, "reading is null")));
        return new ReadingsOracle(rows.toArray(Reading[]::new), false, 0);
    }

    /** Which rows a question is about: every version, or the winner of each merge key. */
    public enum View
    {
        VERSIONS,
        RESOLVED,
    }

    /** A market location on a Berlin calendar day. */
    public record MeterDay(String maloId, LocalDate day)
            implements Comparable<MeterDay>
    {
        private static final Comparator<MeterDay> ORDER = Comparator.comparing(MeterDay::maloId).thenComparing(MeterDay::day);

        public MeterDay
        {
            requireNonNull(maloId, "maloId is null");
            requireNonNull(day, "day is null");
        }

        @Override
        public int compareTo(MeterDay other)
        {
            return ORDER.compare(this, other);
        }
    }

    /** count(*) and sum(value) of a group; the sum carries the column's scale 6, as PostgreSQL's and Trino's do. */
    public record Totals(long count, BigDecimal sum)
    {
        public static final Totals EMPTY = new Totals(0, BigDecimal.ZERO.setScale(SCALE));

        public Totals
        {
            requireNonNull(sum, "sum is null");
        }

        Totals plus(BigDecimal value)
        {
            return new Totals(count + 1, sum.add(value).setScale(SCALE));
        }
    }

    /** count(*), sum(value), min("from") and max("from"); the bounds are empty when nothing matched. */
    public record Summary(long count, BigDecimal sum, Optional<Instant> minFrom, Optional<Instant> maxFrom)
    {
        public Summary
        {
            requireNonNull(sum, "sum is null");
            requireNonNull(minFrom, "minFrom is null");
            requireNonNull(maxFrom, "maxFrom is null");
        }
    }

    public static Predicate<Reading> all()
    {
        return reading -> true;
    }

    public static Predicate<Reading> maloId(String maloId)
    {
        requireNonNull(maloId, "maloId is null");
        return reading -> reading.maloId().equals(maloId);
    }

    /** "from" in [lower, upper). */
    public static Predicate<Reading> fromRange(Instant lower, Instant upper)
    {
        requireNonNull(lower, "lower is null");
        requireNonNull(upper, "upper is null");
        return reading -> !reading.from().isBefore(lower) && reading.from().isBefore(upper);
    }

    /** "from" before {@code bound}: the cold side of a watermark. */
    public static Predicate<Reading> fromBefore(Instant bound)
    {
        requireNonNull(bound, "bound is null");
        return reading -> reading.from().isBefore(bound);
    }

    /** "from" at or after {@code bound}: the hot side of a watermark. */
    public static Predicate<Reading> fromAtOrAfter(Instant bound)
    {
        requireNonNull(bound, "bound is null");
        return reading -> !reading.from().isBefore(bound);
    }

    /** How many rows the oracle holds (every version). */
    public int size()
    {
        return readings.length;
    }

    /** The workload as known at {@code instant}: only versions recorded at or before it, resolved among themselves. */
    public ReadingsOracle asKnownAt(Instant instant)
    {
        requireNonNull(instant, "instant is null");
        List<Reading> known = new ArrayList<>();
        for (Reading reading : readings) {
            if (!reading.recordedAt().isAfter(instant)) {
                known.add(reading);
            }
        }
        return new ReadingsOracle(known.toArray(Reading[]::new), meloKeyed, identityColumns);
    }

    /** Every version matching {@code filter}, in the order they were given. */
    public List<Reading> versions(Predicate<? super Reading> filter)
    {
        return rows(View.VERSIONS, filter);
    }

    /** The winner of every merge key, if it matches {@code filter}, in the order they were given. */
    public List<Reading> resolved(Predicate<? super Reading> filter)
    {
        return rows(View.RESOLVED, filter);
    }

    public List<Reading> rows(View view, Predicate<? super Reading> filter)
    {
        List<Reading> rows = new ArrayList<>();
        forEach(view, filter, rows::add);
        return rows;
    }

    public long count(View view, Predicate<? super Reading> filter)
    {
        return summary(view, filter).count();
    }

    public BigDecimal sum(View view, Predicate<? super Reading> filter)
    {
        return summary(view, filter).sum();
    }

    public Optional<Instant> minFrom(View view, Predicate<? super Reading> filter)
    {
        return summary(view, filter).minFrom();
    }

    public Optional<Instant> maxFrom(View view, Predicate<? super Reading> filter)
    {
        return summary(view, filter).maxFrom();
    }

    public Summary summary(View view, Predicate<? super Reading> filter)
    {
        long[] count = new long[1];
        BigDecimal[] sum = {BigDecimal.ZERO};
        Instant[] bounds = new Instant[2];
        forEach(view, filter, reading -> {
            count[0]++;
            sum[0] = sum[0].add(reading.value());
            if (bounds[0] == null || reading.from().isBefore(bounds[0])) {
                bounds[0] = reading.from();
            }
            if (bounds[1] == null || reading.from().isAfter(bounds[1])) {
                bounds[1] = reading.from();
            }
        });
        return new Summary(count[0], sum[0].setScale(SCALE), Optional.ofNullable(bounds[0]), Optional.ofNullable(bounds[1]));
    }

    /** count and sum per (malo_id, Berlin calendar day of "from"), ordered by MaLo-ID and day. */
    public SortedMap<MeterDay, Totals> totalsByMeterDay(View view, Predicate<? super Reading> filter)
    {
        return totalsBy(view, filter, reading -> new MeterDay(reading.maloId(), reading.from().atZone(BERLIN).toLocalDate()));
    }

    /** count and sum per Berlin calendar day of "from". */
    public SortedMap<LocalDate, Totals> totalsByDay(View view, Predicate<? super Reading> filter)
    {
        return totalsBy(view, filter, reading -> reading.from().atZone(BERLIN).toLocalDate());
    }

    /** count and sum per malo_id. */
    public SortedMap<String, Totals> totalsByMeter(View view, Predicate<? super Reading> filter)
    {
        return totalsBy(view, filter, Reading::maloId);
    }

    /** count and sum per any grouping of the rows, e.g. the hot partition a row lands in. */
    public <K extends Comparable<? super K>> SortedMap<K, Totals> totalsBy(View view, Predicate<? super Reading> filter, Function<? super Reading, ? extends K> group)
    {
        requireNonNull(group, "group is null");
        SortedMap<K, Totals> totals = new TreeMap<>();
        forEach(view, filter, reading -> totals.merge(group.apply(reading), Totals.EMPTY.plus(reading.value()), (left, right) -> new Totals(left.count() + right.count(), left.sum().add(right.sum()))));
        return totals;
    }

    private void forEach(View view, Predicate<? super Reading> filter, Consumer<Reading> action)
    {
        requireNonNull(view, "view is null");
        requireNonNull(filter, "filter is null");
        for (int index = 0; index < readings.length; index++) {
            boolean visible = switch (view) {
                case VERSIONS -> true;
                case RESOLVED -> winners.get(index);
            };
            if (visible && filter.test(readings[index])) {
                action.accept(readings[index]);
            }
        }
    }

    // identity: melo_id where it keys the table, then the identity columns' values; empty for the default key
    private record ScopedKey(String versionScope, String maloId, String obisCode, Instant from, List<Optional<String>> identity) {}

    private static BitSet resolve(Reading[] readings, boolean meloKeyed, int identityColumns)
    {
        Map<ScopedKey, Integer> best = new HashMap<>();
        for (int index = 0; index < readings.length; index++) {
            Reading reading = readings[index];
            List<Optional<String>> identity = new ArrayList<>();
            if (meloKeyed) {
                identity.add(reading.meloId());
            }
            identity.addAll(reading.attributes().subList(0, identityColumns));
            ScopedKey key = new ScopedKey(reading.versionScope(), reading.maloId(), reading.obisCode(), reading.from(), identity);
            Integer current = best.get(key);
            if (current == null || beats(reading, readings[current])) {
                best.put(key, index);
            }
        }
        BitSet winners = new BitSet(readings.length);
        for (int index : best.values()) {
            winners.set(index);
        }
        return winners;
    }

    private static boolean beats(Reading candidate, Reading incumbent)
    {
        int byVersion = candidate.version().compareTo(incumbent.version());
        if (byVersion != 0) {
            return byVersion > 0;
        }
        return candidate.recordedAt().isAfter(incumbent.recordedAt());
    }
}
