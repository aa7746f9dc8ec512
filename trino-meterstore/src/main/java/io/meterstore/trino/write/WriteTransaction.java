package io.meterstore.trino.write;

import io.meterstore.core.HotTier;
import io.meterstore.core.MeterstoreException;
import io.meterstore.trino.base.MeterstoreErrorCode;
import io.meterstore.trino.base.MeterstoreTables;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.SchemaTableName;

import java.sql.Connection;
import java.sql.SQLException;

import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_WRITE_FAILED;

/**
 * The PostgreSQL transaction a writing statement (INSERT, DELETE) ends in. Its fence, hot rows and audit rows commit
 * together and last, after the statement's cold commit, so a failure anywhere rolls all of them back and the statement
 * fails with {@code METERSTORE_WRITE_FAILED} saying that nothing of it reached PostgreSQL and that running it again
 * completes it (the cold commit, if it landed, is found again by the rerun).
 */
final class WriteTransaction
{
    /** What a statement does on its connection before its transaction. */
    interface Prepare
    {
        void run(Connection connection)
                throws SQLException;
    }

    /** What a statement does in its transaction. */
    interface Work<T>
    {
        T run(Connection connection)
                throws SQLException;
    }

    private WriteTransaction() {}

    /**
     * Runs {@code prepare} on a new connection in autocommit mode, then {@code work} in one transaction that commits
     * when it returns. {@code statement} names the statement in errors: "INSERT into", "DELETE from".
     */
    static <T> T run(MeterstoreTables tables, String statement, SchemaTableName table, Prepare prepare, Work<T> work)
    {
        try (Connection connection = tables.connectPostgres()) {
            prepare.run(connection);
            connection.setAutoCommit(false);
            try {
                T result = work.run(connection);
                connection.commit();
                return result;
            }
            catch (SQLException | RuntimeException e) {
                rollbackQuietly(connection, e);
                throw e;
            }
        }
        catch (HotTier.LockTimeoutException e) {
            throw new TrinoException(METERSTORE_WRITE_FAILED, "%s '%s' could not take a lock in time: %s; nothing of this statement was committed to PostgreSQL, run it again"
                    .formatted(statement, table, e.getMessage()), e);
        }
        catch (SQLException e) {
            throw new TrinoException(METERSTORE_WRITE_FAILED, "%s '%s' failed in PostgreSQL: %s; nothing of this statement was committed to PostgreSQL, run it again"
                    .formatted(statement, table, e.getMessage()), e);
        }
        catch (MeterstoreException e) {
            throw MeterstoreErrorCode.toTrinoException(e);
        }
    }

    private static void rollbackQuietly(Connection connection, Throwable failure)
    {
        try {
            connection.rollback();
        }
        catch (SQLException e) {
            failure.addSuppressed(e);
        }
    }
}
