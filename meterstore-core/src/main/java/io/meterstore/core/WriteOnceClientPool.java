package io.meterstore.core;

import org.apache.iceberg.jdbc.JdbcClientPool;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The JDBC catalogue's client pool, except that an action which sent a write is never run a second time. The pool
 * reconnects and re-runs an action whose connection was lost; for the pointer swap that is a hazard: a swap that ran
 * before its reply was lost finds, re-run, its pointer moved already, reports the commit failed, and Iceberg then
 * deletes the manifests of the commit that landed. Here the lost connection surfaces instead (an unknown outcome,
 * see {@link CommitOutcome}), and the caller reads the table to find out. Reads are re-run as before.
 */
final class WriteOnceClientPool
        extends JdbcClientPool
{
    WriteOnceClientPool(String url, Map<String, String> properties)
    {
        super(url, properties);
    }

    @Override
    public <R> R run(Action<R, Connection, SQLException> action, boolean retry)
            throws SQLException, InterruptedException
    {
        AtomicBoolean wrote = new AtomicBoolean();
        return super.run(connection -> {
            if (wrote.get()) {
                // not a connection failure: the pool gives up its retry and rethrows the first attempt's failure
                throw new IllegalStateException("A catalogue write whose connection was lost is not repeated");
            }
            return action.run(trackingWrites(connection, wrote));
        }, retry);
    }

    private static Connection trackingWrites(Connection connection, AtomicBoolean wrote)
    {
        return (Connection) Proxy.newProxyInstance(WriteOnceClientPool.class.getClassLoader(), new Class<?>[] {Connection.class}, (proxy, method, args) -> {
            if (isWrite(method, args)) {
                wrote.set(true);
            }
            try {
                return method.invoke(connection, args);
            }
            catch (InvocationTargetException e) {
                throw e.getCause();
            }
        });
    }

    private static boolean isWrite(Method method, Object[] args)
    {
        if (!method.getName().equals("prepareStatement") || args == null || !(args[0] instanceof String sql)) {
            return false;
        }
        String verb = sql.stripLeading().toUpperCase(Locale.ROOT);
        return verb.startsWith("UPDATE") || verb.startsWith("INSERT") || verb.startsWith("DELETE");
    }
}
