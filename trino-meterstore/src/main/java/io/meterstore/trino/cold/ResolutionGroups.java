package io.meterstore.trino.cold;

import com.google.common.collect.ImmutableList;
import io.meterstore.core.ColdFileRole;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.TableColumns;
import io.meterstore.core.MeterstoreException;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.trino.cold.RowGroupKeys.RowGroup;
import io.trino.spi.connector.ConnectorSplit;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.SortOrder;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;

import static io.meterstore.core.MeterstoreException.Reason.TABLE_LAYOUT_UNSUPPORTED;
import static java.util.Objects.requireNonNull;

/**
 * Cuts the files of one month into resolution splits, each owning a part of the merge-key space ({@link KeyRange}) and
 * reading every file that may hold a key of it, so that each split alone resolves its keys and no split reads a month
 * serially:
 * <ol>
 * <li>files whose "from" ranges overlap form a group (a day's files, with the late corrections to it);</li>
 * <li>a group larger than the target is cut into "from" slabs where few files straddle the cut (a correction that
 *     spans the month is then read by each day's split, filtered to its day), from the manifests' bounds alone;</li>
 * <li>a slab still larger than twice the target is cut by malo_id ranges taken from its files' row-group statistics,
 *     where the row groups straddling a cut (read by both sides) hold at most half a part's rows.</li>
 * </ol>
 * A group of one file that holds one version per key (a winners file, or a file whose version bounds are equal) needs
 * no resolution at all and is split at its row groups.
 */
final class ResolutionGroups
{
    // a cut is taken only while the rows it reads twice stay below these shares of a part
    private static final int SLAB_STRADDLE_SHARE = 4;
    private static final int MALO_ID_STRADDLE_SHARE = 2;

    private final Table table;
    private final long targetRows;
    private final Function<FileScanTask, List<RowGroup>> footers;
    private final Function<FileScanTask, ColdSplit> wholeFile;
    private final Consumer<FileScanTask> rowGroupSplits;
    private final Consumer<ConnectorSplit> splits;
    private final int fromField;
    private final int maloIdField;
    private final Types.NestedField versionField;

    /**
     * @param footers the row groups of a file, read from its footer
     * @param wholeFile a split of every row group of a file, with its delete files
     * @param rowGroupSplits emits the row-group splits of a file that needs no resolution
     * @param splits receives the resolution splits
     */
    ResolutionGroups(Table table, long targetRows, Function<FileScanTask, List<RowGroup>> footers, Function<FileScanTask, ColdSplit> wholeFile, Consumer<FileScanTask> rowGroupSplits, Consumer<ConnectorSplit> splits)
    {
        this.table = requireNonNull(table, "table is null");
        this.targetRows = targetRows;
        this.footers = requireNonNull(footers, "footers is null");
        this.wholeFile = requireNonNull(wholeFile, "wholeFile is null");
        this.rowGroupSplits = requireNonNull(rowGroupSplits, "rowGroupSplits is null");
        this.splits = requireNonNull(splits, "splits is null");
        this.fromField = table.schema().findField(ReadingsColumn.FROM.columnName()).fieldId();
        this.maloIdField = table.schema().findField(ReadingsColumn.MALO_ID.columnName()).fieldId();
        this.versionField = table.schema().findField(ReadingsColumn.VERSION.columnName());
    }

    /** A file with the bounds planning needs; a missing bound is open. */
    private record Bounded(FileScanTask task, long fromLower, long fromUpper, Optional<String> maloIdLower, Optional<String> maloIdUpper)
    {
        long rows()
        {
            return task.file().recordCount();
        }
    }

    void plan(List<FileScanTask> tasks)
    {
        List<Bounded> files = tasks.stream()
                .map(this::bounded)
                .sorted(Comparator.comparingLong(Bounded::fromLower))
                .toList();
        List<Bounded> group = new ArrayList<>();
        long groupUpper = Long.MIN_VALUE;
        for (Bounded file : files) {
            if (!group.isEmpty() && file.fromLower() > groupUpper) {
                planGroup(group);
                group = new ArrayList<>();
                groupUpper = Long.MIN_VALUE;
            }
            group.add(file);
            groupUpper = Math.max(groupUpper, file.fromUpper());
        }
        if (!group.isEmpty()) {
            planGroup(group);
        }
    }

