package io.meterstore.trino.cold;

import io.meterstore.core.PartitionMonths;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.Tier;
import io.meterstore.core.TierSplit;
import io.meterstore.trino.base.FromRange;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFile.PartitionFieldSummary;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * The rows of the cold tier in a "from" range, estimated from the pinned snapshot's manifest list alone: each data
 * manifest records its row count and the range of its month("from") partitions, so no manifest and no data file is
 * read. A manifest that only partly meets the range counts in proportion to the time it covers, its months cut at the
 * watermark (every cold row lies below it).
 *
 * @param rows the estimated rows in the range
 * @param lowestFrom the start of the lowest month that holds any of them; empty without rows, or if a manifest does not say
 */
public record ColdRowEstimate(long rows, Optional<Instant> lowestFrom)
{
    public static final ColdRowEstimate EMPTY = new ColdRowEstimate(0, Optional.empty());

    public ColdRowEstimate
    {
        checkArgument(rows >= 0, "rows is negative: %s", rows);
        requireNonNull(lowestFrom, "lowestFrom is null");
    }

    /**
     * @param watermark the watermark the snapshot carries
     * @param coldRange the cold part of a query's "from" range, whose upper bound is that watermark or below
     */
    public static ColdRowEstimate of(Table table, long snapshotId, Instant watermark, TierSplit.Range coldRange)
    {
        requireNonNull(watermark, "watermark is null");
        requireNonNull(table, "table is null");
        requireNonNull(coldRange, "coldRange is null");
        Snapshot snapshot = table.snapshot(snapshotId);
        if (snapshot == null || coldRange.isEmpty()) {
            return EMPTY;
        }
        int fromField = table.schema().findField(ReadingsColumn.FROM.columnName()).fieldId();
        List<ManifestFile> manifests = snapshot.dataManifests(table.io());
        double rows = 0;
        Optional<Instant> lowestFrom = Optional.empty();
        boolean boundsKnown = true;
        for (ManifestFile manifest : manifests) {
            if (manifest.addedRowsCount() == null || manifest.existingRowsCount() == null) {
                // a manifest written without row counts (format v1 writers): the snapshot's total, all of it in range
                return totalRecords(snapshot);
            }
            long manifestRows = manifest.addedRowsCount() + manifest.existingRowsCount();
            if (manifestRows == 0) {
                continue;
            }
            Optional<TierSplit.Range> months = monthRange(table.specs().get(manifest.partitionSpecId()), manifest, fromField)
                    .map(range -> belowWatermark(range, watermark));
            double fraction = months.map(range -> FromRange.share(range.lower().orElseThrow(), range.upper().orElseThrow(), coldRange)).orElse(1.0);
            if (fraction > 0) {
                rows += manifestRows * fraction;
                Optional<Instant> lower = months.flatMap(TierSplit.Range::lower);
                boundsKnown &= lower.isPresent();
                lowestFrom = lower.isEmpty() ? lowestFrom : Optional.of(lowestFrom.filter(lowest -> lowest.isBefore(lower.get())).orElse(lower.get()));
            }
        }
        long estimated = Math.round(rows);
        // one manifest without bounds could hold any "from" below W
        return estimated == 0 ? EMPTY : new ColdRowEstimate(estimated, boundsKnown ? lowestFrom : Optional.empty());
    }

    private static ColdRowEstimate totalRecords(Snapshot snapshot)
    {
        long rows = Optional.ofNullable(snapshot.summary().get(SnapshotSummary.TOTAL_RECORDS_PROP)).map(Long::parseLong).orElse(0L);
        return new ColdRowEstimate(rows, Optional.empty());
    }

    /** The months of "from" a manifest's files lie in, from its partition summary; empty if it does not say. */
    private static Optional<TierSplit.Range> monthRange(PartitionSpec spec, ManifestFile manifest, int fromField)
    {
        if (spec == null || manifest.partitions() == null) {
            return Optional.empty();
        }
        List<PartitionField> fields = spec.fields();
        for (int index = 0; index < fields.size(); index++) {
            PartitionField field = fields.get(index);
            if (field.sourceId() != fromField || !field.transform().toString().equals("month") || index >= manifest.partitions().size()) {
                continue;
            }
            PartitionFieldSummary summary = manifest.partitions().get(index);
            if (summary.lowerBound() == null || summary.upperBound() == null) {
                return Optional.empty();
            }
            int lowerMonth = Conversions.<Integer>fromByteBuffer(Types.IntegerType.get(), summary.lowerBound());
            int upperMonth = Conversions.<Integer>fromByteBuffer(Types.IntegerType.get(), summary.upperBound());
            return Optional.of(new TierSplit.Range(Optional.of(monthStart(lowerMonth)), Optional.of(monthStart(upperMonth + 1))));
        }
        return Optional.empty();
    }

    /** A manifest's months cut at the watermark: the month W falls in is only partly cold. */
    private static TierSplit.Range belowWatermark(TierSplit.Range months, Instant watermark)
    {
        TierSplit.Range cut = months.intersect(Tier.COLD.range(watermark));
        // months wholly at or above W would break the invariant; count them as they are rather than not at all
        return cut.isEmpty() ? months : cut;
    }

    private static Instant monthStart(int monthsSinceEpoch)
    {
        return PartitionMonths.start(PartitionMonths.ofPartitionValue(monthsSinceEpoch));
    }
}
