package io.meterstore.core;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.YearMonth;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.Optional;

/**
 * The German metering calendar: days are Berlin days (23, 24 or 25 hours), the gas day runs 06:00 to 06:00 local time.
 * The write path derives balancing_day and checks version_scope here, and the SQL functions and the completeness
 * report ask the same methods, so a stored day and a computed one never disagree.
 */
public final class MeteringCalendar
{
    public static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");
    private static final Duration GAS_DAY_OFFSET = Duration.ofHours(6);
    private static final LocalTime GAS_DAY_START = LocalTime.of(6, 0);

    private MeteringCalendar() {}

    /** The Berlin calendar day an interval starting at {@code from} belongs to. */
    public static LocalDate localDay(Instant from)
    {
        return from.atZone(BERLIN).toLocalDate();
    }

    /** The gas day (Gastag) an interval starting at {@code from} belongs to: the day its 06:00-06:00 local span starts on. */
    public static LocalDate gasDay(Instant from)
    {
        // on the local timeline: on DST days six hours of wall clock are not six hours of instants
        return from.atZone(BERLIN).toLocalDateTime().minus(GAS_DAY_OFFSET).toLocalDate();
    }

    /** The balancing day: the Berlin day, or for gas the gas day that starts at 06:00 local time. */
    public static LocalDate balancingDay(Sparte sparte, Instant from)
    {
        return sparte == Sparte.GAS ? gasDay(from) : localDay(from);
    }

    /** The Berlin calendar month of an instant, as its first day. */
    public static LocalDate localMonth(Instant from)
    {
        return localDay(from).withDayOfMonth(1);
    }

    /** The settlement month of an interval: the month of its balancing day. */
    public static YearMonth settlementMonth(Sparte sparte, Instant from)
    {
        return YearMonth.from(balancingDay(sparte, from));
    }

    /** The settlement month (Bilanzierungsmonat) of an interval as its first day; for gas cut at 06:00 local time. */
    public static LocalDate balancingMonth(Sparte sparte, Instant from)
    {
        return settlementMonth(sparte, from).atDay(1);
    }

    /** The start of a Berlin day as an instant. */
    public static Instant startOfLocalDay(LocalDate day)
    {
        return day.atStartOfDay(BERLIN).toInstant();
    }

    /** The start of a balancing day: Berlin midnight, for gas 06:00 Berlin time (which always exists: clocks change at 02:00-03:00). */
    public static Instant startOfBalancingDay(Sparte sparte, LocalDate day)
    {
        if (sparte == Sparte.GAS) {
            return ZonedDateTime.of(day, GAS_DAY_START, BERLIN).toInstant();
        }
        return startOfLocalDay(day);
    }

    /** The start of a balancing month: its first balancing day's, Berlin midnight on the 1st, for gas 06:00 on the 1st. */
    public static Instant startOfBalancingMonth(Sparte sparte, YearMonth month)
    {
        return startOfBalancingDay(sparte, month.atDay(1));
    }

    /** What a balancing day of {@code sparte} is, for a message: "the Berlin day (...)" or "the gas day (...)". */
    public static String describeBalancingDay(Sparte sparte)
    {
        return sparte == Sparte.GAS ? "the gas day, 06:00 to 06:00 Europe/Berlin" : "the Berlin day, Europe/Berlin midnight to midnight";
    }

    /** What a balancing month of {@code sparte} is, for a message. */
    public static String describeBalancingMonth(Sparte sparte)
    {
        return sparte == Sparte.GAS ? "the gas month, from 06:00 Europe/Berlin on the 1st" : "the Berlin month, from Europe/Berlin midnight on the 1st";
    }

    /** How many intervals of {@code resolution} a Berlin day has: 92, 96 or 100 quarter-hours. */
    public static long expectedIntervals(LocalDate day, Duration resolution)
    {
        Duration length = Duration.between(startOfLocalDay(day), startOfLocalDay(day.plusDays(1)));
        return length.dividedBy(resolution);
    }

    /**
     * How many intervals of {@code resolution} the balancing day {@code day} of {@code sparte} holds: 92, 96 or 100
     * quarter-hours, 1380, 1440 or 1500 minutes; for gas the 23- and 25-hour days are the Saturdays before the clocks
     * change; P1D 1; P1M 1 on the first balancing day of a month, 0 on the others. Empty for another calendar period
     * (P1Y), which has no count within a day.
     */
    public static Optional<Long> expectedIntervals(LocalDate day, IntervalResolution resolution, Sparte sparte)
    {
        Instant start = startOfBalancingDay(sparte, day);
        Instant end = startOfBalancingDay(sparte, day.plusDays(1));
        return resolution.intervals(day, start, end, start, end);
    }

    /** As {@link #expectedIntervals(LocalDate, IntervalResolution, Sparte)}, counting only the intervals that start in [lower, upper). */
    public static Optional<Long> expectedIntervals(LocalDate day, IntervalResolution resolution, Sparte sparte, Instant lower, Instant upper)
    {
        return resolution.intervals(day, startOfBalancingDay(sparte, day), startOfBalancingDay(sparte, day.plusDays(1)), lower, upper);
    }
}
