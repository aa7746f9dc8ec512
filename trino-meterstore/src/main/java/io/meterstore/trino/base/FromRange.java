package io.meterstore.trino.base;

import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.TierSplit;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.Range;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.type.LongTimestampWithTimeZone;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/** The "from" range of a pushed predicate, widened to a half-open range: over-inclusion is safe, under-inclusion would lose rows. */
public final class FromRange
{
    private FromRange() {}

    public static TierSplit.Range of(TupleDomain<MeterstoreColumnHandle> constraint)
    {
        if (constraint.isNone()) {
            // nothing can match: an empty range
            return new TierSplit.Range(Optional.of(Instant.EPOCH), Optional.of(Instant.EPOCH));
        }
        return constraint.getDomains().orElseThrow().entrySet().stream()
                .filter(entry -> entry.getKey().is(ReadingsColumn.FROM))
                .map(Map.Entry::getValue)
                .findFirst()
                .map(FromRange::of)
                .orElse(TierSplit.Range.ALL);
    }

    /** The span of a domain of "from" as a half-open range. */
    public static TierSplit.Range of(Domain domain)
    {
        if (domain.getValues().isAll()) {
            return TierSplit.Range.ALL;
        }
        if (domain.getValues().isNone()) {
            return new TierSplit.Range(Optional.of(Instant.EPOCH), Optional.of(Instant.EPOCH));
        }
        Range span = domain.getValues().getRanges().getSpan();
        Optional<Instant> lower = span.getLowValue().map(value -> MeterstoreTypes.fromEpochMicros(MeterstoreTypes.toEpochMicros((LongTimestampWithTimeZone) value)));
        // an inclusive upper bound becomes exclusive one microsecond later
        Optional<Instant> upper = span.getHighValue().map(value -> MeterstoreTypes.fromEpochMicros(MeterstoreTypes.toEpochMicros((LongTimestampWithTimeZone) value) + (span.isHighInclusive() ? 1 : 0)));
        return new TierSplit.Range(lower, upper);
    }

    /**
     * The share of [start, end) that lies in a range, for estimates that take rows as spread evenly over time.
     */
    public static double share(Instant start, Instant end, TierSplit.Range range)
    {
        Instant lower = range.lower().filter(start::isBefore).orElse(start);
        Instant upper = range.upper().filter(end::isAfter).orElse(end);
        if (!lower.isBefore(upper)) {
            return 0;
        }
        return (double) Duration.between(lower, upper).toMillis() / Duration.between(start, end).toMillis();
    }
}
