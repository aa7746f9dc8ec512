package io.meterstore.archiver.maintenance;

import io.meterstore.archiver.cycle.ArchivalException;
import io.meterstore.core.ColdPartitions;
import org.apache.iceberg.DataTask;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.ManifestWriter;
import org.apache.iceberg.MetadataTableType;
import org.apache.iceberg.MetadataTableUtils;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.TableScan;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.types.Types.NestedField;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

import static com.google.common.base.Preconditions.checkState;
import static io.meterstore.archiver.cycle.ArchivalException.Reason.COMMIT_FAILED;
import static java.util.Objects.requireNonNull;

/**
 * Writes the live entries of delete manifests into one new manifest per month for {@link ManifestRewrite}. Each entry
 * is written as existing with the snapshot that added it and its sequence numbers: a position delete applies to the
 * data files whose data sequence number is not above its own, so a merged entry must keep its number to keep hiding
 * exactly the rows it hid. Iceberg's RewriteManifests rewrites data manifests only; Spark's RewriteManifests action
 * merges delete manifests the same way.
 */
final class DeleteManifestMerge
{
    private static final String STATUS = "status";
    private static final String SNAPSHOT_ID = "snapshot_id";
    private static final String FILE_PATH = "data_file.file_path";
    private static final int DELETED = 2;

    private DeleteManifestMerge() {}

    /** One new manifest per partition spec and month for the live entries of {@code manifests}, as they are in {@code snapshot}; written, not committed. */
    static List<ManifestFile> merge(Table table, Snapshot snapshot, List<ManifestFile> manifests)
    {
        if (manifests.isEmpty()) {
            return List.of();
        }
        Map<String, Long> addedBy = addedBy(table, snapshot);
        Map<Month, List<Entry>> byMonth = new LinkedHashMap<>();
        for (ManifestFile manifest : manifests) {
            try (ManifestReader<DeleteFile> reader = ManifestFiles.readDeleteManifest(manifest, table.io(), table.specs())) {
                for (DeleteFile file : reader) {
                    Long snapshotId = addedBy.get(file.location());
                    checkState(snapshotId != null && file.dataSequenceNumber() != null, "Delete file '%s' of manifest '%s' has no live entry in snapshot %s", file.location(), manifest.path(), snapshot.snapshotId());
                    Optional<YearMonth> month = file.partition().size() == 0 ? Optional.empty() : Optional.of(ColdPartitions.month(file));
                    // the reader reuses its file objects: keep a copy
                    byMonth.computeIfAbsent(new Month(file.specId(), month), _ -> new ArrayList<>())
                            .add(new Entry(file.copy(), snapshotId, file.dataSequenceNumber(), file.fileSequenceNumber()));
                }
            }
            catch (IOException e) {
                throw new UncheckedIOException("Cannot read delete manifest '%s' of table '%s'".formatted(manifest.path(), table.name()), e);
            }
        }
        List<ManifestFile> written = new ArrayList<>();
        try {
            for (Map.Entry<Month, List<Entry>> month : byMonth.entrySet()) {
                written.add(write(table, table.specs().get(month.getKey().specId()), month.getValue()));
            }
        }
        catch (IOException | RuntimeException e) {
            written.forEach(manifest -> table.io().deleteFile(manifest.path()));
            throw new ArchivalException(COMMIT_FAILED, "Cannot write the merged delete manifests of table '%s': %s; run 'compact' again".formatted(table.name(), e.getMessage()), e);
        }
        return written;
    }

    private static ManifestFile write(Table table, PartitionSpec spec, List<Entry> entries)
            throws IOException
    {
        TableOperations operations = ((HasTableOperations) table).operations();
        OutputFile output = table.io().newOutputFile(operations.metadataFileLocation(FileFormat.AVRO.addExtension("merged-deletes-" + UUID.randomUUID())));
        // no snapshot id: the rewrite's commit assigns its own to the manifest (snapshot id inheritance)
        ManifestWriter<DeleteFile> writer = ManifestFiles.writeDeleteManifest(operations.current().formatVersion(), spec, output, null);
        try (writer) {
            for (Entry entry : entries) {
                writer.existing(entry.file(), entry.snapshotId(), entry.dataSequenceNumber(), entry.fileSequenceNumber());
            }
        }
        return writer.toManifestFile();
    }

    /** The snapshot that added each live delete file of {@code snapshot}, from Iceberg's entries metadata table. */
    private static Map<String, Long> addedBy(Table table, Snapshot snapshot)
    {
        TableScan scan = MetadataTableUtils.createMetadataTableInstance(table, MetadataTableType.ENTRIES)
                .newScan()
                .useSnapshot(snapshot.snapshotId())
                .select(STATUS, SNAPSHOT_ID, FILE_PATH);
        Schema schema = scan.schema();
        int status = position(schema, STATUS);
        int snapshotId = position(schema, SNAPSHOT_ID);
        int dataFile = position(schema, "data_file");
        Map<String, Long> addedBy = new HashMap<>();
        try (CloseableIterable<FileScanTask> tasks = scan.planFiles()) {
            for (FileScanTask task : tasks) {
                try (CloseableIterable<StructLike> rows = ((DataTask) task).rows()) {
                    for (StructLike row : rows) {
                        if (row.get(status, Integer.class) != DELETED) {
                            addedBy.put(row.get(dataFile, StructLike.class).get(0, CharSequence.class).toString(), row.get(snapshotId, Long.class));
                        }
                    }
                }
            }
        }
        catch (IOException e) {
            throw new UncheckedIOException("Cannot read the manifest entries of table '%s'".formatted(table.name()), e);
        }
        return addedBy;
    }

    private static int position(Schema schema, String name)
    {
        List<NestedField> columns = schema.columns();
        for (int position = 0; position < columns.size(); position++) {
            if (columns.get(position).name().equals(name)) {
                return position;
            }
        }
        throw new IllegalStateException("Iceberg's entries metadata table has no column '%s'".formatted(name));
    }

    private record Month(int specId, Optional<YearMonth> month)
    {
        Month
        {
            requireNonNull(month, "month is null");
        }
    }

    private record Entry(DeleteFile file, long snapshotId, long dataSequenceNumber, Long fileSequenceNumber)
    {
        Entry
        {
            requireNonNull(file, "file is null");
        }
    }
}
