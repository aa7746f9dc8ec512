package io.meterstore.testing;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;

import static java.util.Objects.requireNonNull;

/** One database of a {@link TestingPostgresServer}; dropped on close unless {@code -Dmeterstore.keep-databases=true}. */
public record TestingDatabase(TestingPostgresServer server, String name)
        implements AutoCloseable
{
    public TestingDatabase
    {
        requireNonNull(server, "server is null");
        requireNonNull(name, "name is null");
    }

    public String jdbcUrl()
    {
        return server.jdbcUrl(name);
    }

    public String user()
    {
        return TestingPostgresServer.USER;
    }

    public Connection connect()
            throws SQLException
    {
        return DriverManager.getConnection(jdbcUrl(), user(), null);
    }

    @Override
    public void close()
    {
        if (!Boolean.getBoolean("meterstore.keep-databases")) {
            server.dropDatabase(name);
        }
    }
}
