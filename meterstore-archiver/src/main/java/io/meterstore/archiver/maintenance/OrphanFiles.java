package io.meterstore.archiver.maintenance;

import com.google.common.collect.ImmutableSet;
import io.meterstore.archiver.cycle.ArchivalException;
import io.meterstore.archiver.cycle.Failpoints;
import io.meterstore.archiver.cycle.Failpoints.Failpoint;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.PartitionStatisticsFile;
import org.apache.iceberg.ReachableFileUtil;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StatisticsFile;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.io.FileInfo;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.SupportsPrefixOperations;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static com.google.common.base.Preconditions.checkArgument;
import static io.meterstore.archiver.cycle.ArchivalException.Reason.FILES_NOT_LISTABLE;

/**
 * Removes the files in a table's data and metadata directories that no snapshot references: what a crashed archival, a
 * failed commit or an interrupted expiry left behind. A file is live if any snapshot the table keeps references it (its
 * manifest list, its manifests and the data and delete files they list), or it is a metadata file the table records,
 * or a statistics file: checked against every snapshot, not only the current one, so a file an older snapshot still
 * reads is never removed. Only files older than the safety age go: a writer (another engine, or a commit in flight)
 * may still be about to commit a younger one. As Trino's {@code remove_orphan_files}, files are matched by name, which
 * Iceberg and MeterStore make unique: a differently spelled location of a live file can only keep a file, never delete one.
 */
public final class OrphanFiles
{
    private OrphanFiles() {}

    /** The orphans removed: how many, their bytes, and how many files were looked at. */
    public record Removed(int files, long bytes, int listed)
    {
        public Removed
        {
            checkArgument(files >= 0 && bytes >= 0 && listed >= 0, "counts must not be negative");
        }
    }

    /** {@link #remove(Table, MaintenanceClock, Duration)} at {@code now} on the wall clock. */
    public static Removed remove(Table table, Instant now, Duration safetyAge)
    {
        return remove(table, MaintenanceClock.fixed(now), safetyAge);
    }

    /** Removes the files no snapshot references that are older than {@code safetyAge} on {@code clock} by their storage's stamp. */
    public static Removed remove(Table table, MaintenanceClock clock, Duration safetyAge)
    {
        if (!(table.io() instanceof SupportsPrefixOperations storage)) {
            throw new ArchivalException(FILES_NOT_LISTABLE, "The storage of table '%s' (%s) cannot list files, so files no snapshot references cannot be found: remove them with the storage's own tools"
                    .formatted(table.name(), table.io().getClass().getSimpleName()));
        }
        table.refresh();
        // the files are listed after the live set is read: a file committed in between is younger than the safety age
        Set<String> live = liveFileNames(table);
        Instant olderThan = clock.instant().minus(safetyAge);
        int files = 0;
        long bytes = 0;
        int listed = 0;
        for (String directory : directories(table)) {
            for (FileInfo file : storage.listPrefix(directory)) {
                listed++;
                if (!clock.stampTime(Instant.ofEpochMilli(file.createdAtMillis())).isBefore(olderThan) || live.contains(fileName(file.location()))) {
                    continue;
                }
                storage.deleteFile(file.location());
                files++;
                bytes += file.size();
                Failpoints.hit(Failpoint.ORPHANS_MID_DELETE);
            }
        }
        return new Removed(files, bytes, listed);
    }

    /** The names of every file a snapshot of the table references, and of its metadata and statistics files. */
    static Set<String> liveFileNames(Table table)
    {
        Set<String> live = new HashSet<>();
        Set<String> manifestsRead = new HashSet<>();
        FileIO io = table.io();
        for (Snapshot snapshot : table.snapshots()) {
            if (snapshot.manifestListLocation() != null) {
                live.add(fileName(snapshot.manifestListLocation()));
            }
            for (ManifestFile manifest : snapshot.allManifests(io)) {
                if (!manifestsRead.add(manifest.path())) {
                    continue;
                }
                live.add(fileName(manifest.path()));
                try (ManifestReader<? extends ContentFile<?>> reader = switch (manifest.content()) {
                    case DATA -> ManifestFiles.read(manifest, io, table.specs());
                    case DELETES -> ManifestFiles.readDeleteManifest(manifest, io, table.specs());
                }) {
                    for (ContentFile<?> file : reader) {
                        live.add(fileName(file.location()));
                    }
                }
                catch (IOException e) {
                    throw new UncheckedIOException("Cannot read manifest '%s' of table '%s'".formatted(manifest.path(), table.name()), e);
                }
            }
        }
        ReachableFileUtil.metadataFileLocations(table, false).forEach(location -> live.add(fileName(location)));
        // a Hadoop-catalogue table's pointer file (Iceberg's own helper for it needs Hadoop)
        live.add("version-hint.text");
        table.statisticsFiles().stream().map(StatisticsFile::path).forEach(location -> live.add(fileName(location)));
        table.partitionStatisticsFiles().stream().map(PartitionStatisticsFile::path).forEach(location -> live.add(fileName(location)));
        return ImmutableSet.copyOf(live);
    }

    /** Where the table writes its files: its data and metadata directories, as Iceberg places them. */
    private static List<String> directories(Table table)
    {
        String location = table.location().replaceAll("/+$", "");
        String data = table.properties().getOrDefault(TableProperties.WRITE_DATA_LOCATION, location + "/data");
        String metadata = table.properties().getOrDefault(TableProperties.WRITE_METADATA_LOCATION, location + "/metadata");
        return List.of(data.replaceAll("/+$", "") + "/", metadata.replaceAll("/+$", "") + "/");
    }

    private static String fileName(String location)
    {
        return location.substring(location.lastIndexOf('/') + 1);
    }
}
