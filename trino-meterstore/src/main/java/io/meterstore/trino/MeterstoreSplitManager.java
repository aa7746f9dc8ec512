package io.meterstore.trino;

import com.google.common.collect.ImmutableList;
import com.google.inject.Inject;
import io.meterstore.core.TierSplit;
import io.meterstore.core.TieringWatermark;
import io.meterstore.trino.cold.ColdSplitPlanner;
import io.meterstore.trino.hot.HotSplitPlanner;
import io.meterstore.trino.versions.VersionResolution;
import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.ConnectorSplit;
import io.trino.spi.connector.ConnectorSplitManager;
import io.trino.spi.connector.ConnectorSplitSource;
import io.trino.spi.connector.ConnectorTableHandle;
import io.trino.spi.connector.ConnectorTransactionHandle;
import io.trino.spi.connector.Constraint;
import io.trino.spi.connector.FixedSplitSource;
import io.trino.spi.predicate.TupleDomain;
import org.apache.iceberg.Table;

import java.util.Set;

import static java.util.Objects.requireNonNull;

/**
 * Splits a query at the watermark its table handle pinned: hot splits for the partitions at or above W, cold splits
 * for the Iceberg files of the pinned snapshot below W. The two halves are disjoint, so together they are a UNION ALL.
 * A hot partition holds every version of its keys, and so does a cold split of a resolving read.
 */
public class MeterstoreSplitManager
        implements ConnectorSplitManager
{
    private final MeterstoreTables tables;
    private final HotSplitPlanner hotPlanner;
    private final ColdSplitPlanner coldPlanner;

    @Inject
    public MeterstoreSplitManager(MeterstoreTables tables, ColdSplitPlanner coldPlanner)
    {
        this.tables = requireNonNull(tables, "tables is null");
        this.hotPlanner = new HotSplitPlanner(tables);
        this.coldPlanner = requireNonNull(coldPlanner, "coldPlanner is null");
    }

    @Override
    public ConnectorSplitSource getSplits(ConnectorTransactionHandle transaction, ConnectorSession session, ConnectorTableHandle table, Set<ColumnHandle> dynamicFilterColumns, Constraint constraint)
    {
        MeterstoreTableHandle handle = (MeterstoreTableHandle) table;
        VersionResolution resolution = handle.resolution();
        TupleDomain<MeterstoreColumnHandle> predicate = resolution.pruning(handle.constraint());
        TieringWatermark watermark = TieringWatermark.of(MeterstoreTypes.fromEpochMicros(handle.watermarkEpochMicros()));
        TierSplit tiers = TierSplit.of(FromRange.of(predicate), watermark);

        ImmutableList.Builder<ConnectorSplit> splits = ImmutableList.builder();
        if (!handle.historical()) {
            tiers.hot().ifPresent(hotRange -> splits.addAll(hotPlanner.planSplits(handle.storageTable(), hotRange, handle.watermarkEpochMicros())));
        }
        if (tiers.cold().isPresent() && handle.snapshotId().isPresent()) {
            Table icebergTable = tables.loadIcebergTable(handle.storageTable());
            if (resolution.resolve()) {
                // every version of a key in one split, so the split alone resolves it
                splits.addAll(coldPlanner.planResolved(icebergTable, handle.snapshotId(), watermark, predicate));
            }
            else {
                splits.addAll(coldPlanner.plan(icebergTable, handle.snapshotId(), watermark, predicate).splits());
            }
        }
        return new FixedSplitSource(splits.build());
    }
}
