package io.meterstore.trino.consumption;

import com.google.common.collect.ImmutableList;
import io.airlift.slice.Slice;
import io.meterstore.trino.system.MeterstoreFunctions;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.ConnectorAccessControl;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.ConnectorTransactionHandle;
import io.trino.spi.function.table.AbstractConnectorTableFunction;
import io.trino.spi.function.table.Argument;
import io.trino.spi.function.table.ConnectorTableFunctionHandle;
import io.trino.spi.function.table.Descriptor;
import io.trino.spi.function.table.ScalarArgument;
import io.trino.spi.function.table.ScalarArgumentSpecification;
import io.trino.spi.function.table.TableArgument;
import io.trino.spi.function.table.TableArgumentSpecification;
import io.trino.spi.function.table.TableFunctionAnalysis;
import io.trino.spi.function.table.TableFunctionDataProcessor;
import io.trino.spi.function.table.TableFunctionProcessorProvider;
import io.trino.spi.type.DecimalType;
import io.trino.spi.type.Decimals;
import io.trino.spi.type.RowType;
import io.trino.spi.type.TimestampWithTimeZoneType;
import io.trino.spi.type.Type;
import io.trino.spi.type.VarcharType;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_INVALID_ARGUMENT;
import static io.trino.spi.function.table.ReturnTypeSpecification.GenericTable.GENERIC_TABLE;
import static io.trino.spi.type.DateType.DATE;
import static io.trino.spi.type.DecimalType.createDecimalType;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.lang.Math.min;
import static java.util.Locale.ENGLISH;

/**
 * {@code meterstore.system.register_consumption}: consumption per balancing day or month from a register's readings
 * (Zählerstände), the reading at a period's start subtracted from the reading at the next period's start. A
 * polymorphic table function with one table argument of set semantics, as the SQL standard's PTFs and Trino's own
 * (exclude_columns, sequence) are written: the engine partitions the input by the columns the caller names (one
 * register each: malo_id or melo_id, obis_code, identity columns) and sorts each partition by "from", so the processor
 * sees one register's readings in time order and holds only the last reading that opened a period. The partition
 * columns pass through; the function adds period_start and consumption. It reads whatever relation it is given (a
 * point table, its versions with a filter, a subquery), so both tiers and {@code FOR TIMESTAMP AS OF} come with the
 * relation, never from the function.
 */
