package io.meterstore.archiver.cycle;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableSet;
import io.meterstore.core.HotPartition;
import io.meterstore.core.LocalFileIo;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.Readings;
import io.meterstore.testing.ReadingsOracle;
import io.meterstore.testing.ReadingsOracle.Totals;
import io.meterstore.testing.ReadingsOracle.View;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.util.SnapshotUtil;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Stream;

import static io.meterstore.core.TieringWatermark.ARCHIVED_RANGE_KEY;
import static io.meterstore.testing.ReadingsOracle.all;
import static io.meterstore.testing.ReadingsOracle.fromBefore;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What must hold after any interruption of archival, checked against both tiers as they are stored: PostgreSQL by
 * partition name, Iceberg by reading every data file of the current snapshot back with Trino's Parquet reader.
 */
public final class TieringAudit
{
    private static final int VALUE_SCALE = Reading.VALUE_SCALE;
    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

    private TieringAudit() {}

    /** An archival commit as its snapshot summary records it. */
    public record ArchivedRange(Instant from, Instant to) {}

    /**
     * Asserts the invariant and the oracle on both tiers: no attached partition below W, every cold file's "from" below
     * W, the cold rows exactly the oracle's rows below W with no key twice, and every Berlin day's rows (hot partitions at
     * or above W read by name, plus cold rows) equal to the oracle's. Returns the watermark it checked against.
     */
    public static TieringWatermark assertConsistent(TestingArchiverTable tables, ReadingsOracle oracle)
            throws SQLException, IOException
    {
        Table table = tables.table();
        TieringWatermark watermark = WatermarkReader.current(table).watermark();
        List<HotPartition> partitions = tables.partitions();
        assertThat(partitions)
                .as("attached partitions below the watermark %s", watermark)
                .noneMatch(partition -> partition.attached() && partition.isBelow(watermark));

        List<Reading> cold = new ArrayList<>();
        for (DataFile file : dataFilesWithStatistics(table)) {
            assertThat(Files.exists(LocalFileIo.path(file.location()))).as("data file %s exists", file.location()).isTrue();
            long upper = Conversions.fromByteBuffer(ReadingsColumn.FROM.icebergType(), file.upperBounds().get(ReadingsColumn.FROM.fieldId()));
            assertThat(upper).as("upper bound of \"from\" in %s", file.location()).isLessThan(micros(watermark.instant()));
            List<Reading> rows = ParquetReadings.read(file.location());
            assertThat(rows).hasSize((int) file.recordCount());
            cold.addAll(rows);
        }
        Set<List<Object>> keys = new HashSet<>();
        for (Reading reading : cold) {
            keys.add(List.of(reading.maloId(), reading.obisCode(), reading.from(), reading.version()));
        }
        assertThat(keys).as("distinct (malo_id, obis_code, from, version) in Iceberg").hasSize(cold.size());
        assertThat(sorted(cold)).as("Iceberg rows below %s", watermark).isEqualTo(sorted(oracle.versions(fromBefore(watermark.instant()))));

        SortedMap<LocalDate, Totals> days = new TreeMap<>();
        cold.forEach(reading -> add(days, reading.from().atZone(BERLIN).toLocalDate(), 1, reading.value()));
        try (Connection connection = tables.connect()) {
            for (HotPartition partition : partitions) {
                if (partition.isBelow(watermark)) {
                    continue;
                }
                // as a query reads it: by name, from W up
                try (PreparedStatement statement = connection.prepareStatement(
                        "SELECT (\"from\" AT TIME ZONE 'Europe/Berlin')::date, count(*), sum(value) FROM %s WHERE \"from\" >= ? GROUP BY 1".formatted(tables.hotTier().qualifiedPartition(partition.name())))) {
                    statement.setObject(1, watermark.instant().atOffset(ZoneOffset.UTC));
                    try (ResultSet result = statement.executeQuery()) {
                        while (result.next()) {
                            add(days, result.getObject(1, LocalDate.class), result.getLong(2), result.getBigDecimal(3));
                        }
                    }
                }
            }
        }
        assertThat(days).as("rows per Berlin day over both tiers at watermark %s", watermark).isEqualTo(oracle.totalsByDay(View.VERSIONS, all()));
        return watermark;
    }

