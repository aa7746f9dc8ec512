package io.meterstore.core;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
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
        assertThat(IntervalResolution.parse("P1M").kind()).isEqualTo(IntervalResolution.Kind.CALENDAR);
        assertThat(IntervalResolution.parse("P1Y").kind()).isEqualTo(IntervalResolution.Kind.CALENDAR);
        assertThatThrownBy(() -> IntervalResolution.parse("PT7M")).hasMessage("Resolution 'PT7M' must divide a day");
        assertThatThrownBy(() -> IntervalResolution.parse("PT0S")).hasMessage("Resolution 'PT0S' must divide a day");
        assertThatThrownBy(() -> IntervalResolution.parse("15min")).hasMessage("Resolution '15min' is not an ISO-8601 duration such as PT15M");
        // INSERT takes a step; a month has none
        assertThatThrownBy(() -> IntervalResolution.parse("P1M").length()).hasMessageContaining("calendar period");
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
        assertThat(MeteringCalendar.expectedIntervals(day, IntervalResolution.parse("P1M"), Sparte.STROM)).isEqualTo(Optional.empty());
    }
}
