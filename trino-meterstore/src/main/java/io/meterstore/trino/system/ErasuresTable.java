package io.meterstore.trino.system;

import com.google.common.collect.ImmutableList;
import io.meterstore.core.ErasureLog;
import io.meterstore.core.ErasureLog.Erasure;
import io.meterstore.core.ErasureLog.Lift;
import io.meterstore.core.ErasureLog.NewErasure;
import io.meterstore.trino.base.MeterstoreTypes;
import io.trino.spi.TrinoException;
import io.trino.spi.block.Block;
import io.trino.spi.block.BlockBuilder;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.InMemoryRecordSet;
import io.trino.spi.connector.SchemaTableName;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.type.ArrayType;

import java.sql.SQLException;
import java.util.List;
import java.util.Optional;
import java.util.SortedSet;

import static io.airlift.slice.Slices.utf8Slice;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_HOT_READ_FAILED;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * {@code "<table>$erasures"}: the audit trail of the table's erasures, one row per DELETE (or retention month), from
 * PostgreSQL's {@code meterstore_erasures}. The scope is the HMAC of each erased malo_id, never the id: whoever reads
 * the trail learns what was erased only if they already know the malo_id and the key.
 */
final class ErasuresTable
        extends MeterstoreSystemTable
{
    private static final ArrayType TEXTS = new ArrayType(VARCHAR);

    private final TableInspector inspector;
    private final String schema;

    ErasuresTable(SchemaTableName name, TableInspector inspector, String schema)
    {
        super(name, ImmutableList.of(
                column("erasure_id", BIGINT),
                column("trigger", VARCHAR),
                column("trino_user", VARCHAR),
                column("statement_time", TIMESTAMP),
                column("scope", TEXTS),
                column("obis_codes", TEXTS),
                column("from_start", MeterstoreTypes.TIMESTAMP_TZ_MICROS),
                column("from_end", MeterstoreTypes.TIMESTAMP_TZ_MICROS),
                column("rows_removed_hot", BIGINT),
                column("rows_removed_cold", BIGINT),
                column("snapshot_id", BIGINT),
                column("physically_completed_at", TIMESTAMP),
                column("lifted_at", TIMESTAMP),
                column("lifted_by", VARCHAR),
                column("lift_reason", VARCHAR),
                column("key_fingerprint", VARCHAR)));
        this.inspector = requireNonNull(inspector, "inspector is null");
        this.schema = requireNonNull(schema, "schema is null");
    }

    @Override
    void addRows(InMemoryRecordSet.Builder rows, ConnectorSession session, TupleDomain<Integer> constraint)
    {
        List<Erasure> erasures;
        try {
            erasures = inspector.read(connection -> ErasureLog.erasures(connection, schema, inspector.storageTable()));
        }
        catch (SQLException e) {
            throw new TrinoException(METERSTORE_HOT_READ_FAILED, "Cannot read the erasures of table '%s': %s".formatted(inspector.table(), e.getMessage()), e);
        }
        for (Erasure erasure : erasures) {
            NewErasure recorded = erasure.recorded();
            Optional<Lift> lift = erasure.lift();
            rows.addRow(
                    erasure.erasureId(),
                    recorded.trigger().sqlName(),
                    recorded.user(),
                    timestamp(recorded.statementTime()),
                    texts(recorded.scope().maloScopes()),
                    texts(recorded.scope().obisCodes()),
                    recorded.scope().from().lower().map(instant -> MeterstoreTypes.toTimestamp(MeterstoreTypes.toEpochMicros(instant))).orElse(null),
                    recorded.scope().from().upper().map(instant -> MeterstoreTypes.toTimestamp(MeterstoreTypes.toEpochMicros(instant))).orElse(null),
                    recorded.rowsRemovedHot(),
                    recorded.rowsRemovedCold(),
                    recorded.snapshotId().orElse(null),
                    timestamp(erasure.physicallyCompletedAt()),
                    timestamp(lift.map(Lift::liftedAt)),
                    lift.map(Lift::liftedBy).orElse(null),
                    lift.map(Lift::reason).orElse(null),
                    recorded.keyFingerprint().orElse(null));
        }
    }

    // NULL: every value (a retention sweep's malo_ids, an erasure of every OBIS code)
    private static Block texts(Optional<SortedSet<String>> values)
    {
        if (values.isEmpty()) {
            return null;
        }
        BlockBuilder builder = VARCHAR.createBlockBuilder(null, values.get().size());
        values.get().forEach(value -> VARCHAR.writeSlice(builder, utf8Slice(value)));
        return builder.build();
    }
}
