package io.meterstore.benchmark;

import com.google.common.collect.Iterables;
import io.meterstore.core.ColdPartitions;
import io.meterstore.testing.TestingWarehouse;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.SupportsPrefixOperations;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDate;
import java.time.YearMonth;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

import static java.util.Objects.requireNonNull;

/**
 * How the soak's store looks after a simulated day: Iceberg's files per month of data, metadata files, snapshots and
 * manifests, the hot tier's size in PostgreSQL (tables, indexes, dead tuples) and the driver's heap after a GC.
 */
record SoakGrowth(
        LocalDate day,
        SortedMap<YearMonth, MonthFiles> filesPerMonth,
        Optional<Long> metadataFiles,
        int snapshots,
        int manifests,
        long hotTableBytes,
        long hotIndexBytes,
        long hotDeadTuples,
        int hotPartitions,
        long heapAfterGcBytes)
{
    /** The data and delete files of one month of "from" in the current snapshot. */
    record MonthFiles(int dataFiles, int deleteFiles) {}

    SoakGrowth
    {
        requireNonNull(day, "day is null");
        filesPerMonth = new TreeMap<>(filesPerMonth);
        requireNonNull(metadataFiles, "metadataFiles is null");
    }

    int dataFiles()
    {
        return filesPerMonth.values().stream().mapToInt(MonthFiles::dataFiles).sum();
    }

    int deleteFiles()
    {
        return filesPerMonth.values().stream().mapToInt(MonthFiles::deleteFiles).sum();
    }

    static SoakGrowth measure(LocalDate day, Table table, TestingWarehouse warehouse)
            throws SQLException
    {
        table.refresh();
        SortedMap<YearMonth, MonthFiles> filesPerMonth = new TreeMap<>();
        int manifests = 0;
        Snapshot current = table.currentSnapshot();
        if (current != null) {
            manifests = current.allManifests(table.io()).size();
            Set<String> deletes = new HashSet<>();
            try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
                for (FileScanTask task : tasks) {
                    YearMonth month = month(task.file());
                    int newDeletes = (int) task.deletes().stream().map(ContentFile::location).filter(deletes::add).count();
                    filesPerMonth.merge(month, new MonthFiles(1, newDeletes), (known, more) -> new MonthFiles(known.dataFiles() + more.dataFiles(), known.deleteFiles() + more.deleteFiles()));
                }
            }
            catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        long tableBytes = 0;
        long indexBytes = 0;
        long deadTuples = 0;
        int partitions = 0;
        // every relation of the soak's schema: the parent's partitions, the archival windows', the suppression list
        try (Connection connection = warehouse.database().connect();
                PreparedStatement statement = connection.prepareStatement("""
                        SELECT coalesce(sum(pg_table_size(relid)), 0), coalesce(sum(pg_indexes_size(relid)), 0), coalesce(sum(n_dead_tup), 0),
                            count(*) FILTER (WHERE relname LIKE ? || '%')
                        FROM pg_stat_user_tables WHERE schemaname = ?""")) {
            statement.setString(1, BenchmarkDataset.TABLE);
            statement.setString(2, BenchmarkDataset.SCHEMA);
            try (ResultSet result = statement.executeQuery()) {
                result.next();
                tableBytes = result.getLong(1);
                indexBytes = result.getLong(2);
                deadTuples = result.getLong(3);
                partitions = result.getInt(4);
            }
        }
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        System.gc();
        return new SoakGrowth(day, filesPerMonth, metadataFiles(table), Iterables.size(table.snapshots()), manifests, tableBytes, indexBytes, deadTuples, partitions,
                memory.getHeapMemoryUsage().getUsed());
    }

    /** Every file under the table's metadata directory (metadata JSON, manifest lists, manifests), listed through its storage (S3 or local). */
    private static Optional<Long> metadataFiles(Table table)
    {
        if (!(table.io() instanceof SupportsPrefixOperations storage) || !(table instanceof HasTableOperations operations)) {
            return Optional.empty();
        }
        // Iceberg's own place for the table's metadata files (write.metadata.path, or the table's metadata/)
        return Optional.of((long) Iterables.size(storage.listPrefix(operations.operations().metadataFileLocation(""))));
    }

    private static YearMonth month(ContentFile<?> file)
    {
        return ColdPartitions.month(file);
    }
}
