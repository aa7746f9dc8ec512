package io.meterstore.trino.system;

import com.google.common.collect.ImmutableList;
import io.meterstore.core.ArchivalHistory;
import io.meterstore.core.ArchivalHistory.ArchivalCommit;
import io.meterstore.core.HotPartition;
import io.meterstore.core.MeterstoreException;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.trino.base.MeterstoreErrorCode;
import io.meterstore.trino.hot.HotPartitionSizes;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.InMemoryRecordSet;
import io.trino.spi.connector.SchemaTableName;
import io.trino.spi.predicate.TupleDomain;
import org.apache.iceberg.Table;

import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_HOT_READ_FAILED;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.BooleanType.BOOLEAN;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * {@code "<table>$partitions"}: every hot partition, attached or detached, with its catalogue bounds, PostgreSQL's
 * estimate of its size, and its state: {@code hot}; {@code awaiting_drop} (detached below W, archived, droppable once
 * its archival commit is older than the reader grace); {@code orphan} (detached at or above W by an interrupted cycle,
 * archived whole by the next one); {@code stranded} (attached below W: its rows there are read by neither tier).
 */
final class PartitionsTable
        extends MeterstoreSystemTable
{
    private final TableInspector inspector;

    PartitionsTable(SchemaTableName name, TableInspector inspector)
    {
        super(name, ImmutableList.of(
                column("partition", VARCHAR),
                column("partition_start", TIMESTAMP),
                column("partition_end", TIMESTAMP),
                column("attached", BOOLEAN),
                column("state", VARCHAR),
                column("estimated_rows", BIGINT),
                column("estimated_bytes", BIGINT),
                column("archived_rows", BIGINT),
                column("archived_at", TIMESTAMP),
                column("droppable_at", TIMESTAMP)));
        this.inspector = requireNonNull(inspector, "inspector is null");
    }

    @Override
    void addRows(InMemoryRecordSet.Builder rows, ConnectorSession session, TupleDomain<Integer> constraint)
    {
        TieringWatermark watermark;
        List<ArchivalCommit> commits;
        Listing listing;
        try {
            // W first, partitions second, as the invariant check reads them: no false "stranded" from a concurrent cycle
            Table icebergTable = inspector.icebergTable();
            watermark = WatermarkReader.current(icebergTable).watermark();
            commits = ArchivalHistory.archivalCommits(icebergTable);
            listing = inspector.read(connection -> new Listing(inspector.hotTier().partitions(connection), HotPartitionSizes.read(connection, inspector.hotTier())));
        }
        catch (MeterstoreException e) {
            throw MeterstoreErrorCode.toTrinoException(e);
        }
        catch (SQLException e) {
            throw new TrinoException(METERSTORE_HOT_READ_FAILED, "Cannot list the partitions of table '%s': %s".formatted(inspector.table(), e.getMessage()), e);
        }
        for (HotPartition partition : listing.partitions()) {
            String state;
            Optional<ArchivalHistory.Archived> archived = Optional.empty();
            if (partition.attached()) {
                state = watermark.isHot(partition.start()) ? "hot" : "stranded";
            }
            else if (partition.isBelow(watermark)) {
                state = "awaiting_drop";
                archived = ArchivalHistory.archived(commits, partition);
            }
            else {
                state = "orphan";
            }
            Optional<HotPartitionSizes.Size> size = listing.sizes().size(partition.name());
            Optional<Instant> archivedAt = archived.map(ArchivalHistory.Archived::newestArchivedAt);
            rows.addRow(
                    partition.name(),
                    timestamp(partition.start()),
                    timestamp(partition.end()),
                    partition.attached(),
                    state,
                    size.flatMap(HotPartitionSizes.Size::rows).orElse(null),
                    size.map(HotPartitionSizes.Size::bytes).orElse(null),
                    archived.map(ArchivalHistory.Archived::rows).orElse(null),
                    timestamp(archivedAt),
                    timestamp(archivedAt.map(at -> at.plus(inspector.readerGrace()))));
        }
    }

    private record Listing(List<HotPartition> partitions, HotPartitionSizes sizes) {}
}
