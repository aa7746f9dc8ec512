package io.meterstore.core;

import com.google.common.collect.ImmutableList;

import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import static java.util.Objects.requireNonNull;

/**
 * The counts a completeness report is rolled up from: per reading (its merge key without "from", and sparte), grid (resolution) and
 * balancing day, the winning versions inside the period, how many of them are substituted or not billable, and the
 * first and last interval start; and, for a roster window, the grid each reading was last delivered on before the
 * period. The tiers fill it (one tally per piece of work, merged); {@link #rollUp} applies the calendar.
 */
public final class CompletenessTally
{
    /**
     * A reading: the merge key without "from" (malo_id, the values of the key's further columns, such as melo_id or a
     * tenant, in {@link TableShape#keyColumns()} order, and the OBIS code), and its commodity.
     */
    public record Reading(String maloId, List<String> keyValues, String obisCode, Sparte sparte)
    {
        // orders readings as the report lists them: by malo_id, the key's further columns, obis_code and sparte
        private static final Comparator<List<String>> KEY_VALUES = (left, right) -> {
            for (int index = 0; index < Math.min(left.size(), right.size()); index++) {
                int compared = left.get(index).compareTo(right.get(index));
                if (compared != 0) {
                    return compared;
                }
            }
            return Integer.compare(left.size(), right.size());
        };

        public Reading
        {
            requireNonNull(maloId, "maloId is null");
            keyValues = ImmutableList.copyOf(requireNonNull(keyValues, "keyValues is null"));
            requireNonNull(obisCode, "obisCode is null");
            requireNonNull(sparte, "sparte is null");
        }

        /** A reading of a table with the default merge key (malo_id, obis_code, "from"). */
        public Reading(String maloId, String obisCode, Sparte sparte)
        {
            this(maloId, List.of(), obisCode, sparte);
        }
    }

    private static final class Day
    {
        private long actual;
        private long substituted;
        private long notBillable;
        private Instant first;
        private Instant last;

        void add(long actual, long substituted, long notBillable, Instant first, Instant last)
        {
            this.actual += actual;
            this.substituted += substituted;
            this.notBillable += notBillable;
            this.first = this.first == null || first.isBefore(this.first) ? first : this.first;
            this.last = this.last == null || last.isAfter(this.last) ? last : this.last;
        }
    }

    private record Delivery(String resolution, Instant at) {}

    // reading -> grid -> balancing day -> counts, for the rows inside the period
    private final Map<Reading, Map<String, Map<LocalDate, Day>>> inside = new HashMap<>();
    // reading -> the grid of its last row in the roster window, before the period
    private final Map<Reading, Delivery> roster = new HashMap<>();
    private long days;

    /** Winners of one reading, grid and balancing day inside the period. */
    public void add(Reading reading, String resolution, LocalDate day, long actual, long substituted, long notBillable, Instant first, Instant last)
    {
        Day counts = inside.computeIfAbsent(reading, _ -> new HashMap<>())
                .computeIfAbsent(resolution, _ -> new HashMap<>())
                .get(day);
        if (counts == null) {
            counts = new Day();
            inside.get(reading).get(resolution).put(day, counts);
            days++;
        }
        counts.add(actual, substituted, notBillable, first, last);
    }

    /** A reading delivered on {@code resolution} in the roster window, its last interval starting at {@code last}. */
    public void addToRoster(Reading reading, String resolution, Instant last)
    {
        roster.merge(reading, new Delivery(resolution, last), (known, delivery) -> delivery.at().isAfter(known.at()) ? delivery : known);
    }

    public void addAll(CompletenessTally other)
    {
        other.inside.forEach((reading, grids) -> grids.forEach((resolution, byDay) -> byDay.forEach((day, counts) ->
                add(reading, resolution, day, counts.actual, counts.substituted, counts.notBillable, counts.first, counts.last))));
        other.roster.forEach((reading, delivery) -> addToRoster(reading, delivery.resolution(), delivery.at()));
    }

    /** About how many bytes the tally holds, for the memory a query reports. */
    public long estimatedBytes()
    {
        return days * 120 + (inside.size() + roster.size()) * 200L;
    }

