package io.meterstore.archiver.maintenance;

import com.google.common.collect.ImmutableList;
import io.meterstore.archiver.cycle.ArchivalException;
import io.meterstore.archiver.cycle.Failpoints;
import io.meterstore.archiver.cycle.Failpoints.Failpoint;
import io.meterstore.core.ColdPartitions;
import io.meterstore.core.ErasureLog;
import io.meterstore.core.ErasureLog.Erasure;
import io.meterstore.core.ErasureLog.NewErasure;
import io.meterstore.core.ErasureLog.Trigger;
import io.meterstore.core.ErasureScope;
import io.meterstore.core.HotPartition;
import io.meterstore.core.HotTier;
import io.meterstore.core.PartitionMonths;
import io.meterstore.core.Tier;
import io.meterstore.core.TierSplit;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.core.WatermarkRepublished;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFiles;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.io.CloseableIterable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

import static com.google.common.base.Preconditions.checkArgument;
import static io.meterstore.archiver.cycle.ArchivalException.Reason.COMMIT_FAILED;
import static io.meterstore.archiver.cycle.ArchivalException.Reason.RETENTION_SPANS_CUT;
import static io.meterstore.core.TieringWatermark.ROW_COUNT_KEY;
import static io.meterstore.core.TieringWatermark.WATERMARK_KEY;
import static java.util.Objects.requireNonNull;

/**
 * Removes the months of a table that are entirely past the retention ({@link RetentionPeriod#cut}), month by month,
 * oldest first: the month's cold files by a metadata-only delete (Iceberg {@code DeleteFiles} of whole files of that
 * month partition, which republishes W and rewrites nothing; a file holding a row the retention keeps fails the month
 * instead of being rewritten), then its hot partitions dropped and one audit row recorded ({@link ErasureLog}, trigger
 * {@code retention}) in one PostgreSQL transaction. The month is UTC's, as Iceberg partitions it: December's partition
 * also holds the first hour of the next Berlin year, so it goes with that year.
 * <p>
 * Resumable and idempotent: the cold commit carries {@value #MONTH_KEY}, so a rerun after a crash between the commit and
 * the audit row records the row from that commit instead of a second one; a month with nothing left and its row
 * recorded is skipped. The files leave storage when the erasure it recorded is made physical ({@link ErasureCompletion}).
 */
public final class RetentionSweep
{
    /** In the summary of a retention commit: the UTC month whose files it removed, {@code 2021-03}. */
    public static final String MONTH_KEY = "meterstore.retention_month";
    public static final String USER = "meterstore-archiver";
    private static final int MAX_ATTEMPTS = 5;

    private RetentionSweep() {}

    /** The months a sweep removed: their audit rows, rows removed per tier, and the cut it applied. */
    public record Swept(Instant cut, List<YearMonth> months, long coldRows, long hotRows)
    {
        public Swept
        {
            requireNonNull(cut, "cut is null");
            months = ImmutableList.copyOf(requireNonNull(months, "months is null"));
            checkArgument(coldRows >= 0 && hotRows >= 0, "counts must not be negative");
        }

        public String describe()
        {
            if (months.isEmpty()) {
                return "no month past the retention (before %s)".formatted(TieringWatermark.formatInstant(cut));
            }
            return "%s past the retention removed (%s to %s, before %s): %s cold rows, %s hot rows".formatted(
                    ColdTierLayout.count(months.size(), "month"), months.getFirst(), months.getLast(), TieringWatermark.formatInstant(cut), coldRows, hotRows);
        }
    }

