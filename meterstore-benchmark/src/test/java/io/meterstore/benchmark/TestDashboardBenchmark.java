package io.meterstore.benchmark;

import io.meterstore.benchmark.QueryBenchmark.Pair;
import io.meterstore.benchmark.TimedQuery.Execution;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.TestingDatabase;
import io.meterstore.testing.TestingPostgresServer;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.time.LocalDate;
import java.util.List;
import java.util.stream.IntStream;

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

    @Test
    void testEachKindOnOneClientReadsReadingsAgainstReadingsVersions()
            throws Exception
    {
        List<String> maloIds = IntStream.range(0, 300).mapToObj(ReadingsGenerator::maloId).toList();
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("dashboard_pairs");
                Connection connection = database.connect()) {
            List<Pair> pairs = DashboardBenchmark.singleClientPairs(connection, LocalDate.of(2026, 4, 29), maloIds);

            assertThat(pairs).extracting(Pair::id).containsExactly("D1t", "D1w", "D1m", "D1y");
            // the mix's query of the first of its meters, its week ending on the Berlin day 2026-04-29 (UTC+2)
            Pair week = pairs.get(1);
            assertThat(week.title()).isEqualTo("D1's one meter's last 7 days, one client");
            assertThat(week.meterstore().sql())
                    .isEqualTo("SELECT \"from\", value FROM meterstore.metering.readings WHERE malo_id = '51000000003' AND \"from\" >= TIMESTAMP '2026-04-22 22:00:00 UTC' ORDER BY \"from\"");
            assertThat(week.peer()).singleElement().extracting(TimedQuery::sql)
                    .isEqualTo("SELECT \"from\", value FROM meterstore.metering.readings_versions WHERE malo_id = '51000000003' AND \"from\" >= TIMESTAMP '2026-04-22 22:00:00 UTC' ORDER BY \"from\"");
            assertThat(pairs.get(2).meterstore().sql())
                    .isEqualTo("SELECT balancing_day, count(*), sum(value) FROM meterstore.metering.readings WHERE \"from\" >= TIMESTAMP '2026-03-31 22:00:00 UTC' GROUP BY balancing_day ORDER BY balancing_day");
            assertThat(pairs).allSatisfy(pair -> assertThat(pair.target().maxRatio()).isEqualTo(1.2));
        }
    }
}
