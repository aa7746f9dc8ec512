package io.meterstore.archiver.maintenance;

import org.junit.jupiter.api.Test;

import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class TestRetentionPeriod
{
    @Test
    void testWholeSettlementYearsNeverEarly()
    {
        RetentionPeriod threeYears = RetentionPeriod.parse("3y");
        assertThat(threeYears).isEqualTo(new RetentionPeriod(3));
        assertThat(threeYears.toString()).isEqualTo("3y");
        // as the Rust crate's CalendarYears(3): a value of 2 January 2025 is due on 31 December 2028, so it goes in 2029
        Instant startOf2026 = Instant.parse("2025-12-31T23:00:00Z");
        assertThat(threeYears.cut(Instant.parse("2029-01-01T12:00:00Z"))).isEqualTo(startOf2026);
        assertThat(threeYears.cut(Instant.parse("2029-12-31T12:00:00Z"))).isEqualTo(startOf2026);
        // on New Year's night the gas year (from 06:00 Berlin) has not begun: nothing of 2025 goes before it has
        assertThat(threeYears.cut(Instant.parse("2029-01-01T03:00:00Z"))).isEqualTo(Instant.parse("2024-12-31T23:00:00Z"));
        assertThat(threeYears.cut(Instant.parse("2028-12-31T22:59:59Z"))).isEqualTo(Instant.parse("2024-12-31T23:00:00Z"));
        assertThat(RetentionPeriod.parse("10y").cut(Instant.parse("2036-06-01T00:00:00Z"))).isEqualTo(Instant.parse("2025-12-31T23:00:00Z"));

        assertThatThrownBy(() -> RetentionPeriod.parse("36m")).hasMessage("Invalid retention '36m': write whole settlement years, e.g. '3y'");
        assertThatThrownBy(() -> RetentionPeriod.parse("0y")).hasMessage("Invalid retention '0y': write whole settlement years, e.g. '3y'");
    }

    @Test
    void testDaysForTheSoak()
    {
        RetentionPeriod tenDays = RetentionPeriod.ofDays(10);
        assertThat(tenDays.toString()).isEqualTo("10d");
        // the start of the Berlin day ten days before now's: at 22:00 UTC in winter Berlin's day is still the same
        assertThat(tenDays.cut(Instant.parse("2026-11-20T22:00:00Z"))).isEqualTo(Instant.parse("2026-11-09T23:00:00Z"));
        // in summer 22:00 UTC is midnight in Berlin, the next day
        assertThat(tenDays.cut(Instant.parse("2026-07-20T22:00:00Z"))).isEqualTo(Instant.parse("2026-07-10T22:00:00Z"));
        assertThatThrownBy(() -> RetentionPeriod.ofDays(0)).hasMessage("days must be at least 1");
        assertThatThrownBy(() -> new RetentionPeriod(3, 10)).hasMessage("Exactly one of settlementYears and days must be positive");
    }
}
