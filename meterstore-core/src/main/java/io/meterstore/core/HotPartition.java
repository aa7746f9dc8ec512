package io.meterstore.core;

import java.time.Instant;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * A hot partition found by name. Its upper bound is the next partition's start (or open for the newest), not
 * start + step: over-inclusion costs a scan that finds nothing, under-inclusion would lose rows.
 */
public record HotPartition(String name, Instant start, Optional<Instant> upper, boolean attached)
{
    public HotPartition
    {
        requireNonNull(name, "name is null");
        requireNonNull(start, "start is null");
        requireNonNull(upper, "upper is null");
        upper.ifPresent(end -> checkArgument(end.isAfter(start), "upper bound %s is not after start %s", end, start));
    }

    /** Whether [start, upper) meets [lower, upperExclusive). */
    public boolean overlaps(Instant lower, Optional<Instant> upperExclusive)
    {
        boolean startsBeforeEnd = upperExclusive.map(start::isBefore).orElse(true);
        boolean endsAfterStart = upper.map(end -> end.isAfter(lower)).orElse(true);
        return startsBeforeEnd && endsAfterStart;
    }
}
