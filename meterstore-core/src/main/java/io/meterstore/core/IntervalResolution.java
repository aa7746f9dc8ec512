package io.meterstore.core;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.Period;
import java.time.YearMonth;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * The grid a series is delivered on, as its ISO-8601 {@code resolution} spells it: a fixed step that divides a day
 * ({@code PT15M}, {@code PT1H}, {@code PT60S}), one value per balancing day ({@code P1D}), one per balancing month
 * ({@code P1M}), or another calendar period ({@code P1Y}, {@code P1W}) that MeterStore reads but does not take.
 * A day and a month are the commodity's calendar ({@link MeteringCalendar}), not a fixed length: a P1D interval lasts
 * 23, 24 or 25 hours, so its "to" is stored, never derived.
 *
 * @param step the length of an interval, for a fixed step
 */
public record IntervalResolution(String value, Kind kind, Optional<Duration> step)
{
    private static final Duration DAY = Duration.ofDays(1);

    public enum Kind
    {
        /** Intervals of one fixed length, aligned to multiples of it since the epoch. */
        FIXED,
        /** One interval per balancing day, however long the day is (23, 24 or 25 hours). */
        DAILY,
        /** One interval per balancing month, from the start of its first balancing day to the start of the next month's. */
        MONTHLY,
        /** Weeks, years: no fixed number of intervals within a day, and none INSERT takes. */
        CALENDAR,
    }

    public IntervalResolution
    {
        requireNonNull(value, "value is null");
        requireNonNull(kind, "kind is null");
        requireNonNull(step, "step is null");
        checkArgument(step.isPresent() == (kind == Kind.FIXED), "a step belongs to a fixed resolution only");
    }

    // a table holds a handful of grids, each parsed once: validating every archived row parsed its resolution each time
    private static final Map<String, IntervalResolution> PARSED = new ConcurrentHashMap<>();
    private static final int MAX_PARSED = 64;

    /** Reads a stored resolution; anything that is not an ISO-8601 duration, or a step that does not divide a day, is refused. */
    public static IntervalResolution parse(String value)
    {
        requireNonNull(value, "value is null");
        IntervalResolution parsed = PARSED.get(value);
        if (parsed != null) {
            return parsed;
        }
        parsed = parseUncached(value);
        if (PARSED.size() < MAX_PARSED) {
            PARSED.put(value, parsed);
        }
        return parsed;
    }

    private static IntervalResolution parseUncached(String value)
    {
        if (value.equals("P1D")) {
            return new IntervalResolution(value, Kind.DAILY, Optional.empty());
        }
        if (value.equals("P1M")) {
            return new IntervalResolution(value, Kind.MONTHLY, Optional.empty());
        }
        Optional<Duration> duration = duration(value);
        if (duration.isPresent()) {
            Duration step = duration.get();
            if (step.isNegative() || step.isZero() || step.getNano() != 0 || DAY.toSeconds() % step.toSeconds() != 0) {
                throw new InvalidReadingException("Resolution '%s' must divide a day".formatted(value));
            }
            return new IntervalResolution(value, Kind.FIXED, Optional.of(step));
        }
        Period period;
        try {
            period = Period.parse(value);
        }
        catch (DateTimeException e) {
            throw new InvalidReadingException("Resolution '%s' is not an ISO-8601 duration such as PT15M".formatted(value));
        }
        if (period.isNegative() || period.isZero()) {
            throw new InvalidReadingException("Resolution '%s' must be a positive period".formatted(value));
        }
        return new IntervalResolution(value, Kind.CALENDAR, Optional.empty());
    }

    /** The length of every interval of a fixed step; a day or a month has none, its length is the calendar's. */
    public Duration length()
    {
        return switch (kind) {
            case FIXED -> step.orElseThrow();
            case DAILY, MONTHLY -> throw new InvalidReadingException("Resolution '%s' has no fixed length: its intervals last a balancing %s of the commodity's calendar"
                    .formatted(value, kind == Kind.DAILY ? "day (23, 24 or 25 hours)" : "month"));
            case CALENDAR -> throw new InvalidReadingException("Resolution '%s' is a calendar period, not an ISO-8601 duration such as PT15M".formatted(value));
        };
    }

