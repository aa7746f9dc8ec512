package io.meterstore.trino.system;

import com.google.common.collect.ImmutableList;
import io.trino.spi.function.AggregationImplementation;
import io.trino.spi.function.BoundSignature;
import io.trino.spi.function.FunctionBundle;
import io.trino.spi.function.FunctionBundleFactory;
import io.trino.spi.function.FunctionDependencies;
import io.trino.spi.function.FunctionDependencyDeclaration;
import io.trino.spi.function.FunctionId;
import io.trino.spi.function.FunctionMetadata;
import io.trino.spi.function.FunctionProvider;
import io.trino.spi.function.InvocationConvention;
import io.trino.spi.function.ScalarFunctionImplementation;
import io.trino.spi.function.SchemaFunctionName;
import io.trino.spi.function.Signature;
import io.trino.spi.function.WindowFunctionSupplier;
import io.trino.spi.function.table.ArgumentSpecification;
import io.trino.spi.function.table.ConnectorTableFunction;
import io.trino.spi.function.table.ConnectorTableFunctionHandle;
import io.trino.spi.function.table.ScalarArgumentSpecification;
import io.trino.spi.function.table.TableArgumentSpecification;
import io.trino.spi.function.table.TableFunctionProcessorProvider;
import io.trino.spi.type.TypeDescriptor;

import java.util.Collection;
import java.util.List;

import static com.google.common.collect.ImmutableList.toImmutableList;
import static java.util.Locale.ENGLISH;
import static java.util.Objects.requireNonNull;

/**
 * The connector's scalar functions, listed in schema {@code system} of the catalog: {@code meterstore.system.meter_local_day}
 * qualified, or {@code meter_local_day} after {@code SET PATH meterstore.system}. Trino resolves a name through the
 * connector's metadata and runs it through {@link #provider()}, as it does for the functions of trino-ai-functions.
 * The provider also runs the table functions the engine executes itself ({@code register_consumption}), and the
 * listing names the table functions too: the engine's SHOW FUNCTIONS lists only what a connector's metadata lists.
 */
public final class MeterstoreFunctions
{
    public static final String SCHEMA = "system";

    private final FunctionBundle bundle;
    private final FunctionProvider provider;
    private final List<FunctionMetadata> tableFunctions;

    public MeterstoreFunctions(FunctionBundleFactory bundleFactory, List<ConnectorTableFunction> tableFunctions)
    {
        FunctionBundleFactory.Builder builder = requireNonNull(bundleFactory, "bundleFactory is null").builder();
        ImmutableList.<Class<?>>builder()
                .addAll(CalendarFunctions.CLASSES)
                .add(IdentifierFunctions.class)
                .build()
                .forEach(builder::functions);
        this.bundle = builder.build();
        this.provider = new TableFunctionsProvider(bundle.toProvider());
        this.tableFunctions = requireNonNull(tableFunctions, "tableFunctions is null").stream()
                .map(MeterstoreFunctions::listing)
                .collect(toImmutableList());
    }

    public FunctionProvider provider()
    {
        return provider;
    }

    public Collection<FunctionMetadata> listFunctions(String schemaName)
    {
        if (!schemaName.equals(SCHEMA)) {
            return List.of();
        }
        return ImmutableList.<FunctionMetadata>builder()
                .addAll(bundle.getFunctions())
                .addAll(tableFunctions)
                .build();
    }

    public Collection<FunctionMetadata> getFunctions(SchemaFunctionName name)
    {
        if (!name.schemaName().equals(SCHEMA)) {
            return List.of();
        }
        return bundle.getFunctions().stream()
                .filter(function -> function.getCanonicalName().equals(name.functionName()))
                .toList();
    }

    public FunctionMetadata getFunctionMetadata(FunctionId functionId)
    {
        return bundle.getFunctions().stream()
                .filter(function -> function.getFunctionId().equals(functionId))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("Unknown function " + functionId));
    }

    public FunctionDependencyDeclaration getFunctionDependencies(FunctionId functionId, BoundSignature boundSignature)
    {
        return bundle.getFunctionDependencies(functionId, boundSignature);
    }

    /**
     * A table function as SHOW FUNCTIONS shows it (function type {@code table}): listed only, never resolved through
     * {@link #getFunctions}, since the engine finds table functions through {@code Connector.getTableFunctions}.
     */
    private static FunctionMetadata listing(ConnectorTableFunction function)
    {
        Signature.Builder signature = Signature.builder().returnType(new TypeDescriptor("table"));
        for (ArgumentSpecification argument : function.getArguments()) {
            switch (argument) {
                case ScalarArgumentSpecification scalar -> signature.argumentType(scalar.getType(), argument.getName().toLowerCase(ENGLISH));
                case TableArgumentSpecification _ -> signature.argumentType(new TypeDescriptor("table"), argument.getName().toLowerCase(ENGLISH));
                default -> signature.argumentType(new TypeDescriptor("descriptor"), argument.getName().toLowerCase(ENGLISH));
            }
        }
        return FunctionMetadata.tableBuilder(function.getName())
                .signature(signature.build())
                .functionId(new FunctionId("table:" + function.getName()))
                .description(function.getDescription())
                .build();
    }

    /** The scalar functions' provider, and the processors of the table functions the engine runs. */
    private record TableFunctionsProvider(FunctionProvider scalars)
            implements FunctionProvider
    {
        @Override
        public ScalarFunctionImplementation getScalarFunctionImplementation(FunctionId functionId, BoundSignature boundSignature, FunctionDependencies functionDependencies, InvocationConvention invocationConvention)
        {
            return scalars.getScalarFunctionImplementation(functionId, boundSignature, functionDependencies, invocationConvention);
        }

        @Override
        public AggregationImplementation getAggregationImplementation(FunctionId functionId, BoundSignature boundSignature, FunctionDependencies functionDependencies)
        {
            return scalars.getAggregationImplementation(functionId, boundSignature, functionDependencies);
        }

        @Override
        public WindowFunctionSupplier getWindowFunctionSupplier(FunctionId functionId, BoundSignature boundSignature, FunctionDependencies functionDependencies)
        {
            return scalars.getWindowFunctionSupplier(functionId, boundSignature, functionDependencies);
        }

        @Override
        public TableFunctionProcessorProvider getTableFunctionProcessorProvider(ConnectorTableFunctionHandle functionHandle)
        {
            if (functionHandle instanceof ProcessedTableFunctionHandle processed) {
                return processed.processorProvider();
            }
            // meter_completeness becomes a table scan (MeterstoreMetadata.applyTableFunction) and never gets here
            throw new IllegalArgumentException("No processor for table function handle " + functionHandle);
        }
    }
}
