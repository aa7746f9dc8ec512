package io.meterstore.trino.consumption;

import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.Sparte;

import java.time.Instant;
import java.time.LocalDate;
import java.time.YearMonth;
import java.util.Optional;

/** The periods {@code register_consumption} derives consumption for: the balancing day and the balancing month. */
public enum ConsumptionPeriod
{
    DAY("day"),
    MONTH("month");

    private final String argument;

    ConsumptionPeriod(String argument)
    {
        this.argument = argument;
    }

    public String argument()
    {
        return argument;
    }

    /**
     * The first day of the period that starts exactly at {@code from} for a register of {@code sparte}, or empty where
     * {@code from} lies inside a period: only the reading at a period's start opens it (MeteringCalendar's start of the
     * Berlin or gas day, of the Berlin or gas month), whatever the register's cadence.
     */
    public Optional<LocalDate> startingAt(Sparte sparte, Instant from)
    {
        return switch (this) {
            case DAY -> {
                LocalDate day = MeteringCalendar.balancingDay(sparte, from);
                yield MeteringCalendar.startOfBalancingDay(sparte, day).equals(from) ? Optional.of(day) : Optional.empty();
            }
            case MONTH -> {
                YearMonth month = MeteringCalendar.settlementMonth(sparte, from);
                yield MeteringCalendar.startOfBalancingMonth(sparte, month).equals(from) ? Optional.of(month.atDay(1)) : Optional.empty();
            }
        };
    }

    /** The first day of the period after the one starting on {@code start}. */
    public LocalDate next(LocalDate start)
    {
        return switch (this) {
            case DAY -> start.plusDays(1);
            case MONTH -> start.plusMonths(1);
        };
    }
}
