package io.meterstore.benchmark;

import io.meterstore.benchmark.TimedQuery.Execution;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** D1's expected answers; the benchmark itself is run by bin/benchmark, never by the build. */
final class TestDashboardBenchmark
{
    @Test
    void testDaysOfTheMonthAddUpByBalancingDay()
    {
        // a gas balancing day starts at 06:00, so 2026-04-02 has rows in the local days of the 2nd and the 3rd
        Execution second = new Execution(1, List.of(
                List.of("2026-04-01", "24", "3.250000"),
                List.of("2026-04-02", "60", "10.500000")));
        Execution third = new Execution(1, List.of(
                List.of("2026-04-02", "40", "1.500000"),
                List.of("2026-04-03", "96", "0.000000")));
        Execution beyond = new Execution(1, List.of());

        List<List<String>> expected = List.of(
                List.of("2026-04-01", "24", "3.25"),
                List.of("2026-04-02", "100", "12"),
                List.of("2026-04-03", "96", "0"));
        assertThat(DashboardBenchmark.merged(List.of(second, third, beyond))).isEqualTo(expected);
        // ordered by balancing day whatever the order of the chunks
        assertThat(DashboardBenchmark.merged(List.of(beyond, third, second))).isEqualTo(expected);
    }
}
