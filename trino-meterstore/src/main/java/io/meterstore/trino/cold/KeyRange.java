package io.meterstore.trino.cold;

import com.google.common.collect.ImmutableMap;
import io.airlift.slice.Slice;
import io.airlift.slice.Slices;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.meterstore.trino.base.MeterstoreTypes;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.Range;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.predicate.ValueSet;

import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static io.airlift.slice.SizeOf.estimatedSizeOf;
import static io.airlift.slice.SizeOf.instanceSize;
import static io.airlift.slice.Slices.utf8Slice;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * A part of the merge-key space that a resolution split owns: "from" in [fromLower, fromUpper) and malo_id in
 * [maloIdLower, maloIdUpper), each bound absent when open. A merge key lies in exactly one part of a plan, so every
 * version of it is read by the one split that resolves it; rows of a shared row group outside the part are dropped.
 */
public record KeyRange(Optional<Long> fromLowerEpochMicros, Optional<Long> fromUpperEpochMicros, Optional<String> maloIdLower, Optional<String> maloIdUpper)
{
    public static final KeyRange ALL = new KeyRange(Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty());
    private static final int INSTANCE_SIZE = instanceSize(KeyRange.class);

    public KeyRange
    {
        requireNonNull(fromLowerEpochMicros, "fromLowerEpochMicros is null");
        requireNonNull(fromUpperEpochMicros, "fromUpperEpochMicros is null");
        requireNonNull(maloIdLower, "maloIdLower is null");
        requireNonNull(maloIdUpper, "maloIdUpper is null");
        checkArgument(fromLowerEpochMicros.isEmpty() || fromUpperEpochMicros.isEmpty() || fromLowerEpochMicros.get() < fromUpperEpochMicros.get(), "empty \"from\" range");
        checkArgument(maloIdLower.isEmpty() || maloIdUpper.isEmpty() || maloIdLower.get().compareTo(maloIdUpper.get()) < 0, "empty malo_id range");
    }

    public boolean isAll()
    {
        return equals(ALL);
    }

    KeyRange withMaloIds(Optional<String> lower, Optional<String> upper)
    {
        return new KeyRange(fromLowerEpochMicros, fromUpperEpochMicros, lower, upper);
    }

    /** A test of rows against this range, its bounds prepared once. */
    public Matcher matcher()
    {
        return new Matcher(this);
    }

    /** Whether a row lies in the range; strings compare as code points, as Parquet and Iceberg compare them. */
    public static final class Matcher
    {
        private final long fromLower;
        private final long fromUpper;
        private final Optional<Slice> maloIdLower;
        private final Optional<Slice> maloIdUpper;

        private Matcher(KeyRange range)
        {
            this.fromLower = range.fromLowerEpochMicros().orElse(Long.MIN_VALUE);
            this.fromUpper = range.fromUpperEpochMicros().orElse(Long.MAX_VALUE);
            this.maloIdLower = range.maloIdLower().map(Slices::utf8Slice);
            this.maloIdUpper = range.maloIdUpper().map(Slices::utf8Slice);
        }

        public boolean contains(Slice maloId, long fromEpochMicros)
        {
            // an absent upper bound of "from" is open: MAX_VALUE itself is no instant a reading has
            return fromEpochMicros >= fromLower
                    && (fromEpochMicros < fromUpper || fromUpper == Long.MAX_VALUE)
                    && (maloIdLower.isEmpty() || maloId.compareTo(maloIdLower.get()) >= 0)
                    && (maloIdUpper.isEmpty() || maloId.compareTo(maloIdUpper.get()) < 0);
        }
    }

    /** The range as a predicate, so the reader skips the row groups whose statistics lie outside it. */
    public TupleDomain<MeterstoreColumnHandle> toTupleDomain()
    {
        ImmutableMap.Builder<MeterstoreColumnHandle, Domain> domains = ImmutableMap.builder();
        if (fromLowerEpochMicros.isPresent() || fromUpperEpochMicros.isPresent()) {
            MeterstoreColumnHandle from = MeterstoreTypes.columnHandle(ReadingsColumn.FROM);
            Range range = Range.all(from.type());
            if (fromLowerEpochMicros.isPresent()) {
                range = range.intersect(Range.greaterThanOrEqual(from.type(), MeterstoreTypes.toTimestamp(fromLowerEpochMicros.get()))).orElseThrow();
            }
            if (fromUpperEpochMicros.isPresent()) {
                range = range.intersect(Range.lessThan(from.type(), MeterstoreTypes.toTimestamp(fromUpperEpochMicros.get()))).orElseThrow();
            }
            domains.put(from, Domain.create(ValueSet.ofRanges(range), false));
        }
        if (maloIdLower.isPresent() || maloIdUpper.isPresent()) {
            Range range = Range.all(VARCHAR);
            if (maloIdLower.isPresent()) {
                range = range.intersect(Range.greaterThanOrEqual(VARCHAR, utf8Slice(maloIdLower.get()))).orElseThrow();
            }
            if (maloIdUpper.isPresent()) {
                range = range.intersect(Range.lessThan(VARCHAR, utf8Slice(maloIdUpper.get()))).orElseThrow();
            }
            domains.put(MeterstoreTypes.columnHandle(ReadingsColumn.MALO_ID), Domain.create(ValueSet.ofRanges(range), false));
        }
        return TupleDomain.withColumnDomains(domains.buildOrThrow());
    }

    long getRetainedSizeInBytes()
    {
        return INSTANCE_SIZE + maloIdLower.map(value -> estimatedSizeOf(value)).orElse(0L) + maloIdUpper.map(value -> estimatedSizeOf(value)).orElse(0L);
    }
}
