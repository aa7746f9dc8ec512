package io.meterstore.testing;

import io.meterstore.core.MaloId;
import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.Sparte;
import io.meterstore.core.Sparte.MeasurementUnit;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.function.Consumer;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.base.Preconditions.checkState;
import static java.util.Objects.requireNonNull;

/**
 * A seeded, deterministic workload of quarter-hourly electricity readings, as a metering point operator delivers
 * them: one MSCONS batch per meter and Berlin day, recorded the next morning, and a few percent of intervals
 * corrected days later by a second, higher version.
 * <p>
 * Rows are produced lazily in delivery order (day by day, meter by meter; within a meter-day the originals interval
 * by interval, then that day's corrections), so 58 M rows never sit in memory. Every meter-day draws from its own
 * random stream derived from (seed, meter, day), so any day or meter-day can be produced on its own and equals the
 * same slice of the full sequence.
 */
public final class ReadingsGenerator
        implements Iterable<Reading>
{
    public static final String OBIS_CODE = "1-1:1.29.0";
    public static final String RESOLUTION = "PT15M";
    public static final String SOURCE_KIND = "MSCONS";
    public static final String DEFAULT_OPERATOR_ID = "9900000000003";
    public static final int MAX_METERS = 1_000_000;

    private static final Duration STEP = Duration.ofMinutes(15);
    private static final long MALO_PREFIX_BASE = 5_100_000_000L;
    private static final long MALO_PREFIX_STRIDE = 4_793L;
    private static final DateTimeFormatter MESSAGE_DATE = DateTimeFormatter.BASIC_ISO_DATE;
    private static final double SUBSTITUTED_FRACTION = 0.005;
    private static final double ESTIMATED_FRACTION = 0.005;
    // quotes escaped by backslashes, a comma and umlauts: every loader and reader must carry them through unchanged
    private static final String CORRECTION_REASON = "Z\u00e4hlerwechsel \\\"Ger\u00e4t 2\\\", Plausibilisierung";

    private final long seed;
    private final int meters;
    private final LocalDate startDay;
    private final int days;
    private final double correctionsFraction;
    private final String operatorId;
    private final Optional<Instant> knownAt;

    private ReadingsGenerator(Builder builder)
    {
        this.seed = builder.seed;
        this.meters = builder.meters;
        this.startDay = builder.startDay;
        this.days = builder.days;
        this.correctionsFraction = builder.correctionsFraction;
        this.operatorId = builder.operatorId;
        this.knownAt = builder.knownAt;
    }

    public static Builder builder()
    {
        return new Builder();
    }

    public long seed()
    {
        return seed;
    }

    public int meters()
    {
        return meters;
    }

    public LocalDate startDay()
    {
        return startDay;
    }

    public int days()
    {
        return days;
    }

    public double correctionsFraction()
    {
        return correctionsFraction;
    }

    public String operatorId()
    {
        return operatorId;
    }

    /** The Berlin days generated, in order. */
    public List<LocalDate> localDays()
    {
        return startDay.datesUntil(startDay.plusDays(days)).toList();
    }

    /** The first interval start: midnight of the first Berlin day. */
    public Instant start()
    {
        return MeteringCalendar.startOfLocalDay(startDay);
    }

    /** The end (exclusive) of the last interval: midnight after the last Berlin day. */
    public Instant end()
    {
        return MeteringCalendar.startOfLocalDay(startDay.plusDays(days));
    }

    /** The instant the rows were delivered by, if any: rows recorded after it are left out. */
    public Optional<Instant> knownAt()
    {
        return knownAt;
    }

    /** How many first versions the generator produces: meters times the quarter-hours of its days (DST-aware). */
    public long originalCount()
    {
        checkState(knownAt.isEmpty(), "A generator cut at %s produces only the rows recorded by then: count them", knownAt);
        long intervals = 0;
        for (LocalDate day : localDays()) {
            intervals += MeteringCalendar.expectedIntervals(day, STEP);
        }
        return intervals * meters;
    }

    /** The MaLo-ID of meter {@code meter} (0-based): a 10-digit prefix derived from the index and the check digit. */
    public static String maloId(int meter)
    {
        checkArgument(meter >= 0 && meter < MAX_METERS, "meter %s is not in [0, %s)", meter, MAX_METERS);
        String prefix = Long.toString(MALO_PREFIX_BASE + meter * MALO_PREFIX_STRIDE);
        return prefix + MaloId.checkDigit(prefix);
    }

    public List<String> maloIds()
    {
        List<String> maloIds = new ArrayList<>(meters);
        for (int meter = 0; meter < meters; meter++) {
            maloIds.add(maloId(meter));
        }
        return Collections.unmodifiableList(maloIds);
    }

    /** Every row, lazily, in delivery order. */
    @Override
    public Iterator<Reading> iterator()
    {
        return new DeliveryIterator(startDay, startDay.plusDays(days));
    }

    /** The rows of one Berlin day (all meters, originals and corrections), lazily, in delivery order. */
    public Iterator<Reading> iterator(LocalDate day)
    {
        checkDay(day);
        return new DeliveryIterator(day, day.plusDays(1));
    }

    public Stream<Reading> stream()
    {
        return toStream(iterator());
    }

    public Stream<Reading> stream(LocalDate day)
    {
        return toStream(iterator(day));
    }

    /** The rows of one Berlin day as a list; for 100 k meters that is ~10 M rows, so prefer {@link #iterator(LocalDate)}. */
    public List<Reading> readings(LocalDate day)
    {
        List<Reading> readings = new ArrayList<>();
        iterator(day).forEachRemaining(readings::add);
        return readings;
    }

    /** The rows of one meter on one Berlin day: its originals, then its corrections. */
    public List<Reading> readings(int meter, LocalDate day)
    {
        checkArgument(meter >= 0 && meter < meters, "meter %s is not in [0, %s)", meter, meters);
        checkDay(day);
        return meterDay(meter, new DayGrid(day, operatorId));
    }

    /**
     * Hands each Berlin day's rows to {@code consumer}, one day at a time, in order. A day is materialised (about 1.3 GB
     * for 100 k meters); stream big workloads with {@link #iterator(LocalDate)} or {@link ReadingsLoader} instead.
     */
    public void forEachDay(Consumer<List<Reading>> consumer)
    {
        for (LocalDate day : localDays()) {
            consumer.accept(readings(day));
        }
    }

    private void checkDay(LocalDate day)
    {
        requireNonNull(day, "day is null");
        checkArgument(!day.isBefore(startDay) && day.isBefore(startDay.plusDays(days)), "Day %s is not in [%s, %s)", day, startDay, startDay.plusDays(days));
    }

    private static Stream<Reading> toStream(Iterator<Reading> iterator)
    {
        return StreamSupport.stream(Spliterators.spliteratorUnknownSize(iterator, Spliterator.ORDERED | Spliterator.NONNULL), false);
    }

    private List<Reading> meterDay(int meter, DayGrid grid)
    {
        MeterProfile profile = new MeterProfile(seed, meter);
        RandomStream random = new RandomStream(mix(seed, meter, grid.day.toEpochDay()));
        String maloId = maloId(meter);
        // the batch arrives the next morning; meters are spread over the first hour of it
        Instant recordedAt = grid.deliveryMorning.plusSeconds(meter % 3_600);
        BigInteger version = epochMicros(recordedAt);
        Optional<String> sourceDetail = Optional.of("{\"message\":\"MSCONS_%s_%07d\",\"sender\":\"%s\"}"
                .formatted(MESSAGE_DATE.format(grid.day), meter, operatorId));

        int intervals = grid.intervals();
        List<Reading> originals = new ArrayList<>(intervals);
        List<Reading> corrections = new ArrayList<>();
        for (int interval = 0; interval < intervals; interval++) {
            long wattHours = Math.round(profile.baseWattHours * profile.shape(grid.localHours[interval]) * (0.75 + 0.5 * random.nextDouble()));
            double qualityDraw = random.nextDouble();
            Quality quality = qualityDraw < SUBSTITUTED_FRACTION ? Quality.SUBSTITUTED : qualityDraw < SUBSTITUTED_FRACTION + ESTIMATED_FRACTION ? Quality.ESTIMATED : Quality.MEASURED;
            Optional<String> provenance = Optional.empty();
            if (quality == Quality.SUBSTITUTED) {
                provenance = Optional.of("{\"substituted\":{\"at\":\"%s\",\"by\":\"%s\",\"method\":\"Ersatzwertbildung\"}}".formatted(recordedAt, operatorId));
            }
            else if (quality == Quality.ESTIMATED) {
                provenance = Optional.of("{\"estimated\":{\"at\":\"%s\",\"method\":\"Standardlastprofil\"}}".formatted(recordedAt));
            }
            originals.add(reading(maloId, profile.meloId, grid, interval, wattHours, quality, sourceDetail, provenance, version, recordedAt));

            if (random.nextDouble() < correctionsFraction) {
                long correctedWattHours = Math.round(wattHours * (0.6 + 0.8 * random.nextDouble()));
                if (correctedWattHours == wattHours) {
                    correctedWattHours = wattHours + 1 + random.nextInt(50);
                }
                Quality correctedQuality = random.nextDouble() < 0.7 ? Quality.CORRECTED : Quality.SUBSTITUTED;
                Instant correctedAt = recordedAt
                        .plus(Duration.ofDays(1 + random.nextInt(9)))
                        .plusSeconds(random.nextInt(86_400))
                        .plusNanos(random.nextInt(1_000_000) * 1_000L);
                Optional<String> correctionDetail = Optional.of("{\"message\":\"MSCONS_%s_%07d_K\",\"sender\":\"%s\",\"reason\":\"%s\"}"
                        .formatted(MESSAGE_DATE.format(LocalDate.ofInstant(correctedAt, ZoneOffset.UTC)), meter, operatorId, CORRECTION_REASON));
                Optional<String> correctionProvenance = Optional.of("{\"corrected\":{\"at\":\"%s\",\"supersedes\":%s,\"reason\":\"Plausibilisierung\"}}"
                        .formatted(correctedAt, version));
                corrections.add(reading(maloId, profile.meloId, grid, interval, correctedWattHours, correctedQuality, correctionDetail, correctionProvenance, epochMicros(correctedAt), correctedAt));
            }
        }
        // corrections arrive days after the originals they supersede
        originals.addAll(corrections);
        // what has not arrived by knownAt is left out after the draws, so the rest equals the same rows of an uncut generator
        knownAt.ifPresent(cut -> originals.removeIf(reading -> reading.recordedAt().isAfter(cut)));
        return originals;
    }

    private Reading reading(String maloId, Optional<String> meloId, DayGrid grid, int interval, long wattHours, Quality quality,
            Optional<String> sourceDetail, Optional<String> provenance, BigInteger version, Instant recordedAt)
    {
        return new Reading(
                maloId,
                meloId,
                OBIS_CODE,
                Sparte.STROM,
                grid.starts[interval],
                grid.starts[interval + 1],
                // Wh resolution, stored as kWh with the column's scale
                BigDecimal.valueOf(wattHours * 1_000, Reading.VALUE_SCALE),
                MeasurementUnit.KWH,
                quality,
                RESOLUTION,
                SOURCE_KIND,
                sourceDetail,
                provenance,
                version,
                grid.versionScopes[interval],
                recordedAt,
                grid.balancingDays[interval]);
    }

    private static BigInteger epochMicros(Instant instant)
    {
        return BigInteger.valueOf(Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000L), instant.getNano() / 1_000));
    }

    /** The quarter-hours of one Berlin day, computed once and shared by every meter's rows of that day. */
    private static final class DayGrid
    {
        private final LocalDate day;
        private final Instant[] starts;
        private final double[] localHours;
        private final String[] versionScopes;
        private final LocalDate[] balancingDays;
        private final Instant deliveryMorning;

        DayGrid(LocalDate day, String operatorId)
        {
            this.day = day;
            Instant start = MeteringCalendar.startOfLocalDay(day);
            int intervals = Math.toIntExact(MeteringCalendar.expectedIntervals(day, STEP));
            starts = new Instant[intervals + 1];
            localHours = new double[intervals];
            versionScopes = new String[intervals];
            balancingDays = new LocalDate[intervals];
            Map<String, String> scopes = new HashMap<>();
            Map<LocalDate, LocalDate> balancing = new HashMap<>();
            for (int interval = 0; interval <= intervals; interval++) {
                starts[interval] = start.plus(STEP.multipliedBy(interval));
                if (interval < intervals) {
                    // the load follows the wall clock, so the repeated hour of October repeats the night's shape
                    LocalTime wallClock = starts[interval].atZone(MeteringCalendar.BERLIN).toLocalTime();
                    localHours[interval] = wallClock.toSecondOfDay() / 3_600.0;
                    String scope = Reading.versionScope(operatorId, Sparte.STROM, starts[interval]);
                    versionScopes[interval] = scopes.computeIfAbsent(scope, key -> key);
                    LocalDate balancingDay = MeteringCalendar.balancingDay(Sparte.STROM, starts[interval]);
                    balancingDays[interval] = balancing.computeIfAbsent(balancingDay, key -> key);
                }
            }
            deliveryMorning = day.plusDays(1).atTime(5, 0).toInstant(ZoneOffset.UTC);
        }

        int intervals()
        {
            return localHours.length;
        }
    }

    /** What stays the same for a meter across days: its consumption level, its daily shape, its MeLo-ID. */
    private static final class MeterProfile
    {
        private final double baseWattHours;
        private final double morningPeak;
        private final double middayLoad;
        private final double eveningPeak;
        private final double eveningHour;
        private final Optional<String> meloId;

        MeterProfile(long seed, int meter)
        {
            RandomStream random = new RandomStream(mix(seed, meter, Long.MIN_VALUE));
            // log-uniform 20 Wh to 400 Wh per quarter-hour: small flats to small businesses
            baseWattHours = Math.exp(Math.log(20) + random.nextDouble() * (Math.log(400) - Math.log(20)));
            morningPeak = 0.2 + 0.7 * random.nextDouble();
            middayLoad = 0.1 + 0.5 * random.nextDouble();
            eveningPeak = 0.5 + 1.1 * random.nextDouble();
            eveningHour = 18.0 + 2.5 * random.nextDouble();
            // a few market locations have no metering location on record
            meloId = random.nextDouble() < 0.95
                    ? Optional.of("DE000562E%024d".formatted(9_000_000_000L + meter * 7_919L))
                    : Optional.empty();
        }

        /** A relative load at a wall-clock hour: night base, morning and evening peaks, a midday plateau. */
        double shape(double hour)
        {
            return 0.45
                    + morningPeak * gauss(hour, 7.5, 1.2)
                    + middayLoad * gauss(hour, 12.5, 2.5)
                    + eveningPeak * gauss(hour, eveningHour, 1.8);
        }

        private static double gauss(double hour, double center, double width)
        {
            double distance = (hour - center) / width;
            return Math.exp(-0.5 * distance * distance);
        }
    }

    /** SplitMix64: tiny, fast and specified here, so the workload stays the same across JDKs. */
    private static final class RandomStream
    {
        private long state;

        RandomStream(long seed)
        {
            this.state = seed;
        }

        long nextLong()
        {
            state += 0x9E3779B97F4A7C15L;
            return finish(state);
        }

        double nextDouble()
        {
            return (nextLong() >>> 11) * 0x1.0p-53;
        }

        int nextInt(int bound)
        {
            return (int) Math.floorMod(nextLong(), (long) bound);
        }
    }

    private static long mix(long seed, long meter, long day)
    {
        return finish(finish(finish(seed) + meter) + day);
    }

    private static long finish(long value)
    {
        long z = value;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    private final class DeliveryIterator
            implements Iterator<Reading>
    {
        private final LocalDate endDay;
        private LocalDate day;
        private DayGrid grid;
        private int meter;
        private List<Reading> batch = List.of();
        private int position;

        DeliveryIterator(LocalDate firstDay, LocalDate endDay)
        {
            this.day = firstDay;
            this.endDay = endDay;
        }

        @Override
        public boolean hasNext()
        {
            while (position == batch.size()) {
                if (!day.isBefore(endDay)) {
                    return false;
                }
                if (grid == null) {
                    grid = new DayGrid(day, operatorId);
                }
                batch = meterDay(meter, grid);
                position = 0;
                meter++;
                if (meter == meters) {
                    meter = 0;
                    day = day.plusDays(1);
                    grid = null;
                }
            }
            return true;
        }

        @Override
        public Reading next()
        {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            return batch.get(position++);
        }
    }

    public static final class Builder
    {
        private long seed = 42;
        private int meters = 10;
        private LocalDate startDay = LocalDate.of(2026, 8, 20);
        private int days = 1;
        private double correctionsFraction = 0.03;
        private String operatorId = DEFAULT_OPERATOR_ID;
        private Optional<Instant> knownAt = Optional.empty();

        private Builder() {}

        public Builder seed(long seed)
        {
            this.seed = seed;
            return this;
        }

        public Builder meters(int meters)
        {
            checkArgument(meters > 0 && meters <= MAX_METERS, "meters must be in [1, %s]", MAX_METERS);
            this.meters = meters;
            return this;
        }

        /** The first Berlin day. */
        public Builder startDay(LocalDate startDay)
        {
            this.startDay = requireNonNull(startDay, "startDay is null");
            return this;
        }

        public Builder days(int days)
        {
            checkArgument(days > 0, "days must be positive");
            this.days = days;
            return this;
        }

        /** The fraction of intervals that get a second, corrected version (0.03: three percent). */
        public Builder correctionsFraction(double correctionsFraction)
        {
            checkArgument(correctionsFraction >= 0 && correctionsFraction <= 1, "correctionsFraction must be in [0, 1]");
            this.correctionsFraction = correctionsFraction;
            return this;
        }

        /** The 13-digit market partner id of the network operator: the first half of every version scope. */
        public Builder operatorId(String operatorId)
        {
            requireNonNull(operatorId, "operatorId is null");
            checkArgument(operatorId.matches("\\d{13}"), "operatorId '%s' must have 13 digits", operatorId);
            this.operatorId = operatorId;
            return this;
        }

        /**
         * Only the rows delivered by {@code knownAt}: a batch or correction recorded later has not arrived yet (a store
         * refuses a version recorded in its future). For a workload that ends near now, as the demo's does.
         */
        public Builder knownAt(Instant knownAt)
        {
            this.knownAt = Optional.of(requireNonNull(knownAt, "knownAt is null"));
            return this;
        }

        public ReadingsGenerator build()
        {
            return new ReadingsGenerator(this);
        }
    }
}
