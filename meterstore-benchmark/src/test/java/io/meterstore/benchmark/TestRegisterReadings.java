package io.meterstore.benchmark;

import io.meterstore.core.Reading;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDate;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** P1's readings: a register never runs backwards, is read at each Berlin midnight across DST, and some readings have a corrected version. */
final class TestRegisterReadings
{
    @Test
    void testRegistersAtBerlinMidnightNeverRunBackwards()
    {
        RegisterReadings readings = new RegisterReadings(PointsSettings.SEED, 200, LocalDate.of(2025, 3, 1));
        Map<String, BigDecimal> last = new HashMap<>();
        int superseded = 0;
        for (LocalDate day = LocalDate.of(2025, 3, 1); day.isBefore(LocalDate.of(2025, 4, 1)); day = day.plusDays(1)) {
            List<Reading> versions = readings.day(day);
            Map<String, Reading> winners = new HashMap<>();
            for (Reading reading : versions) {
                assertThat(reading.to()).isEmpty();
                assertThat(reading.resolution()).isEqualTo("P1D");
                assertThat(reading.balancingDay()).isEqualTo(day);
                Reading other = winners.put(reading.maloId(), reading);
                if (other != null) {
                    // the misread first version is higher than the correction that supersedes it, and recorded before it
                    superseded++;
                    assertThat(other.version()).isLessThan(reading.version());
                    assertThat(other.value()).isGreaterThan(reading.value());
                    assertThat(other.recordedAt()).isBefore(reading.recordedAt());
                }
            }
            assertThat(winners).hasSize(200);
            for (Reading winner : winners.values()) {
                BigDecimal before = last.put(winner.maloId(), winner.value());
                if (before != null) {
                    assertThat(winner.value()).as("%s on %s", winner.maloId(), day).isGreaterThan(before);
                }
            }
        }
        // one in 50 of 6,200 readings, give or take
        assertThat(superseded).isBetween(80, 170);
    }

    @Test
    void testDaylightSavingDays()
    {
        RegisterReadings readings = new RegisterReadings(PointsSettings.SEED, 1, LocalDate.of(2025, 3, 30));
        assertThat(readings.day(LocalDate.of(2025, 3, 30)).getLast().from()).isEqualTo(Instant.parse("2025-03-29T23:00:00Z"));
        assertThat(readings.day(LocalDate.of(2025, 3, 31)).getLast().from()).isEqualTo(Instant.parse("2025-03-30T22:00:00Z"));
        assertThatThrownBy(() -> readings.day(LocalDate.of(2025, 4, 2)))
                .hasMessage("Register readings are generated day by day: expected 2025-04-01, not 2025-04-02");
    }

    @Test
    void testReadingsEndingInAMonthsFirstDaysAreRefused()
    {
        // two years end on 30 November 2026; a day more would leave December's first reading hot
        assertThat(settings(730).endDay()).isEqualTo(LocalDate.of(2026, 12, 1));
        assertThatThrownBy(() -> settings(731))
                .hasMessageStartingWith("benchmark.points.days must not end the readings in the first 3 days of a month (731 days end on 2026-12-01)");
        assertThat(settings(734).endDay()).isEqualTo(LocalDate.of(2026, 12, 5));
    }

    private static PointsSettings settings(int days)
    {
        return new PointsSettings(300, days, 1, 1, Path.of("var/benchmark-points"), Path.of("docs"), Optional.empty());
    }
}
