package io.meterstore.trino.write;

import io.meterstore.core.ErasureKey;
import io.meterstore.core.ErasureLog;
import io.meterstore.core.ErasureLog.Erasure;
import io.meterstore.core.ErasureScope;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.TiersConfig;
import io.meterstore.trino.base.MeterstoreTables;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.SchemaTableName;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_ERASED;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_ERASURE_KEY_MISSING;

/**
 * The suppression list, as INSERT checks it: no row of a statement may fall in the scope of an erasure that was not
 * lifted, or the statement is refused before either tier changes. A redelivered MSCONS message thus cannot bring
 * erased readings back. Runs in the statement's transaction under its archival fence: the boundary lock, which an
 * erasure takes in exclusive mode for its hot rows and audit row, and for a statement with cold rows the cold-write
 * lock, which an erasure holds throughout: either the erasure committed before and its row is read here, or it waits
 * for this statement and then erases what it wrote. Costs nothing while the table has no erasure; otherwise one pass over the statement's
 * distinct malo_ids (their HMACs are computed here, never stored) and one probe per erased malo_id it carries.
 */
final class ErasureSuppression
{
    private ErasureSuppression() {}

    static void check(Connection connection, MeterstoreTables tables, SchemaTableName table, String storageTable, InsertStaging staging)
            throws SQLException
    {
        List<Erasure> suppressions = ErasureLog.suppressions(connection, tables.schema(), storageTable);
        if (suppressions.isEmpty()) {
            return;
        }
        List<String> maloIds = new ArrayList<>();
        try (PreparedStatement statement = connection.prepareStatement("SELECT DISTINCT malo_id FROM " + staging.qualifiedName());
                ResultSet result = statement.executeQuery()) {
            while (result.next()) {
                maloIds.add(result.getString(1));
            }
        }
        for (Erasure erasure : suppressions) {
            ErasureScope scope = erasure.recorded().scope();
            if (scope.maloScopes().isEmpty()) {
                // every malo_id (a retention sweep)
                refuseIfAny(connection, table, staging, erasure, Optional.empty());
                continue;
            }
            ErasureKey key = key(tables, table, erasure);
            for (String maloId : maloIds) {
                if (scope.matchesMalo(key.scope(maloId))) {
                    refuseIfAny(connection, table, staging, erasure, Optional.of(maloId));
                }
            }
        }
    }

    private static ErasureKey key(MeterstoreTables tables, SchemaTableName table, Erasure erasure)
    {
        ErasureKey key = tables.erasureKey().orElseThrow(() -> new TrinoException(METERSTORE_ERASURE_KEY_MISSING,
                "INSERT into '%s' is refused: the table has erasures, and without %s no row can be checked against them; set it as it was set when erasure %s was made"
                        .formatted(table, TiersConfig.ERASURE_HMAC_KEY_PROPERTY, erasure.erasureId())));
        if (!erasure.recorded().keyFingerprint().orElseThrow().equals(key.fingerprint())) {
            throw new TrinoException(METERSTORE_ERASURE_KEY_MISSING,
                    "INSERT into '%s' is refused: erasure %s was recorded under another %s (fingerprint %s, configured %s), so its readings cannot be recognised; configure the key it was made with"
                            .formatted(table, erasure.erasureId(), TiersConfig.ERASURE_HMAC_KEY_PROPERTY, erasure.recorded().keyFingerprint().orElseThrow(), key.fingerprint()));
        }
        return key;
    }

    private static void refuseIfAny(Connection connection, SchemaTableName table, InsertStaging staging, Erasure erasure, Optional<String> maloId)
            throws SQLException
    {
        ErasureScope scope = erasure.recorded().scope();
        StringBuilder sql = new StringBuilder("SELECT malo_id, obis_code, \"from\" FROM %s WHERE true".formatted(staging.qualifiedName()));
        maloId.ifPresent(_ -> sql.append(" AND malo_id = ?"));
        scope.obisCodes().ifPresent(_ -> sql.append(" AND obis_code = ANY (?)"));
        scope.from().lower().ifPresent(_ -> sql.append(" AND \"from\" >= ?"));
        scope.from().upper().ifPresent(_ -> sql.append(" AND \"from\" < ?"));
        sql.append(" ORDER BY \"from\" LIMIT 1");
        try (PreparedStatement statement = connection.prepareStatement(sql.toString())) {
            int index = 1;
            if (maloId.isPresent()) {
                statement.setString(index++, maloId.get());
            }
            if (scope.obisCodes().isPresent()) {
                statement.setArray(index++, connection.createArrayOf("text", scope.obisCodes().get().toArray()));
            }
            if (scope.from().lower().isPresent()) {
                statement.setObject(index++, OffsetDateTime.ofInstant(scope.from().lower().get(), ZoneOffset.UTC));
            }
            if (scope.from().upper().isPresent()) {
                statement.setObject(index, OffsetDateTime.ofInstant(scope.from().upper().get(), ZoneOffset.UTC));
            }
            try (ResultSet result = statement.executeQuery()) {
                if (!result.next()) {
                    return;
                }
                throw new TrinoException(METERSTORE_ERASED,
                        "INSERT into '%s' is refused: the reading of malo_id '%s', obis_code '%s' at %s was erased by erasure %s (%s, %s by '%s'); nothing was written. If the erasure was a mistake, lift it with CALL system.lift_erasure('%s', '%s', %s, '<reason>') and run the INSERT again"
                                .formatted(table, result.getString(1), result.getString(2),
                                        TieringWatermark.formatInstant(result.getObject(3, OffsetDateTime.class).toInstant()),
                                        erasure.erasureId(), scope.describe(), TieringWatermark.formatInstant(erasure.recorded().statementTime()), erasure.recorded().user(),
                                        table.getSchemaName(), table.getTableName(), erasure.erasureId()));
            }
        }
    }
}
