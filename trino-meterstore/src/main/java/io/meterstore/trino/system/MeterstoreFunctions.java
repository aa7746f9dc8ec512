package io.meterstore.trino.system;

import com.google.common.collect.ImmutableList;
import io.trino.spi.function.BoundSignature;
import io.trino.spi.function.FunctionBundle;
import io.trino.spi.function.FunctionBundleFactory;
import io.trino.spi.function.FunctionDependencyDeclaration;
import io.trino.spi.function.FunctionId;
import io.trino.spi.function.FunctionMetadata;
import io.trino.spi.function.FunctionProvider;
import io.trino.spi.function.SchemaFunctionName;

import java.util.Collection;
import java.util.List;

import static java.util.Objects.requireNonNull;

/**
 * The connector's scalar functions, listed in schema {@code system} of the catalog: {@code meterstore.system.meter_local_day}
 * qualified, or {@code meter_local_day} after {@code SET PATH meterstore.system}. Trino resolves a name through the
 * connector's metadata and runs it through {@link #provider()}, as it does for the functions of trino-ai-functions.
 */
public final class MeterstoreFunctions
{
    public static final String SCHEMA = "system";

    private final FunctionBundle bundle;

    public MeterstoreFunctions(FunctionBundleFactory bundleFactory)
    {
        FunctionBundleFactory.Builder builder = requireNonNull(bundleFactory, "bundleFactory is null").builder();
        ImmutableList.<Class<?>>builder()
                .addAll(CalendarFunctions.CLASSES)
                .add(IdentifierFunctions.class)
                .build()
                .forEach(builder::functions);
        this.bundle = builder.build();
    }

    public FunctionProvider provider()
    {
        return bundle.toProvider();
    }

    public Collection<FunctionMetadata> listFunctions(String schemaName)
    {
        return schemaName.equals(SCHEMA) ? bundle.getFunctions() : List.of();
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
}