    public static Swept sweep(Table table, Connection connection, HotTier hotTier, RetentionPeriod retention, Instant now)
            throws SQLException
    {
        Instant cut = retention.cut(now);
        table.refresh();
        String tableName = hotTier.naming().table();
        Map<YearMonth, ColdMonth> coldMonths = coldMonths(table, cut);
        Map<YearMonth, List<HotPartition>> hotMonths = new HashMap<>();
        for (HotPartition partition : hotTier.partitions(connection)) {
            // a UTC month of "from", the table's partition and the unit the retention removes whole
            YearMonth month = PartitionMonths.of(partition.start());
            if (!partition.end().isAfter(cut) && !PartitionMonths.end(month).isAfter(cut)) {
                hotMonths.computeIfAbsent(month, _ -> new ArrayList<>()).add(partition);
            }
        }
        Set<YearMonth> recorded = new HashSet<>();
        Set<Long> recordedSnapshots = new HashSet<>();
        for (Erasure erasure : ErasureLog.erasures(connection, hotTier.schema(), tableName)) {
            erasure.recorded().snapshotId().ifPresent(recordedSnapshots::add);
            if (erasure.recorded().trigger() == Trigger.RETENTION) {
                erasure.recorded().scope().from().lower().map(PartitionMonths::of).ifPresent(recorded::add);
            }
        }
        // a commit of an interrupted sweep whose audit row is missing
        SortedMap<YearMonth, Snapshot> unrecorded = new TreeMap<>();
        for (Snapshot snapshot : table.snapshots()) {
            String month = snapshot.summary().get(MONTH_KEY);
            if (month != null && !recordedSnapshots.contains(snapshot.snapshotId())) {
                unrecorded.put(YearMonth.parse(month), snapshot);
            }
        }

        Set<YearMonth> months = new TreeSet<>();
        months.addAll(coldMonths.keySet());
        months.addAll(hotMonths.keySet());
        months.addAll(unrecorded.keySet());
        ImmutableList.Builder<YearMonth> swept = ImmutableList.builder();
        long coldRows = 0;
        long hotRows = 0;
        for (YearMonth month : months) {
            Optional<Snapshot> commit = Optional.ofNullable(unrecorded.get(month));
            long cold = commit.map(snapshot -> -Long.parseLong(snapshot.summary().getOrDefault(ROW_COUNT_KEY, "0"))).orElse(0L);
            Optional<ColdMonth> files = Optional.ofNullable(coldMonths.get(month));
            if (files.isPresent()) {
                Snapshot committed = deleteMonth(table, month, files.get().liveRows());
                Failpoints.hit(Failpoint.RETENTION_AFTER_COMMIT);
                commit = Optional.of(committed);
                cold = files.get().liveRows();
            }
            List<HotPartition> partitions = hotMonths.getOrDefault(month, List.of());
            if (commit.isEmpty() && (partitions.isEmpty() || recorded.contains(month))) {
                // nothing left, or only the partitions an interrupted sweep recorded but had not dropped yet
                dropPartitions(connection, hotTier, partitions);
                continue;
            }
            long hot = recordMonth(connection, hotTier, table, month, partitions, cold, commit.map(Snapshot::snapshotId), now);
            dropPartitions(connection, hotTier, partitions);
            swept.add(month);
            coldRows += cold;
            hotRows += hot;
        }
        return new Swept(cut, swept.build(), coldRows, hotRows);
    }

    /** Removes every data file of {@code month} (and the delete files against them), {@code rows} live rows, in one commit that republishes W. */
    private static Snapshot deleteMonth(Table table, YearMonth month, long rows)
    {
        for (int attempt = 1; ; attempt++) {
            table.refresh();
            TieringWatermark watermark = WatermarkReader.current(table).watermark();
            DeleteFiles delete = table.newDelete()
                    // whole files only: a file with a row outside the month fails the commit instead of being rewritten
                    .deleteFromRowFilter(PartitionMonths.iceberg(month))
                    .set(WATERMARK_KEY, watermark.toProperty())
                    .set(ROW_COUNT_KEY, String.valueOf(-rows))
                    .set(MONTH_KEY, month.toString());
            delete.validateWith(new WatermarkRepublished(watermark));
            try {
                delete.commit();
                table.refresh();
                return table.currentSnapshot();
            }
            catch (ValidationException e) {
                throw new ArchivalException(RETENTION_SPANS_CUT, "A file of month %s of table '%s' holds rows outside the month, which the retention would have to rewrite (%s): compact the month ('compact') and run 'expire' again"
                        .formatted(month, table.name(), e.getMessage()), e);
            }
            catch (CommitFailedException e) {
                if (attempt >= MAX_ATTEMPTS) {
                    throw new ArchivalException(COMMIT_FAILED, "Removing month %s of table '%s' past the retention lost the commit race %s times: run 'expire' again later"
                            .formatted(month, table.name(), attempt), e);
                }
            }
        }
    }

