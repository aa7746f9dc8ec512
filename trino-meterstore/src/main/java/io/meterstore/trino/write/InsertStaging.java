package io.meterstore.trino.write;

import io.meterstore.core.TableColumns;
import io.meterstore.core.Sql;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * Where the page sinks of one INSERT put its validated rows until finishInsert moves them into the tiers: an unlogged
 * PostgreSQL table without indexes or constraints, created by beginInsert and dropped in the transaction that writes
 * the hot rows (or, when the statement fails, when the query is cleaned up). Its name carries the query id, never a
 * readings table's name, so partition listings never see it. A coordinator that dies mid-statement leaves one behind:
 * {@code DROP TABLE <schema>.meterstore_insert_<query id>} removes it; it holds nothing any reader sees.
 */
public record InsertStaging(String schema, String table)
{
    private static final String PREFIX = "meterstore_insert_";

    public InsertStaging
    {
        requireNonNull(schema, "schema is null");
        requireNonNull(table, "table is null");
        checkArgument(table.startsWith(PREFIX), "Staging table '%s' must start with '%s'", table, PREFIX);
    }

    /** The staging table of the query {@code queryId} (Trino's ids are lowercase letters, digits and underscores). */
    public static InsertStaging of(String schema, String queryId)
    {
        return new InsertStaging(schema, PREFIX + queryId);
    }

    public String qualifiedName()
    {
        return Sql.qualified(schema, table);
    }

    /** Creates the table with the columns of {@code qualifiedParent}, without its constraints: rows are only ever copied in and read out. */
    void create(Connection connection, String qualifiedParent)
            throws SQLException
    {
        try (Statement statement = connection.createStatement()) {
            statement.execute("CREATE UNLOGGED TABLE %s (LIKE %s)".formatted(qualifiedName(), qualifiedParent));
        }
    }

    void drop(Connection connection)
            throws SQLException
    {
        try (Statement statement = connection.createStatement()) {
            statement.execute("DROP TABLE IF EXISTS " + qualifiedName());
        }
    }

    /** The earliest "from" staged; empty when nothing is. */
    Optional<Instant> firstFrom(Connection connection)
            throws SQLException
    {
        try (Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SELECT min(\"from\") FROM " + qualifiedName())) {
            result.next();
            return Optional.ofNullable(result.getObject(1, OffsetDateTime.class)).map(OffsetDateTime::toInstant);
        }
    }

    /**
     * The COPY a page sink stages a chunk with, every column of a table of {@code columns} in storage order (the layout
     * of {@code PgBinaryCopyWriter}): the staging table is LIKE the parent, so it has the attribute columns too.
     */
    String copySql(TableColumns columns)
    {
        return "COPY %s (%s) FROM STDIN (FORMAT binary)".formatted(qualifiedName(), columns.postgresColumnList());
    }
}
