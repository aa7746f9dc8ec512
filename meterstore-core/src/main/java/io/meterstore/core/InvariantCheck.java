package io.meterstore.core;

import com.google.common.collect.ImmutableList;
import io.meterstore.core.ArchivalHistory.ArchivalCommit;
import io.meterstore.core.WatermarkReader.PinnedWatermark;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.DateTimeUtil;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import static io.meterstore.core.TieringWatermark.formatInstant;

/**
 * Checks the tiering invariant of one table, cheap enough to run after every cycle: no attached hot partition reaches
 * below W (its rows there are read by neither tier), no data file of the snapshot carrying W has an upper bound of
 * "from" at or above W (its rows would be read twice), every detached partition reaching above W will be archived
 * (none overlaps another partition), and every detached partition below W holds no row its archival commits lack.
 * A window the archiver refused to archive (a row the write path's validation refuses, see {@link InvariantLog.Refusal})
 * is reported too until W passes it: the watermark stays at its start, and only repairing the row moves it. So are the
 * rows stored before the table had the rules that break one: its CHECK constraints still NOT VALID, and the pairs
 * {@link StoredRuleViolations} found that still break a rule.
 * <p>
 * The cold side scans no row: it plans the snapshot's files with the filter {@code "from" >= W}, so manifests and files
 * whose statistics put them below W are pruned by Iceberg itself and only suspects are looked at. A file without an
 * upper bound for "from" cannot be shown to lie below W and is reported as well. The hot side counts the rows of each
 * detached partition below W (one awaits its drop in the ordinary run) against the commits that streamed it.
 */
public final class InvariantCheck
{
    private InvariantCheck() {}

    public static InvariantReport check(Table table, HotTier hotTier, Connection connection)
            throws SQLException
    {
        // W first, partitions second: a partition is detached before any commit moves W past it, so a listing newer
        // than W can only show attached partitions at or above it, never a false violation from a concurrent cycle
        String name = hotTier.schema() + "." + hotTier.naming().table();
        PinnedWatermark pinned = WatermarkReader.current(table);
        TieringWatermark watermark = pinned.watermark();
        List<HotPartition> partitions = hotTier.partitions(connection);

        ImmutableList.Builder<String> violations = ImmutableList.builder();
        for (HotPartition partition : partitions) {
            if (!partition.attached() || watermark.isHot(partition.start())) {
                continue;
            }
            // a partition reaching across W is legitimate while it holds no row below W (INSERT routes those to Iceberg)
            if (partition.isBelow(watermark) || hotTier.rowCountBelow(connection, partition.name(), watermark.instant()) > 0) {
                violations.add("Partition '%s' of table '%s' is attached but starts at %s, below the watermark %s: its rows below the watermark are read by neither tier"
                        .formatted(partition.name(), name, formatInstant(partition.start()), watermark));
            }
        }
        violations.addAll(detachedViolations(table, hotTier, connection, name, watermark, partitions));
        // a refusal W has passed was repaired and archived since
        InvariantLog.lastRefusal(connection, hotTier)
                .filter(refusal -> refusal.windowEnd().isAfter(watermark.instant()))
                .ifPresent(refusal -> violations.add("%s (refused by the archival cycle at %s)".formatted(refusal.message(), formatInstant(refusal.refusedAt()))));
        // rows stored before the table had the rules: the CHECKs they break, and the pairs create found that still break one
        for (String check : HotTierRules.unvalidated(connection, hotTier.schema(), hotTier.naming().table())) {
            violations.add("CHECK constraint %s of table '%s' is NOT VALID: rows stored before the rules may break it (find them with SELECT * FROM %s WHERE NOT (%s)); repair them, then run bin/archiver create again"
                    .formatted(check, name, hotTier.qualifiedParent(), HotTierRules.checks(TableShape.ofProperties(table.properties()).orElse(TableShape.DEFAULT)).get(check)));
        }
        violations.addAll(StoredRuleViolations.stillBroken(connection, hotTier, TableColumns.of(table).keyNames()));
        if (pinned.snapshotId().isPresent()) {
            violations.addAll(filesAtOrAboveWatermark(table, name, pinned.snapshotId().get(), watermark));
        }
        return new InvariantReport(name, watermark, pinned.snapshotId(), partitions, violations.build());
    }