    private void planGroup(List<Bounded> group)
    {
        if (group.size() == 1 && oneVersionPerKey(group.getFirst().task().file())) {
            rowGroupSplits.accept(group.getFirst().task());
            return;
        }
        // resolution reads each file once, in order: a file that is not sorted by the merge key would let two versions of a key both win
        for (Bounded file : group) {
            SortOrder sortOrder = table.sortOrders().get(file.task().file().sortOrderId());
            if (sortOrder == null || !sortOrder.sameOrder(IcebergTableSpec.sortOrder(table.schema(), TableColumns.of(table).keyNames()))) {
                throw new MeterstoreException(TABLE_LAYOUT_UNSUPPORTED,
                        "Data file '%s' of Iceberg table '%s' is not declared sorted by (malo_id, obis_code, \"from\", the key's other columns, version), so the versions of its keys cannot be resolved in one pass; read %s_versions, or rewrite the file sorted (rewrite_data_files with the table's sort order)"
                                .formatted(file.task().file().location(), table.name(), table.name()));
            }
        }
        if (rows(group) <= targetRows) {
            emit(group, KeyRange.ALL);
            return;
        }
        List<Long> cuts = fromCuts(group);
        for (int slab = 0; slab <= cuts.size(); slab++) {
            Optional<Long> lower = slab == 0 ? Optional.empty() : Optional.of(cuts.get(slab - 1));
            Optional<Long> upper = slab == cuts.size() ? Optional.empty() : Optional.of(cuts.get(slab));
            List<Bounded> slabFiles = group.stream()
                    .filter(file -> (upper.isEmpty() || file.fromLower() < upper.get()) && (lower.isEmpty() || file.fromUpper() >= lower.get()))
                    .toList();
            KeyRange slabRange = new KeyRange(lower, upper, Optional.empty(), Optional.empty());
            if (rows(slabFiles) <= 2 * targetRows) {
                emit(slabFiles, slabRange);
                continue;
            }
            planMaloIdParts(slabFiles, slabRange);
        }
    }

    /** Cuts of "from" where the files that straddle them hold few rows against the slab before them. */
    private List<Long> fromCuts(List<Bounded> group)
    {
        ImmutableList.Builder<Long> cuts = ImmutableList.builder();
        long slabRows = 0;
        for (int index = 1; index < group.size(); index++) {
            slabRows += group.get(index - 1).rows();
            long cut = group.get(index).fromLower();
            // files are in order of their lower bounds: a cut above the previous one leaves every earlier file a row below it
            if (cut <= group.get(index - 1).fromLower() || slabRows < targetRows) {
                continue;
            }
            long straddling = group.stream()
                    .filter(file -> file.fromLower() < cut && file.fromUpper() >= cut)
                    .mapToLong(Bounded::rows)
                    .sum();
            if (straddling * SLAB_STRADDLE_SHARE <= slabRows) {
                cuts.add(cut);
                slabRows = 0;
            }
        }
        return cuts.build();
    }

