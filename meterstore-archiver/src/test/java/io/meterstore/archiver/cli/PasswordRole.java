package io.meterstore.archiver.cli;

import io.meterstore.testing.TestingDatabase;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * A login role whose password the embedded server really checks. The server trusts every local connection; two
 * lines ahead of its pg_hba.conf make it ask this one role for its password, so a wrong one fails the login as it
 * would in production. Closing restores the file and drops the role.
 */
final class PasswordRole
        implements AutoCloseable
{
    private final TestingDatabase database;
    private final String name;
    private final Path hbaFile;
    private final String originalHba;

    private PasswordRole(TestingDatabase database, String name, Path hbaFile, String originalHba)
    {
        this.database = requireNonNull(database, "database is null");
        this.name = requireNonNull(name, "name is null");
        this.hbaFile = requireNonNull(hbaFile, "hbaFile is null");
        this.originalHba = requireNonNull(originalHba, "originalHba is null");
    }

    static PasswordRole create(TestingDatabase database, String name, String password)
            throws SQLException, IOException, InterruptedException
    {
        checkArgument(name.matches("[a-z_][a-z0-9_]*"), "role name must be a plain identifier");
        checkArgument(password.matches("[a-z0-9]+"), "password must be plain");
        try (Connection connection = database.connect(); Statement statement = connection.createStatement()) {
            statement.execute("DROP ROLE IF EXISTS " + name);
            statement.execute("CREATE ROLE %s LOGIN PASSWORD '%s'".formatted(name, password));
            Path hbaFile;
            try (ResultSet result = statement.executeQuery("SHOW hba_file")) {
                result.next();
                hbaFile = Path.of(result.getString(1));
            }
            String originalHba = Files.readString(hbaFile);
            Files.writeString(hbaFile, """
                    host all %1$s 127.0.0.1/32 scram-sha-256
                    host all %1$s ::1/128 scram-sha-256
                    """.formatted(name) + originalHba);
            statement.execute("SELECT pg_reload_conf()");
            PasswordRole role = new PasswordRole(database, name, hbaFile, originalHba);
            role.awaitPasswordRequired();
            return role;
        }
    }

    String name()
    {
        return name;
    }

    // the postmaster reloads pg_hba.conf on a signal: wait until a login without the password fails
    private void awaitPasswordRequired()
            throws InterruptedException
    {
        // a bounded number of attempts (about 10 s) keeps a reload that never happens from hanging the build
        for (int attempt = 0; attempt < 500; attempt++) {
            try (Connection ignored = DriverManager.getConnection(database.jdbcUrl(), name, "not-the-password")) {
                Thread.sleep(20);
            }
            catch (SQLException e) {
                if ("28P01".equals(e.getSQLState())) {
                    return;
                }
                throw new IllegalStateException("Unexpected failure logging in as '%s'".formatted(name), e);
            }
        }
        throw new IllegalStateException("pg_hba.conf was not reloaded: a login as '%s' with a wrong password still succeeds".formatted(name));
    }

    @Override
    public void close()
            throws SQLException, IOException
    {
        Files.writeString(hbaFile, originalHba);
        try (Connection connection = database.connect(); Statement statement = connection.createStatement()) {
            statement.execute("SELECT pg_reload_conf()");
            statement.execute("DROP ROLE IF EXISTS " + name);
        }
    }
}
