package io.meterstore.trino.write;

import io.trino.spi.TrinoException;

import java.util.concurrent.locks.LockSupport;

import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_WRITE_FAILED;
import static java.util.Objects.requireNonNull;

/**
 * The one place where tests reach into an INSERT, so that no production class carries a test's hook. A crash test
 * fails an INSERT between its tiers: with {@code -Dmeterstore.failpoint=insert-between-tiers} the statement fails after
 * the Iceberg commit and before the PostgreSQL commit, leaving its cold rows committed and its hot rows rolled back;
 * {@code delete-between-tiers} does the same to a DELETE (its cold rows erased, its hot rows and audit row not).
 * Read on every statement, so a test can arm and disarm it in-process. With {@code -Dmeterstore.failpoint.block=true}
 * as well, the armed point does not fail the statement: it prints {@code FAILPOINT <name>} to stdout and blocks forever
 * with the statement's transaction open, so a crash test kills the engine's process (SIGKILL) at exactly that step, as
 * the archiver's crash tests do. A race test runs its own step between staging and the archival fence
 * ({@link #setBeforeFence}).
 */
public final class InsertFailpoints
{
    static final String PROPERTY = "meterstore.failpoint";
    static final String BLOCK_PROPERTY = "meterstore.failpoint.block";
    static final String BETWEEN_TIERS = "insert-between-tiers";
    static final String DELETE_BETWEEN_TIERS = "delete-between-tiers";

    private static volatile Runnable beforeFence = () -> {};

    private InsertFailpoints() {}

    /** Runs {@code step} in every INSERT after its rows are staged and before it takes the archival fence; {@code () -> {}} disarms it. */
    public static void setBeforeFence(Runnable step)
    {
        beforeFence = requireNonNull(step, "step is null");
    }

    static void beforeFence()
    {
        beforeFence.run();
    }

    static void betweenTiers()
    {
        if (BETWEEN_TIERS.equals(System.getProperty(PROPERTY))) {
            blockIfArmed(BETWEEN_TIERS);
            throw new TrinoException(METERSTORE_WRITE_FAILED, "Failpoint '%s' (-D%s): the INSERT stopped after its Iceberg commit, before its PostgreSQL commit; run it again".formatted(BETWEEN_TIERS, PROPERTY));
        }
    }

    static void deleteBetweenTiers()
    {
        if (DELETE_BETWEEN_TIERS.equals(System.getProperty(PROPERTY))) {
            blockIfArmed(DELETE_BETWEEN_TIERS);
            throw new TrinoException(METERSTORE_WRITE_FAILED, "Failpoint '%s' (-D%s): the DELETE stopped after its Iceberg commit, before its PostgreSQL commit; run it again".formatted(DELETE_BETWEEN_TIERS, PROPERTY));
        }
    }

    private static void blockIfArmed(String failpoint)
    {
        if (!Boolean.getBoolean(BLOCK_PROPERTY)) {
            return;
        }
        System.out.println("FAILPOINT " + failpoint);
        System.out.flush();
        // nothing after the failpoint may run, not even a rollback: the test kills the process here, interrupted or not
        while (true) {
            LockSupport.park();
        }
    }
}
