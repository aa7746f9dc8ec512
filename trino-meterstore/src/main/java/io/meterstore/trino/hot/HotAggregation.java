package io.meterstore.trino.hot;

import com.google.common.collect.ImmutableList;
import io.meterstore.trino.base.MeterstoreColumnHandle;

import java.util.List;

import static java.util.Objects.requireNonNull;

/**
 * An aggregation pushed into PostgreSQL for a read that is hot alone: one statement over the named partitions,
 * grouped by plain columns.
 */
public record HotAggregation(List<MeterstoreColumnHandle> groupingColumns, List<HotAggregateColumn> aggregates)
{
    public HotAggregation
    {
        groupingColumns = ImmutableList.copyOf(requireNonNull(groupingColumns, "groupingColumns is null"));
        aggregates = ImmutableList.copyOf(requireNonNull(aggregates, "aggregates is null"));
    }
}
