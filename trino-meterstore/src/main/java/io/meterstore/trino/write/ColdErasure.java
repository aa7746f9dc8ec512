package io.meterstore.trino.write;

import com.google.common.collect.ImmutableList;
import io.airlift.log.Logger;
import io.meterstore.core.ColdFileRole;
import io.meterstore.core.ColdPartitions;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.TableColumns;
import io.meterstore.parquet.LiveRowsMerge;
import io.meterstore.parquet.LiveRowsMerge.LiveFile;
import io.meterstore.parquet.MonthFileWriter;
import io.meterstore.parquet.PositionDeleteRows;
import io.meterstore.trino.base.MeterstoreTypes;
import io.trino.spi.Page;
import io.trino.spi.block.Block;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.io.CloseableIterable;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * The cold half of an erasure: the data files of the pinned snapshot that hold an erased row, each rewritten without
 * it. Files are found by Iceberg's pruning (month partitions and the malo_id, obis_code and "from" bounds of the
 * manifests) and then read whole; a file none of whose rows is erased, live or deleted by position, is left as it is.
 * A rewrite keeps its file's role in the resolved layout (a winners file minus whole keys still holds one winner per key
 * it holds) and applies the file's position deletes as it goes, so the delete files that applied to it alone leave with it: the
 * rewrite's row positions are new, and a delete file left behind would name positions of a file no longer live.
 * Nothing is visible until the caller commits {@link Rewrite} ({@code CorrectionCommitter.commitErasure}).
 */
final class ColdErasure
{
    private static final Logger log = Logger.get(ColdErasure.class);
    private static final int PAGE_ROWS = 4096;
    private static final int MALO_ID = ReadingsColumn.MALO_ID.ordinal();
    private static final int OBIS_CODE = ReadingsColumn.OBIS_CODE.ordinal();
    private static final int FROM = ReadingsColumn.FROM.ordinal();

    private ColdErasure() {}

    /** What the erasure changes in the cold tier: files out, rewrites in, and the rows erased. */
    record Rewrite(List<DataFile> removedData, List<DeleteFile> removedDeletes, List<DataFile> addedData, long erasedRows)
    {
        Rewrite
        {
            removedData = ImmutableList.copyOf(removedData);
            removedDeletes = ImmutableList.copyOf(removedDeletes);
            addedData = ImmutableList.copyOf(addedData);
        }

        boolean isEmpty()
        {
            return erasedRows == 0;
        }
    }

