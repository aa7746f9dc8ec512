package io.meterstore.trino.hot;

import io.airlift.slice.Slice;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.Range;

import java.util.List;

import static io.trino.spi.type.VarcharType.VARCHAR;

/**
 * Which pushed domains a hot statement enforces exactly, so that Trino need not filter the rows again: only these
 * may be dropped from the remaining filter, and only for a read that is hot alone (the cold reader prunes row groups
 * but never filters rows).
 */
public final class HotSqlPredicate
{
    // a predicate on more values than this is left to Trino instead of becoming a huge array parameter
    public static final int MAX_PUSHED_VALUES = 10_000;

    private HotSqlPredicate() {}

    /** Equality on a varchar column becomes {@code = ANY(?)}: PostgreSQL's text equality is Trino's. */
    public static boolean isPushedAsEquality(MeterstoreColumnHandle column, Domain domain)
    {
        return column.type() == VARCHAR
                && !domain.isNullAllowed()
                && domain.getValues().isDiscreteSet()
                && domain.getValues().getDiscreteSet().size() <= MAX_PUSHED_VALUES;
    }

    /**
     * A single "from" range becomes the split's bounds {@code "from" >= lower AND "from" < upper}: exact for an
     * inclusive or absent lower bound (an exclusive one is widened to inclusive) and any upper bound.
     */
    public static boolean isEnforcedFromRange(MeterstoreColumnHandle column, Domain domain)
    {
        if (!column.is(ReadingsColumn.FROM) || domain.isNullAllowed() || domain.getValues().isNone() || domain.getValues().isAll()) {
            return false;
        }
        if (domain.getValues().getRanges().getRangeCount() != 1) {
            return false;
        }
        Range range = domain.getValues().getRanges().getSpan();
        return range.isLowUnbounded() || range.isLowInclusive();
    }

    public static boolean isEnforced(MeterstoreColumnHandle column, Domain domain)
    {
        return isPushedAsEquality(column, domain) || isEnforcedFromRange(column, domain);
    }

    /**
     * The values of an equality {@link #isPushedAsEquality pushed} as {@code = ANY(?)}. A value with a NUL character
     * is left out: PostgreSQL text cannot hold one, so no hot row equals it, and binding it would fail the statement.
     */
    public static List<String> texts(Domain domain)
    {
        return domain.getValues().getDiscreteSet().stream()
                .map(value -> ((Slice) value).toStringUtf8())
                .filter(text -> text.indexOf('\0') < 0)
                .toList();
    }
}
