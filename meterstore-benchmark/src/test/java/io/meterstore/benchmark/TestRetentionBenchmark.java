package io.meterstore.benchmark;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Instant;
import java.util.Optional;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** Y5's clock: one settlement year at it cuts at the first Berlin New Year inside the years dataset. */
final class TestRetentionBenchmark
{
    @Test
    void testCutFallsInsideTheDataset()
    {
        // the two-year dataset, 2024-06-01 to 2026-05-31: the morning after its last day
        Instant twoYears = RetentionBenchmark.now(settings(730));
        assertThat(twoYears).isEqualTo(Instant.parse("2026-06-01T00:00:00Z"));
        // the start of 2025 in Berlin: November 2024 ends before it, December 2024 an hour after it
        assertThat(RetentionBenchmark.RETENTION.cut(twoYears)).isEqualTo(Instant.parse("2024-12-31T23:00:00Z"));

        // a shorter dataset ends in 2024 or 2025, when one year would cut at 2024 or 2023 and remove nothing
        Instant shorter = RetentionBenchmark.now(settings(200));
        assertThat(shorter).isEqualTo(Instant.parse("2026-01-02T00:00:00Z"));
        assertThat(RetentionBenchmark.RETENTION.cut(shorter)).isEqualTo(Instant.parse("2024-12-31T23:00:00Z"));
    }

    private static YearsSettings settings(int days)
    {
        return new YearsSettings(20, days, 20, 30, 7, 5, Set.of("Y5"), Path.of("var/benchmark-years"), Path.of("docs"), Optional.empty());
    }
}
