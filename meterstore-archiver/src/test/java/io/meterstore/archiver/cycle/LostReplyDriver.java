package io.meterstore.archiver.cycle;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.DriverPropertyInfo;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Logger;

/**
 * PostgreSQL's JDBC driver behind {@code jdbc:lost-reply:postgresql://...}, except that once {@link #arm()}ed, the next
 * swap of a catalogue pointer runs in PostgreSQL and then reports the connection lost (SQLSTATE 08006), and the pool's
 * reconnect is refused (08001): a server gone right after it ran the swap; or it succeeds: the server back at once. A real server cannot be made to go at exactly
 * that moment, so this hand-written fake stands in for it.
 */
final class LostReplyDriver
        implements Driver
{
    private static final String PREFIX = "jdbc:lost-reply:";
    private static final AtomicBoolean ARMED = new AtomicBoolean();
    private static final AtomicBoolean REFUSING = new AtomicBoolean();
    private static final AtomicBoolean SERVER_BACK = new AtomicBoolean();

    static {
        try {
            DriverManager.registerDriver(new LostReplyDriver());
        }
        catch (SQLException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The URL of {@code postgresqlUrl} through this driver. */
    static String url(String postgresqlUrl)
    {
        return PREFIX + postgresqlUrl.substring("jdbc:".length());
    }

    /** The next pointer swap loses its reply, and the server is gone. */
    static void arm()
    {
        SERVER_BACK.set(false);
        ARMED.set(true);
    }

    /** The next pointer swap loses its reply, and the pool's reconnect finds the server back at once. */
    static void armWithServerBack()
    {
        SERVER_BACK.set(true);
        ARMED.set(true);
    }

    static boolean armed()
    {
        return ARMED.get();
    }

    @Override
    public Connection connect(String url, Properties info)
            throws SQLException
    {
        if (!acceptsURL(url)) {
            return null;
        }
        if (REFUSING.compareAndSet(true, false)) {
            throw new SQLException("Connection to the catalogue's database refused: the server is down", "08001");
        }
        Connection connection = DriverManager.getConnection("jdbc:" + url.substring(PREFIX.length()), info);
        return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {Connection.class}, (proxy, method, args) -> {
            Object result = invoke(connection, method, args);
            if (method.getName().equals("prepareStatement") && ((String) args[0]).startsWith("UPDATE iceberg_tables")) {
                return losingReply((PreparedStatement) result);
            }
            return result;
        });
    }

    private static PreparedStatement losingReply(PreparedStatement statement)
    {
        return (PreparedStatement) Proxy.newProxyInstance(LostReplyDriver.class.getClassLoader(), new Class<?>[] {PreparedStatement.class}, (proxy, method, args) -> {
            Object result = invoke(statement, method, args);
            if (method.getName().equals("executeUpdate") && ARMED.compareAndSet(true, false)) {
                REFUSING.set(!SERVER_BACK.get());
                throw new SQLException("An I/O error occurred while sending to the backend", "08006");
            }
            return result;
        });
    }

    private static Object invoke(Object target, Method method, Object[] args)
            throws Throwable
    {
        try {
            return method.invoke(target, args);
        }
        catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    @Override
    public boolean acceptsURL(String url)
    {
        return url.startsWith(PREFIX);
    }

    @Override
    public DriverPropertyInfo[] getPropertyInfo(String url, Properties info)
    {
        return new DriverPropertyInfo[0];
    }

    @Override
    public int getMajorVersion()
    {
        return 1;
    }

    @Override
    public int getMinorVersion()
    {
        return 0;
    }

    @Override
    public boolean jdbcCompliant()
    {
        return false;
    }

    @Override
    public Logger getParentLogger()
            throws SQLFeatureNotSupportedException
    {
        throw new SQLFeatureNotSupportedException();
    }
}
