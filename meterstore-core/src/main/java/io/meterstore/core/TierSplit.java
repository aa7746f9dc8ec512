package io.meterstore.core;

import java.time.Instant;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * How a query's "from" range [lower, upper) divides at the watermark: the cold part is [lower, min(upper, W)), the hot
 * part [max(lower, W), upper). Every instant of the range lands in exactly one part, which is why a query over both
 * tiers is a UNION ALL and never a merge.
 */
public record TierSplit(Optional<Range> cold, Optional<Range> hot)
{
    public TierSplit
    {
        requireNonNull(cold, "cold is null");
        requireNonNull(hot, "hot is null");
    }

    /** A half-open range of "from" instants; an empty bound is unbounded. */
    public record Range(Optional<Instant> lower, Optional<Instant> upper)
    {
        public static final Range ALL = new Range(Optional.empty(), Optional.empty());

        public Range
        {
            requireNonNull(lower, "lower is null");
            requireNonNull(upper, "upper is null");
        }

        public boolean contains(Instant instant)
        {
            return lower.map(bound -> !instant.isBefore(bound)).orElse(true)
                    && upper.map(instant::isBefore).orElse(true);
        }

        public boolean isEmpty()
        {
            return lower.isPresent() && upper.isPresent() && !lower.get().isBefore(upper.get());
        }
    }

    public static TierSplit of(Range query, TieringWatermark watermark)
    {
        Instant boundary = watermark.instant();
        Range cold = new Range(query.lower(), Optional.of(query.upper().filter(upper -> upper.isBefore(boundary)).orElse(boundary)));
        Range hot = new Range(Optional.of(query.lower().filter(lower -> lower.isAfter(boundary)).orElse(boundary)), query.upper());
        return new TierSplit(cold.isEmpty() ? Optional.empty() : Optional.of(cold), hot.isEmpty() ? Optional.empty() : Optional.of(hot));
    }

    public boolean coldContains(Instant instant)
    {
        return cold.map(range -> range.contains(instant)).orElse(false);
    }

    public boolean hotContains(Instant instant)
    {
        return hot.map(range -> range.contains(instant)).orElse(false);
    }
}