    /**
     * One row per reading and grid, ordered by malo_id, the key's further columns, obis_code, sparte and resolution. Every balancing day of the
     * period is expected: a day with rows is charged to each grid that delivered on it; a day without rows to the grid
     * last in force before it (in the period, else in the roster window), or for a leading gap to the first grid that
     * delivered. A reading that delivered nothing in the period appears only when the roster window saw it.
     */
    public List<ChannelCompleteness> rollUp(CompletenessPeriod period)
    {
        requireNonNull(period, "period is null");
        List<Reading> readings = new ArrayList<>(inside.keySet());
        roster.keySet().stream().filter(reading -> !inside.containsKey(reading)).forEach(readings::add);
        readings.sort(Comparator.comparing(Reading::maloId).thenComparing(Reading::keyValues, Reading.KEY_VALUES).thenComparing(Reading::obisCode).thenComparing(Reading::sparte));

        ImmutableList.Builder<ChannelCompleteness> rows = ImmutableList.builder();
        Map<String, Optional<IntervalResolution>> grids = new HashMap<>();
        for (Reading reading : readings) {
            Map<String, Map<LocalDate, Day>> delivered = inside.getOrDefault(reading, Map.of());
            Map<String, Channel> channels = new TreeMap<>();
            delivered.keySet().forEach(resolution -> channels.put(resolution, new Channel(resolution)));
            Optional<Delivery> before = Optional.ofNullable(roster.get(reading));
            for (LocalDate day : period.balancingDays(reading.sparte())) {
                List<String> present = delivered.entrySet().stream().filter(grid -> grid.getValue().containsKey(day)).map(Map.Entry::getKey).toList();
                if (present.isEmpty()) {
                    String resolution = gridInForce(delivered, before, day);
                    channels.computeIfAbsent(resolution, Channel::new).charge(day, expected(period, grids, reading, resolution, day), null);
                    continue;
                }
                for (String resolution : present) {
                    channels.get(resolution).charge(day, expected(period, grids, reading, resolution, day), delivered.get(resolution).get(day));
                }
            }
            channels.values().forEach(channel -> rows.add(channel.toRow(reading)));
        }
        return rows.build();
    }

    // the grid of the latest row before the day (in the period, else the roster window), else the grid of the first row after it
    private static String gridInForce(Map<String, Map<LocalDate, Day>> delivered, Optional<Delivery> before, LocalDate day)
    {
        Optional<Delivery> latestBefore = before;
        Optional<Delivery> firstAfter = Optional.empty();
        for (Map.Entry<String, Map<LocalDate, Day>> grid : delivered.entrySet()) {
            for (Map.Entry<LocalDate, Day> entry : grid.getValue().entrySet()) {
                Day counts = entry.getValue();
                if (entry.getKey().isBefore(day) && (latestBefore.isEmpty() || counts.last.isAfter(latestBefore.get().at()))) {
                    latestBefore = Optional.of(new Delivery(grid.getKey(), counts.last));
                }
                if (entry.getKey().isAfter(day) && (firstAfter.isEmpty() || counts.first.isBefore(firstAfter.get().at()))) {
                    firstAfter = Optional.of(new Delivery(grid.getKey(), counts.first));
                }
            }
        }
        if (latestBefore.isPresent()) {
            return latestBefore.get().resolution();
        }
        return firstAfter.orElseThrow().resolution();
    }

    // 0 for a grid with no fixed count in a day (a calendar period, or a resolution that does not parse): unmeasurable, never judged
    private static long expected(CompletenessPeriod period, Map<String, Optional<IntervalResolution>> grids, Reading reading, String resolution, LocalDate day)
    {
        Optional<IntervalResolution> grid = grids.computeIfAbsent(resolution, CompletenessTally::parse);
        return grid.flatMap(value -> period.expectedIntervals(day, value, reading.sparte())).orElse(0L);
    }

    private static Optional<IntervalResolution> parse(String resolution)
    {
        try {
            return Optional.of(IntervalResolution.parse(resolution));
        }
        catch (InvalidReadingException e) {
            return Optional.empty();
        }
    }

    private static final class Channel
    {
        private final String resolution;
        private long expected;
        private long actual;
        private long missing;
        private long surplus;
        private LocalDate firstGap;
        private long substituted;
        private long notBillable;

        Channel(String resolution)
        {
            this.resolution = resolution;
        }

        void charge(LocalDate day, long expected, Day counts)
        {
            long delivered = counts == null ? 0 : counts.actual;
            this.expected += expected;
            this.actual += delivered;
            if (counts != null) {
                substituted += counts.substituted;
                notBillable += counts.notBillable;
            }
            // a day without an expectation is not judged: a P1M series is not 95 intervals short every day
            if (expected == 0) {
                return;
            }
            // per day, never over the totals: four too many on Tuesday must not hide four missing on Wednesday
            missing += Math.max(expected - delivered, 0);
            surplus += Math.max(delivered - expected, 0);
            if (delivered < expected && firstGap == null) {
                firstGap = day;
            }
        }

        ChannelCompleteness toRow(Reading reading)
        {
            return new ChannelCompleteness(reading.maloId(), reading.keyValues(), reading.obisCode(), reading.sparte(), resolution, expected, actual, missing, surplus,
                    Optional.ofNullable(firstGap), substituted, notBillable);
        }
    }
}
