package io.meterstore.archiver.maintenance;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableSet;
import io.airlift.log.Logger;
import io.meterstore.archiver.cycle.ArchivalException;
import io.meterstore.archiver.cycle.Failpoints;
import io.meterstore.archiver.cycle.Failpoints.Failpoint;
import io.meterstore.core.ArchivalHistory;
import io.meterstore.core.ErasedSnapshots;
import io.meterstore.core.ErasureLog;
import io.meterstore.core.ErasureLog.Erasure;
import io.meterstore.core.HotPartition;
import io.meterstore.core.TieringWatermark;
import org.apache.iceberg.ContentFile;
import org.apache.iceberg.ExpireSnapshots;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.ManifestFiles;
import org.apache.iceberg.ManifestReader;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.CommitFailedException;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import static com.google.common.base.Preconditions.checkArgument;
import static io.meterstore.archiver.cycle.ArchivalException.Reason.COMMIT_FAILED;
import static io.meterstore.archiver.cycle.ArchivalException.Reason.ERASURE_BLOCKED;
import static java.util.Objects.requireNonNull;

/**
 * Makes the erasures of a table physical: once an erasure's commit is older than the reader grace (a query planned
 * before it may still read the snapshot it replaced), every snapshot that still references a data or delete file the
 * commit removed is expired, whatever the snapshot retention says, and those files are deleted; then the erasure's
 * {@code physically_completed_at} is recorded. Which snapshots reference the removed files is read from their manifests.
 * <p>
 * Never expires the current snapshot, a snapshot a tag or branch names, or a snapshot a kept snapshot reads its
 * watermark from: such an erasure fails with what to do. An erasure waits while a hot partition whose archival commit it
 * would expire is still in PostgreSQL (the drop counts its rows against that commit; the drop follows within the grace).
 * Resumable: the expiry commits first and the erasure is recorded complete only after its files are gone, so a rerun
 * after a crash finds nothing to expire, deletes the removed files that are left and records the completion.
 */
public final class ErasureCompletion
{
    private static final Logger log = Logger.get(ErasureCompletion.class);
    private static final int MAX_ATTEMPTS = 5;

    private ErasureCompletion() {}

    /** An erasure not physical yet, and from when it is due: its commit plus the reader grace. */
    public record Awaiting(long erasureId, Instant due)
    {
        public Awaiting
        {
            requireNonNull(due, "due is null");
        }
    }

    /** The erasures made physical by one run, the snapshots expired and files deleted for them, and those still awaiting. */
    public record Completed(List<Long> erasures, int snapshots, int deletedFiles, List<Awaiting> awaiting)
    {
        public static final Completed NONE = new Completed(List.of(), 0, 0, List.of());

        public Completed
        {
            erasures = ImmutableList.copyOf(requireNonNull(erasures, "erasures is null"));
            awaiting = ImmutableList.copyOf(requireNonNull(awaiting, "awaiting is null"));
            checkArgument(snapshots >= 0 && deletedFiles >= 0, "counts must not be negative");
        }

        public String describe()
        {
            String done = erasures.isEmpty()
                    ? "no erasure due"
                    : "%s made physical (%s expired, %s deleted)".formatted(
                            ColdTierLayout.count(erasures.size(), "erasure"), ColdTierLayout.count(snapshots, "snapshot"), ColdTierLayout.count(deletedFiles, "file"));
            if (awaiting.isEmpty()) {
                return done;
            }
            return "%s, %s awaiting (next due %s)".formatted(done, awaiting.size(), awaiting.stream().map(Awaiting::due).min(Instant::compareTo).orElseThrow());
        }
    }

    /** The erasures of {@code table} not physical yet, each with the instant it becomes due on {@code clock}. */
    public static List<Awaiting> awaiting(Table table, Connection connection, String schema, String tableName, Duration readerGrace, MaintenanceClock clock)
            throws SQLException
    {
        ImmutableList.Builder<Awaiting> awaiting = ImmutableList.builder();
        for (Erasure erasure : ErasureLog.erasures(connection, schema, tableName)) {
            if (erasure.physicallyCompletedAt().isEmpty()) {
                awaiting.add(new Awaiting(erasure.erasureId(), clock.stampTime(committedAt(table, erasure)).plus(readerGrace)));
            }
        }
        return awaiting.build();
    }

