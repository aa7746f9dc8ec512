package io.meterstore.core;

import com.google.common.collect.ImmutableSortedSet;

import java.time.Instant;
import java.util.Optional;
import java.util.SortedSet;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * What one erasure removed: the readings whose malo_id has one of {@code maloScopes} (HMAC-SHA256 hex under the
 * {@link ErasureKey}, never the id itself), whose OBIS code is one of {@code obisCodes}, and whose "from" lies in
 * {@code from}. An empty set of scopes is every malo_id (a retention sweep), an empty set of OBIS codes every code.
 */
public record ErasureScope(Optional<SortedSet<String>> maloScopes, Optional<SortedSet<String>> obisCodes, TierSplit.Range from)
{
    public ErasureScope
    {
        maloScopes = requireNonNull(maloScopes, "maloScopes is null").map(ImmutableSortedSet::copyOf);
        obisCodes = requireNonNull(obisCodes, "obisCodes is null").map(ImmutableSortedSet::copyOf);
        requireNonNull(from, "from is null");
        checkArgument(maloScopes.map(scopes -> !scopes.isEmpty()).orElse(true), "maloScopes is empty: an erasure of no malo_id erases nothing");
        checkArgument(obisCodes.map(codes -> !codes.isEmpty()).orElse(true), "obisCodes is empty: an erasure of no OBIS code erases nothing");
        checkArgument(!from.isEmpty(), "from is an empty range");
    }

    /** Whether the reading of the malo_id whose scope is {@code maloScope} at ({@code obisCode}, {@code from}) is erased. */
    public boolean matches(String maloScope, String obisCode, Instant from)
    {
        return matchesMalo(maloScope) && matchesObis(obisCode) && this.from.contains(from);
    }

    public boolean matchesMalo(String maloScope)
    {
        return maloScopes.map(scopes -> scopes.contains(maloScope)).orElse(true);
    }

    public boolean matchesObis(String obisCode)
    {
        return obisCodes.map(codes -> codes.contains(obisCode)).orElse(true);
    }

    /** "obis_code in (...)", "from" in [a, b), for messages; never a malo_id. */
    public String describe()
    {
        String obis = obisCodes.map(codes -> "obis_code in ('" + String.join("', '", codes) + "')").orElse("every obis_code");
        String range = "\"from\" in [%s, %s)".formatted(
                from.lower().map(TieringWatermark::formatInstant).orElse("-infinity"),
                from.upper().map(TieringWatermark::formatInstant).orElse("infinity"));
        return obis + ", " + range;
    }
}