public final class RegisterConsumptionFunction
        extends AbstractConnectorTableFunction
{
    public static final String NAME = "register_consumption";

    private static final String INPUT = "INPUT";
    private static final String PERIOD = "PERIOD";
    private static final String FROM = "from";
    private static final String VALUE = "value";
    private static final String SPARTE = "sparte";
    private static final String EXAMPLE = "input => TABLE(SELECT malo_id, obis_code, sparte, \"from\", value FROM zaehlerstaende) PARTITION BY (malo_id, obis_code) ORDER BY \"from\"";

    public RegisterConsumptionFunction()
    {
        super(
                MeterstoreFunctions.SCHEMA,
                NAME,
                ImmutableList.of(
                        TableArgumentSpecification.builder().name(INPUT).pruneWhenEmpty().build(),
                        ScalarArgumentSpecification.builder().name(PERIOD).type(VARCHAR).build()),
                GENERIC_TABLE,
                "Consumption per balancing day ('day') or month ('month') of each register: the reading at the period's start subtracted from the next period's");
    }

    @Override
    public TableFunctionAnalysis analyze(ConnectorSession session, ConnectorTransactionHandle transaction, Map<String, Argument> arguments, ConnectorAccessControl accessControl)
    {
        ConsumptionPeriod period = period((ScalarArgument) arguments.get(PERIOD));
        TableArgument input = (TableArgument) arguments.get(INPUT);
        List<String> columns = input.getRowType().getFields().stream()
                .map(field -> field.getName().map(name -> name.toLowerCase(ENGLISH)).orElse(""))
                .toList();

        int from = column(columns, FROM);
        int value = column(columns, VALUE);
        int sparte = column(columns, SPARTE);
        Type fromType = type(input, from);
        if (!(fromType instanceof TimestampWithTimeZoneType)) {
            throw invalid("Column \"from\" of the input is %s: it must be a timestamp with time zone, the instant the register was read at".formatted(fromType.getDisplayName()));
        }
        if (!(type(input, value) instanceof DecimalType valueType)) {
            throw invalid("Column value of the input is %s: it must be a decimal, the register's reading (the value of a point table is decimal(18,6))".formatted(type(input, value).getDisplayName()));
        }
        if (!(type(input, sparte) instanceof VarcharType)) {
            throw invalid("Column sparte of the input is %s: it must be a varchar, one of STROM, GAS, WAERME, WASSER (it decides the balancing day)".formatted(type(input, sparte).getDisplayName()));
        }

        List<String> partitionBy = input.getPartitionBy().stream().map(name -> name.toLowerCase(ENGLISH)).toList();
        if (partitionBy.isEmpty()) {
            throw invalid("Partition the input by the columns that identify one register, e.g. %s".formatted(EXAMPLE));
        }
        for (String column : partitionBy) {
            if (column.equals(FROM) || column.equals(VALUE)) {
                throw invalid("The input is partitioned by '%s', which makes each reading a register of its own: partition by the columns that identify one register, e.g. %s".formatted(column, EXAMPLE));
            }
        }
        if (!input.getOrderBy().stream().map(name -> name.toLowerCase(ENGLISH)).toList().equals(List.of(FROM))) {
            throw invalid("Order the input by \"from\" alone, so that each register's readings arrive in time order, e.g. %s".formatted(EXAMPLE));
        }

        ImmutableList.Builder<Integer> required = ImmutableList.builder();
        ImmutableList.Builder<Type> partitionTypes = ImmutableList.builder();
        for (String column : partitionBy) {
            int index = columns.indexOf(column);
            required.add(index);
            partitionTypes.add(type(input, index));
        }
        required.add(from, value);
        int sparteChannel = partitionBy.indexOf(SPARTE);
        if (sparteChannel < 0) {
            required.add(sparte);
            sparteChannel = partitionBy.size() + 2;
        }
        // a difference needs one more digit than the readings
        DecimalType consumptionType = createDecimalType(min(Decimals.MAX_PRECISION, valueType.getPrecision() + 1), valueType.getScale());
        return TableFunctionAnalysis.builder()
                .returnedType(Descriptor.descriptor(List.of("period_start", "consumption"), List.of(DATE, consumptionType)))
                .requiredColumns(INPUT, required.build())
                .handle(new RegisterConsumptionHandle(period, partitionBy, partitionTypes.build(), fromType, valueType, consumptionType, sparteChannel))
                .build();
    }

    /** Runs the calls of this function; the connector's function provider hands it to the engine. */
    public static TableFunctionProcessorProvider processorProvider()
    {
        return new TableFunctionProcessorProvider()
        {
            @Override
            public TableFunctionDataProcessor getDataProcessor(ConnectorSession session, ConnectorTableFunctionHandle handle)
            {
                // one processor a partition: the engine asks for a new one for each register
                return new RegisterConsumptionProcessor((RegisterConsumptionHandle) handle);
            }
        };
    }

    private static ConsumptionPeriod period(ScalarArgument argument)
    {
        Optional<String> period = Optional.ofNullable(argument.getValue()).map(value -> ((Slice) value).toStringUtf8());
        for (ConsumptionPeriod candidate : ConsumptionPeriod.values()) {
            if (period.isPresent() && candidate.argument().equalsIgnoreCase(period.get().strip())) {
                return candidate;
            }
        }
        throw invalid("Period %s is not one register_consumption derives: write period => 'day' (the balancing day: the Berlin day, the gas day from 06:00 for GAS) or period => 'month' (the balancing month)"
                .formatted(period.map("'%s'"::formatted).orElse("NULL")));
    }

    private static int column(List<String> columns, String name)
    {
        int index = columns.indexOf(name);
        if (index < 0) {
            throw invalid("The input has no column %s: pass the register's readings with the columns that identify the register, \"from\", value and sparte, e.g. %s"
                    .formatted(name.equals(FROM) ? "\"from\"" : name, EXAMPLE));
        }
        return index;
    }

    private static Type type(TableArgument input, int index)
    {
        RowType.Field field = input.getRowType().getFields().get(index);
        return field.getType();
    }

    private static TrinoException invalid(String message)
    {
        return new TrinoException(METERSTORE_INVALID_ARGUMENT, message);
    }
}
