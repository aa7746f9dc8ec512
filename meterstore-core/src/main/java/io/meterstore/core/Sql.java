package io.meterstore.core;

import static com.google.common.base.Preconditions.checkArgument;

/** The one place SQL identifiers sent to PostgreSQL are quoted; values are always bound, never inlined. */
public final class Sql
{
    private Sql() {}

    public static String quoteIdentifier(String identifier)
    {
        checkArgument(!identifier.isEmpty(), "identifier is empty");
        checkArgument(identifier.indexOf('\0') < 0, "identifier contains a NUL character");
        return '"' + identifier.replace("\"", "\"\"") + '"';
    }

    public static String qualified(String schema, String table)
    {
        return quoteIdentifier(schema) + "." + quoteIdentifier(table);
    }
}