    /** An interval [from, to). */
    public record Span(Instant from, Instant to)
    {
        public Span
        {
            requireNonNull(from, "from is null");
            requireNonNull(to, "to is null");
            checkArgument(from.isBefore(to), "a span ends after it starts");
        }

        @Override
        public String toString()
        {
            return "[%s, %s)".formatted(TieringWatermark.formatInstant(from), TieringWatermark.formatInstant(to));
        }
    }

    /**
     * The interval of this grid that holds {@code instant} for a reading of {@code sparte}: the step it falls in, counted
     * from the epoch; its balancing day; its balancing month (gas days and months start at 06:00 Berlin time). Empty for
     * a calendar period INSERT does not take.
     */
    public Optional<Span> intervalHolding(Sparte sparte, Instant instant)
    {
        return switch (kind) {
            case FIXED -> {
                long seconds = step.orElseThrow().toSeconds();
                Instant start = Instant.ofEpochSecond(Math.floorDiv(instant.getEpochSecond(), seconds) * seconds);
                yield Optional.of(new Span(start, start.plusSeconds(seconds)));
            }
            case DAILY -> {
                LocalDate day = MeteringCalendar.balancingDay(sparte, instant);
                yield Optional.of(new Span(MeteringCalendar.startOfBalancingDay(sparte, day), MeteringCalendar.startOfBalancingDay(sparte, day.plusDays(1))));
            }
            case MONTHLY -> {
                YearMonth month = MeteringCalendar.settlementMonth(sparte, instant);
                yield Optional.of(new Span(MeteringCalendar.startOfBalancingMonth(sparte, month), MeteringCalendar.startOfBalancingMonth(sparte, month.plusMonths(1))));
            }
            case CALENDAR -> Optional.empty();
        };
    }

    /**
     * How many intervals of this grid start in [lower, upper) of a day that runs [dayStart, dayEnd): for a fixed step the
     * grid points in that range, for a daily one 1 if the day's start is in it, for a monthly one 1 if the day's start is
     * in it and the day is the first of its month (its interval starts with the month's first balancing day); empty for
     * another calendar period. A range that is not the whole day counts only the interval starts inside it, so a report
     * that starts or ends mid-day expects only what it covers.
     */
    public Optional<Long> intervals(LocalDate day, Instant dayStart, Instant dayEnd, Instant lower, Instant upper)
    {
        Instant from = lower.isAfter(dayStart) ? lower : dayStart;
        Instant to = upper.isBefore(dayEnd) ? upper : dayEnd;
        boolean dayStartsInside = !dayStart.isBefore(from) && dayStart.isBefore(to);
        return switch (kind) {
            case FIXED -> Optional.of(from.isBefore(to) ? gridPointsBefore(to) - gridPointsBefore(from) : 0L);
            case DAILY -> Optional.of(dayStartsInside ? 1L : 0L);
            case MONTHLY -> Optional.of(dayStartsInside && day.getDayOfMonth() == 1 ? 1L : 0L);
            case CALENDAR -> Optional.empty();
        };
    }

    // the grid points k * step (intervals are aligned to the epoch, as INSERT requires) before an instant, counted from an
    // arbitrary origin: only differences are used. A point before an instant with a fraction may lie on its whole second
    private long gridPointsBefore(Instant instant)
    {
        long lastSecond = instant.getNano() > 0 ? instant.getEpochSecond() : instant.getEpochSecond() - 1;
        return Math.floorDiv(lastSecond, step.orElseThrow().toSeconds());
    }

    private static Optional<Duration> duration(String value)
    {
        try {
            return Optional.of(Duration.parse(value));
        }
        catch (DateTimeException e) {
            return Optional.empty();
        }
    }

    @Override
    public String toString()
    {
        return value;
    }
}
