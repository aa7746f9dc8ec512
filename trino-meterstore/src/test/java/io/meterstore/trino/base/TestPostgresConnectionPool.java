package io.meterstore.trino.base;

import io.meterstore.core.TiersConfig;
import io.meterstore.testing.TestingDatabase;
import io.meterstore.testing.TestingPostgresServer;
import io.trino.spi.TrinoException;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A borrower of the pool waits as long as connections keep coming back, however long its turn takes, and fails with
 * the setting to raise once none came back for the stall limit (2 s here, 30 s in a server).
 */
final class TestPostgresConnectionPool
{
    private static final long STALLED_NANOS = SECONDS.toNanos(2);
    private static final int BORROWERS = 8;
    private static final long HOLD_MILLIS = 400;

    @Test
    void testBorrowersQueueBeyondTheStallLimitWhileConnectionsComeBack()
            throws Exception
    {
        // eight borrowers of one connection, each keeping it 0.4 s: the last waits about 2.8 s, beyond the stall limit
        try (PostgresConnectionPool pool = pool("pool_queue", 1);
                ExecutorService borrowers = Executors.newFixedThreadPool(BORROWERS)) {
            List<CompletableFuture<Void>> borrowed = new ArrayList<>();
            for (int i = 0; i < BORROWERS; i++) {
                borrowed.add(CompletableFuture.runAsync(() -> {
                    try (Connection _ = pool.connection()) {
                        MILLISECONDS.sleep(HOLD_MILLIS);
                    }
                    catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                }, borrowers));
            }
            // every borrower was served: none failed, though the last one's turn came after the stall limit
            CompletableFuture.allOf(borrowed.toArray(CompletableFuture[]::new)).get();
        }
    }

    @Test
    void testBorrowerFailsWhenNoConnectionComesBack()
            throws Exception
    {
        try (PostgresConnectionPool pool = pool("pool_stalled", 1)) {
            try (Connection _ = pool.connection()) {
                assertThatThrownBy(pool::connection)
                        .isInstanceOf(TrinoException.class)
                        .hasMessage("All 1 PostgreSQL connections of this node stayed busy, none given back for 2s: raise meterstore.postgresql.max-connections, or run fewer queries at once");
            }
            // given back: the next borrower has it at once
            try (Connection connection = pool.connection()) {
                assertThat(connection.isValid(1)).isTrue();
            }
        }
    }

    private static PostgresConnectionPool pool(String name, int maxConnections)
    {
        TestingDatabase database = TestingPostgresServer.shared().createDatabase(name);
        TiersConfig config = new TiersConfig()
                .setPostgresqlUrl(database.jdbcUrl())
                .setPostgresqlUser(database.user());
        return new PostgresConnectionPool(config, new MeterstoreConfig().setPostgresqlMaxConnections(maxConnections), STALLED_NANOS);
    }
}
