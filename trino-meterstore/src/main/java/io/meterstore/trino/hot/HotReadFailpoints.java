package io.meterstore.trino.hot;

import static java.util.Objects.requireNonNull;

/**
 * The one place where tests reach into a hot read, so that no production class carries a test's hook: a race test
 * runs its own step before a hot read begins its transaction ({@link #setBeforeTransaction}), e.g. to commit a write
 * between two splits of one query.
 */
public final class HotReadFailpoints
{
    private static volatile Runnable beforeTransaction = () -> {};

    private HotReadFailpoints() {}

    /** Runs {@code step} before every hot read (a split, a pushed aggregation, a completeness count) begins its transaction; {@code () -> {}} disarms it. */
    public static void setBeforeTransaction(Runnable step)
    {
        beforeTransaction = requireNonNull(step, "step is null");
    }

    static void beforeTransaction()
    {
        beforeTransaction.run();
    }
}
