package io.meterstore.trino.system;

import com.google.common.collect.ImmutableList;
import io.meterstore.core.ArchivalHistory;
import io.meterstore.core.ArchivalHistory.MeterstoreCommit;
import io.meterstore.core.MeterstoreException;
import io.meterstore.trino.base.MeterstoreErrorCode;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.InMemoryRecordSet;
import io.trino.spi.connector.SchemaTableName;
import io.trino.spi.predicate.TupleDomain;

import java.util.List;
import java.util.Locale;

import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * {@code "<table>$archival"}: one row per MeterStore commit in the current snapshot's ancestry, newest first, read from
 * the snapshot summaries that Trino's {@code "<table>$snapshots"} shows raw: archival, correction, compaction or a
 * restated watermark, the window an archival moved, rows and files added, W before and after.
 */
final class ArchivalTable
        extends MeterstoreSystemTable
{
    private final TableInspector inspector;

    ArchivalTable(SchemaTableName name, TableInspector inspector)
    {
        super(name, ImmutableList.of(
                column("snapshot_id", BIGINT),
                column("committed_at", TIMESTAMP),
                column("kind", VARCHAR),
                column("window_start", TIMESTAMP),
                column("window_end", TIMESTAMP),
                column("row_count", BIGINT),
                column("files_added", BIGINT),
                column("watermark_before", TIMESTAMP),
                column("watermark_after", TIMESTAMP),
                column("archived_at", TIMESTAMP),
                column("partition", VARCHAR)));
        this.inspector = requireNonNull(inspector, "inspector is null");
    }

    @Override
    void addRows(InMemoryRecordSet.Builder rows, ConnectorSession session, TupleDomain<Integer> constraint)
    {
        List<MeterstoreCommit> commits;
        try {
            commits = ArchivalHistory.meterstoreCommits(inspector.icebergTable());
        }
        catch (MeterstoreException e) {
            throw MeterstoreErrorCode.toTrinoException(e);
        }
        for (MeterstoreCommit commit : commits) {
            rows.addRow(
                    commit.snapshotId(),
                    timestamp(commit.committedAt()),
                    commit.kind().name().toLowerCase(Locale.ROOT),
                    timestamp(commit.windowStart()),
                    timestamp(commit.windowEnd()),
                    commit.rows().orElse(null),
                    commit.filesAdded(),
                    timestamp(commit.watermarkBefore().instant()),
                    timestamp(commit.watermarkAfter().instant()),
                    timestamp(commit.archivedAt()),
                    commit.partition().orElse(null));
        }
    }
}
