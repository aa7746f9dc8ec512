package io.meterstore.core;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

import static java.util.Objects.requireNonNull;

/**
 * The rules between the versions of one reading channel (malo_id, obis_code, and the merge key's other columns:
 * melo_id in a table keyed by it, the identity columns, {@link TableColumns#keyColumns()}) that keep every instant
 * counted once in {@code readings}, whatever the writer and the tier. Two tenants' readings, or two MeLos', are two
 * channels, each with its own operator and grid. Resolution picks one winner per merge key (the channel and "from"), so
 * it is exact only while spans that overlap are the same span:
 * <ul>
 * <li>{@value #ONE_OPERATOR_PER_READING}: the versions of one reading (one merge key) carry one network operator, the
 * first half of their version scope; another operator's version would be a second winner, in another scope;</li>
 * <li>{@value #SPANS_DO_NOT_OVERLAP}: two spans of one version do not overlap, so one delivery counts no instant twice;</li>
 * <li>{@value #ONE_GRID_PER_READING}: a version whose span overlaps another version's span has that same span, so a
 * correction on another grid (a PT1H row over four PT15M rows) never leaves the lower version's other intervals
 * winning beside it. A correction is sent on the grid that is stored.</li>
 * </ul>
 * A meter that moves to another network operator starts a new range of readings under the new operator's scope: the
 * intervals from the change on, which hold no version of the old operator. Nothing about earlier months changes.
 */
public final class ReadingRules
{
    public static final String ONE_OPERATOR_PER_READING = "one_operator_per_reading";
    public static final String SPANS_DO_NOT_OVERLAP = "spans_do_not_overlap";
    public static final String ONE_GRID_PER_READING = "one_grid_per_reading";

    /**
     * The longest span {@link Reading#validate} lets a row have: a P1M interval, 31 days and the hour October's last
     * Sunday adds (a fixed step divides a day, a P1D interval lasts at most 25 hours). A span that overlaps a written row
     * starts at most this long before it, which bounds every look-up of the rules.
     */
    public static final Duration LONGEST_WRITTEN_SPAN = Duration.ofDays(31).plusHours(1);

    /**
     * The longest span that can start anywhere on its grid: a P1D interval, the 25-hour day. A longer one (P1M) starts
     * where a balancing month does, so a look-up needs only this long before a row and those instants
     * ({@link #monthStartsReaching}), where {@link #LONGEST_WRITTEN_SPAN} before it would read a month.
     */
    public static final Duration LONGEST_DAILY_SPAN = Duration.ofHours(25);

    private ReadingRules() {}

    /** A reading that breaks one of the rules against another version of its channel. */
    public static final class ViolationException
            extends InvalidReadingException
    {
        private final String rule;

        ViolationException(String rule, String message)
        {
            super(message);
            this.rule = requireNonNull(rule, "rule is null");
        }

        public String rule()
        {
            return rule;
        }
    }

    /**
     * The rule {@code later} breaks against {@code earlier}, two readings of a table of {@code columns} with
     * {@code earlier} sorting first by ("from", version), if they are versions of one channel and break one. The
     * refusal names the whole reading, the key's other columns between malo_id and obis_code (melo_id 'DE...', tenant
     * 'a'), so that the rows can be found.
     */
    public static Optional<ViolationException> violation(Reading earlier, Reading later, TableColumns columns)
    {
        requireNonNull(earlier, "earlier is null");
        requireNonNull(later, "later is null");
        requireNonNull(columns, "columns is null");
        if (!earlier.maloId().equals(later.maloId()) || !earlier.obisCode().equals(later.obisCode()) || !columns.keyValues(earlier).equals(columns.keyValues(later))) {
            return Optional.empty();
        }
        boolean sameSpan = earlier.from().equals(later.from()) && earlier.to().equals(later.to());
        if (sameSpan) {
            String earlierOperator = operator(earlier);
            String laterOperator = operator(later);
            if (earlierOperator.equals(laterOperator)) {
                return Optional.empty();
            }
            return Optional.of(new ViolationException(ONE_OPERATOR_PER_READING,
                    "Reading (%s, \"from\" %s) belongs to network operator %s (version %s, scope '%s'); version %s under operator %s (scope '%s') is refused by rule %s: a reading has one network operator. A meter that moved to another operator starts a new range of readings: write the intervals from the change on under the new operator"
                            .formatted(channel(later, columns), TieringWatermark.formatInstant(later.from()),
                                    earlierOperator, earlier.version(), earlier.versionScope(),
                                    later.version(), laterOperator, later.versionScope(), ONE_OPERATOR_PER_READING)));
        }
        if (!overlap(earlier, later)) {
            return Optional.empty();
        }
        if (earlier.version().equals(later.version())) {
            return Optional.of(new ViolationException(SPANS_DO_NOT_OVERLAP,
                    "Version %s of reading (%s) has two spans that overlap, %s (%s) and %s (%s), and would count the time they share twice (rule %s): send each interval of a version once"
                            .formatted(later.version(), channel(later, columns), span(earlier), earlier.resolution(), span(later), later.resolution(), SPANS_DO_NOT_OVERLAP)));
        }
        Reading stored = earlier.version().compareTo(later.version()) < 0 ? earlier : later;
        Reading other = stored == earlier ? later : earlier;
        return Optional.of(new ViolationException(ONE_GRID_PER_READING,
                "Version %s of reading (%s) spans %s (%s), which overlaps %s (%s) of version %s on another grid, so both would count (rule %s): send version %s on the grid of version %s, as intervals of %s, or as the same spans"
                        .formatted(other.version(), channel(other, columns), span(other), other.resolution(), span(stored), stored.resolution(), stored.version(),
                                ONE_GRID_PER_READING, other.version(), stored.version(), stored.resolution())));
    }

