package io.meterstore.trino.hot;

import com.google.common.collect.ImmutableList;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.meterstore.trino.base.MeterstoreTypes;
import io.trino.spi.connector.AggregateFunction;
import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.expression.Variable;
import io.trino.spi.type.DecimalType;
import io.trino.spi.type.Type;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.DateType.DATE;

/**
 * Translates Trino aggregate functions into PostgreSQL aggregates with the same exact result. Deliberately small:
 * count(*), count(x), sum of a decimal, min and max of decimals, timestamps and dates. Not min/max of text, whose
 * order in PostgreSQL follows the database collation rather than Trino's code-point order.
 */
public final class HotAggregations
{
    private HotAggregations() {}

    /** The aggregates in order, or empty when any of them cannot be pushed. */
    public static Optional<List<HotAggregateColumn>> toAggregateColumns(List<AggregateFunction> aggregates, Map<String, ColumnHandle> assignments)
    {
        ImmutableList.Builder<HotAggregateColumn> columns = ImmutableList.builder();
        for (int index = 0; index < aggregates.size(); index++) {
            Optional<HotAggregateColumn> column = toAggregateColumn("_meterstore_aggregate_" + index, aggregates.get(index), assignments);
            if (column.isEmpty()) {
                return Optional.empty();
            }
            columns.add(column.get());
        }
        return Optional.of(columns.build());
    }

    private static Optional<HotAggregateColumn> toAggregateColumn(String name, AggregateFunction aggregate, Map<String, ColumnHandle> assignments)
    {
        if (aggregate.isDistinct() || aggregate.getFilter().isPresent() || !aggregate.getSortItems().isEmpty()) {
            return Optional.empty();
        }
        Type outputType = aggregate.getOutputType();
        if (aggregate.getArguments().isEmpty()) {
            return aggregate.getFunctionName().equals("count") && outputType == BIGINT
                    ? Optional.of(new HotAggregateColumn(name, HotAggregateColumn.Function.COUNT_ALL, Optional.empty(), BIGINT))
                    : Optional.empty();
        }
        if (aggregate.getArguments().size() != 1 || !(aggregate.getArguments().getFirst() instanceof Variable variable)
                || !(assignments.get(variable.getName()) instanceof MeterstoreColumnHandle column)) {
            return Optional.empty();
        }
        Type type = column.type();
        return switch (aggregate.getFunctionName()) {
            case "count" -> outputType == BIGINT
                    ? Optional.of(new HotAggregateColumn(name, HotAggregateColumn.Function.COUNT, Optional.of(column), BIGINT))
                    : Optional.empty();
            // Trino sums decimal(p, s) as decimal(38, s) and fails on overflow; PostgreSQL's numeric sum is exact, and the decoder checks the precision
            case "sum" -> type instanceof DecimalType && outputType instanceof DecimalType decimalOutput && decimalOutput.getScale() == ((DecimalType) type).getScale()
                    ? Optional.of(new HotAggregateColumn(name, HotAggregateColumn.Function.SUM, Optional.of(column), outputType))
                    : Optional.empty();
            case "min", "max" -> isOrderedAlike(type) && outputType.equals(type)
                    ? Optional.of(new HotAggregateColumn(name, aggregate.getFunctionName().equals("min") ? HotAggregateColumn.Function.MIN : HotAggregateColumn.Function.MAX, Optional.of(column), type))
                    : Optional.empty();
            default -> Optional.empty();
        };
    }

    /** Types that PostgreSQL orders exactly as Trino does. */
    private static boolean isOrderedAlike(Type type)
    {
        return type instanceof DecimalType || type == DATE || type.equals(MeterstoreTypes.TIMESTAMP_TZ_MICROS);
    }
}
