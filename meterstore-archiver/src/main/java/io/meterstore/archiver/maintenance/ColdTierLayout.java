package io.meterstore.archiver.maintenance;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableSortedMap;
import io.meterstore.core.ColdFileRole;
import io.meterstore.core.ColdPartitions;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.YearMonth;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * How a table's cold tier is laid out now, from its metadata alone: the data files of each month of "from" in the
 * current snapshot, its data manifests, and the snapshots the table keeps. What the archiver's metrics and
 * {@code status} show, and what month compaction chooses its months by (with the delete files, the compacted files and
 * the files of no role of each month).
 */
public record ColdTierLayout(int snapshots, Optional<Instant> oldestSnapshot, int manifests, SortedMap<YearMonth, MonthFiles> months)
{
    public static final ColdTierLayout EMPTY = new ColdTierLayout(0, Optional.empty(), 0, ImmutableSortedMap.of());

    public ColdTierLayout
    {
        requireNonNull(oldestSnapshot, "oldestSnapshot is null");
        months = ImmutableSortedMap.copyOfSorted(requireNonNull(months, "months is null"));
        checkArgument(snapshots >= 0 && manifests >= 0, "counts must not be negative");
    }

    /**
     * The files of one month: its data files, their rows and bytes; its delete files; how many of its data files month
     * compaction wrote, and when it last did; how many of its files are of no role of the resolved layout (written
     * before it or by another tool, or delete files that are not position deletes), which make the month unresolved; and
     * the sequence number of the commit that added the newest of the files it gained since it was last compacted (of all
     * its files if it never was; 0 when it gained none), which tells when its corrections stopped.
     */
    public record MonthFiles(int files, long rows, long bytes, int deleteFiles, int compactedFiles, int unresolvedFiles, Optional<Instant> lastCompaction, long newestFileSequence)
    {
        public MonthFiles
        {
            checkArgument(files >= 0 && rows >= 0 && bytes >= 0 && deleteFiles >= 0, "counts must not be negative");
            checkArgument(compactedFiles >= 0 && compactedFiles <= files, "compacted files must be some of the data files");
            checkArgument(unresolvedFiles >= 0 && unresolvedFiles <= files + deleteFiles, "unresolved files must be some of the files");
            requireNonNull(lastCompaction, "lastCompaction is null");
            checkArgument(newestFileSequence >= 0, "newestFileSequence must not be negative");
        }

        /** Data files only, as a month of the resolved layout that was never compacted. */
        public MonthFiles(int files, long rows, long bytes)
        {
            this(files, rows, bytes, 0, 0, 0, Optional.empty(), 0);
        }

        /** The files the month gained since it was last compacted (all of them if it never was): data and delete files. */
        public int filesSinceCompaction()
        {
            return files - compactedFiles + deleteFiles;
        }

        MonthFiles plus(MonthFiles other)
        {
            Optional<Instant> last = lastCompaction.isEmpty() ? other.lastCompaction
                    : other.lastCompaction.filter(instant -> instant.isAfter(lastCompaction.get())).or(() -> lastCompaction);
            return new MonthFiles(files + other.files, rows + other.rows, bytes + other.bytes, deleteFiles + other.deleteFiles,
                    compactedFiles + other.compactedFiles, unresolvedFiles + other.unresolvedFiles, last, Math.max(newestFileSequence, other.newestFileSequence));
        }
    }

