package io.meterstore.core;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.YearMonth;
import java.time.ZoneId;
import java.time.ZonedDateTime;

/**
 * The German metering calendar: days are Berlin days (23, 24 or 25 hours), the gas day runs 06:00 to 06:00 local time.
 */
public final class MeteringCalendar
{
    public static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");
    private static final Duration GAS_DAY_OFFSET = Duration.ofHours(6);

    private MeteringCalendar() {}

    /** The Berlin calendar day an interval starting at {@code from} belongs to. */
    public static LocalDate localDay(Instant from)
    {
        return from.atZone(BERLIN).toLocalDate();
    }

    /** The balancing day: the Berlin day, or for gas the gas day that starts at 06:00 local time. */
    public static LocalDate balancingDay(Sparte sparte, Instant from)
    {
        ZonedDateTime local = from.atZone(BERLIN);
        if (sparte == Sparte.GAS) {
            // on the local timeline: on DST days six hours of wall clock are not six hours of instants
            return local.toLocalDateTime().minus(GAS_DAY_OFFSET).toLocalDate();
        }
        return local.toLocalDate();
    }

    /** The settlement month of an interval: the month of its balancing day. */
    public static YearMonth settlementMonth(Sparte sparte, Instant from)
    {
        return YearMonth.from(balancingDay(sparte, from));
    }

    /** The start of a Berlin day as an instant. */
    public static Instant startOfLocalDay(LocalDate day)
    {
        return day.atStartOfDay(BERLIN).toInstant();
    }

    /** How many intervals of {@code resolution} a Berlin day has: 92, 96 or 100 quarter-hours. */
    public static long expectedIntervals(LocalDate day, Duration resolution)
    {
        Duration length = Duration.between(startOfLocalDay(day), startOfLocalDay(day.plusDays(1)));
        return length.dividedBy(resolution);
    }
}
