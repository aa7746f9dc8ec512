package io.meterstore.trino.hot;

import com.google.common.collect.ImmutableMap;
import io.meterstore.core.HotPartition;
import io.meterstore.core.HotTier;
import io.meterstore.core.HotTierSupersession;
import io.meterstore.core.TierSplit;
import io.meterstore.trino.base.MeterstoreTables;
import io.meterstore.trino.base.MeterstoreTypes;
import io.meterstore.trino.hot.QuerySnapshots.QuerySnapshot;
import io.trino.spi.TrinoException;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;

import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_HOT_READ_FAILED;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_TABLE_NOT_FOUND;
import static java.util.Objects.requireNonNull;
import static java.util.stream.Collectors.partitioningBy;

/**
 * The splits of the hot partitions whose ranges meet the hot part of the query's "from" range: one per partition, or,
 * for a read of a few meters, one for all of them (one for the marked partitions and one for the others, whose reads
 * differ).
 */
public final class HotSplitPlanner
{
    private final MeterstoreTables tables;

    public HotSplitPlanner(MeterstoreTables tables)
    {
        this.tables = requireNonNull(tables, "tables is null");
    }

    /**
     * @param snapshot the query's snapshot: the catalogue is read in it, and every split reads its partition in it
     * @param limit a pushed LIMIT, carried by every split that does not resolve versions
     * @param resolving the read resolves versions: a marked partition's split reads its winners, and carries the limit;
     * an unmarked one's is resolved in key order, where a LIMIT could cut a key's versions short and let an older one win
     * @param oneStatement read the partitions in one statement, not one each, a short read at the pool's connections
     * ({@link HotSplit#fewMeters}): for a read of a few meters, whose rows the primary key's index finds in each partition
     */
    public HotSplitPlan plan(QuerySnapshot snapshot, String storageTable, TierSplit.Range hotRange, long watermarkEpochMicros, OptionalLong limit, boolean resolving, boolean oneStatement)
    {
        HotTier hotTier = tables.hotTier(storageTable);
        Listing listing;
        HotSnapshot snapshotId = snapshot.id();
        try {
            // the partitions the snapshot holds: one created after it holds no row the snapshot sees
            listing = snapshot.read(connection -> {
                // attached and detached alike, in one catalogue read: two reads could miss a partition detached between them
                List<HotPartition> listed = hotTier.partitions(connection);
                // only a table without partitions may have no parent either: ask only then, not on every query
                if (listed.isEmpty() && !hotTier.parentExists(connection)) {
                    throw new TrinoException(METERSTORE_TABLE_NOT_FOUND, "PostgreSQL table %s of MeterStore table '%s' does not exist: create it with 'meterstore-archiver create'"
                            .formatted(hotTier.qualifiedParent(), storageTable));
                }
                // estimates for the splits' weights; a partition missing here only gets the standard weight
                return new Listing(listed, HotPartitionSizes.read(connection, hotTier), HotTierSupersession.markedPartitions(connection, hotTier.schema()));
            });
        }
        catch (SQLException e) {
            throw new TrinoException(METERSTORE_HOT_READ_FAILED, "Cannot list the partitions of %s: %s".formatted(hotTier.qualifiedParent(), e.getMessage()), e);
        }
        List<HotSplit> splits = new ArrayList<>();
        ImmutableMap.Builder<String, TierSplit.Range> ranges = ImmutableMap.builder();
        for (HotPartition partition : listing.partitions()) {
            if (partition.overlaps(hotRange.lower().orElseThrow(), hotRange.upper())) {
                boolean marked = listing.marked().contains(partition.name());
                splits.add(new HotSplit(
                        snapshotId,
                        tables.schema(),
                        List.of(partition.name()),
                        watermarkEpochMicros,
                        hotRange.lower().map(MeterstoreTypes::toEpochMicros),
                        hotRange.upper().map(MeterstoreTypes::toEpochMicros),
                        resolving && !marked ? OptionalLong.empty() : limit,
                        listing.sizes().size(partition.name()).map(HotPartitionSizes.Size::bytes).orElse(0L),
                        marked,
                        oneStatement));
                ranges.put(partition.name(), partition.range());
            }
        }
        return new HotSplitPlan(oneStatement ? oneStatement(splits) : splits, listing.partitions().size(), ranges.buildOrThrow());
    }

    // the partitions' splits as one split for the marked ones and one for the others: their statements differ
    private static List<HotSplit> oneStatement(List<HotSplit> splits)
    {
        return splits.stream()
                .collect(partitioningBy(HotSplit::marked))
                .values().stream()
                .filter(kind -> !kind.isEmpty())
                .map(kind -> {
                    HotSplit first = kind.getFirst();
                    return new HotSplit(
                            first.snapshot(),
                            first.schema(),
                            kind.stream().flatMap(split -> split.partitions().stream()).toList(),
                            first.watermarkEpochMicros(),
                            first.lowerEpochMicros(),
                            first.upperEpochMicros(),
                            first.limit(),
                            kind.stream().mapToLong(HotSplit::estimatedBytes).sum(),
                            first.marked(),
                            true);
                })
                .toList();
    }

    private record Listing(List<HotPartition> partitions, HotPartitionSizes sizes, Set<String> marked) {}
}
