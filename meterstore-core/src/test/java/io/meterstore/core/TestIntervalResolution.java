package io.meterstore.core;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class TestIntervalResolution
{
    @Test
    void testParse()
    {
        assertThat(IntervalResolution.parse("PT15M").step()).contains(Duration.ofMinutes(15));
        assertThat(IntervalResolution.parse("PT60S").step()).contains(Duration.ofMinutes(1));
        assertThat(IntervalResolution.parse("P1D").kind()).isEqualTo(IntervalResolution.Kind.DAILY);
        assertThat(IntervalResolution.parse("P1M").kind()).isEqualTo(IntervalResolution.Kind.MONTHLY);
        assertThat(IntervalResolution.parse("P1Y").kind()).isEqualTo(IntervalResolution.Kind.CALENDAR);
        assertThatThrownBy(() -> IntervalResolution.parse("PT7M")).hasMessage("Resolution 'PT7M' must divide a day");
        assertThatThrownBy(() -> IntervalResolution.parse("PT0S")).hasMessage("Resolution 'PT0S' must divide a day");
        assertThatThrownBy(() -> IntervalResolution.parse("15min")).hasMessage("Resolution '15min' is not an ISO-8601 duration such as PT15M");
        // a day and a month have no fixed length, a year is not taken at all
        assertThatThrownBy(() -> IntervalResolution.parse("P1D").length()).hasMessageContaining("23, 24 or 25 hours");
        assertThatThrownBy(() -> IntervalResolution.parse("P1M").length()).hasMessageContaining("balancing month");
        assertThatThrownBy(() -> IntervalResolution.parse("P1Y").length()).hasMessageContaining("calendar period");
    }

    @Test
    void testIntervalHolding()
    {
        Instant springSunday = Instant.parse("2026-03-29T10:00:00Z");
        assertThat(IntervalResolution.parse("PT15M").intervalHolding(Sparte.STROM, Instant.parse("2026-03-29T10:07:00Z")))
                .contains(new IntervalResolution.Span(Instant.parse("2026-03-29T10:00:00Z"), Instant.parse("2026-03-29T10:15:00Z")));
        // the Berlin day of 29 March lasts 23 hours, the gas day holding its noon runs from 06:00 CEST to 06:00 CEST
        assertThat(IntervalResolution.parse("P1D").intervalHolding(Sparte.STROM, springSunday))
                .contains(new IntervalResolution.Span(Instant.parse("2026-03-28T23:00:00Z"), Instant.parse("2026-03-29T22:00:00Z")));
        assertThat(IntervalResolution.parse("P1D").intervalHolding(Sparte.GAS, springSunday))
                .contains(new IntervalResolution.Span(Instant.parse("2026-03-29T04:00:00Z"), Instant.parse("2026-03-30T04:00:00Z")));
        // before 06:00 on the 26th of October it is still the gas day of the 25th, which lasts 25 hours
        assertThat(IntervalResolution.parse("P1D").intervalHolding(Sparte.GAS, Instant.parse("2026-10-26T04:59:00Z")))
                .contains(new IntervalResolution.Span(Instant.parse("2026-10-25T05:00:00Z"), Instant.parse("2026-10-26T05:00:00Z")));
        assertThat(IntervalResolution.parse("P1D").intervalHolding(Sparte.WASSER, Instant.parse("2026-10-25T12:00:00Z")).orElseThrow())
                .satisfies(span -> assertThat(Duration.between(span.from(), span.to())).isEqualTo(Duration.ofHours(25)));
        // the Berlin month of October lasts 31 days and an hour; the gas month of March runs from 06:00 CET to 06:00 CEST
        assertThat(IntervalResolution.parse("P1M").intervalHolding(Sparte.STROM, Instant.parse("2026-10-31T22:59:00Z")))
                .contains(new IntervalResolution.Span(Instant.parse("2026-09-30T22:00:00Z"), Instant.parse("2026-10-31T23:00:00Z")));
        assertThat(IntervalResolution.parse("P1M").intervalHolding(Sparte.GAS, Instant.parse("2026-03-01T04:59:00Z")))
                .contains(new IntervalResolution.Span(Instant.parse("2026-02-01T05:00:00Z"), Instant.parse("2026-03-01T05:00:00Z")));
        assertThat(IntervalResolution.parse("P1M").intervalHolding(Sparte.GAS, Instant.parse("2026-03-01T05:00:00Z")))
                .contains(new IntervalResolution.Span(Instant.parse("2026-03-01T05:00:00Z"), Instant.parse("2026-04-01T04:00:00Z")));
        assertThat(IntervalResolution.parse("P1Y").intervalHolding(Sparte.STROM, springSunday)).isEmpty();
        // the longest span a row can have, which the rules look back over
        assertThat(ReadingRules.LONGEST_WRITTEN_SPAN).isEqualTo(Duration.between(Instant.parse("2026-09-30T22:00:00Z"), Instant.parse("2026-10-31T23:00:00Z")));
        assertThat(ReadingRules.monthStartsReaching(Instant.parse("2026-03-01T03:00:00Z")))
                .containsExactly(Instant.parse("2026-02-01T05:00:00Z"), Instant.parse("2026-02-28T23:00:00Z"));
    }

    @Test
    void testExpectedIntervalsOfCalendarGrids()
    {
        // one a balancing day, one a balancing month: on the month's first balancing day
        IntervalResolution daily = IntervalResolution.parse("P1D");
        IntervalResolution monthly = IntervalResolution.parse("P1M");
        for (LocalDate day : List.of(LocalDate.of(2026, 3, 28), LocalDate.of(2026, 3, 29), LocalDate.of(2026, 10, 25))) {
            assertThat(MeteringCalendar.expectedIntervals(day, daily, Sparte.STROM)).as("%s", day).contains(1L);
            assertThat(MeteringCalendar.expectedIntervals(day, daily, Sparte.GAS)).as("%s", day).contains(1L);
            assertThat(MeteringCalendar.expectedIntervals(day, monthly, Sparte.STROM)).as("%s", day).contains(0L);
        }
        assertThat(MeteringCalendar.expectedIntervals(LocalDate.of(2026, 3, 1), monthly, Sparte.STROM)).contains(1L);
        assertThat(MeteringCalendar.expectedIntervals(LocalDate.of(2026, 3, 1), monthly, Sparte.GAS)).contains(1L);
        long march = LocalDate.of(2026, 3, 1).datesUntil(LocalDate.of(2026, 4, 1))
                .mapToLong(day -> MeteringCalendar.expectedIntervals(day, monthly, Sparte.GAS).orElseThrow())
                .sum();
        assertThat(march).isEqualTo(1);
        assertThat(MeteringCalendar.expectedIntervals(LocalDate.of(2026, 3, 1), IntervalResolution.parse("P1Y"), Sparte.STROM)).isEmpty();
    }

    @Test
    void testPartialDays()
    {
        IntervalResolution quarterHour = IntervalResolution.parse("PT15M");
        LocalDate day = LocalDate.of(2026, 8, 20);
        Instant start = MeteringCalendar.startOfLocalDay(day);
        // a range that starts mid-interval expects the intervals that start inside it
        assertThat(MeteringCalendar.expectedIntervals(day, quarterHour, Sparte.STROM, start.plus(Duration.ofMinutes(10)), Instant.MAX)).contains(95L);
        assertThat(MeteringCalendar.expectedIntervals(day, quarterHour, Sparte.STROM, start.plus(Duration.ofMinutes(15)), Instant.MAX)).contains(95L);
        assertThat(MeteringCalendar.expectedIntervals(day, quarterHour, Sparte.STROM, start.plus(Duration.ofMinutes(16)), Instant.MAX)).contains(94L);
        assertThat(MeteringCalendar.expectedIntervals(day, quarterHour, Sparte.STROM, Instant.MIN, start.plus(Duration.ofHours(6)))).contains(24L);
        assertThat(MeteringCalendar.expectedIntervals(day, quarterHour, Sparte.STROM, Instant.MIN, start.plus(Duration.ofNanos(1)))).contains(1L);
        assertThat(MeteringCalendar.expectedIntervals(day, quarterHour, Sparte.STROM, start.plus(Duration.ofDays(2)), Instant.MAX)).contains(0L);
        // the gas day of 20 August starts at 06:00 CEST
        assertThat(MeteringCalendar.expectedIntervals(day, quarterHour, Sparte.GAS, start, start.plus(Duration.ofHours(7)))).contains(4L);
        // a daily value is expected when its day starts inside the range
        IntervalResolution daily = IntervalResolution.parse("P1D");
        assertThat(MeteringCalendar.expectedIntervals(day, daily, Sparte.STROM, start, start.plus(Duration.ofHours(1)))).contains(1L);
        assertThat(MeteringCalendar.expectedIntervals(day, daily, Sparte.STROM, start.plus(Duration.ofHours(1)), Instant.MAX)).contains(0L);
        assertThat(MeteringCalendar.expectedIntervals(day, IntervalResolution.parse("P1Y"), Sparte.STROM)).isEqualTo(Optional.empty());
    }
}
