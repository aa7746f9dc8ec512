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
            // each bound divides "from" as the watermark does: at or above the lower, below the upper
            return lower.map(bound -> Tier.HOT.holds(instant, bound)).orElse(true)
                    && upper.map(bound -> Tier.COLD.holds(instant, bound)).orElse(true);
        }

        /** The instants in both ranges; may be empty. */
        public Range intersect(Range other)
        {
            Optional<Instant> intersectedLower = lower.isEmpty() ? other.lower : Optional.of(other.lower.filter(bound -> bound.isAfter(lower.get())).orElse(lower.get()));
            Optional<Instant> intersectedUpper = upper.isEmpty() ? other.upper : Optional.of(other.upper.filter(bound -> bound.isBefore(upper.get())).orElse(upper.get()));
            return new Range(intersectedLower, intersectedUpper);
        }

        /** Whether every instant of {@code other} lies in this range. */
        public boolean encloses(Range other)
        {
            return intersect(other).equals(other);
        }

        public boolean isEmpty()
        {
            return lower.isPresent() && upper.isPresent() && !lower.get().isBefore(upper.get());
        }
    }

    public static TierSplit of(Range query, TieringWatermark watermark)
    {
        Range cold = query.intersect(Tier.COLD.range(watermark.instant()));
        Range hot = query.intersect(Tier.HOT.range(watermark.instant()));
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