    /** Cuts a slab by malo_id at row-group boundaries, so that no row group is read by more than the two parts it straddles. */
    private void planMaloIdParts(List<Bounded> slab, KeyRange slabRange)
    {
        List<RowGroup> rowGroups = new ArrayList<>();
        for (Bounded file : slab) {
            for (RowGroup rowGroup : footers.apply(file.task())) {
                if (!rowGroup.hasMaloIdRange()) {
                    // without statistics there is no telling where a key's versions are: the slab stays one part
                    emit(slab, slabRange);
                    return;
                }
                rowGroups.add(rowGroup);
            }
        }
        rowGroups.sort(Comparator.comparing(rowGroup -> rowGroup.maloIdMin().orElseThrow()));
        long total = rowGroups.stream().mapToLong(RowGroup::rows).sum();
        long parts = Math.max(1, (total + targetRows - 1) / targetRows);
        long partRows = total / parts;
        List<String> cuts = new ArrayList<>();
        long accumulated = 0;
        for (int index = 0; index + 1 < rowGroups.size(); index++) {
            accumulated += rowGroups.get(index).rows();
            if (accumulated < partRows) {
                continue;
            }
            String cut = rowGroups.get(index + 1).maloIdMin().orElseThrow();
            if (cut.compareTo(rowGroups.getFirst().maloIdMin().orElseThrow()) <= 0 || (!cuts.isEmpty() && cut.compareTo(cuts.getLast()) <= 0)) {
                continue;
            }
            long straddling = rowGroups.stream()
                    .filter(rowGroup -> rowGroup.maloIdMin().orElseThrow().compareTo(cut) < 0 && rowGroup.maloIdMax().orElseThrow().compareTo(cut) >= 0)
                    .mapToLong(RowGroup::rows)
                    .sum();
            if (straddling * MALO_ID_STRADDLE_SHARE <= partRows) {
                cuts.add(cut);
                accumulated = 0;
            }
        }
        for (int part = 0; part <= cuts.size(); part++) {
            Optional<String> lower = part == 0 ? Optional.empty() : Optional.of(cuts.get(part - 1));
            Optional<String> upper = part == cuts.size() ? Optional.empty() : Optional.of(cuts.get(part));
            List<Bounded> files = slab.stream()
                    .filter(file -> (upper.isEmpty() || file.maloIdLower().isEmpty() || file.maloIdLower().get().compareTo(upper.get()) < 0)
                            && (lower.isEmpty() || file.maloIdUpper().isEmpty() || file.maloIdUpper().get().compareTo(lower.get()) >= 0))
                    .toList();
            if (!files.isEmpty()) {
                emit(files, slabRange.withMaloIds(lower, upper));
            }
        }
    }

    private void emit(List<Bounded> files, KeyRange keys)
    {
        splits.accept(new ColdFileGroupSplit(files.stream().map(file -> wholeFile.apply(file.task())).toList(), keys));
    }

    private boolean oneVersionPerKey(DataFile file)
    {
        // a winners file holds each key once, and alone in its "from" range no other file holds another version of it
        if (ColdFileRole.of(file.location()).equals(Optional.of(ColdFileRole.WINNERS))) {
            return true;
        }
        ByteBuffer lower = bound(file.lowerBounds(), versionField.fieldId());
        ByteBuffer upper = bound(file.upperBounds(), versionField.fieldId());
        if (lower == null || upper == null) {
            return false;
        }
        BigDecimal lowest = Conversions.fromByteBuffer(versionField.type(), lower);
        BigDecimal highest = Conversions.fromByteBuffer(versionField.type(), upper);
        return lowest.compareTo(highest) == 0;
    }

    private Bounded bounded(FileScanTask task)
    {
        DataFile file = task.file();
        ByteBuffer fromLower = bound(file.lowerBounds(), fromField);
        ByteBuffer fromUpper = bound(file.upperBounds(), fromField);
        ByteBuffer maloIdLower = bound(file.lowerBounds(), maloIdField);
        ByteBuffer maloIdUpper = bound(file.upperBounds(), maloIdField);
        return new Bounded(
                task,
                // a file without bounds could hold any "from": it joins every file
                fromLower == null ? Long.MIN_VALUE : Conversions.<Long>fromByteBuffer(Types.TimestampType.withZone(), fromLower),
                fromUpper == null ? Long.MAX_VALUE : Conversions.<Long>fromByteBuffer(Types.TimestampType.withZone(), fromUpper),
                // string bounds may be truncated: a truncated lower bound is a prefix (still at most the minimum), a truncated upper one is incremented
                Optional.ofNullable(maloIdLower).map(buffer -> Conversions.<CharSequence>fromByteBuffer(Types.StringType.get(), buffer).toString()),
                Optional.ofNullable(maloIdUpper).map(buffer -> Conversions.<CharSequence>fromByteBuffer(Types.StringType.get(), buffer).toString()));
    }

    private static ByteBuffer bound(Map<Integer, ByteBuffer> bounds, int fieldId)
    {
        return bounds == null ? null : bounds.get(fieldId);
    }

    private static long rows(List<Bounded> files)
    {
        return files.stream().mapToLong(Bounded::rows).sum();
    }
}