    /** Makes physical every erasure of {@code tableName} that is due now on {@code clock}. */
    public static Completed complete(Table table, Connection connection, String schema, String tableName, MaintenanceClock clock, Duration readerGrace, List<HotPartition> partitions)
            throws SQLException
    {
        table.refresh();
        Instant now = clock.instant();
        List<Long> completed = new ArrayList<>();
        List<Awaiting> awaiting = new ArrayList<>();
        int snapshots = 0;
        int deletedFiles = 0;
        Map<Long, Erasure> erasures = new HashMap<>();
        ErasureLog.erasures(connection, schema, tableName).forEach(erasure -> erasures.put(erasure.erasureId(), erasure));
        // snapshots share manifests: each is read once per run
        Map<String, Set<String>> manifestCache = new HashMap<>();
        for (Awaiting candidate : awaiting(table, connection, schema, tableName, readerGrace, clock)) {
            if (candidate.due().isAfter(now)) {
                awaiting.add(candidate);
                continue;
            }
            Erasure erasure = erasures.get(candidate.erasureId());
            Optional<Step> step = completeOne(table, connection, schema, tableName, erasure, partitions, manifestCache);
            if (step.isEmpty()) {
                awaiting.add(candidate);
                continue;
            }
            snapshots += step.get().snapshots();
            deletedFiles += step.get().deletedFiles();
            Failpoints.hit(Failpoint.ERASURE_BEFORE_RECORD);
            ErasureLog.recordPhysicalCompletion(connection, schema, erasure.erasureId(), now);
            completed.add(erasure.erasureId());
        }
        return new Completed(completed, snapshots, deletedFiles, awaiting);
    }

    private record Step(int snapshots, int deletedFiles) {}

    /** Expires what still holds the erasure's removed files and deletes them; empty when it must wait for a partition's drop. */
    private static Optional<Step> completeOne(Table table, Connection connection, String schema, String tableName, Erasure erasure, List<HotPartition> partitions, Map<String, Set<String>> manifestCache)
            throws SQLException
    {
        Optional<Long> commitId = erasure.recorded().snapshotId();
        if (commitId.isEmpty()) {
            // removed hot rows only: PostgreSQL's DELETE is physical once committed (VACUUM reclaims the space)
            return Optional.of(new Step(0, 0));
        }
        for (int attempt = 1; ; attempt++) {
            table.refresh();
            Snapshot commit = table.snapshot(commitId.get());
            if (commit == null) {
                // its commit and everything before it were expired already, their files deleted with them or left to orphan removal
                return Optional.of(new Step(0, 0));
            }
            Set<String> removed = removedFiles(table, commit);
            List<Long> holding = ImmutableList.copyOf(table.snapshots()).stream()
                    .filter(snapshot -> snapshot.snapshotId() != commit.snapshotId())
                    .filter(snapshot -> references(table, snapshot, removed, manifestCache))
                    .map(Snapshot::snapshotId)
                    .toList();
            requireExpirable(table, erasure, holding);
            Set<Long> awaitingDrop = new HashSet<>();
            List<ArchivalHistory.ArchivalCommit> archivalCommits = ArchivalHistory.archivalCommits(table);
            for (HotPartition partition : partitions) {
                ArchivalHistory.streamedFrom(archivalCommits, partition).forEach(archival -> awaitingDrop.add(archival.snapshotId()));
            }
            if (holding.stream().anyMatch(awaitingDrop::contains)) {
                log.info("Erasure %s of table '%s' waits for the drop of a hot partition whose archival commit holds erased rows", erasure.erasureId(), table.name());
                return Optional.empty();
            }
            int expired = 0;
            AtomicInteger deleted = new AtomicInteger();
            if (!holding.isEmpty()) {
                // recorded first: a crash after the expiry still lets FOR VERSION AS OF name the erasure
                ErasedSnapshots.record(connection, schema, tableName, erasure.erasureId(), holding);
                ExpireSnapshots expire = table.expireSnapshots()
                        .expireOlderThan(0)
                        .cleanExpiredFiles(true)
                        .deleteWith(location -> {
                            if (deleted.get() == 0) {
                                Failpoints.hit(Failpoint.ERASURE_AFTER_EXPIRY);
                            }
                            table.io().deleteFile(location);
                            deleted.incrementAndGet();
                        });
                holding.forEach(expire::expireSnapshotId);
                try {
                    expire.commit();
                }
                catch (CommitFailedException e) {
                    if (attempt >= MAX_ATTEMPTS) {
                        throw new ArchivalException(COMMIT_FAILED, "Expiring the snapshots that hold the rows of erasure %s of table '%s' lost the commit race %s times: other writers keep committing; run 'expire' again later"
                                .formatted(erasure.erasureId(), table.name(), attempt), e);
                    }
                    continue;
                }
                expired = holding.size();
                table.refresh();
            }
            // what an interrupted run left: removed files no snapshot references any more, deleted here rather than after the orphan safety age
            Set<String> stillReferenced = new HashSet<>();
            for (Snapshot snapshot : table.snapshots()) {
                stillReferenced.addAll(referenced(table, snapshot, manifestCache));
            }
            for (String location : removed) {
                if (!stillReferenced.contains(location) && table.io().newInputFile(location).exists()) {
                    table.io().deleteFile(location);
                    deleted.incrementAndGet();
                }
            }
            return Optional.of(new Step(expired, deleted.get()));
        }
    }

