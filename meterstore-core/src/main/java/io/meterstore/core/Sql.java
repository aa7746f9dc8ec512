package io.meterstore.core;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

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

    /**
     * A string literal for the one statement that takes no bind parameter, COMMENT ON; with standard_conforming_strings
     * (PostgreSQL's default since 9.1) only the quote is special.
     */
    public static String quoteLiteral(String value)
    {
        checkArgument(value.indexOf('\0') < 0, "literal contains a NUL character");
        return "'" + value.replace("'", "''") + "'";
    }

    public static String qualified(String schema, String table)
    {
        return quoteIdentifier(schema) + "." + quoteIdentifier(table);
    }

    /**
     * Whether the table {@code qualifiedTable} names exists. Looked up, not tried: a caller inside a transaction would
     * have it aborted by a failed statement.
     */
    public static boolean tableExists(Connection connection, String qualifiedTable)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
            statement.setString(1, qualifiedTable);
            try (ResultSet result = statement.executeQuery()) {
                result.next();
                return result.getBoolean(1);
            }
        }
    }
}
