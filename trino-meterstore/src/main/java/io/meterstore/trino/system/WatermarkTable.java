package io.meterstore.trino.system;

import com.google.common.collect.ImmutableList;
import io.meterstore.core.ArchivalHistory;
import io.meterstore.core.ArchivalHistory.MeterstoreCommit;
import io.meterstore.core.TableStatus;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.InMemoryRecordSet;
import io.trino.spi.connector.SchemaTableName;
import io.trino.spi.predicate.TupleDomain;

import java.util.List;
import java.util.Optional;

import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.BooleanType.BOOLEAN;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/** {@code "<table>$watermark"}: one row, where W stands and whether the table is healthy. */
final class WatermarkTable
        extends MeterstoreSystemTable
{
    private final TableInspector inspector;

    WatermarkTable(SchemaTableName name, TableInspector inspector)
    {
        super(name, ImmutableList.of(
                column("table_name", VARCHAR),
                column("watermark", TIMESTAMP),
                column("watermark_snapshot_id", BIGINT),
                column("current_snapshot_id", BIGINT),
                column("archived_at", TIMESTAMP),
                column("watermark_lag_seconds", BIGINT),
                column("archival_step_seconds", BIGINT),
                column("settlement_lag_seconds", BIGINT),
                column("reader_grace_seconds", BIGINT),
                column("hot_partitions", BIGINT),
                column("partitions_ahead", BIGINT),
                column("invariant_violations", BIGINT),
                column("behind", BOOLEAN),
                column("healthy", BOOLEAN)));
        this.inspector = requireNonNull(inspector, "inspector is null");
    }

    @Override
    void addRows(InMemoryRecordSet.Builder rows, ConnectorSession session, TupleDomain<Integer> constraint)
    {
        TableInspector.Inspection inspection = inspector.inspect(session);
        TableStatus status = inspection.status();
        List<MeterstoreCommit> commits = ArchivalHistory.meterstoreCommits(inspection.icebergTable());
        Optional<MeterstoreCommit> carrier = commits.stream().findFirst();
        Optional<MeterstoreCommit> lastArchival = commits.stream().filter(commit -> commit.kind() == ArchivalHistory.CommitKind.ARCHIVAL).findFirst();
        rows.addRow(
                inspector.table(),
                timestamp(status.invariant().watermark().instant()),
                carrier.map(MeterstoreCommit::snapshotId).orElse(null),
                status.invariant().snapshotId().orElse(null),
                timestamp(lastArchival.flatMap(MeterstoreCommit::archivedAt)),
                seconds(status.lag()),
                inspection.recordedStep().map(MeterstoreSystemTable::seconds).orElse(null),
                seconds(status.settlementLag()),
                seconds(inspector.readerGrace()),
                (long) status.hotPartitions(),
                status.partitionsAhead(),
                (long) status.invariant().violations().size(),
                status.behind(),
                status.healthy());
    }
}
