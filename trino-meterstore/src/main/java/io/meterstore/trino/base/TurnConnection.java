package io.meterstore.trino.base;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import static java.util.Objects.requireNonNull;

/**
 * A split's pooled connection: closing it gives it back to the pool and the split's turn back to the queue, however
 * the page source ends (read to the end, closed early, discarded midway through a COPY). Everything else goes to the
 * pool's connection, {@code unwrap} too.
 */
final class TurnConnection
        implements InvocationHandler
{
    private final Connection connection;
    private final Runnable giveBack;
    private final AtomicBoolean givenBack = new AtomicBoolean();

    private TurnConnection(Connection connection, Runnable giveBack)
    {
        this.connection = requireNonNull(connection, "connection is null");
        this.giveBack = requireNonNull(giveBack, "giveBack is null");
    }

    static Connection lend(Connection connection, Runnable giveBack)
    {
        return (Connection) Proxy.newProxyInstance(TurnConnection.class.getClassLoader(), new Class<?>[] {Connection.class}, new TurnConnection(connection, giveBack));
    }

    static Optional<TurnConnection> of(Connection connection)
    {
        if (Proxy.isProxyClass(connection.getClass()) && Proxy.getInvocationHandler(connection) instanceof TurnConnection lent) {
            return Optional.of(lent);
        }
        return Optional.empty();
    }

    Connection connection()
    {
        return connection;
    }

    void giveBack()
    {
        if (givenBack.compareAndSet(false, true)) {
            giveBack.run();
        }
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] arguments)
            throws Throwable
    {
        if (method.getName().equals("close") && method.getParameterCount() == 0) {
            try {
                // back to the pool first, so the next turn finds it free
                connection.close();
            }
            finally {
                giveBack();
            }
            return null;
        }
        try {
            return method.invoke(connection, arguments);
        }
        catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
