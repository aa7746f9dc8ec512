package io.meterstore.benchmark;

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

    private static long runs(Statement statement, String sequence)
            throws SQLException
    {
        try (ResultSet resultSet = statement.executeQuery("SELECT last_value FROM " + sequence)) {
            resultSet.next();
            return resultSet.getLong(1);
        }
    }
}
