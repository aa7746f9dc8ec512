package io.meterstore.archiver.maintenance;

import com.google.common.collect.ImmutableSet;
import io.airlift.log.Logger;
import io.meterstore.archiver.cycle.ArchivalException;
import io.meterstore.core.ColdPartitions;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.core.WatermarkRepublished;
import org.apache.iceberg.ManifestContent;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFile.PartitionFieldSummary;
import org.apache.iceberg.RewriteManifests;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.PropertyUtil;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

import static com.google.common.base.Preconditions.checkArgument;
import static io.meterstore.archiver.cycle.ArchivalException.Reason.COMMIT_FAILED;
import static io.meterstore.core.TieringWatermark.ROW_COUNT_KEY;
import static io.meterstore.core.TieringWatermark.WATERMARK_KEY;
import static java.util.Objects.requireNonNull;

/**
 * Rewrites a readings table's manifests into one per month of "from", so that planning a query reads the manifests of
 * the months it touches instead of one per commit: its cost stays flat however many commits accumulate. Data manifests
 * go through Iceberg's RewriteManifests, clustered by the month partition. Delete manifests, which RewriteManifests
 * keeps as they are, hold the position deletes of late corrections (one manifest per correction commit until month
 * compaction folds them in); every query plans all of them, so they are merged one per month here too, each entry
 * kept with its snapshot and sequence numbers (a position delete applies to the data files of lower sequence numbers:
 * a merged entry must still apply to exactly those). Only what is not laid out so yet is rewritten (a manifest spanning
 * several months, or a month with more than one small manifest), so a table already in order gets no snapshot. The
 * rewrite moves no row, and republishes the watermark of the base it lands on as a late correction does, guarded the
 * same way against an archival commit landing in between ({@link WatermarkRepublished}).
 */
public final class ManifestRewrite
{
    private static final Logger log = Logger.get(ManifestRewrite.class);
    private static final int MAX_ATTEMPTS = 5;

    private final Runnable beforeCommit;

    public ManifestRewrite()
    {
        this(() -> {});
    }

    /** {@code beforeCommit} runs after the watermark was read and before each commit attempt: a test's race. */
    ManifestRewrite(Runnable beforeCommit)
    {
        this.beforeCommit = requireNonNull(beforeCommit, "beforeCommit is null");
    }

    /** What a rewrite did: the manifests it replaced and wrote, their bytes, the snapshot and the watermark it republished. */
    public record Rewritten(int replacedManifests, int createdManifests, long createdBytes, long snapshotId, TieringWatermark watermark, int attempts)
    {
        public Rewritten
        {
            requireNonNull(watermark, "watermark is null");
            checkArgument(replacedManifests >= 0 && createdManifests >= 0 && createdBytes >= 0 && attempts > 0, "counts must not be negative");
        }
    }

    /** Rewrites what is not one manifest per month yet; empty when nothing is, and no snapshot is made. */
    public Optional<Rewritten> rewrite(Table table)
    {
        for (int attempt = 1; ; attempt++) {
            table.refresh();
            Snapshot base = table.currentSnapshot();
            if (base == null) {
                return Optional.empty();
            }
            Set<String> rewritten = manifestsToRewrite(table, base);
            List<ManifestFile> deletesToMerge = deleteManifestsToMerge(table, base);
            if (rewritten.isEmpty() && deletesToMerge.isEmpty()) {
                return Optional.empty();
            }
            // re-derived from the fresh base on every attempt: an archival commit in between moves W, and the rewrite follows
            TieringWatermark watermark = WatermarkReader.current(table).watermark();
            RewriteManifests rewrite = table.rewriteManifests()
                    .clusterBy(file -> ColdPartitions.month(file))
                    .rewriteIf(manifest -> rewritten.contains(manifest.path()))
                    .set(WATERMARK_KEY, watermark.toProperty())
                    .set(ROW_COUNT_KEY, "0")
                    .validateWith(new WatermarkRepublished(watermark));
            List<ManifestFile> merged = DeleteManifestMerge.merge(table, base, deletesToMerge);
            deletesToMerge.forEach(rewrite::deleteManifest);
            merged.forEach(rewrite::addManifest);
            beforeCommit.run();
            try {
                rewrite.commit();
            }
            catch (CommitFailedException | ValidationException e) {
                // provably not committed: the merged delete manifests are nobody's (the next attempt merges its own base anew)
                merged.forEach(manifest -> table.io().deleteFile(manifest.path()));
                // another commit landed first; if it moved W the next attempt republishes the new one
                if (attempt >= MAX_ATTEMPTS) {
                    throw new ArchivalException(COMMIT_FAILED, "Rewriting the manifests of table '%s' lost the commit race %s times: other writers keep committing; run 'compact' again later"
                            .formatted(table.name(), attempt), e);
                }
                log.info("Rewriting the manifests of table '%s' lost a commit race; attempt %s of %s", table.name(), attempt + 1, MAX_ATTEMPTS);
                continue;
            }
            Snapshot committed = table.currentSnapshot();
            List<ManifestFile> created = committed.allManifests(table.io()).stream()
                    .filter(manifest -> Objects.equals(manifest.snapshotId(), committed.snapshotId()))
                    .toList();
            long bytes = created.stream().mapToLong(ManifestFile::length).sum();
            return Optional.of(new Rewritten(rewritten.size() + deletesToMerge.size(), created.size(), bytes, committed.snapshotId(), watermark, attempt));
        }
    }

