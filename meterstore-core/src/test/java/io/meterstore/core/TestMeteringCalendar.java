package io.meterstore.core;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.YearMonth;

import static org.assertj.core.api.Assertions.assertThat;

final class TestMeteringCalendar
{
    private static final Duration QUARTER_HOUR = Duration.ofMinutes(15);

    @Test
    void testExpectedIntervals()
    {
        assertThat(MeteringCalendar.expectedIntervals(LocalDate.of(2026, 3, 29), QUARTER_HOUR)).isEqualTo(92);
        assertThat(MeteringCalendar.expectedIntervals(LocalDate.of(2026, 8, 20), QUARTER_HOUR)).isEqualTo(96);
        assertThat(MeteringCalendar.expectedIntervals(LocalDate.of(2026, 10, 25), QUARTER_HOUR)).isEqualTo(100);
        assertThat(MeteringCalendar.expectedIntervals(LocalDate.of(2026, 3, 28), QUARTER_HOUR)).isEqualTo(96);
        assertThat(MeteringCalendar.expectedIntervals(LocalDate.of(2026, 10, 26), QUARTER_HOUR)).isEqualTo(96);
        assertThat(MeteringCalendar.expectedIntervals(LocalDate.of(2026, 10, 25), Duration.ofHours(1))).isEqualTo(25);
        assertThat(MeteringCalendar.expectedIntervals(LocalDate.of(2027, 3, 28), QUARTER_HOUR)).isEqualTo(92);
    }

    @Test
    void testLocalDays()
    {
        assertThat(MeteringCalendar.startOfLocalDay(LocalDate.of(2026, 8, 20))).isEqualTo(Instant.parse("2026-08-19T22:00:00Z"));
        assertThat(MeteringCalendar.startOfLocalDay(LocalDate.of(2026, 3, 29))).isEqualTo(Instant.parse("2026-03-28T23:00:00Z"));
        assertThat(MeteringCalendar.startOfLocalDay(LocalDate.of(2026, 3, 30))).isEqualTo(Instant.parse("2026-03-29T22:00:00Z"));
        assertThat(MeteringCalendar.startOfLocalDay(LocalDate.of(2026, 10, 25))).isEqualTo(Instant.parse("2026-10-24T22:00:00Z"));
        assertThat(MeteringCalendar.startOfLocalDay(LocalDate.of(2026, 10, 26))).isEqualTo(Instant.parse("2026-10-25T23:00:00Z"));

        assertThat(MeteringCalendar.localDay(Instant.parse("2026-08-19T21:45:00Z"))).isEqualTo(LocalDate.of(2026, 8, 19));
        assertThat(MeteringCalendar.localDay(Instant.parse("2026-08-19T22:00:00Z"))).isEqualTo(LocalDate.of(2026, 8, 20));
        // both passes through 02:00-03:00 on the autumn day
        assertThat(MeteringCalendar.localDay(Instant.parse("2026-10-25T00:15:00Z"))).isEqualTo(LocalDate.of(2026, 10, 25));
        assertThat(MeteringCalendar.localDay(Instant.parse("2026-10-25T01:15:00Z"))).isEqualTo(LocalDate.of(2026, 10, 25));
    }

    @Test
    void testGasDay()
    {
        // the gas day runs from 06:00 to 06:00 local time and is named after the day it starts on
        assertThat(MeteringCalendar.balancingDay(Sparte.GAS, Instant.parse("2026-08-20T03:45:00Z"))).isEqualTo(LocalDate.of(2026, 8, 19)); // 05:45 CEST
        assertThat(MeteringCalendar.balancingDay(Sparte.GAS, Instant.parse("2026-08-20T04:00:00Z"))).isEqualTo(LocalDate.of(2026, 8, 20)); // 06:00 CEST
        assertThat(MeteringCalendar.balancingDay(Sparte.STROM, Instant.parse("2026-08-20T03:45:00Z"))).isEqualTo(LocalDate.of(2026, 8, 20));
        assertThat(MeteringCalendar.balancingDay(Sparte.WAERME, Instant.parse("2026-08-20T03:45:00Z"))).isEqualTo(LocalDate.of(2026, 8, 20));
        // winter: 06:00 CET is 05:00 UTC
        assertThat(MeteringCalendar.balancingDay(Sparte.GAS, Instant.parse("2026-03-01T04:45:00Z"))).isEqualTo(LocalDate.of(2026, 2, 28));
        assertThat(MeteringCalendar.balancingDay(Sparte.GAS, Instant.parse("2026-03-01T05:00:00Z"))).isEqualTo(LocalDate.of(2026, 3, 1));
        assertThat(MeteringCalendar.settlementMonth(Sparte.GAS, Instant.parse("2026-03-01T04:45:00Z"))).isEqualTo(YearMonth.of(2026, 2));
        assertThat(MeteringCalendar.settlementMonth(Sparte.STROM, Instant.parse("2026-03-01T04:45:00Z"))).isEqualTo(YearMonth.of(2026, 3));
    }

    @Test
    void testGasDayAcrossDaylightSaving()
    {
        // spring: the gas day of 29 March starts at 06:00 CEST = 04:00 UTC, only 23 hours after the one of the 28th
        assertThat(MeteringCalendar.balancingDay(Sparte.GAS, Instant.parse("2026-03-29T03:45:00Z"))).isEqualTo(LocalDate.of(2026, 3, 28)); // 05:45 CEST
        assertThat(MeteringCalendar.balancingDay(Sparte.GAS, Instant.parse("2026-03-29T04:00:00Z"))).isEqualTo(LocalDate.of(2026, 3, 29)); // 06:00 CEST
        assertThat(MeteringCalendar.balancingDay(Sparte.GAS, Instant.parse("2026-03-29T04:30:00Z"))).isEqualTo(LocalDate.of(2026, 3, 29)); // 06:30 CEST
        // autumn: the gas day of 25 October starts at 06:00 CET = 05:00 UTC, 25 hours after the one of the 24th
        assertThat(MeteringCalendar.balancingDay(Sparte.GAS, Instant.parse("2026-10-25T04:45:00Z"))).isEqualTo(LocalDate.of(2026, 10, 24)); // 05:45 CET
        assertThat(MeteringCalendar.balancingDay(Sparte.GAS, Instant.parse("2026-10-25T05:00:00Z"))).isEqualTo(LocalDate.of(2026, 10, 25)); // 06:00 CET
        assertThat(MeteringCalendar.balancingDay(Sparte.GAS, Instant.parse("2026-10-24T04:00:00Z"))).isEqualTo(LocalDate.of(2026, 10, 24)); // 06:00 CEST

        // so a gas day has 92 or 100 quarter-hours too: count them on the two DST gas days
        assertThat(countGasDay(LocalDate.of(2026, 3, 28))).isEqualTo(92);
        assertThat(countGasDay(LocalDate.of(2026, 3, 29))).isEqualTo(96);
        assertThat(countGasDay(LocalDate.of(2026, 10, 24))).isEqualTo(100);
        assertThat(countGasDay(LocalDate.of(2026, 10, 25))).isEqualTo(96);
    }

    private static int countGasDay(LocalDate gasDay)
    {
        int count = 0;
        Instant end = MeteringCalendar.startOfLocalDay(gasDay.plusDays(3));
        for (Instant from = MeteringCalendar.startOfLocalDay(gasDay.minusDays(2)); from.isBefore(end); from = from.plus(QUARTER_HOUR)) {
            if (MeteringCalendar.balancingDay(Sparte.GAS, from).equals(gasDay)) {
                count++;
            }
        }
        return count;
    }
}
