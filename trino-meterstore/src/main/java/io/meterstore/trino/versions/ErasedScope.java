package io.meterstore.trino.versions;

import com.google.common.collect.ImmutableSet;
import io.meterstore.core.ErasureScope;
import io.meterstore.trino.base.MeterstoreTypes;

import java.util.Optional;
import java.util.Set;

import static java.util.Objects.requireNonNull;

/**
 * An erasure as a read of an older snapshot applies it: rows whose malo_id has one of {@code maloScopes} (HMACs; empty:
 * every malo_id), whose OBIS code is one of {@code obisCodes} (empty: every code) and whose "from" lies in
 * [{@code fromStartMicros}, {@code fromEndMicros}) are dropped. Carried in the table handle to the workers, which
 * compute the HMACs with the key their catalog has.
 */
public record ErasedScope(Set<String> maloScopes, Set<String> obisCodes, Optional<Long> fromStartMicros, Optional<Long> fromEndMicros)
{
    public ErasedScope
    {
        maloScopes = ImmutableSet.copyOf(maloScopes);
        obisCodes = ImmutableSet.copyOf(obisCodes);
        requireNonNull(fromStartMicros, "fromStartMicros is null");
        requireNonNull(fromEndMicros, "fromEndMicros is null");
    }

    public static ErasedScope of(ErasureScope scope)
    {
        return new ErasedScope(
                scope.maloScopes().<Set<String>>map(scopes -> scopes).orElse(Set.of()),
                scope.obisCodes().<Set<String>>map(codes -> codes).orElse(Set.of()),
                scope.from().lower().map(MeterstoreTypes::toEpochMicros),
                scope.from().upper().map(MeterstoreTypes::toEpochMicros));
    }

    /** Whether the row of the malo_id whose HMAC is {@code maloScope} at ({@code obisCode}, {@code fromMicros}) was erased. */
    public boolean matches(String maloScope, String obisCode, long fromMicros)
    {
        return (maloScopes.isEmpty() || maloScopes.contains(maloScope))
                && (obisCodes.isEmpty() || obisCodes.contains(obisCode))
                && fromStartMicros.map(start -> fromMicros >= start).orElse(true)
                && fromEndMicros.map(end -> fromMicros < end).orElse(true);
    }
}
