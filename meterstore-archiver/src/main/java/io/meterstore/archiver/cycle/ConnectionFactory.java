package io.meterstore.archiver.cycle;

import java.sql.Connection;
import java.sql.SQLException;

/** Opens a new PostgreSQL connection; the cycle holds it for its whole run and closes it. */
@FunctionalInterface
public interface ConnectionFactory
{
    Connection open()
            throws SQLException;
}