    /** The archival commits of the current ancestry, oldest first; asserts W only ever moved forward. */
    public static List<ArchivedRange> assertWatermarkHistory(TestingArchiverTable tables)
    {
        Table table = tables.table();
        if (table.currentSnapshot() == null) {
            return List.of();
        }
        List<Snapshot> snapshots = new ArrayList<>();
        SnapshotUtil.ancestorsOf(table.currentSnapshot().snapshotId(), table::snapshot).forEach(snapshots::addFirst);
        ImmutableList.Builder<ArchivedRange> ranges = ImmutableList.builder();
        TieringWatermark previous = TieringWatermark.EPOCH;
        for (Snapshot snapshot : snapshots) {
            Optional<TieringWatermark> carried = TieringWatermark.fromSummary(snapshot.summary());
            if (carried.isEmpty()) {
                // another tool's snapshot (a compaction) moves no watermark
                continue;
            }
            TieringWatermark watermark = carried.get();
            String range = snapshot.summary().get(ARCHIVED_RANGE_KEY);
            if (range == null) {
                assertThat(watermark).as("watermark of snapshot %s, which archived nothing", snapshot.snapshotId()).isEqualTo(previous);
                continue;
            }
            ArchivedRange archived = new ArchivedRange(Instant.parse(range.substring(0, range.indexOf('/'))), Instant.parse(range.substring(range.indexOf('/') + 1)));
            // each archival starts at the watermark before it and strictly advances it to its end
            assertThat(archived.from()).as("start of archival snapshot %s", snapshot.snapshotId()).isEqualTo(previous.instant());
            assertThat(archived.to()).isAfter(archived.from());
            assertThat(watermark.instant()).isEqualTo(archived.to());
            ranges.add(archived);
            previous = watermark;
        }
        return ranges.build();
    }

    /** Every Parquet file in the warehouse, referenced or not. */
    public static Set<Path> parquetFilesOnDisk(TestingArchiverTable tables)
            throws IOException
    {
        try (Stream<Path> files = Files.walk(tables.warehouse().directory())) {
            return files.filter(Files::isRegularFile)
                    .filter(path -> path.getFileName().toString().endsWith(".parquet"))
                    .map(Path::toAbsolutePath)
                    .collect(ImmutableSet.toImmutableSet());
        }
        catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /** Every file in the warehouse: data, manifests, manifest lists, metadata files, referenced or not. */
    public static Set<Path> filesOnDisk(TestingArchiverTable tables)
            throws IOException
    {
        try (Stream<Path> files = Files.walk(tables.warehouse().directory())) {
            return files.filter(Files::isRegularFile)
                    .map(Path::toAbsolutePath)
                    .collect(ImmutableSet.toImmutableSet());
        }
    }

    /**
     * Every file the table needs, read independently of the maintenance code: the current metadata file and those its
     * log records, and for every snapshot it keeps, its manifest list, its manifests and their data files.
     */
    public static Set<Path> liveFiles(TestingArchiverTable tables)
            throws IOException
    {
        Table table = tables.table();
        ImmutableSet.Builder<Path> live = ImmutableSet.builder();
        TableMetadata metadata = ((HasTableOperations) table).operations().current();
        live.add(LocalFileIo.path(metadata.metadataFileLocation()).toAbsolutePath());
        metadata.previousFiles().forEach(entry -> live.add(LocalFileIo.path(entry.file()).toAbsolutePath()));
        for (Snapshot snapshot : table.snapshots()) {
            live.add(LocalFileIo.path(snapshot.manifestListLocation()).toAbsolutePath());
            for (ManifestFile manifest : snapshot.allManifests(table.io())) {
                live.add(LocalFileIo.path(manifest.path()).toAbsolutePath());
                try (ManifestReader<DataFile> reader = ManifestFiles.read(manifest, table.io(), table.specs())) {
                    reader.forEach(file -> live.add(LocalFileIo.path(file.location()).toAbsolutePath()));
                }
            }
        }
        return live.build();
    }

    /** Asserts that every file the table needs exists: no maintenance step removed a live file. */
    public static void assertNoLiveFileLost(TestingArchiverTable tables)
            throws IOException
    {
        Set<Path> onDisk = filesOnDisk(tables);
        assertThat(liveFiles(tables)).as("files the table's snapshots and metadata reference").allSatisfy(file -> assertThat(onDisk).contains(file));
    }

    /** The data files the current snapshot references. */
    public static Set<Path> referencedFiles(TestingArchiverTable tables)
    {
        return tables.dataFiles().stream()
                .map(file -> LocalFileIo.path(file.location()).toAbsolutePath())
                .collect(ImmutableSet.toImmutableSet());
    }

    /** The data files of the current snapshot with their column bounds, which a plain scan leaves out. */
    /** The data files of the current snapshot with their column statistics, which a plain scan leaves out. */
    static List<DataFile> dataFilesWithStatistics(Table table)
            throws IOException
    {
        if (table.currentSnapshot() == null) {
            return List.of();
        }
        try (CloseableIterable<FileScanTask> tasks = table.newScan().includeColumnStats().planFiles()) {
            ImmutableList.Builder<DataFile> files = ImmutableList.builder();
            tasks.forEach(task -> files.add(task.file()));
            return files.build();
        }
    }

    private static void add(SortedMap<LocalDate, Totals> days, LocalDate day, long count, BigDecimal sum)
    {
        days.merge(day, new Totals(count, sum.setScale(VALUE_SCALE)), (left, right) -> new Totals(left.count() + right.count(), left.sum().add(right.sum()).setScale(VALUE_SCALE)));
    }

    private static List<Reading> sorted(List<Reading> readings)
    {
        return readings.stream().sorted(Readings.SORT_ORDER).toList();
    }

    private static long micros(Instant instant)
    {
        return instant.getEpochSecond() * 1_000_000 + instant.getNano() / 1_000;
    }
}
