package io.meterstore.trino.write;

import com.google.common.collect.ImmutableMap;
import com.google.common.collect.ImmutableSortedSet;
import io.airlift.slice.Slice;
import io.meterstore.core.ErasureKey;
import io.meterstore.core.ErasureScope;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.TierSplit;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.meterstore.trino.base.MeterstoreTypes;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.SchemaTableName;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.Range;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.type.LongTimestampWithTimeZone;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.SortedSet;

import static com.google.common.base.Preconditions.checkArgument;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_DELETE_NOT_SUPPORTED;
import static java.util.Objects.requireNonNull;

/**
 * What one DELETE erases, exactly as its WHERE clause says: every version of the readings of {@code maloIds}, of
 * {@code obisCodes} (empty: every code), whose "from" lies in {@code from}. The only predicates MeterStore honours
 * exactly: malo_id = / IN (required), obis_code = / IN, and one range of "from"; anything else is refused, never
 * approximated (Trino applies no filter of its own to a DELETE the connector takes whole).
 */
public record ErasureRequest(SortedSet<String> maloIds, Optional<SortedSet<String>> obisCodes, TierSplit.Range from)
{
    public static final String SUPPORTED = "malo_id = '...' or malo_id IN (...), optionally AND obis_code = / IN (...) and one range of \"from\" (>=, >, <, <=, BETWEEN)";

    public ErasureRequest
    {
        maloIds = ImmutableSortedSet.copyOf(maloIds);
        obisCodes = requireNonNull(obisCodes, "obisCodes is null").map(ImmutableSortedSet::copyOf);
        requireNonNull(from, "from is null");
        checkArgument(!maloIds.isEmpty(), "maloIds is empty");
    }

    /** Whether {@code domain} of {@code column} is one MeterStore erases by exactly. */
    public static boolean isSupported(MeterstoreColumnHandle column, Domain domain)
    {
        if (domain.isNullAllowed() || domain.getValues().isNone() || domain.getValues().isAll()) {
            return false;
        }
        // an attribute column is never one: an erasure removes whole readings, by their key
        return column.readingsColumn().map(readings -> switch (readings) {
            case MALO_ID, OBIS_CODE -> domain.getValues().isDiscreteSet();
            case FROM -> domain.getValues().getRanges().getRangeCount() == 1;
            default -> false;
        }).orElse(false);
    }

    /** The domains of {@code constraint} an erasure enforces exactly; Trino must still apply the rest, which a DELETE refuses. */
    public static TupleDomain<MeterstoreColumnHandle> supported(TupleDomain<MeterstoreColumnHandle> constraint)
    {
        return constraint.filter(ErasureRequest::isSupported);
    }

    /** The erasure of a DELETE whose pushed predicate is {@code constraint}; refused unless MeterStore can honour it exactly. */
    public static ErasureRequest of(SchemaTableName table, TupleDomain<MeterstoreColumnHandle> constraint)
    {
        if (constraint.isNone()) {
            throw refused(table, "its WHERE clause matches no row");
        }
        Map<MeterstoreColumnHandle, Domain> domains = constraint.getDomains().orElse(ImmutableMap.of());
        Optional<SortedSet<String>> maloIds = Optional.empty();
        Optional<SortedSet<String>> obisCodes = Optional.empty();
        TierSplit.Range from = TierSplit.Range.ALL;
        for (Map.Entry<MeterstoreColumnHandle, Domain> entry : domains.entrySet()) {
            if (!isSupported(entry.getKey(), entry.getValue())) {
                throw refused(table, "its predicate on '%s' is not one of them".formatted(entry.getKey().name()));
            }
            ReadingsColumn column = entry.getKey().readingsColumn().orElseThrow();
            switch (column) {
                case MALO_ID -> maloIds = Optional.of(texts(entry.getValue()));
                case OBIS_CODE -> obisCodes = Optional.of(texts(entry.getValue()));
                case FROM -> from = exactRange(entry.getValue().getValues().getRanges().getSpan());
                default -> throw refused(table, "its predicate on '%s' is not one of them".formatted(column.columnName()));
            }
        }
        if (maloIds.isEmpty()) {
            throw refused(table, "it names no malo_id");
        }
        if (from.isEmpty()) {
            throw refused(table, "its range of \"from\" is empty");
        }
        return new ErasureRequest(maloIds.get(), obisCodes, from);
    }

    /** The scope the audit trail and the suppression list record: the malo_ids as their HMACs under {@code key}, never the ids. */
    public ErasureScope scope(ErasureKey key)
    {
        return new ErasureScope(Optional.of(maloIds.stream().map(key::scope).collect(ImmutableSortedSet.toImmutableSortedSet(String::compareTo))), obisCodes, from);
    }

    /**
     * A digest of this request under {@code key}: equal for the same request (the same malo_ids, OBIS codes and range),
     * and naming no malo_id. An erasure's Iceberg commit carries it, so that a rerun after a failure between the tiers
     * finds the commit its failed run made and audits it.
     */
    public String digest(ErasureKey key)
    {
        ErasureScope scope = scope(key);
        return key.scope("erasure|%s|%s|%s|%s".formatted(
                String.join(",", scope.maloScopes().orElseThrow()),
                obisCodes.map(codes -> String.join(",", codes)).orElse("*"),
                from.lower().map(Instant::toString).orElse("*"),
                from.upper().map(Instant::toString).orElse("*")));
    }

    /** Whether a reading at (malo_id, obis_code, "from") is erased by this request. */
    public boolean matches(String maloId, String obisCode, Instant instant)
    {
        return maloIds.contains(maloId) && obisCodes.map(codes -> codes.contains(obisCode)).orElse(true) && from.contains(instant);
    }

    static TrinoException refused(SchemaTableName table, String why)
    {
        return new TrinoException(METERSTORE_DELETE_NOT_SUPPORTED, "DELETE from '%s' is refused because %s: MeterStore erases exactly by %s"
                .formatted(table, why, SUPPORTED));
    }

    private static SortedSet<String> texts(Domain domain)
    {
        return domain.getValues().getDiscreteSet().stream()
                .map(value -> ((Slice) value).toStringUtf8())
                .collect(ImmutableSortedSet.toImmutableSortedSet(String::compareTo));
    }

    // exact for timestamp(6): an exclusive lower bound l is [l + 1us, ..), an inclusive upper bound h is [.., h + 1us)
    private static TierSplit.Range exactRange(Range range)
    {
        Optional<Instant> lower = range.getLowValue().map(value -> micros(value) + (range.isLowInclusive() ? 0 : 1)).map(MeterstoreTypes::fromEpochMicros);
        Optional<Instant> upper = range.getHighValue().map(value -> micros(value) + (range.isHighInclusive() ? 1 : 0)).map(MeterstoreTypes::fromEpochMicros);
        return new TierSplit.Range(lower, upper);
    }

    private static long micros(Object value)
    {
        return MeterstoreTypes.toEpochMicros((LongTimestampWithTimeZone) value);
    }
}