    private static List<String> detachedViolations(Table table, HotTier hotTier, Connection connection, String name, TieringWatermark watermark, List<HotPartition> partitions)
            throws SQLException
    {
        ImmutableList.Builder<String> violations = ImmutableList.builder();
        List<HotPartition> above = partitions.stream().filter(partition -> !partition.isBelow(watermark)).toList();
        for (int index = 0; index + 1 < above.size(); index++) {
            HotPartition partition = above.get(index);
            HotPartition next = above.get(index + 1);
            if (next.start().isBefore(partition.end()) && (!partition.attached() || !next.attached())) {
                HotPartition detached = partition.attached() ? next : partition;
                HotPartition other = detached == partition ? next : partition;
                violations.add("Detached partition '%s' of table '%s' [%s, %s) overlaps partition '%s' [%s, %s): no cycle will archive its rows at or above the watermark %s; move its rows into '%s' and drop it"
                        .formatted(detached.name(), name, formatInstant(detached.start()), formatInstant(detached.end()), other.name(), formatInstant(other.start()), formatInstant(other.end()), watermark, other.name()));
            }
        }
        List<HotPartition> detachedBelow = partitions.stream().filter(partition -> !partition.attached() && partition.isBelow(watermark)).toList();
        if (detachedBelow.isEmpty()) {
            return violations.build();
        }
        List<ArchivalCommit> commits = ArchivalHistory.archivalCommits(table);
        for (HotPartition partition : detachedBelow) {
            long rows = hotTier.rowCount(connection, partition.name());
            long archived = ArchivalHistory.archived(commits, partition).map(ArchivalHistory.Archived::rows).orElse(0L);
            if (rows != archived) {
                violations.add("Detached partition '%s' of table '%s' lies below the watermark %s and holds %s rows, but the archival commits that streamed it hold %s: the cold tier lacks its rows, and it is not dropped; INSERT its rows through MeterStore (rows below the watermark go to Iceberg), then drop it by hand"
                        .formatted(partition.name(), name, watermark, rows, archived));
            }
        }
        return violations.build();
    }

    private static List<String> filesAtOrAboveWatermark(Table table, String name, long snapshotId, TieringWatermark watermark)
    {
        String from = ReadingsColumn.FROM.columnName();
        int fromFieldId = ReadingsColumn.FROM.fieldId();
        ImmutableList.Builder<String> violations = ImmutableList.builder();
        try (CloseableIterable<FileScanTask> tasks = table.newScan()
                .useSnapshot(snapshotId)
                .filter(Tier.HOT.iceberg(watermark.instant()))
                .includeColumnStats()
                .planFiles()) {
            for (FileScanTask task : tasks) {
                DataFile file = task.file();
                Optional<Instant> upper = upperBound(file, fromFieldId);
                if (upper.isEmpty()) {
                    violations.add("Data file '%s' of table '%s' has no upper bound of \"%s\" in its statistics, so nothing shows its rows lie below the watermark %s"
                            .formatted(file.location(), name, from, watermark));
                }
                else if (watermark.isHot(upper.get())) {
                    violations.add("Data file '%s' of table '%s' holds rows up to %s, at or above the watermark %s: they are read from both tiers"
                            .formatted(file.location(), name, formatInstant(upper.get()), watermark));
                }
            }
        }
        catch (IOException e) {
            throw new UncheckedIOException("Cannot plan the files of table '%s'".formatted(name), e);
        }
        return violations.build();
    }

    private static Optional<Instant> upperBound(DataFile file, int fieldId)
    {
        if (file.upperBounds() == null) {
            return Optional.empty();
        }
        ByteBuffer bound = file.upperBounds().get(fieldId);
        if (bound == null) {
            return Optional.empty();
        }
        long micros = Conversions.fromByteBuffer(Types.TimestampType.withZone(), bound);
        return Optional.of(DateTimeUtil.timestamptzFromMicros(micros).toInstant());
    }
}
