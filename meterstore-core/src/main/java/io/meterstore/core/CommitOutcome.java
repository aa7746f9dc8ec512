package io.meterstore.core;

import org.apache.iceberg.PendingUpdate;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.RESTException;
import org.apache.iceberg.jdbc.UncheckedSQLException;

/**
 * A commit through the JDBC catalogue whose pointer swap failed in the catalogue's database (the server went away, the
 * pool could not reconnect) may have swapped the pointer all the same: the UPDATE can have run before the connection
 * was lost. Iceberg reports that as a plain database error, after which a caller would delete the commit's data files,
 * perhaps files the table references by then; as CommitStateUnknownException the caller keeps them instead (orphans at
 * worst), and its next run reads the table to find out.
 */
public final class CommitOutcome
{
    private CommitOutcome() {}

    /**
     * Commits {@code update}; a failure of the catalogue's database during the swap says nothing about whether the swap
     * happened, so it surfaces as {@link CommitStateUnknownException}: the caller keeps its files, the next run finds out.
     */
    public static void commit(PendingUpdate<?> update)
    {
        try {
            update.commit();
        }
        catch (UncheckedSQLException e) {
            throw new CommitStateUnknownException(e);
        }
        catch (RESTException e) {
            // the REST catalogue's client reports a POST whose reply was lost (and any reply it cannot read) as this,
            // though the server may have committed it; replies it can read that say so are CommitStateUnknownException
            throw new CommitStateUnknownException(e);
        }
    }
}
