package io.meterstore.archiver.maintenance;

import com.google.common.collect.Sets;
import io.meterstore.archiver.cycle.TestingArchiverTable;
import io.meterstore.archiver.cycle.TieringAudit;
import io.meterstore.archiver.maintenance.OrphanFiles.Removed;
import io.meterstore.core.ArchivalHistory;
import io.meterstore.core.LocalFileIo;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsOracle;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

import static io.meterstore.archiver.maintenance.TestingMaintenance.READER_GRACE;
import static io.meterstore.archiver.maintenance.TestingMaintenance.afterNewestCommit;
import static io.meterstore.archiver.maintenance.TestingMaintenance.settings;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

/** Orphan-file removal on a real archived table: only old files no snapshot the table keeps references. */
final class TestOrphanFiles
{
    @Test
    void testRemovesOldFilesNoKeptSnapshotReferences()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("orphan_files")) {
            ReadingsOracle oracle = TestingMaintenance.archive(tables, 2, true);
            Table table = tables.table();
            TieringWatermark watermark = WatermarkReader.current(table).watermark();

            // a rewrite (as compaction makes) replaced a data file: the old one is read only by the older snapshots
            DataFile replaced;
            try (CloseableIterable<FileScanTask> tasks = table.newScan().includeColumnStats().planFiles()) {
                replaced = tasks.iterator().next().file();
            }
            table.newRewrite()
                    .deleteFile(replaced)
                    .addFile(TestingMaintenance.copy(table, replaced))
                    .set(TieringWatermark.WATERMARK_KEY, watermark.toProperty())
                    .set(TieringWatermark.ROW_COUNT_KEY, "0")
                    .commit();
            Path replacedPath = LocalFileIo.path(replaced.location());

            // what crashed writers leave behind: a data file, a manifest and a metadata file nobody references
            Path data = replacedPath.getParent();
            Path metadata = LocalFileIo.path(table.location()).resolve("metadata");
            Path strayData = write(data.resolve("stray-%s.parquet".formatted(UUID.randomUUID())));
            Path strayManifest = write(metadata.resolve("%s-m0.avro".formatted(UUID.randomUUID())));
            Path strayMetadata = write(metadata.resolve("00099-%s.metadata.json".formatted(UUID.randomUUID())));
            Instant now = Instant.now();
            for (Path file : TieringAudit.filesOnDisk(tables)) {
                Files.setLastModifiedTime(file, FileTime.from(now.minus(Duration.ofDays(1))));
            }
            // and one a writer may still be about to commit
            Path young = write(data.resolve("young-%s.parquet".formatted(UUID.randomUUID())));
            Files.setLastModifiedTime(young, FileTime.from(now.minus(Duration.ofMinutes(10))));

            Removed removed = OrphanFiles.remove(table, now, Duration.ofHours(1));
            assertThat(removed.files()).isEqualTo(3);
            assertThat(List.of(strayData, strayManifest, strayMetadata)).noneMatch(Files::exists);
            assertThat(young).exists();
            // live in the snapshots before the rewrite, which the table keeps
            assertThat(replacedPath).exists();
            TieringAudit.assertNoLiveFileLost(tables);
            assertThat(TieringAudit.assertConsistent(tables, oracle)).isEqualTo(watermark);

            // once those snapshots expire, expiry deletes the file with them
            SnapshotExpiry.expire(table, afterNewestCommit(table, READER_GRACE.multipliedBy(2)), settings(Duration.ZERO, 1, Duration.ZERO), List.of());
            assertThat(replacedPath).doesNotExist();
            // no archival commit is left; the step they recorded is the table's property now
            assertThat(ArchivalHistory.archivalCommits(tables.table())).isEmpty();
            assertThat(ArchivalHistory.recordedStep(tables.table())).contains(Duration.ofDays(1));
            TieringAudit.assertNoLiveFileLost(tables);
            assertThat(TieringAudit.assertConsistent(tables, oracle)).isEqualTo(watermark);
            assertThat(Sets.difference(TieringAudit.filesOnDisk(tables), TieringAudit.liveFiles(tables))).containsExactly(young.toAbsolutePath());
        }
    }

    private static Path write(Path file)
            throws Exception
    {
        Files.createDirectories(file.getParent());
        return Files.writeString(file, "left behind", UTF_8);
    }
}
