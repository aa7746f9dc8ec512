package io.meterstore.trino.write;

import io.trino.spi.TrinoException;

import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_WRITE_FAILED;

/**
 * A crash test's way to fail an INSERT between its tiers: with {@code -Dmeterstore.failpoint=insert-between-tiers}
 * the statement fails after the Iceberg commit and before the PostgreSQL commit, leaving its cold rows committed and
 * its hot rows rolled back. Read on every statement, so a test can arm and disarm it in-process.
 */
final class InsertFailpoints
{
    static final String PROPERTY = "meterstore.failpoint";
    static final String BETWEEN_TIERS = "insert-between-tiers";

    private InsertFailpoints() {}

    static void betweenTiers()
    {
        if (BETWEEN_TIERS.equals(System.getProperty(PROPERTY))) {
            throw new TrinoException(METERSTORE_WRITE_FAILED, "Failpoint '%s' (-D%s): the INSERT stopped after its Iceberg commit, before its PostgreSQL commit; run it again".formatted(BETWEEN_TIERS, PROPERTY));
        }
    }
}
