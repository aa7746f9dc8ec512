package io.meterstore.trino;

import io.meterstore.testing.TestingWarehouse;
import org.apache.iceberg.catalog.TableIdentifier;
import io.trino.testing.DistributedQueryRunner;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;
import static java.util.Objects.requireNonNull;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A test's client of its engine and of its PostgreSQL: every statement on a connection of its own, to the engine through
 * the Trino JDBC driver as {@code user} in catalog meterstore, schema metering, as a user's client sends it.
 */
record TestingClient(DistributedQueryRunner queryRunner, TestingWarehouse warehouse, String user)
{
    TestingClient
    {
        requireNonNull(queryRunner, "queryRunner is null");
        requireNonNull(warehouse, "warehouse is null");
        requireNonNull(user, "user is null");
    }

    Connection connect()
            throws SQLException
    {
        return DriverManager.getConnection("jdbc:trino://%s/meterstore/metering".formatted(queryRunner.getCoordinator().getAddress()), user, null);
    }

    /** The first column of the first row of {@code sql}'s answer, which must have one. */
    Object value(String sql)
            throws SQLException
    {
        try (Connection connection = connect(); Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            assertThat(result.next()).as(sql).isTrue();
            return result.getObject(1);
        }
    }

    void execute(String sql)
            throws SQLException
    {
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    /** The rows {@code sql} wrote, as Trino counts them. */
    long update(String sql)
            throws SQLException
    {
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            return statement.executeLargeUpdate(sql);
        }
    }

    /** As {@link #value}, {@code sql} run in the warehouse's PostgreSQL database directly. */
    Object postgres(String sql)
            throws SQLException
    {
        try (Connection connection = warehouse.database().connect(); Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            assertThat(result.next()).as(sql).isTrue();
            return result.getObject(1);
        }
    }

    /** Asserts that a refused CREATE TABLE left nothing behind: no Iceberg table {@code table}, no PostgreSQL relation named after it. */
    void assertNothingCreated(String table)
            throws SQLException
    {
        assertThat(warehouse.catalog().tableExists(TableIdentifier.of(SCHEMA, table))).as("Iceberg table " + table).isFalse();
        assertThat(postgres("SELECT count(*) FROM pg_class WHERE relname LIKE '%s%%'".formatted(table))).as("PostgreSQL relations " + table).isEqualTo(0L);
    }
}
