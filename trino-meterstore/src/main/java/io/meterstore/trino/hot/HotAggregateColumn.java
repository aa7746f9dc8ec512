package io.meterstore.trino.hot;

import io.meterstore.core.Sql;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.connector.ColumnMetadata;
import io.trino.spi.type.Type;

import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * One aggregate computed by PostgreSQL for a pushed-down aggregation, e.g. {@code sum("value")}.
 *
 * @param name a synthetic column name, unique within the aggregation
 * @param argument the aggregated column; empty for {@code count(*)}
 * @param type the aggregate's Trino type, which the PostgreSQL result is decoded into exactly
 */
public record HotAggregateColumn(String name, Function function, Optional<MeterstoreColumnHandle> argument, Type type)
        implements ColumnHandle
{
    public enum Function
    {
        COUNT_ALL, COUNT, SUM, MIN, MAX
    }

    public HotAggregateColumn
    {
        requireNonNull(name, "name is null");
        requireNonNull(function, "function is null");
        requireNonNull(argument, "argument is null");
        requireNonNull(type, "type is null");
        checkArgument(argument.isEmpty() == (function == Function.COUNT_ALL), "only count(*) has no argument");
    }

    public String sql()
    {
        return switch (function) {
            case COUNT_ALL -> "count(*)";
            case COUNT -> "count(%s)".formatted(quotedArgument());
            case SUM -> "sum(%s)".formatted(quotedArgument());
            case MIN -> "min(%s)".formatted(quotedArgument());
            case MAX -> "max(%s)".formatted(quotedArgument());
        };
    }

    private String quotedArgument()
    {
        return Sql.quoteIdentifier(argument.orElseThrow().name());
    }

    public ColumnMetadata toColumnMetadata()
    {
        return ColumnMetadata.builder().setName(name).setType(type).build();
    }
}