    /**
     * Rewrites every data file of snapshot {@code snapshotId} that {@code filter} keeps and that holds a live row
     * {@code request} erases. On failure every file written is deleted.
     */
    static Rewrite rewrite(Table table, long snapshotId, Expression filter, ErasureRequest request, String namePrefix, long targetFileSize)
    {
        requireNonNull(request, "request is null");
        Map<String, FileScanTask> tasks = new LinkedHashMap<>();
        try (CloseableIterable<FileScanTask> planned = table.newScan().useSnapshot(snapshotId).filter(filter).planFiles()) {
            for (FileScanTask task : planned) {
                tasks.putIfAbsent(task.file().location(), task);
            }
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<DataFile> removedData = new ArrayList<>();
        List<DeleteFile> removedDeletes = new ArrayList<>();
        List<DataFile> addedData = new ArrayList<>();
        long erased = 0;
        int sequence = 0;
        try {
            for (FileScanTask task : tasks.values()) {
                sequence++;
                DataFile file = task.file();
                long[] deleted = deletedPositions(table, task);
                Optional<ColdFileRole> role = ColdFileRole.of(file.location()).filter(fileRole -> fileRole != ColdFileRole.POSITION_DELETES);
                MonthFileWriter writer = new MonthFileWriter(table, ColdPartitions.month(file), "%s-%05d".formatted(namePrefix, sequence), role, targetFileSize);
                long[] erasedInFile = {0};
                try {
                    LiveRowsMerge.merge(TableColumns.of(table), table.io(), List.of(new LiveFile(file.location(), file.fileSizeInBytes(), deleted)), PAGE_ROWS, page -> {
                        Page kept = withoutErased(page, request);
                        erasedInFile[0] += page.getPositionCount() - kept.getPositionCount();
                        writer.write(kept);
                    });
                }
                catch (IOException | RuntimeException e) {
                    writer.abort();
                    throw e;
                }
                if (erasedInFile[0] == 0 && (deleted.length == 0 || !holdsErasedRow(table, file, request))) {
                    // pruning kept it, but no row of it is erased, live or deleted by position: it stays as it is
                    writer.abort();
                    continue;
                }
                addedData.addAll(writer.finish());
                removedData.add(file);
                erased += erasedInFile[0];
                for (DeleteFile delete : task.deletes()) {
                    // a delete file naming other data files too still applies to them
                    if (file.location().equals(delete.referencedDataFile())) {
                        removedDeletes.add(delete);
                    }
                }
                log.debug("Erasure rewrites '%s': %s rows erased", file.location(), erasedInFile[0]);
            }
        }
        catch (IOException | RuntimeException e) {
            delete(table, addedData);
            if (e instanceof IOException ioException) {
                throw new UncheckedIOException(ioException);
            }
            throw (RuntimeException) e;
        }
        return new Rewrite(removedData, removedDeletes, addedData, erased);
    }

    /**
     * Whether any row of {@code file}, its position-deleted ones included, is erased. A winners file keeps a winner
     * that a late correction superseded, hidden by a position delete: the erasure must rewrite the file all the same,
     * or the erased reading stays on disk in a live file that no expiry ever removes.
     */
    private static boolean holdsErasedRow(Table table, DataFile file, ErasureRequest request)
            throws IOException
    {
        long[] erased = {0};
        LiveRowsMerge.merge(TableColumns.of(table), table.io(), List.of(new LiveFile(file.location(), file.fileSizeInBytes(), new long[0])), PAGE_ROWS,
                page -> erased[0] += page.getPositionCount() - withoutErased(page, request).getPositionCount());
        return erased[0] > 0;
    }

    /** Deletes the rewrites of an erasure that was not committed. */
    static void abort(Table table, Rewrite rewrite)
    {
        delete(table, rewrite.addedData());
    }

    private static void delete(Table table, List<DataFile> files)
    {
        for (DataFile file : files) {
            try {
                table.io().deleteFile(file.location());
            }
            catch (RuntimeException e) {
                log.warn(e, "Cannot delete uncommitted file '%s'; it is an orphan now", file.location());
            }
        }
    }

    private static long[] deletedPositions(Table table, FileScanTask task)
            throws IOException
    {
        Map<String, List<Long>> deleted = new HashMap<>();
        for (DeleteFile delete : task.deletes()) {
            if (delete.content() != FileContent.POSITION_DELETES) {
                throw new IllegalStateException("Data file '%s' has equality delete file '%s', which MeterStore does not apply: rewrite the month without it (e.g. the archiver's compact) and run the DELETE again"
                        .formatted(task.file().location(), delete.location()));
            }
            PositionDeleteRows.read(table.io(), delete.location(), delete.fileSizeInBytes(), deleted);
        }
        long rows = task.file().recordCount();
        return new TreeSet<>(deleted.getOrDefault(task.file().location(), List.of())).stream()
                .mapToLong(Long::longValue)
                .filter(position -> position >= 0 && position < rows)
                .toArray();
    }

    private static Page withoutErased(Page page, ErasureRequest request)
    {
        Block maloIds = page.getBlock(MALO_ID);
        Block obisCodes = page.getBlock(OBIS_CODE);
        Block from = page.getBlock(FROM);
        int[] kept = new int[page.getPositionCount()];
        int count = 0;
        for (int position = 0; position < page.getPositionCount(); position++) {
            boolean erased = request.matches(
                    VARCHAR.getSlice(maloIds, position).toStringUtf8(),
                    VARCHAR.getSlice(obisCodes, position).toStringUtf8(),
                    MeterstoreTypes.fromEpochMicros(MeterstoreTypes.epochMicros(from, position)));
            if (!erased) {
                kept[count++] = position;
            }
        }
        return count == page.getPositionCount() ? page : page.getPositions(kept, 0, count);
    }
}
