package io.meterstore.core;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.Period;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * The grid a series is delivered on, as its ISO-8601 {@code resolution} spells it: a fixed step that divides a day
 * ({@code PT15M}, {@code PT1H}, {@code PT60S}), one value per balancing day ({@code P1D}), or a calendar period
 * ({@code P1M}, {@code P1Y}) that has no fixed number of intervals in a day.
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
        /** Weeks, months, years: no fixed number of intervals within a day. */
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

    /** The length of an interval, which INSERT requires: the fixed step, or a day of 24 hours for {@code P1D}. */
    public Duration length()
    {
        return switch (kind) {
            case FIXED -> step.orElseThrow();
            case DAILY -> DAY;
            case CALENDAR -> throw new InvalidReadingException("Resolution '%s' is a calendar period, not an ISO-8601 duration such as PT15M".formatted(value));
        };
    }

    /**
     * How many intervals of this grid start in [lower, upper) of a day that runs [dayStart, dayEnd): for a fixed step the
     * grid points in that range, for a daily one 1 if the day's start is in it; empty for a calendar period. A range that
     * is not the whole day counts only the interval starts inside it, so a report that starts or ends mid-day expects
     * only what it covers.
     */
    public Optional<Long> intervals(Instant dayStart, Instant dayEnd, Instant lower, Instant upper)
    {
        Instant from = lower.isAfter(dayStart) ? lower : dayStart;
        Instant to = upper.isBefore(dayEnd) ? upper : dayEnd;
        return switch (kind) {
            case FIXED -> Optional.of(from.isBefore(to) ? gridPointsBefore(to) - gridPointsBefore(from) : 0L);
            case DAILY -> Optional.of(!dayStart.isBefore(from) && dayStart.isBefore(to) ? 1L : 0L);
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
