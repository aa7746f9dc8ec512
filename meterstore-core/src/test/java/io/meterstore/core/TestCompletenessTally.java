package io.meterstore.core;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.time.LocalDate;
import java.time.YearMonth;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

final class TestCompletenessTally
{
    private static final CompletenessTally.Reading READING = new CompletenessTally.Reading("41373559241", "1-1:1.29.0", Sparte.STROM);
    private static final CompletenessPeriod MARCH = CompletenessPeriod.settlementMonth(YearMonth.of(2026, 3));

    @Test
    void testSurplusNeverHidesAGap()
    {
        CompletenessTally tally = new CompletenessTally();
        for (LocalDate day = LocalDate.of(2026, 3, 1); day.isBefore(LocalDate.of(2026, 4, 1)); day = day.plusDays(1)) {
            long delivered = MeteringCalendar.expectedIntervals(day, IntervalResolution.parse("PT15M"), Sparte.STROM).orElseThrow();
            // four too many on the 2nd, four short on the 3rd: the totals agree, the days do not
            delivered += day.getDayOfMonth() == 2 ? 4 : day.getDayOfMonth() == 3 ? -4 : 0;
            tally.add(READING, "PT15M", day, delivered, 0, 0, start(day), start(day));
        }
        ChannelCompleteness row = tally.rollUp(MARCH).getFirst();
        assertThat(row.expected()).isEqualTo(2972);
        assertThat(row.actual()).isEqualTo(2972);
        assertThat(row.missing()).isEqualTo(4);
        assertThat(row.surplus()).isEqualTo(4);
        assertThat(row.firstGap()).contains(LocalDate.of(2026, 3, 3));
        assertThat(row.complete()).isFalse();
    }

    @Test
    void testCalendarGridsAreCounted()
    {
        // a monthly value: one expected in the month, on its first balancing day
        CompletenessTally tally = new CompletenessTally();
        tally.add(READING, "P1M", LocalDate.of(2026, 3, 1), 1, 0, 1, start(LocalDate.of(2026, 3, 1)), start(LocalDate.of(2026, 3, 1)));
        ChannelCompleteness row = tally.rollUp(MARCH).getFirst();
        assertThat(List.of(row.expected(), row.actual(), row.missing(), row.surplus(), row.notBillable())).containsExactly(1L, 1L, 0L, 0L, 1L);
        assertThat(row.measurable()).isTrue();
        assertThat(row.complete()).isTrue();

        // daily values: one a balancing day, 31 in March whatever the 29th's length; two missing
        tally = new CompletenessTally();
        for (LocalDate day = LocalDate.of(2026, 3, 1); day.isBefore(LocalDate.of(2026, 4, 1)); day = day.plusDays(1)) {
            if (day.getDayOfMonth() != 10 && day.getDayOfMonth() != 29) {
                tally.add(READING, "P1D", day, 1, 0, 0, start(day), start(day));
            }
        }
        row = tally.rollUp(MARCH).getFirst();
        assertThat(List.of(row.expected(), row.actual(), row.missing(), row.surplus())).containsExactly(31L, 29L, 2L, 0L);
        assertThat(row.firstGap()).contains(LocalDate.of(2026, 3, 10));

        // a grid INSERT does not take is not judged
        tally = new CompletenessTally();
        tally.add(READING, "P1Y", LocalDate.of(2026, 3, 1), 1, 0, 0, start(LocalDate.of(2026, 3, 1)), start(LocalDate.of(2026, 3, 1)));
        row = tally.rollUp(MARCH).getFirst();
        assertThat(List.of(row.expected(), row.actual(), row.missing(), row.surplus())).containsExactly(0L, 1L, 0L, 0L);
        assertThat(row.measurable()).isFalse();
        assertThat(row.firstGap()).isEmpty();
    }

    @Test
    void testAbsentDaysGoToTheGridInForce()
    {
        CompletenessTally tally = new CompletenessTally();
        // hourly on the 10th and the 12th, quarter-hourly on the 11th: the 13th onwards follows the hours, the 1st to 9th
        // (a leading gap, no roster) the first grid delivered
        tally.add(READING, "PT1H", LocalDate.of(2026, 3, 10), 24, 0, 0, start(LocalDate.of(2026, 3, 10)), start(LocalDate.of(2026, 3, 11)).minusSeconds(3600));
        tally.add(READING, "PT15M", LocalDate.of(2026, 3, 11), 96, 0, 0, start(LocalDate.of(2026, 3, 11)), start(LocalDate.of(2026, 3, 12)).minusSeconds(900));
        tally.add(READING, "PT1H", LocalDate.of(2026, 3, 12), 24, 0, 0, start(LocalDate.of(2026, 3, 12)), start(LocalDate.of(2026, 3, 13)).minusSeconds(3600));
        List<ChannelCompleteness> rows = tally.rollUp(MARCH);
        assertThat(rows).extracting(ChannelCompleteness::resolution).containsExactly("PT15M", "PT1H");
        assertThat(rows.get(0).expected()).isEqualTo(96);
        // the 9 leading days, the 10th, the 12th and the 19 days after it, the 29th with 23 hours
        assertThat(rows.get(1).expected()).isEqualTo(30 * 24 - 1);
        assertThat(rows.get(1).missing()).isEqualTo(rows.get(1).expected() - 48);
        assertThat(rows.get(1).firstGap()).contains(LocalDate.of(2026, 3, 1));

        // with a roster that saw quarter-hours in February, the leading gap is theirs
        tally.addToRoster(READING, "PT15M", Instant.parse("2026-02-28T22:45:00Z"));
        rows = tally.rollUp(MARCH);
        assertThat(rows.get(0).expected()).isEqualTo(10 * 96);
        assertThat(rows.get(1).expected()).isEqualTo(21 * 24 - 1);
    }

    @Test
    void testEachMeteringLocationIsAReadingOfItsOwn()
    {
        // two MeLos' daily registers under one MaLo, every day of March: each MeLo's row is complete, none in surplus
        CompletenessTally.Reading first = new CompletenessTally.Reading("41373559241", List.of("DE0001234500000000000000000000002"), "1-0:1.8.0", Sparte.STROM);
        CompletenessTally.Reading second = new CompletenessTally.Reading("41373559241", List.of("DE0001234500000000000000000000001"), "1-0:1.8.0", Sparte.STROM);
        CompletenessTally tally = new CompletenessTally();
        for (LocalDate day = LocalDate.of(2026, 3, 1); day.isBefore(LocalDate.of(2026, 4, 1)); day = day.plusDays(1)) {
            for (CompletenessTally.Reading reading : List.of(first, second)) {
                tally.add(reading, "P1D", day, 1, 0, 0, start(day), start(day));
            }
        }
        List<ChannelCompleteness> rows = tally.rollUp(MARCH);
        // ordered by malo_id, then the key's further columns
        assertThat(rows).extracting(ChannelCompleteness::keyValues).containsExactly(List.of("DE0001234500000000000000000000001"), List.of("DE0001234500000000000000000000002"));
        assertThat(rows).allSatisfy(row -> assertThat(List.of(row.expected(), row.actual(), row.missing(), row.surplus())).containsExactly(31L, 31L, 0L, 0L));
        // the default key's reading has no further columns
        assertThat(READING.keyValues()).isEmpty();
    }

    private static Instant start(LocalDate day)
    {
        return MeteringCalendar.startOfLocalDay(day);
    }
}