    /**
     * The rule {@code later} breaks against {@code earlier}, two versions of one channel of the default key with
     * {@code earlier} sorting first by ("from", version), if any. Spans that do not meet break nothing.
     */
    public static Optional<ViolationException> violation(Reading earlier, Reading later)
    {
        return violation(earlier, later, TableColumns.READINGS);
    }

    /** Throws the rule {@code later} breaks against {@code earlier}, if any. */
    public static void requireCompatible(Reading earlier, Reading later)
    {
        requireCompatible(earlier, later, TableColumns.READINGS);
    }

    /** Throws the rule {@code later} breaks against {@code earlier}, two readings of a table of {@code columns}, if any. */
    public static void requireCompatible(Reading earlier, Reading later, TableColumns columns)
    {
        Optional<ViolationException> violation = violation(earlier, later, columns);
        if (violation.isPresent()) {
            throw violation.get();
        }
    }

    /**
     * Checks a stream of readings in the order of {@link TableColumns#sortOrder()}, (malo_id, obis_code, "from", the key's
     * other columns, version), against each other. Spans that pass are disjoint or the same, so the last span of a
     * channel is the only one a following reading can meet. The channels of one (malo_id, obis_code) interleave by
     * "from" when the key has more columns: the last reading of each is kept until the next (malo_id, obis_code).
     */
    public static final class Checker
    {
        private final TableColumns columns;
        private Optional<Reading> last = Optional.empty();
        private final Map<List<Optional<String>>, Reading> lastOfChannel = new HashMap<>();

        /** A checker of the default key's readings. */
        public Checker()
        {
            this(TableColumns.READINGS);
        }

        public Checker(TableColumns columns)
        {
            this.columns = requireNonNull(columns, "columns is null");
        }

        /** Throws {@link ViolationException} when {@code reading} breaks a rule against the readings before it. */
        public void accept(Reading reading)
        {
            requireNonNull(reading, "reading is null");
            if (!columns.hasKeyColumns()) {
                if (last.isPresent()) {
                    requireCompatible(last.get(), reading);
                }
                last = Optional.of(reading);
                return;
            }
            if (last.isPresent() && !(last.get().maloId().equals(reading.maloId()) && last.get().obisCode().equals(reading.obisCode()))) {
                lastOfChannel.clear();
            }
            Reading before = lastOfChannel.put(columns.keyValues(reading), reading);
            if (before != null) {
                requireCompatible(before, reading, columns);
            }
            last = Optional.of(reading);
        }
    }

    /**
     * Where a span longer than {@link #LONGEST_DAILY_SPAN} that holds {@code instant} starts: the start of the balancing
     * month holding it, on the Berlin calendar or the gas one (a P1M row of either may be stored), in order.
     */
    public static List<Instant> monthStartsReaching(Instant instant)
    {
        return Stream.of(Sparte.STROM, Sparte.GAS)
                .map(sparte -> MeteringCalendar.startOfBalancingMonth(sparte, MeteringCalendar.settlementMonth(sparte, instant)))
                .sorted()
                .toList();
    }

    /** The network operator of a reading: the first half of its version scope. */
    public static String operator(Reading reading)
    {
        int colon = reading.versionScope().indexOf(':');
        return colon < 0 ? reading.versionScope() : reading.versionScope().substring(0, colon);
    }

    // a register reading (no "to") spans nothing: the span rules do not apply to points
    private static boolean overlap(Reading left, Reading right)
    {
        if (left.to().isEmpty() || right.to().isEmpty()) {
            return false;
        }
        return left.from().isBefore(right.end()) && right.from().isBefore(left.end());
    }

    // the reading's channel as a refusal names it: malo_id, the key's other columns, obis_code
    private static String channel(Reading reading, TableColumns columns)
    {
        StringBuilder channel = new StringBuilder("malo_id '%s'".formatted(reading.maloId()));
        List<Optional<String>> values = columns.keyValues(reading);
        for (int index = 0; index < values.size(); index++) {
            channel.append(", %s %s".formatted(columns.keyColumns().get(index).name(), values.get(index).map(value -> "'" + value + "'").orElse("NULL")));
        }
        return channel.append(", obis_code '%s'".formatted(reading.obisCode())).toString();
    }

    private static String span(Reading reading)
    {
        return "[%s, %s)".formatted(TieringWatermark.formatInstant(reading.from()), TieringWatermark.formatInstant(reading.end()));
    }
}
