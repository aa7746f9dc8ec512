package io.meterstore.benchmark;

import io.meterstore.benchmark.BenchmarkResult.Comparison;
import io.meterstore.benchmark.BenchmarkResult.Target;
import io.meterstore.benchmark.QueryBenchmark.Answer;
import io.meterstore.benchmark.QueryBenchmark.Pair;
import io.meterstore.testing.TestingDatabase;
import io.meterstore.testing.TestingPostgresServer;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

final class TestQueryBenchmark
{
    @Test
    void testEachSideRunsItsWarmUpsBeforeItsTimedRounds()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("query_benchmark");
                Connection connection = database.connect();
                Statement statement = connection.createStatement()) {
            // each run of a side takes the next value of its own sequence, so the sequences count the runs
            statement.execute("CREATE SEQUENCE meterstore_runs");
            statement.execute("CREATE SEQUENCE peer_runs");
            Pair pair = new Pair("T1", "counted runs", "meterstore", "peer",
                    new TimedQuery("meterstore", connection, "SELECT nextval('meterstore_runs')"),
                    List.of(new TimedQuery("peer", connection, "SELECT nextval('peer_runs')")),
                    Answer.NOT_COMPARABLE, Target.atMost(1.0));

            BenchmarkResult result = new QueryBenchmark(3, 5).run(pair);

            assertThat(result.error()).isEmpty();
            assertThat(runs(statement, "meterstore_runs")).isEqualTo(3 + 5);
            assertThat(runs(statement, "peer_runs")).isEqualTo(3 + 5);
        }
    }

    @Test
    void testCheckedPairComparesMeterstoreWithItsCheckNotItsPeer()
            throws Exception
    {
        try (TestingDatabase database = TestingPostgresServer.shared().createDatabase("query_benchmark_checked");
                Connection connection = database.connect()) {
            // H2's shape: the peer answers something else by nature, the check what MeterStore must answer
            BenchmarkResult same = new QueryBenchmark(1, 1).run(checked(connection, "SELECT 1"));
            BenchmarkResult other = new QueryBenchmark(1, 1).run(checked(connection, "SELECT 3"));

            assertThat(same.comparison()).isEqualTo(Comparison.SAME_RESULT);
            assertThat(other.comparison()).isEqualTo(Comparison.MISMATCH);
            assertThat(same.details()).anyMatch(detail -> detail.startsWith("Check, postgresql (1 rows)"));
        }
    }

    @Test
    void testBenchmarkIdsAreMatchedRegardlessOfCase()
    {
        assertThat(BenchmarkSettings.benchmarkId("r1h")).isEqualTo("R1h");
        assertThat(BenchmarkSettings.benchmarkId("R1H")).isEqualTo("R1h");
        assertThat(BenchmarkSettings.benchmarkId("w3")).isEqualTo("W3");
        assertThat(BenchmarkSettings.benchmarkId("x9")).isEqualTo("X9");
    }

    private static Pair checked(Connection connection, String check)
    {
        return new Pair("T2", "checked", "meterstore", "peer",
                new TimedQuery("meterstore", connection, "SELECT 1"),
                List.of(new TimedQuery("peer", connection, "SELECT 2")),
                Answer.CHECKED, Target.atMost(1.0),
                Optional.of(new TimedQuery("postgresql", connection, check)));
    }

    private static long runs(Statement statement, String sequence)
            throws SQLException
    {
        try (ResultSet resultSet = statement.executeQuery("SELECT last_value FROM " + sequence)) {
            resultSet.next();
            return resultSet.getLong(1);
        }
    }
}
