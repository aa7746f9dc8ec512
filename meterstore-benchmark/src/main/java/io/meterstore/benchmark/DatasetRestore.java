package io.meterstore.benchmark;

import io.airlift.log.Logger;
import io.meterstore.core.HotPartition;
import io.meterstore.core.Sql;
import org.apache.iceberg.ExpireSnapshots;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.util.SnapshotUtil;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * The kept dataset as a row that archives found it (D1, W1), and putting it back afterwards, so that later runs measure
 * the same data: the Iceberg table rolled back to its snapshot before and the snapshots after it expired, the
 * partitions archived since attached again, and the row's own corrections (by their source kind) deleted.
 */
final class DatasetRestore
{
    private static final Logger log = Logger.get(DatasetRestore.class);

    private final BenchmarkDataset dataset;
    private final Table table;
    private final long snapshotBefore;
    private final List<String> attachedBefore;

    private DatasetRestore(BenchmarkDataset dataset, Table table, long snapshotBefore, List<String> attachedBefore)
    {
        this.dataset = requireNonNull(dataset, "dataset is null");
        this.table = requireNonNull(table, "table is null");
        this.snapshotBefore = snapshotBefore;
        this.attachedBefore = List.copyOf(attachedBefore);
    }

    /** The dataset as it is now. */
    static DatasetRestore capture(BenchmarkDataset dataset)
            throws SQLException
    {
        Table table = dataset.warehouse().catalog().loadTable(TableIdentifier.of(BenchmarkDataset.SCHEMA, BenchmarkDataset.TABLE));
        try (Connection connection = dataset.database().connect()) {
            List<String> attached = BenchmarkDataset.HOT_TIER.partitions(connection).stream().filter(HotPartition::attached).map(HotPartition::name).toList();
            return new DatasetRestore(dataset, table, table.currentSnapshot().snapshotId(), attached);
        }
    }

    Table table()
    {
        return table;
    }

    /** Puts the dataset back as it was captured, deleting the rows of {@code sourceKind} written since. */
    void restore(String row, Optional<String> sourceKind)
    {
        try {
            table.refresh();
            List<Long> added = new ArrayList<>();
            for (Snapshot snapshot : SnapshotUtil.ancestorsOf(table.currentSnapshot().snapshotId(), table::snapshot)) {
                if (snapshot.snapshotId() == snapshotBefore) {
                    break;
                }
                added.add(snapshot.snapshotId());
            }
            if (!added.isEmpty()) {
                table.manageSnapshots().rollbackTo(snapshotBefore).commit();
                // their files go with them: the correction and archival files the row wrote
                ExpireSnapshots expire = table.expireSnapshots();
                added.forEach(expire::expireSnapshotId);
                expire.commit();
            }
            try (Connection connection = dataset.database().connect(); Statement statement = connection.createStatement()) {
                for (HotPartition partition : BenchmarkDataset.HOT_TIER.partitions(connection)) {
                    if (!partition.attached() && attachedBefore.contains(partition.name())) {
                        String name = BenchmarkDataset.HOT_TIER.qualifiedPartition(partition.name());
                        if (sourceKind.isPresent()) {
                            try (PreparedStatement delete = connection.prepareStatement("DELETE FROM %s WHERE source_kind = ?".formatted(name))) {
                                delete.setString(1, sourceKind.get());
                                delete.executeUpdate();
                            }
                        }
                        Instant end = partition.start().plus(BenchmarkDataset.HOT_TIER.naming().step());
                        statement.execute("ALTER TABLE %s ATTACH PARTITION %s FOR VALUES FROM ('%s') TO ('%s')".formatted(
                                BenchmarkDataset.HOT_TIER.qualifiedParent(), name, partition.start(), end));
                    }
                }
                if (sourceKind.isPresent()) {
                    try (PreparedStatement delete = connection.prepareStatement("DELETE FROM %s WHERE source_kind = ?".formatted(BenchmarkDataset.HOT_TIER.qualifiedParent()))) {
                        delete.setString(1, sourceKind.get());
                        log.info("%s: restored the dataset; %s corrections deleted from PostgreSQL", row, delete.executeUpdate());
                    }
                }
                statement.execute("VACUUM (ANALYZE) " + Sql.qualified(BenchmarkDataset.SCHEMA, BenchmarkDataset.TABLE));
            }
        }
        catch (SQLException | RuntimeException e) {
            log.error(e, "%s could not restore the dataset: delete its directory (benchmark.dir) to make it anew", row);
        }
    }
}
