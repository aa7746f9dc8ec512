package io.meterstore.trino.hot;

import io.trino.spi.TrinoException;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Set;
import java.util.regex.Pattern;

import static com.google.common.base.Preconditions.checkArgument;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_HOT_SNAPSHOT_ENDED;
import static java.util.Objects.requireNonNull;

/**
 * The PostgreSQL snapshot every hot read of one query sees ({@code pg_export_snapshot()} of the transaction
 * {@link QuerySnapshots} holds open on the coordinator for the query), carried by each hot split to whichever node
 * runs it. A statement that writes several partitions is then seen whole or not at all by the query, however its
 * splits are spread over transactions, nodes and time.
 *
 * @param id the snapshot's identifier as PostgreSQL exported it, e.g. {@code 00000003-0000001B-1}
 */
public record HotSnapshot(String id)
{
    // PostgreSQL's format ("%08X-%08X-%d"): SET TRANSACTION SNAPSHOT takes no bind parameter, so only such an id is spliced
    private static final Pattern ID = Pattern.compile("[0-9A-F]{1,8}-[0-9A-F]{1,8}-[0-9]{1,10}");
    // what importing a snapshot whose exporting transaction has ended fails with: gone (PostgreSQL 16+), invalid (older),
    // or its exporter's process gone
    private static final Set<String> ENDED_STATES = Set.of("42704", "22023", "55000");

    public HotSnapshot
    {
        requireNonNull(id, "id is null");
        checkArgument(ID.matcher(id).matches(), "Not a PostgreSQL snapshot identifier: '%s'", id);
    }

    /**
     * Begins the read-only transaction of a hot read on {@code connection}, seeing exactly this snapshot: the first
     * statement of the transaction, as PostgreSQL requires. Fails with {@code METERSTORE_HOT_SNAPSHOT_ENDED}, never
     * reads another snapshot, when the query's transaction on the coordinator has ended.
     */
    public void begin(Connection connection)
            throws SQLException
    {
        HotReadFailpoints.beforeTransaction();
        connection.setAutoCommit(false);
        connection.setReadOnly(true);
        try (Statement statement = connection.createStatement()) {
            // an imported snapshot needs REPEATABLE READ; the statement that follows would otherwise take its own
            statement.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ; SET TRANSACTION SNAPSHOT '" + id + "'");
        }
        catch (SQLException e) {
            if (e.getSQLState() != null && ENDED_STATES.contains(e.getSQLState())) {
                throw new TrinoException(METERSTORE_HOT_SNAPSHOT_ENDED, ("The PostgreSQL snapshot '%s' of this query has ended: the coordinator ends it when the query finishes, fails or is cancelled, "
                        + "or when its connection to PostgreSQL is lost, and this split started after that: run the query again (%s)").formatted(id, e.getMessage()), e);
            }
            throw e;
        }
    }
}
