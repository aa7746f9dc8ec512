package io.meterstore.trino.hot;

import java.util.List;
import java.util.function.Consumer;

import static java.util.Objects.requireNonNull;

/**
 * The one place where tests reach into a hot read, so that no production class carries a test's hook: a race test
 * runs its own step before a hot read begins its transaction ({@link #setBeforeTransaction}), e.g. to commit a write
 * between two splits of one query, and a test of the connection pool paces a split's pages ({@link #setAfterPage}).
 */
public final class HotReadFailpoints
{
    private static volatile Runnable beforeTransaction = () -> {};
    private static volatile Consumer<List<String>> afterPage = _ -> {};

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

    /** Runs {@code step} with the split's partitions' names after each page a hot split reads; {@code _ -> {}} disarms it. */
    public static void setAfterPage(Consumer<List<String>> step)
    {
        afterPage = requireNonNull(step, "step is null");
    }

    static void afterPage(List<String> partitions)
    {
        afterPage.accept(partitions);
    }
}
