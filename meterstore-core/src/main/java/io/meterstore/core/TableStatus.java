package io.meterstore.core;

import java.time.Duration;
import java.time.Instant;

import static java.util.Objects.requireNonNull;

/**
 * Where a table stands, from one invariant check: how far W trails the clock, the hot partitions and how many can take
 * rows written now, and the two verdicts an operator alerts on. {@code bin/archiver status} and the connector's
 * {@code "<table>$watermark"} both read them here.
 *
 * @param step the partition width the table is archived with
 * @param settlementLag how long after its end a window is closed for archival
 */
public record TableStatus(InvariantReport invariant, Instant now, Duration step, Duration settlementLag)
{
    public TableStatus
    {
        requireNonNull(invariant, "invariant is null");
        requireNonNull(now, "now is null");
        requireNonNull(step, "step is null");
        requireNonNull(settlementLag, "settlementLag is null");
    }

    /** Now minus W; zero when W is ahead of this clock. */
    public Duration lag()
    {
        Duration lag = Duration.between(invariant.watermark().instant(), now);
        return lag.isNegative() ? Duration.ZERO : lag;
    }

    /** The lag archival is expected to keep: the settlement lag plus two steps (one closing, one being archived). */
    public Duration toleratedLag()
    {
        return settlementLag.plus(step.multipliedBy(2));
    }

    /** W trails by more than {@link #toleratedLag()}: the archiver is not keeping up. */
    public boolean behind()
    {
        return lag().compareTo(toleratedLag()) > 0;
    }

    /** Hot partitions, attached and detached. */
    public int hotPartitions()
    {
        return invariant.partitions().size();
    }

    /** Partitions at or above W that reach past now: they take rows written now or later. */
    public long partitionsAhead()
    {
        return invariant.partitions().stream()
                .filter(partition -> !partition.isBelow(invariant.watermark()) && partition.end().isAfter(now))
                .count();
    }

    /**
     * Healthy as the Rust MeterStore defines it: no invariant violation, and partitions ahead of now exist (or no hot
     * partition at all, a table not yet written).
     */
    public boolean healthy()
    {
        return invariant.holds() && (hotPartitions() == 0 || partitionsAhead() > 0);
    }
}
