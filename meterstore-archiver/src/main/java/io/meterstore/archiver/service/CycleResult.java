package io.meterstore.archiver.service;

import io.meterstore.archiver.cycle.ArchiveOutcome;

import java.util.Locale;

/** What a cycle of the service came to: an {@link ArchiveOutcome.Kind}, or a failure. Names the metrics by kind. */
public enum CycleResult
{
    ARCHIVED,
    IDLE,
    LEASE_CONTENDED,
    DEFERRED,
    SUPERSEDED,
    FAILED,
    /**/;

    public static CycleResult of(ArchiveOutcome.Kind kind)
    {
        // by name, so that each outcome kind has its counter as soon as the cycle reports it; a kind without a
        // result here fails TestCycleResult rather than a cycle
        return valueOf(kind.name());
    }

    /** The name metrics, logs and documentation use: {@code lease_contended}. */
    @Override
    public String toString()
    {
        return name().toLowerCase(Locale.ROOT);
    }
}
