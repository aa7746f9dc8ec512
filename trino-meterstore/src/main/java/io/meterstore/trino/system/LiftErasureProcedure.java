package io.meterstore.trino.system;

import com.google.common.collect.ImmutableList;
import com.google.inject.Inject;
import com.google.inject.Provider;
import io.airlift.log.Logger;
import io.meterstore.core.ErasureLog;
import io.meterstore.core.ErasureLog.Erasure;
import io.meterstore.core.ErasureLog.Lift;
import io.meterstore.trino.base.MeterstoreTables;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.ConnectorAccessControl;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.SchemaTableName;
import io.trino.spi.procedure.Procedure;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Optional;

import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_INVALID_ARGUMENT;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_TABLE_NOT_FOUND;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_WRITE_FAILED;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * {@code CALL meterstore.system.lift_erasure(schema, table, erasure_id, reason)}: takes an erasure off the suppression
 * list, so that INSERT may write its readings again (after an erasure made by mistake). The erased rows do not come
 * back; the lift is recorded in the erasure's audit row (when, by whom, why), once. Needs the DELETE privilege on the
 * table, as the erasure did.
 */
public final class LiftErasureProcedure
        implements Provider<Procedure>
{
    private static final Logger log = Logger.get(LiftErasureProcedure.class);
    private static final MethodHandle LIFT_ERASURE;

    static {
        try {
            LIFT_ERASURE = MethodHandles.lookup().findVirtual(LiftErasureProcedure.class, "liftErasure",
                    MethodType.methodType(void.class, ConnectorSession.class, ConnectorAccessControl.class, String.class, String.class, Long.class, String.class));
        }
        catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
    // the trigger's refusal of a second lift
    private static final String INSUFFICIENT_PRIVILEGE = "42501";

    private final MeterstoreTables tables;

    @Inject
    public LiftErasureProcedure(MeterstoreTables tables)
    {
        this.tables = requireNonNull(tables, "tables is null");
    }

    @Override
    public Procedure get()
    {
        return new Procedure("system", "lift_erasure", ImmutableList.of(
                new Procedure.Argument("SCHEMA", VARCHAR),
                new Procedure.Argument("TABLE", VARCHAR),
                new Procedure.Argument("ERASURE_ID", BIGINT),
                new Procedure.Argument("REASON", VARCHAR)),
                LIFT_ERASURE.bindTo(this));
    }

    public void liftErasure(ConnectorSession session, ConnectorAccessControl accessControl, String schema, String table, Long erasureId, String reason)
    {
        requireNonNull(erasureId, "erasureId is null");
        SchemaTableName name = new SchemaTableName(requireNonNull(schema, "schema is null"), requireNonNull(table, "table is null"));
        Optional<String> storageTable = tables.storageTableOf(name);
        if (storageTable.isEmpty()) {
            throw new TrinoException(METERSTORE_TABLE_NOT_FOUND, "Table '%s' is not a MeterStore table: name one of meterstore.tables in schema '%s'".formatted(name, tables.schema()));
        }
        if (reason == null || reason.isBlank()) {
            throw new TrinoException(METERSTORE_INVALID_ARGUMENT, "Lifting erasure %s of table '%s' needs a reason: it is recorded in the audit trail".formatted(erasureId, name));
        }
        // lifting lets erased readings be written again: whoever may erase them may lift
        accessControl.checkCanDeleteFromTable(null, new SchemaTableName(name.getSchemaName(), storageTable.get() + MeterstoreTables.VERSIONS_SUFFIX));
        Optional<Erasure> lifted;
        try (Connection connection = tables.connectPostgres()) {
            lifted = ErasureLog.lift(connection, tables.schema(), storageTable.get(), erasureId, new Lift(session.getStart(), session.getUser(), reason));
        }
        catch (SQLException e) {
            if (INSUFFICIENT_PRIVILEGE.equals(e.getSQLState())) {
                throw new TrinoException(METERSTORE_INVALID_ARGUMENT, "Erasure %s of table '%s' was lifted already: see \"%s$erasures\"".formatted(erasureId, name, storageTable.get()), e);
            }
            throw new TrinoException(METERSTORE_WRITE_FAILED, "Cannot lift erasure %s of table '%s': %s; nothing was changed, run the call again".formatted(erasureId, name, e.getMessage()), e);
        }
        if (lifted.isEmpty()) {
            throw new TrinoException(METERSTORE_INVALID_ARGUMENT, "Table '%s' has no erasure %s: see \"%s$erasures\" for its erasure ids".formatted(name, erasureId, storageTable.get()));
        }
        log.info("Erasure %s of '%s' lifted by '%s': %s", erasureId, name, session.getUser(), reason);
    }
}
