package io.meterstore.core;

import java.time.Instant;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * A hot partition found by name, with its extent [start, end) as the catalogue records it: the range bound of an
 * attached partition, or the bound a detached one keeps as a CHECK constraint from its detach. Never "start + step":
 * a partition may be wider than the step (an INSERT that created a day partition before the first archival recorded a
 * step of an hour, or a partition created by hand), and reading or archiving only its first step would lose the rest.
 * <p>
 * A partition detached before MeterStore kept bounds has none in the catalogue; its extent is then taken as the
 * older rule had it, up to the next partition's start and at most one step ({@link #boundRecorded()} is false).
 */
public record HotPartition(String name, Instant start, Instant end, boolean attached, boolean boundRecorded)
{
    public HotPartition
    {
        requireNonNull(name, "name is null");
        requireNonNull(start, "start is null");
        requireNonNull(end, "end is null");
        checkArgument(end.isAfter(start), "Partition '%s' ends at %s, not after its start %s", name, end, start);
    }

    /** An attached partition, or a detached one whose bound the catalogue keeps. */
    public HotPartition(String name, Instant start, Instant end, boolean attached)
    {
        this(name, start, end, attached, true);
    }

    /** Whether [start, end) meets [lower, upperExclusive). */
    public boolean overlaps(Instant lower, Optional<Instant> upperExclusive)
    {
        boolean startsBeforeEnd = upperExclusive.map(start::isBefore).orElse(true);
        return startsBeforeEnd && end.isAfter(lower);
    }

    /** The partition's extent [start, end). */
    public TierSplit.Range range()
    {
        return new TierSplit.Range(Optional.of(start), Optional.of(end));
    }

    /** Whether an interval starting at {@code from} belongs to this partition. */
    public boolean contains(Instant from)
    {
        return range().contains(from);
    }

    /** Whether every instant of the partition lies below {@code watermark}: its rows belong to Iceberg. */
    public boolean isBelow(TieringWatermark watermark)
    {
        return TierSplit.of(range(), watermark).hot().isEmpty();
    }
}
