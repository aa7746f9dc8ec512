package io.meterstore.trino.cold;

import io.airlift.slice.Slice;
import io.meterstore.core.TableColumn;
import io.meterstore.core.Tier;
import io.meterstore.core.TieringWatermark;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.Range;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.predicate.ValueSet;
import io.trino.spi.type.Int128;
import io.trino.spi.type.LongTimestampWithTimeZone;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.meterstore.trino.base.MeterstoreTypes.QUANTITY;
import static io.meterstore.trino.base.MeterstoreTypes.VERSION;
import static io.meterstore.trino.base.MeterstoreTypes.toEpochMicros;
import static java.lang.Math.toIntExact;
import static org.apache.iceberg.expressions.Expressions.alwaysFalse;
import static org.apache.iceberg.expressions.Expressions.alwaysTrue;
import static org.apache.iceberg.expressions.Expressions.and;
import static org.apache.iceberg.expressions.Expressions.greaterThan;
import static org.apache.iceberg.expressions.Expressions.greaterThanOrEqual;
import static org.apache.iceberg.expressions.Expressions.isNull;
import static org.apache.iceberg.expressions.Expressions.lessThan;
import static org.apache.iceberg.expressions.Expressions.lessThanOrEqual;
import static org.apache.iceberg.expressions.Expressions.notNull;
import static org.apache.iceberg.expressions.Expressions.or;

/**
 * Translates the connector's predicates into Iceberg expressions for file pruning. A domain that cannot be
 * expressed is left out, so the expression only ever selects a superset of the files the predicate needs:
 * Trino still filters every row.
 */
public final class IcebergExpressions
{
    // as Trino's Iceberg connector: an IN list longer than this becomes its min/max range before conversion
    static final int DOMAIN_COMPACTION_THRESHOLD = 1000;

    private IcebergExpressions() {}

    /** {@code "from" < W}: the cold tier holds exactly the rows below the watermark. */
    public static Expression belowWatermark(TieringWatermark watermark)
    {
        return Tier.COLD.iceberg(watermark.instant());
    }

    public static Expression toIcebergExpression(TupleDomain<MeterstoreColumnHandle> constraint)
    {
        if (constraint.isNone()) {
            return alwaysFalse();
        }
        Map<MeterstoreColumnHandle, Domain> domains = constraint.simplify(DOMAIN_COMPACTION_THRESHOLD).getDomains().orElseThrow();
        Expression expression = alwaysTrue();
        for (Map.Entry<MeterstoreColumnHandle, Domain> entry : domains.entrySet()) {
            expression = and(expression, toIcebergExpression(entry.getKey().column(), entry.getValue()));
        }
        return expression;
    }

    private static Expression toIcebergExpression(TableColumn column, Domain domain)
    {
        String name = column.name();
        if (domain.isNone()) {
            return alwaysFalse();
        }
        if (domain.isAll()) {
            return alwaysTrue();
        }
        if (domain.isOnlyNull()) {
            return isNull(name);
        }
        ValueSet values = domain.getValues();
        if (values.isAll()) {
            return notNull(name);
        }
        List<Object> singleValues = new ArrayList<>();
        Expression ranges = alwaysFalse();
        for (Range range : values.getRanges().getOrderedRanges()) {
            if (range.isSingleValue()) {
                singleValues.add(icebergValue(column, range.getSingleValue()));
            }
            else {
                ranges = or(ranges, toIcebergExpression(column, range));
            }
        }
        Expression expression = switch (singleValues.size()) {
            case 0 -> ranges;
            case 1 -> or(ranges, Expressions.equal(name, singleValues.getFirst()));
            default -> or(ranges, Expressions.in(name, singleValues));
        };
        return domain.isNullAllowed() ? or(expression, isNull(name)) : expression;
    }

    private static Expression toIcebergExpression(TableColumn column, Range range)
    {
        String name = column.name();
        Expression expression = alwaysTrue();
        if (!range.isLowUnbounded()) {
            Object low = icebergValue(column, range.getLowBoundedValue());
            expression = and(expression, range.isLowInclusive() ? greaterThanOrEqual(name, low) : greaterThan(name, low));
        }
        if (!range.isHighUnbounded()) {
            Object high = icebergValue(column, range.getHighBoundedValue());
            expression = and(expression, range.isHighInclusive() ? lessThanOrEqual(name, high) : lessThan(name, high));
        }
        return expression;
    }

    /** A Trino value of the column's type as the Java value Iceberg binds to the column's Iceberg type. */
    private static Object icebergValue(TableColumn column, Object value)
    {
        return switch (column.kind()) {
            case STRING -> ((Slice) value).toStringUtf8();
            case TIMESTAMP_TZ -> toEpochMicros((LongTimestampWithTimeZone) value);
            case QUANTITY -> BigDecimal.valueOf((long) value, QUANTITY.getScale());
            case VERSION -> new BigDecimal(((Int128) value).toBigInteger(), VERSION.getScale());
            case DATE -> toIntExact((long) value);
        };
    }
}
