package io.meterstore.archiver.cli;

import io.meterstore.archiver.maintenance.ErasureCompletion;
import io.meterstore.archiver.maintenance.MaintenanceClock;
import io.meterstore.archiver.tables.ArchiverTables;
import io.meterstore.core.ErasureLog;
import io.meterstore.core.ErasureLog.Erasure;
import io.meterstore.core.ErasureLog.NewErasure;
import io.meterstore.core.HotTier;
import org.apache.iceberg.Table;

import java.io.PrintStream;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import static io.meterstore.core.TieringWatermark.formatInstant;
import static java.util.Objects.requireNonNull;

/**
 * {@code erasures}: the audit trail of each table's erasures, as {@code "<table>$erasures"} has it, one line per erasure
 * (a DELETE, or one month of the retention sweep): who, when, the scope as HMACs of the malo_ids under the key with the
 * printed fingerprint (never a malo_id), the OBIS codes and "from" range, rows removed per tier, the Iceberg commit, when
 * it became physical (or when it is due to) and its lift.
 */
final class ErasuresReport
{
    private final ArchiverTables tables;
    private final MaintenanceClock clock;
    private final PrintStream out;

    ErasuresReport(ArchiverTables tables, InstantSource clock, PrintStream out)
    {
        this.tables = requireNonNull(tables, "tables is null");
        this.clock = MaintenanceClock.of(clock);
        this.out = requireNonNull(out, "out is null");
    }

    void print(String table)
            throws SQLException
    {
        HotTier hotTier = tables.hotTier(table);
        Table icebergTable = tables.catalog().loadTable(tables.identifier(table));
        try (Connection connection = tables.connect()) {
            List<Erasure> erasures = ErasureLog.erasures(connection, hotTier.schema(), table);
            Map<Long, ErasureCompletion.Awaiting> awaiting = ErasureCompletion.awaiting(icebergTable, connection, hotTier.schema(), table, tables.tiers().getReaderGrace().toJavaTime(), clock).stream()
                    .collect(Collectors.toMap(ErasureCompletion.Awaiting::erasureId, Function.identity()));
            out.println("%s: %s, %s awaiting physical completion".formatted(tables.qualifiedName(table), erasures.size() == 1 ? "1 erasure" : erasures.size() + " erasures", awaiting.size()));
            for (Erasure erasure : erasures) {
                out.println("  " + describe(erasure, awaiting.containsKey(erasure.erasureId()) ? "awaiting, due " + formatInstant(awaiting.get(erasure.erasureId()).due()) : ""));
            }
        }
    }

    /** One line: {@code #3 request by alice at ...; ...}. */
    static String describe(Erasure erasure, String awaiting)
    {
        NewErasure recorded = erasure.recorded();
        String scope = recorded.scope().maloScopes()
                .map(scopes -> "malo_id HMACs [%s] (key %s)".formatted(String.join(", ", scopes), recorded.keyFingerprint().orElseThrow()))
                .orElse("every malo_id");
        return "#%s %s by %s at %s; %s, %s; removed %s hot, %s cold rows%s; physical %s; lifted %s".formatted(
                erasure.erasureId(),
                recorded.trigger().sqlName(),
                recorded.user(),
                formatInstant(recorded.statementTime()),
                scope,
                recorded.scope().describe(),
                recorded.rowsRemovedHot(),
                recorded.rowsRemovedCold(),
                recorded.snapshotId().map(id -> " in snapshot " + id).orElse(""),
                erasure.physicallyCompletedAt().map(completed -> "since " + formatInstant(completed)).orElse(awaiting.isEmpty() ? "not yet" : awaiting),
                erasure.lift().map(lift -> "at %s by %s: %s".formatted(formatInstant(lift.liftedAt()), lift.liftedBy(), lift.reason())).orElse("no"));
    }
}
