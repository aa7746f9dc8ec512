package io.meterstore.trino.hot;

import com.google.inject.Inject;
import io.meterstore.trino.base.PostgresConnectionPool;
import io.trino.spi.TrinoException;
import jakarta.annotation.PreDestroy;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_HOT_READ_FAILED;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_HOT_SNAPSHOT_ENDED;
import static java.util.Objects.requireNonNull;
import static java.util.concurrent.TimeUnit.MINUTES;

/**
 * One PostgreSQL snapshot per query, on the coordinator. The first planning of a query's hot reads opens a
 * REPEATABLE READ transaction, exports its snapshot and reads the partition catalogue in it; every hot split of the
 * query (on any node, planned by any of its table scans) carries the snapshot and imports it, so the query sees what
 * each statement wrote to the hot tier whole or not at all. The transaction stays open until Trino cleans the query up ({@code cleanupQuery}, after
 * it finished, failed or was cancelled): a split imports the snapshot when it starts, and PostgreSQL lets it do so
 * only while the exporting transaction is open. Its connection comes from a pool of its own
 * ({@link PostgresConnectionPool#snapshotConnection}), so snapshots held by long queries never starve splits.
 */
public final class QuerySnapshots
{
    private static final long RELEASED_KEPT_NANOS = MINUTES.toNanos(10);

    private final PostgresConnectionPool postgres;
    private final Map<String, QuerySnapshot> snapshots = new ConcurrentHashMap<>();
    // queries already cleaned up, oldest first: a planning thread still running then must not open a snapshot nobody ends
    private final Set<String> released = ConcurrentHashMap.newKeySet();
    private final Queue<Released> releasedOrder = new ConcurrentLinkedQueue<>();

    @Inject
    public QuerySnapshots(PostgresConnectionPool postgres)
    {
        this.postgres = requireNonNull(postgres, "postgres is null");
    }

    /** The query's snapshot: exported by its first call, the same for every later call of the query. */
    public QuerySnapshot snapshot(String queryId)
    {
        QuerySnapshot snapshot = snapshots.computeIfAbsent(queryId, QuerySnapshot::new);
        if (released.contains(queryId)) {
            release(queryId);
        }
        return snapshot;
    }

    /** Ends the query's snapshot, if it has one; nothing for any other query. */
    public void release(String queryId)
    {
        long now = System.nanoTime();
        if (released.add(queryId)) {
            releasedOrder.add(new Released(queryId, now));
        }
        for (Released oldest = releasedOrder.peek(); oldest != null && now - oldest.atNanos() > RELEASED_KEPT_NANOS; oldest = releasedOrder.peek()) {
            if (releasedOrder.remove(oldest)) {
                released.remove(oldest.queryId());
            }
        }
        QuerySnapshot snapshot = snapshots.remove(queryId);
        if (snapshot != null) {
            snapshot.close();
        }
    }

    /** How many queries hold a snapshot on this node. */
    int held()
    {
        return snapshots.size();
    }

    @PreDestroy
    public void close()
    {
        snapshots.keySet().forEach(this::release);
    }

    private record Released(String queryId, long atNanos) {}

    /** The exporting transaction of one query; opened by its first read, closed by {@link #release}. */
    public final class QuerySnapshot
    {
        private final String queryId;
        private Optional<Connection> connection = Optional.empty();
        private Optional<HotSnapshot> snapshot = Optional.empty();
        private boolean closed;

        private QuerySnapshot(String queryId)
        {
            this.queryId = requireNonNull(queryId, "queryId is null");
        }

        /** The exported snapshot, for the splits. */
        public synchronized HotSnapshot id()
        {
            open();
            return snapshot.orElseThrow();
        }

        /** Runs {@code read} in the exporting transaction: it sees exactly what the query's splits see. */
        public synchronized <T> T read(PostgresConnectionPool.SqlRead<T> read)
                throws SQLException
        {
            open();
            return read.read(connection.orElseThrow());
        }

        private void open()
        {
            if (closed) {
                throw new TrinoException(METERSTORE_HOT_SNAPSHOT_ENDED, "The PostgreSQL snapshot of query '%s' has ended: the query finished, failed or was cancelled; run it again".formatted(queryId));
            }
            if (connection.isPresent()) {
                return;
            }
            PostgresConnectionPool.Held<HotSnapshot> held;
            try {
                held = postgres.holdSnapshot(opened -> {
                    opened.setAutoCommit(false);
                    opened.setReadOnly(true);
                    try (Statement statement = opened.createStatement()) {
                        // the catalogue read runs in this transaction too, so it must see the exported snapshot, not a newer one
                        statement.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
                        try (ResultSet exported = statement.executeQuery("SELECT pg_export_snapshot()")) {
                            exported.next();
                            return new HotSnapshot(exported.getString(1));
                        }
                    }
                });
            }
            catch (SQLException e) {
                throw new TrinoException(METERSTORE_HOT_READ_FAILED, "Cannot open the PostgreSQL snapshot of query '%s': %s".formatted(queryId, e.getMessage()), e);
            }
            connection = Optional.of(held.connection());
            snapshot = Optional.of(held.value());
        }

        private synchronized void close()
        {
            closed = true;
            if (connection.isEmpty()) {
                return;
            }
            Connection held = connection.get();
            connection = Optional.empty();
            try {
                held.rollback();
                held.close();
            }
            catch (SQLException e) {
                // a connection PostgreSQL already closed, or one that cannot be reset: never handed out again
                postgres.discardSnapshotConnection(held);
            }
        }
    }
}
