package io.meterstore.trino.hot;

import io.meterstore.core.TiersConfig;
import io.meterstore.testing.TestingDatabase;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.trino.base.MeterstoreConfig;
import io.meterstore.trino.base.PostgresConnectionPool;
import io.trino.spi.TrinoException;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;

import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_HOT_SNAPSHOT_ENDED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A query's snapshot on the coordinator: what its reads see, that it ends with the query, and that a read begun after
 * its end fails instead of reading another snapshot. Prints what a snapshot costs a query.
 */
final class TestQuerySnapshots
{
    @Test
    void testReadsOfOneQuerySeeOneSnapshotUntilItEnds()
            throws Exception
    {
        TestingDatabase database = TestingPostgresServer.shared().createDatabase("query_snapshots");
        try (PostgresConnectionPool pool = pool(database);
                Connection writer = database.connect()) {
            execute(writer, "CREATE TABLE counted (x int)");
            execute(writer, "INSERT INTO counted VALUES (1)");
            QuerySnapshots snapshots = new QuerySnapshots(pool);
            QuerySnapshots.QuerySnapshot query = snapshots.snapshot("query_1");
            HotSnapshot snapshot = query.id();
            assertThat(snapshots.snapshot("query_1").id()).isEqualTo(snapshot);
            execute(writer, "INSERT INTO counted VALUES (2)");

            // the catalogue read and every split of the query: the row committed after the snapshot is not there
            assertThat(query.read(TestQuerySnapshots::count)).isEqualTo(1);
            try (Connection split = pool.connection()) {
                snapshot.begin(split);
                assertThat(count(split)).isEqualTo(1);
                split.rollback();
            }
            // another query has its own, newer snapshot
            assertThat(snapshots.snapshot("query_2").read(TestQuerySnapshots::count)).isEqualTo(2);
            assertThat(snapshots.held()).isEqualTo(2);

            // the query ends: its transaction with it, and a split that starts now fails, naming what to do
            snapshots.release("query_1");
            assertThat(snapshots.held()).isEqualTo(1);
            try (Connection split = pool.connection()) {
                assertThatThrownBy(() -> snapshot.begin(split))
                        .isInstanceOfSatisfying(TrinoException.class, e -> assertThat(e.getErrorCode()).isEqualTo(METERSTORE_HOT_SNAPSHOT_ENDED.toErrorCode()))
                        .hasMessageStartingWith("The PostgreSQL snapshot '%s' of this query has ended: the coordinator ends it when the query finishes, fails or is cancelled, or when its connection to PostgreSQL is lost, and this split started after that: run the query again"
                                .formatted(snapshot.id()));
                split.rollback();
            }
            // planning that comes after the query's cleanup opens no snapshot nobody would end
            assertThatThrownBy(() -> snapshots.snapshot("query_1").id())
                    .isInstanceOf(TrinoException.class)
                    .hasMessage("The PostgreSQL snapshot of query 'query_1' has ended: the query finished, failed or was cancelled; run it again");
            snapshots.close();
            assertThat(snapshots.held()).isZero();
            assertThat(openTransactions(writer)).isZero();
        }
    }

    @Test
    void testWhatASnapshotCostsAQuery()
            throws Exception
    {
        TestingDatabase database = TestingPostgresServer.shared().createDatabase("query_snapshot_cost");
        int runs = 200;
        try (PostgresConnectionPool pool = pool(database);
                Connection writer = database.connect()) {
            execute(writer, "CREATE TABLE counted (x int)");
            QuerySnapshots snapshots = new QuerySnapshots(pool);
            long[] export = new long[runs];
            long[] importing = new long[runs];
            long[] plain = new long[runs];
            for (int run = 0; run < runs; run++) {
                long start = System.nanoTime();
                HotSnapshot snapshot = snapshots.snapshot("query_" + run).id();
                export[run] = System.nanoTime() - start;
                try (Connection split = pool.connection()) {
                    start = System.nanoTime();
                    snapshot.begin(split);
                    count(split);
                    importing[run] = System.nanoTime() - start;
                    split.rollback();
                }
                try (Connection split = pool.connection()) {
                    start = System.nanoTime();
                    split.setAutoCommit(false);
                    split.setReadOnly(true);
                    count(split);
                    plain[run] = System.nanoTime() - start;
                    split.rollback();
                }
                start = System.nanoTime();
                snapshots.release("query_" + run);
                export[run] += System.nanoTime() - start;
            }
            // a warm pool: the first query opens the connection (about 14 ms), the later ones reuse it
            System.out.println("Query snapshot, median of %s: export and end on the coordinator %.3f ms a query; a split's first statement %.3f ms imported, %.3f ms without"
                    .formatted(runs, median(export), median(importing), median(plain)));
        }
    }

    private static PostgresConnectionPool pool(TestingDatabase database)
    {
        TiersConfig config = new TiersConfig()
                .setPostgresqlUrl(database.jdbcUrl())
                .setPostgresqlUser(database.user());
        return new PostgresConnectionPool(config, new MeterstoreConfig().setPostgresqlMaxConnections(2));
    }

    private static double median(long[] nanos)
    {
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2] / 1e6;
    }

    private static long count(Connection connection)
            throws SQLException
    {
        try (Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SELECT count(*) FROM counted")) {
            result.next();
            return result.getLong(1);
        }
    }

    private static long openTransactions(Connection connection)
            throws SQLException
    {
        try (Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE application_name = '%s' AND state = 'idle in transaction'"
                        .formatted(PostgresConnectionPool.SNAPSHOT_APPLICATION_NAME))) {
            result.next();
            return result.getLong(1);
        }
    }

    private static void execute(Connection connection, String sql)
            throws SQLException
    {
        try (Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }
}