    public static ColdTierLayout of(Table table)
    {
        Snapshot current = table.currentSnapshot();
        if (current == null) {
            return EMPTY;
        }
        List<Snapshot> snapshots = ImmutableList.copyOf(table.snapshots());
        Optional<Instant> oldest = snapshots.stream().map(Snapshot::timestampMillis).min(Comparator.naturalOrder()).map(Instant::ofEpochMilli);
        List<ManifestFile> manifests = current.dataManifests(table.io());
        SortedMap<YearMonth, MonthFiles> months = new TreeMap<>();
        for (ManifestFile manifest : manifests) {
            try (ManifestReader<DataFile> reader = ManifestFiles.read(manifest, table.io(), table.specs())) {
                for (DataFile file : reader) {
                    Optional<Instant> compacted = CompactedFiles.compactedAt(file.location());
                    int unresolved = ColdFileRole.of(file.location()).filter(role -> role != ColdFileRole.POSITION_DELETES).isPresent() ? 0 : 1;
                    months.merge(month(file), new MonthFiles(1, file.recordCount(), file.fileSizeInBytes(), 0, compacted.isPresent() ? 1 : 0, unresolved, compacted,
                            compacted.isPresent() ? 0 : sequenceNumber(file)), MonthFiles::plus);
                }
            }
            catch (IOException e) {
                throw new UncheckedIOException("Cannot read manifest '%s' of table '%s'".formatted(manifest.path(), table.name()), e);
            }
        }
        for (ManifestFile manifest : current.deleteManifests(table.io())) {
            try (ManifestReader<DeleteFile> reader = ManifestFiles.readDeleteManifest(manifest, table.io(), table.specs())) {
                for (DeleteFile file : reader) {
                    boolean ours = file.content() == FileContent.POSITION_DELETES && ColdFileRole.of(file.location()).equals(Optional.of(ColdFileRole.POSITION_DELETES));
                    months.merge(month(file), new MonthFiles(0, 0, 0, 1, 0, ours ? 0 : 1, Optional.empty(), sequenceNumber(file)), MonthFiles::plus);
                }
            }
            catch (IOException e) {
                throw new UncheckedIOException("Cannot read delete manifest '%s' of table '%s'".formatted(manifest.path(), table.name()), e);
            }
        }
        return new ColdTierLayout(snapshots.size(), oldest, manifests.size(), months);
    }

    public int dataFiles()
    {
        return months.values().stream().mapToInt(MonthFiles::files).sum();
    }

    /** The most data files any one month has; what month compaction brings down to one or two. */
    public int maxDataFilesPerMonth()
    {
        return months.values().stream().mapToInt(MonthFiles::files).max().orElse(0);
    }

    /** For operators: {@code 730 data files in 25 months (at most 32 in a month), 26 manifests, 821 snapshots}. */
    public String describe()
    {
        return "%s in %s (at most %s in a month), %s, %s".formatted(count(dataFiles(), "data file"), count(months.size(), "month"), maxDataFilesPerMonth(), count(manifests, "manifest"), count(snapshots, "snapshot"));
    }

    /** For operators: {@code 24 of 25 months compacted, the last 2024-03 on 2024-04-16T06:00:00Z; 1 month not resolved}. */
    public String describeCompaction()
    {
        SortedMap<YearMonth, Instant> compactions = lastCompactions();
        String compacted = compactions.isEmpty()
                ? "no month compacted"
                : "%s of %s compacted, the latest %s".formatted(compactions.size(), count(months.size(), "month"), compactions.entrySet().stream()
                        .max(Map.Entry.comparingByValue())
                        .map(last -> "%s on %s".formatted(last.getKey(), last.getValue()))
                        .orElseThrow());
        return "%s; %s not resolved".formatted(compacted, count(unresolvedMonths(), "month"));
    }

    /** {@code 1 snapshot}, {@code 2 snapshots}. */
    public static String count(long count, String noun)
    {
        return count == 1 ? "1 " + noun : "%s %ss".formatted(count, noun);
    }

    /** Months of "from" that hold files of no role of the resolved layout, which readers resolve as they read them. */
    public int unresolvedMonths()
    {
        return (int) months.values().stream().filter(month -> month.unresolvedFiles() > 0).count();
    }

    /** When month compaction last rewrote each month it has rewritten. */
    public SortedMap<YearMonth, Instant> lastCompactions()
    {
        SortedMap<YearMonth, Instant> compactions = new TreeMap<>();
        months.forEach((month, files) -> files.lastCompaction().ifPresent(at -> compactions.put(month, at)));
        return ImmutableSortedMap.copyOfSorted(compactions);
    }

    /** The sequence number of the commit that added {@code file}; 0 for a table of format version 1, which has none. */
    private static long sequenceNumber(ContentFile<?> file)
    {
        return Optional.ofNullable(file.fileSequenceNumber()).orElse(0L);
    }

    public static YearMonth month(ContentFile<?> file)
    {
        return ColdPartitions.month(file);
    }
}