    /** Records the month's audit row, counting the rows of its hot partitions that queries still see; returns that count. */
    private static long recordMonth(Connection connection, HotTier hotTier, Table table, YearMonth month, List<HotPartition> partitions, long coldRows, Optional<Long> snapshotId, Instant now)
            throws SQLException
    {
        TieringWatermark watermark = WatermarkReader.current(table).watermark();
        long hotRows = 0;
        for (HotPartition partition : partitions) {
            // a partition below W was archived: its rows were counted in the cold tier
            if (!partition.isBelow(watermark)) {
                hotRows += hotTier.rowCount(connection, partition.name());
            }
        }
        // recorded before the drop: a rerun after a crash in between drops what is left without a second row
        ErasureLog.record(connection, hotTier.schema(), new NewErasure(hotTier.naming().table(), Trigger.RETENTION, USER, now, Optional.empty(),
                new ErasureScope(Optional.empty(), Optional.empty(), new TierSplit.Range(Optional.of(PartitionMonths.start(month)), Optional.of(PartitionMonths.end(month)))),
                hotRows, coldRows, snapshotId));
        return hotRows;
    }

    private static void dropPartitions(Connection connection, HotTier hotTier, List<HotPartition> partitions)
            throws SQLException
    {
        for (HotPartition partition : partitions) {
            if (partition.attached()) {
                hotTier.detach(connection, partition.name());
            }
            hotTier.drop(connection, partition.name());
        }
    }

    /**
     * A month's live files below the cut: its data files (of every partition of the month), and the position delete
     * files that apply to them. A position delete file lies in the partition of the rows it deletes, so a month's are
     * all among its files' tasks.
     */
    private record ColdMonth(List<DataFile> files, Map<String, Long> positionDeletes)
    {
        /**
         * The rows queries see in the month: its files' rows less those deleted by position (a late correction's superseded
         * winner stays in its file, hidden by a position delete, with its copy in a superseded file: counted once).
         */
        long liveRows()
        {
            return files.stream().mapToLong(DataFile::recordCount).sum() - positionDeletes.values().stream().mapToLong(Long::longValue).sum();
        }
    }

    /** The live files of the current snapshot in UTC months that end at or before {@code cut}, by month. */
    private static Map<YearMonth, ColdMonth> coldMonths(Table table, Instant cut)
    {
        Map<YearMonth, ColdMonth> months = new TreeMap<>();
        if (table.currentSnapshot() == null) {
            return months;
        }
        try (CloseableIterable<FileScanTask> tasks = table.newScan().filter(Tier.COLD.iceberg(cut)).planFiles()) {
            for (FileScanTask task : tasks) {
                YearMonth month = ColdPartitions.month(task.file());
                if (!PartitionMonths.end(month).isAfter(cut)) {
                    ColdMonth cold = months.computeIfAbsent(month, _ -> new ColdMonth(new ArrayList<>(), new HashMap<>()));
                    cold.files().add(task.file());
                    task.deletes().stream()
                            .filter(delete -> delete.content() == FileContent.POSITION_DELETES)
                            .forEach(delete -> cold.positionDeletes().put(delete.location(), delete.recordCount()));
                }
            }
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return months;
    }

}
