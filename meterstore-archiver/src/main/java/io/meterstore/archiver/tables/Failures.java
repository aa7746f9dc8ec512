package io.meterstore.archiver.tables;

import com.google.common.collect.ImmutableList;
import com.google.inject.CreationException;
import com.google.inject.ProvisionException;
import com.google.inject.spi.Message;
import io.meterstore.archiver.cycle.ArchivalException;
import io.meterstore.core.MeterstoreException;

import java.io.IOException;
import java.sql.SQLException;
import java.util.Collection;
import java.util.List;

import static java.util.stream.Collectors.joining;

/** One line for an operator out of an exception, for the command line and the service's log alike. */
public final class Failures
{
    private Failures() {}

    /**
     * Whether {@code throwable} is an operational failure whose message says what is wrong: MeterStore's own errors, or
     * a database or storage failure anywhere in its causes (Iceberg wraps them, e.g. its JDBC catalogue's
     * UncheckedSQLException over a refused connection), rather than a bug that needs its stack trace.
     */
    public static boolean isOperational(Throwable throwable)
    {
        for (Throwable cause = throwable; cause != null; cause = cause.getCause()) {
            if (cause instanceof MeterstoreException || cause instanceof ArchivalException || cause instanceof SQLException || cause instanceof IOException) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether {@code throwable} failed to reach PostgreSQL at all: a connection or login failure, or a database that
     * does not exist (SQLSTATE classes 08 and 28, and 3D000), anywhere in its causes.
     */
    public static boolean isConnectionFailure(Throwable throwable)
    {
        for (Throwable cause = throwable; cause != null; cause = cause.getCause()) {
            if (cause instanceof SQLException sqlException && sqlException.getSQLState() != null) {
                String state = sqlException.getSQLState();
                if (state.startsWith("08") || state.startsWith("28") || state.equals("3D000")) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * The message of an exception and its causes, without repeating one that only wraps another. MeterStore's own
     * exceptions already say what is wrong and what to do, so their causes, and what wraps them, are left out.
     */
    public static String describe(Throwable throwable)
    {
        // wrapped or not (a service's start wraps what failed in Guice's own exceptions)
        for (Throwable cause = throwable; cause != null; cause = cause.getCause()) {
            if (cause instanceof MeterstoreException || cause instanceof ArchivalException) {
                return cause.getMessage();
            }
        }
        // Guice lists its whole injector with stack traces for a failed start: what failed is each error's cause
        Collection<Message> errors = switch (throwable) {
            case CreationException creation -> creation.getErrorMessages();
            case ProvisionException provision -> provision.getErrorMessages();
            default -> List.of();
        };
        if (!errors.isEmpty()) {
            return errors.stream()
                    .map(error -> error.getCause() == null ? error.getMessage() : describe(error.getCause()))
                    .distinct()
                    .collect(joining("; "));
        }
        ImmutableList.Builder<String> messages = ImmutableList.builder();
        String previous = "";
        for (Throwable cause = throwable; cause != null; cause = cause.getCause()) {
            String message = cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
            if (cause instanceof SQLException sqlException && sqlException.getSQLState() != null) {
                message += " (SQLSTATE %s)".formatted(sqlException.getSQLState());
            }
            if (!previous.contains(message)) {
                messages.add(message);
            }
            previous = message;
        }
        return String.join(": ", messages.build());
    }
}
