package io.meterstore.archiver.maintenance;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableSortedMap;
import org.apache.iceberg.DataFile;
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
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * How a table's cold tier is laid out now, from its metadata alone: the data files of each month of "from" in the
 * current snapshot, its data manifests, and the snapshots the table keeps. What the archiver's metrics and
 * {@code status} show, and what month compaction chooses its months by.
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

    /** The data files of one month: how many, their rows and bytes. */
    public record MonthFiles(int files, long rows, long bytes)
    {
        public MonthFiles
        {
            checkArgument(files >= 0 && rows >= 0 && bytes >= 0, "counts must not be negative");
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
                    months.merge(month(file), new MonthFiles(1, file.recordCount(), file.fileSizeInBytes()),
                            (left, right) -> new MonthFiles(left.files() + right.files(), left.rows() + right.rows(), left.bytes() + right.bytes()));
                }
            }
            catch (IOException e) {
                throw new UncheckedIOException("Cannot read manifest '%s' of table '%s'".formatted(manifest.path(), table.name()), e);
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

    /** {@code 1 snapshot}, {@code 2 snapshots}. */
    public static String count(long count, String noun)
    {
        return count == 1 ? "1 " + noun : "%s %ss".formatted(count, noun);
    }

    private static YearMonth month(DataFile file)
    {
        // month("from") is months since 1970-01, the only partition field IcebergTableSpec.verify accepts
        int months = file.partition().get(0, Integer.class);
        return YearMonth.of(1970, 1).plusMonths(months);
    }
}