    /**
     * The data manifests not laid out one per month: every manifest spanning more than one month (or without partition
     * bounds), and every manifest of a month that has more than one smaller than half the target manifest size.
     */
    static Set<String> manifestsToRewrite(Table table, Snapshot snapshot)
    {
        ImmutableSet.Builder<String> rewrite = ImmutableSet.builder();
        notLaidOutByMonth(table, snapshot.dataManifests(table.io()), ManifestContent.DATA).forEach(manifest -> rewrite.add(manifest.path()));
        return rewrite.build();
    }

    /** The delete manifests not laid out one per month, by the same rule as the data manifests. */
    static List<ManifestFile> deleteManifestsToMerge(Table table, Snapshot snapshot)
    {
        return notLaidOutByMonth(table, snapshot.deleteManifests(table.io()), ManifestContent.DELETES);
    }

    private static List<ManifestFile> notLaidOutByMonth(Table table, List<ManifestFile> candidates, ManifestContent content)
    {
        long small = PropertyUtil.propertyAsLong(table.properties(), TableProperties.MANIFEST_TARGET_SIZE_BYTES, TableProperties.MANIFEST_TARGET_SIZE_BYTES_DEFAULT) / 2;
        List<ManifestFile> rewrite = new ArrayList<>();
        Map<Integer, List<ManifestFile>> byMonth = new HashMap<>();
        for (ManifestFile manifest : candidates) {
            if (manifest.content() != content) {
                continue;
            }
            Optional<Integer> month = singleMonth(manifest);
            if (month.isEmpty()) {
                rewrite.add(manifest);
                continue;
            }
            byMonth.computeIfAbsent(month.get(), _ -> new ArrayList<>()).add(manifest);
        }
        for (List<ManifestFile> manifests : byMonth.values()) {
            if (manifests.stream().filter(manifest -> manifest.length() < small).count() > 1) {
                rewrite.addAll(manifests);
            }
        }
        return rewrite;
    }

    /** The one month a manifest's partition bounds hold, if they hold one. */
    private static Optional<Integer> singleMonth(ManifestFile manifest)
    {
        List<PartitionFieldSummary> partitions = manifest.partitions();
        if (partitions == null || partitions.isEmpty()) {
            return Optional.empty();
        }
        // month("from") is the last field (ColdPartitions): a month's manifest holds the files of every partition of it
        PartitionFieldSummary summary = partitions.getLast();
        if (summary.lowerBound() == null || summary.upperBound() == null || Boolean.TRUE.equals(summary.containsNull())) {
            return Optional.empty();
        }
        Integer lower = Conversions.fromByteBuffer(Types.IntegerType.get(), summary.lowerBound());
        Integer upper = Conversions.fromByteBuffer(Types.IntegerType.get(), summary.upperBound());
        return lower.equals(upper) ? Optional.of(lower) : Optional.empty();
    }
}
