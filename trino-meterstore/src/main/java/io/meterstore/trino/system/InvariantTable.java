package io.meterstore.trino.system;

import com.google.common.collect.ImmutableList;
import io.meterstore.core.InvariantLog;
import io.meterstore.core.InvariantLog.LoggedCheck;
import io.meterstore.core.InvariantReport;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.InMemoryRecordSet;
import io.trino.spi.connector.SchemaTableName;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.TupleDomain;

import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import static io.airlift.slice.Slices.utf8Slice;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_HOT_READ_FAILED;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.BooleanType.BOOLEAN;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * {@code "<table>$invariant"}: the tiering invariant as the archiver service last checked it ({@code check = 'last'}, recorded
 * after each of its cycles) and as a fresh check finds it now ({@code check = 'fresh'}, the check
 * {@code status} runs, from metadata and PostgreSQL's catalogue). One row per violation, or one row that holds; a
 * query that filters {@code check = 'last'} runs no fresh check.
 */
final class InvariantTable
        extends MeterstoreSystemTable
{
    private static final int CHECK_COLUMN = 0;

    private final TableInspector inspector;

    InvariantTable(SchemaTableName name, TableInspector inspector)
    {
        super(name, ImmutableList.of(
                column("check", VARCHAR),
                column("checked_at", TIMESTAMP),
                column("watermark", TIMESTAMP),
                column("snapshot_id", BIGINT),
                column("holds", BOOLEAN),
                column("violation", VARCHAR)));
        this.inspector = requireNonNull(inspector, "inspector is null");
    }

    @Override
    void addRows(InMemoryRecordSet.Builder rows, ConnectorSession session, TupleDomain<Integer> constraint)
    {
        if (wanted(constraint, "last")) {
            Optional<LoggedCheck> last;
            try {
                last = inspector.read(connection -> InvariantLog.last(connection, inspector.hotTier()));
            }
            catch (SQLException e) {
                throw new TrinoException(METERSTORE_HOT_READ_FAILED, "Cannot read the last invariant check of table '%s': %s".formatted(inspector.table(), e.getMessage()), e);
            }
            last.ifPresent(check -> add(rows, "last", check.checkedAt(), check.watermark().instant(), check.snapshotId(), check.violations()));
        }
        if (wanted(constraint, "fresh")) {
            InvariantReport report = inspector.inspect(session).invariant();
            add(rows, "fresh", session.getStart(), report.watermark().instant(), report.snapshotId(), report.violations());
        }
    }

    private static void add(InMemoryRecordSet.Builder rows, String check, Instant checkedAt, Instant watermark, Optional<Long> snapshotId, List<String> violations)
    {
        if (violations.isEmpty()) {
            rows.addRow(check, timestamp(checkedAt), timestamp(watermark), snapshotId.orElse(null), true, null);
            return;
        }
        for (String violation : violations) {
            rows.addRow(check, timestamp(checkedAt), timestamp(watermark), snapshotId.orElse(null), false, violation);
        }
    }

    private static boolean wanted(TupleDomain<Integer> constraint, String check)
    {
        Optional<Domain> domain = constraint.getDomains().map(domains -> domains.get(CHECK_COLUMN));
        if (constraint.isNone()) {
            return false;
        }
        return domain.isEmpty() || domain.get().includesNullableValue(utf8Slice(check));
    }
}
