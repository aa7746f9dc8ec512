package io.meterstore.trino.consumption;

import com.google.common.collect.ImmutableList;
import io.meterstore.trino.system.ProcessedTableFunctionHandle;
import io.trino.spi.function.table.TableFunctionProcessorProvider;
import io.trino.spi.type.Type;

import java.util.List;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * What analysing a {@code register_consumption} call produced, for the workers' processors. The processor receives the
 * required columns in this order: the partition columns (which name the register in a refusal), "from", value, then
 * sparte unless it is a partition column, at {@code sparteChannel} either way.
 */
public record RegisterConsumptionHandle(
        ConsumptionPeriod period,
        List<String> partitionColumns,
        List<Type> partitionTypes,
        Type fromType,
        Type valueType,
        Type consumptionType,
        int sparteChannel)
        implements ProcessedTableFunctionHandle
{
    public RegisterConsumptionHandle
    {
        requireNonNull(period, "period is null");
        partitionColumns = ImmutableList.copyOf(requireNonNull(partitionColumns, "partitionColumns is null"));
        partitionTypes = ImmutableList.copyOf(requireNonNull(partitionTypes, "partitionTypes is null"));
        requireNonNull(fromType, "fromType is null");
        requireNonNull(valueType, "valueType is null");
        requireNonNull(consumptionType, "consumptionType is null");
        checkArgument(!partitionColumns.isEmpty() && partitionColumns.size() == partitionTypes.size(), "a type for each of one or more partition columns expected");
        checkArgument(sparteChannel >= 0 && sparteChannel <= partitionColumns.size() + 2, "sparteChannel out of range");
    }

    @Override
    public TableFunctionProcessorProvider processorProvider()
    {
        return RegisterConsumptionFunction.processorProvider();
    }

    public int fromChannel()
    {
        return partitionColumns.size();
    }

    public int valueChannel()
    {
        return partitionColumns.size() + 1;
    }
}
