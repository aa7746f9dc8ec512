package io.meterstore.core;

import java.time.Instant;
import java.time.LocalDate;
import java.time.YearMonth;
import java.util.List;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * What a completeness report covers: a range of instants [start, end), or a settlement month. A range is the same
 * instants for every commodity; a settlement month is the balancing days of that month, so for gas it runs from 06:00
 * on the 1st to 06:00 on the 1st of the next month, and one report judges electricity and gas each on its own days.
 */
public record CompletenessPeriod(Optional<Instant> rangeStart, Optional<Instant> rangeEnd, Optional<YearMonth> month)
{
    public CompletenessPeriod
    {
        requireNonNull(rangeStart, "rangeStart is null");
        requireNonNull(rangeEnd, "rangeEnd is null");
        requireNonNull(month, "month is null");
        checkArgument(rangeStart.isPresent() == rangeEnd.isPresent(), "a range has a start and an end");
        checkArgument(rangeStart.isPresent() != month.isPresent(), "a period is a range or a month");
        if (rangeStart.isPresent() && !rangeStart.get().isBefore(rangeEnd.get())) {
            throw new InvalidReadingException("The completeness range [%s, %s) is empty: its end must be after its start".formatted(rangeStart.get(), rangeEnd.get()));
        }
    }

    public static CompletenessPeriod range(Instant start, Instant end)
    {
        return new CompletenessPeriod(Optional.of(start), Optional.of(end), Optional.empty());
    }

    public static CompletenessPeriod settlementMonth(YearMonth month)
    {
        return new CompletenessPeriod(Optional.empty(), Optional.empty(), Optional.of(month));
    }

    /** The first instant a reading of {@code sparte} is judged at. */
    public Instant start(Sparte sparte)
    {
        return month.map(value -> MeteringCalendar.startOfBalancingDay(sparte, value.atDay(1))).orElseGet(rangeStart::orElseThrow);
    }

    /** The end (exclusive) of what a reading of {@code sparte} is judged on. */
    public Instant end(Sparte sparte)
    {
        return month.map(value -> MeteringCalendar.startOfBalancingDay(sparte, value.plusMonths(1).atDay(1))).orElseGet(rangeEnd::orElseThrow);
    }

    /** The instants of every commodity's period together: what the tiers are read over. */
    public Instant scanStart()
    {
        return List.of(Sparte.values()).stream().map(this::start).min(Instant::compareTo).orElseThrow();
    }

    public Instant scanEnd()
    {
        return List.of(Sparte.values()).stream().map(this::end).max(Instant::compareTo).orElseThrow();
    }

    public boolean contains(Sparte sparte, Instant from)
    {
        return !from.isBefore(start(sparte)) && from.isBefore(end(sparte));
    }

    /** Every balancing day of {@code sparte} that the period covers, wholly or partly, in order. */
    public List<LocalDate> balancingDays(Sparte sparte)
    {
        LocalDate first = MeteringCalendar.balancingDay(sparte, start(sparte));
        // the day of the last instant before the end
        LocalDate last = MeteringCalendar.balancingDay(sparte, end(sparte).minusNanos(1));
        return first.datesUntil(last.plusDays(1)).toList();
    }

    /** The intervals of {@code resolution} that start inside the period on balancing day {@code day}; empty for a calendar resolution. */
    public Optional<Long> expectedIntervals(LocalDate day, IntervalResolution resolution, Sparte sparte)
    {
        return MeteringCalendar.expectedIntervals(day, resolution, sparte, start(sparte), end(sparte));
    }

    /** Whether the whole balancing day lies inside the period, so that every row of it is inside too. */
    public boolean coversWholeDay(Sparte sparte, LocalDate day)
    {
        return !MeteringCalendar.startOfBalancingDay(sparte, day).isBefore(start(sparte))
                && !MeteringCalendar.startOfBalancingDay(sparte, day.plusDays(1)).isAfter(end(sparte));
    }

    @Override
    public String toString()
    {
        return month.map(value -> "settlement month " + value).orElseGet(() -> "[%s, %s)".formatted(rangeStart.orElseThrow(), rangeEnd.orElseThrow()));
    }
}