    private static void requireExpirable(Table table, Erasure erasure, List<Long> holding)
    {
        long current = table.currentSnapshot().snapshotId();
        if (holding.contains(current)) {
            throw new ArchivalException(ERASURE_BLOCKED, "The current snapshot of table '%s' still references files erasure %s removed: a later commit restored them; run the DELETE again, then 'expire'"
                    .formatted(table.name(), erasure.erasureId()));
        }
        for (Map.Entry<String, SnapshotRef> ref : table.refs().entrySet()) {
            if (holding.contains(ref.getValue().snapshotId())) {
                throw new ArchivalException(ERASURE_BLOCKED, "%s '%s' of table '%s' names snapshot %s, which holds rows erasure %s removed: drop it (ALTER TABLE ... EXECUTE or Iceberg's manageSnapshots) so the erasure can expire it"
                        .formatted(ref.getValue().isBranch() ? "Branch" : "Tag", ref.getKey(), table.name(), ref.getValue().snapshotId(), erasure.erasureId()));
            }
        }
        // every kept snapshot must still find its watermark: the chain from it to the nearest snapshot carrying one stays
        Set<Long> expiring = ImmutableSet.copyOf(holding);
        for (Snapshot snapshot : table.snapshots()) {
            if (expiring.contains(snapshot.snapshotId())) {
                continue;
            }
            Snapshot step = snapshot;
            while (TieringWatermark.fromSummary(step.summary()).isEmpty() && step.parentId() != null) {
                Snapshot parent = table.snapshot(step.parentId());
                if (parent == null) {
                    break;
                }
                if (expiring.contains(parent.snapshotId())) {
                    throw new ArchivalException(ERASURE_BLOCKED, "Snapshot %s of table '%s' reads its watermark from snapshot %s, which holds rows erasure %s removed: expire snapshot %s first (it carries no watermark of its own)"
                            .formatted(snapshot.snapshotId(), table.name(), parent.snapshotId(), erasure.erasureId(), snapshot.snapshotId()));
                }
                step = parent;
            }
        }
    }

    /** The data and delete files {@code commit} removed from the table: those holding the erased rows. */
    private static Set<String> removedFiles(Table table, Snapshot commit)
    {
        Set<String> removed = new HashSet<>();
        commit.removedDataFiles(table.io()).forEach(file -> removed.add(file.location()));
        commit.removedDeleteFiles(table.io()).forEach(file -> removed.add(file.location()));
        return ImmutableSet.copyOf(removed);
    }

    private static boolean references(Table table, Snapshot snapshot, Set<String> locations, Map<String, Set<String>> manifestCache)
    {
        return referenced(table, snapshot, manifestCache).stream().anyMatch(locations::contains);
    }

    /** The data and delete files {@code snapshot} reads; a manifest is immutable, so its files are cached by its path. */
    private static Set<String> referenced(Table table, Snapshot snapshot, Map<String, Set<String>> manifestCache)
    {
        Set<String> files = new HashSet<>();
        for (ManifestFile manifest : snapshot.allManifests(table.io())) {
            files.addAll(manifestCache.computeIfAbsent(manifest.path(), _ -> liveFiles(table, manifest)));
        }
        return files;
    }

    private static Set<String> liveFiles(Table table, ManifestFile manifest)
    {
        Set<String> files = new HashSet<>();
        try (ManifestReader<? extends ContentFile<?>> reader = switch (manifest.content()) {
            case DATA -> ManifestFiles.read(manifest, table.io(), table.specs());
            case DELETES -> ManifestFiles.readDeleteManifest(manifest, table.io(), table.specs());
        }) {
            for (ContentFile<?> file : reader) {
                files.add(file.location());
            }
        }
        catch (IOException e) {
            throw new UncheckedIOException("Cannot read manifest '%s' of table '%s'".formatted(manifest.path(), table.name()), e);
        }
        return ImmutableSet.copyOf(files);
    }

    /** When the erasure's commit landed on the wall clock: its snapshot's stamp, or the statement's when it committed nothing cold or its snapshot is gone. */
    private static Instant committedAt(Table table, Erasure erasure)
    {
        return erasure.recorded().snapshotId()
                .map(table::snapshot)
                .map(snapshot -> Instant.ofEpochMilli(snapshot.timestampMillis()))
                .orElse(erasure.recorded().statementTime());
    }
}
