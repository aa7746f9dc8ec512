package io.meterstore.archiver.maintenance;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableSet;
import io.airlift.log.Logger;
import io.meterstore.archiver.cycle.ArchivalException;
import io.meterstore.archiver.cycle.Failpoints;
import io.meterstore.archiver.cycle.Failpoints.Failpoint;
import io.meterstore.core.ArchivalHistory;
import io.meterstore.core.ArchivalHistory.ArchivalCommit;
import io.meterstore.core.HotPartition;
import io.meterstore.core.TieringWatermark;
import org.apache.iceberg.ExpireSnapshots;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotRef;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.util.SnapshotUtil;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.collect.ImmutableMap.toImmutableMap;
import static io.meterstore.archiver.cycle.ArchivalException.Reason.COMMIT_FAILED;
import static java.util.Objects.requireNonNull;

/**
 * Expires the snapshots of a readings table that are past its retention, with Iceberg's ExpireSnapshots, which then
 * deletes the files only they referenced. MeterStore chooses the snapshots itself and hands Iceberg their ids, because
 * Iceberg's own choice by age and count knows nothing of what else must survive:
 * <ul>
 * <li>the watermark of every kept snapshot: {@code WatermarkReader} walks from a snapshot without one (another tool's
 * commit) to its nearest ancestor with one, so that chain is kept whole;
 * <li>a query planned on a snapshot: a snapshot is kept until the reader grace has passed since the next commit
 * replaced it, so its files outlive every query that could have pinned it while it was current;
 * <li>the archival commits of the hot partitions still in PostgreSQL: their drop counts the rows those commits hold.
 * </ul>
 * The step the table is archived with, which the newest archival commit records, is recorded as a table property first
 * ({@link ArchivalHistory#keepStepRecorded}), so no archival commit needs to be kept for it.
 * The main branch is kept contiguous from the current snapshot down to the oldest snapshot it must keep, as Iceberg keeps
 * a branch, so its history stays one walkable chain; snapshots a tag or branch names are never expired.
 */
public final class SnapshotExpiry
{
    private static final Logger log = Logger.get(SnapshotExpiry.class);
    private static final int MAX_ATTEMPTS = 5;

    private SnapshotExpiry() {}

    /** What expiry would remove now, and what the table keeps. */
    public record Plan(List<Long> expired, int kept, Optional<Instant> oldestKept)
    {
        public Plan
        {
            expired = ImmutableList.copyOf(requireNonNull(expired, "expired is null"));
            requireNonNull(oldestKept, "oldestKept is null");
            checkArgument(kept >= 0, "kept must not be negative");
        }
    }

    /** The snapshots expired, the files deleted with them, and what remains. */
    public record Expired(int snapshots, int deletedFiles, int kept, Optional<Instant> oldestKept)
    {
        public Expired
        {
            requireNonNull(oldestKept, "oldestKept is null");
            checkArgument(snapshots >= 0 && deletedFiles >= 0 && kept >= 0, "counts must not be negative");
        }
    }

    /**
     * The snapshots of {@code table} to expire now on {@code clock}: older than the retention, not among the newest of the
     * main branch it keeps, replaced more than the reader grace ago, and needed by no kept snapshot's watermark, no hot
     * partition in {@code partitions}, no tag or branch. A snapshot's age is its commit's stamp read on {@code clock}.
     */
    public static Plan plan(Table table, MaintenanceClock clock, MaintenanceSettings settings, List<HotPartition> partitions)
    {
        Snapshot current = table.currentSnapshot();
        if (current == null) {
            return new Plan(List.of(), 0, Optional.empty());
        }
        Instant now = clock.instant();
        Instant expireBefore = now.minus(settings.retention().maxSnapshotAge());
        Instant replacedBefore = now.minus(settings.readerGrace());
        List<Snapshot> all = ImmutableList.copyOf(table.snapshots());
        Map<Long, Instant> committed = all.stream().collect(toImmutableMap(Snapshot::snapshotId, snapshot -> clock.stampTime(Instant.ofEpochMilli(snapshot.timestampMillis()))));
        NavigableSet<Instant> commitTimes = new TreeSet<>(committed.values());
        Set<Long> anchors = new HashSet<>();
        anchors.add(current.snapshotId());
        for (SnapshotRef ref : table.refs().values()) {
            anchors.add(ref.snapshotId());
        }
        for (Snapshot snapshot : all) {
            Instant committedAt = committed.get(snapshot.snapshotId());
            // young enough to keep, or replaced (by the next commit) so recently that a query planned on it may still read its files
            if (!committedAt.isBefore(expireBefore) || Optional.ofNullable(commitTimes.higher(committedAt)).map(replaced -> !replaced.isBefore(replacedBefore)).orElse(true)) {
                anchors.add(snapshot.snapshotId());
            }
        }
        List<ArchivalCommit> archivalCommits = ArchivalHistory.archivalCommits(table);
        for (HotPartition partition : partitions) {
            ArchivalHistory.streamedFrom(archivalCommits, partition).forEach(commit -> anchors.add(commit.snapshotId()));
        }

        Set<Long> kept = new HashSet<>();
        List<Snapshot> main = ImmutableList.copyOf(SnapshotUtil.ancestorsOf(current.snapshotId(), table::snapshot));
        int depth = 0;
        for (int index = 0; index < main.size(); index++) {
            if (index < settings.retention().minSnapshotsToKeep() || anchors.contains(main.get(index).snapshotId())) {
                depth = index;
            }
        }
        // the main branch stays one chain from the current snapshot to the oldest one it must keep
        for (int index = 0; index <= depth; index++) {
            kept.add(main.get(index).snapshotId());
        }
        Set<Long> mainIds = main.stream().map(Snapshot::snapshotId).collect(ImmutableSet.toImmutableSet());
        for (Snapshot snapshot : all) {
            if (!mainIds.contains(snapshot.snapshotId()) && anchors.contains(snapshot.snapshotId())) {
                kept.add(snapshot.snapshotId());
            }
        }
        keepWatermarkChains(table, kept);

        List<Long> expired = all.stream()
                .map(Snapshot::snapshotId)
                .filter(id -> !kept.contains(id))
                .collect(ImmutableList.toImmutableList());
        Optional<Instant> oldestKept = kept.stream()
                .map(committed::get)
                .min(Comparator.naturalOrder());
        return new Plan(expired, kept.size(), oldestKept);
    }

    /** {@link #expire(Table, MaintenanceClock, MaintenanceSettings, List)} at {@code now} on the wall clock. */
    public static Expired expire(Table table, Instant now, MaintenanceSettings settings, List<HotPartition> partitions)
    {
        return expire(table, MaintenanceClock.fixed(now), settings, partitions);
    }

    /**
     * Expires what {@link #plan} chooses and deletes the files only those snapshots referenced. The metadata commit comes
     * first: an interruption after it leaves files no snapshot references, which orphan-file removal deletes later.
     */
    public static Expired expire(Table table, MaintenanceClock clock, MaintenanceSettings settings, List<HotPartition> partitions)
    {
        table.refresh();
        ArchivalHistory.keepStepRecorded(table);
        for (int attempt = 1; ; attempt++) {
            table.refresh();
            Plan plan = plan(table, clock, settings, partitions);
            if (plan.expired().isEmpty()) {
                return new Expired(0, 0, plan.kept(), plan.oldestKept());
            }
            AtomicInteger deleted = new AtomicInteger();
            // by id only: with no age of its own (0 keeps every snapshot by age) Iceberg expires exactly these
            ExpireSnapshots expire = table.expireSnapshots()
                    .expireOlderThan(0)
                    .cleanExpiredFiles(true)
                    .deleteWith(location -> {
                        // Iceberg deletes only once the table without the expired snapshots is committed
                        if (deleted.get() == 0) {
                            Failpoints.hit(Failpoint.EXPIRY_AFTER_COMMIT);
                        }
                        table.io().deleteFile(location);
                        deleted.incrementAndGet();
                        Failpoints.hit(Failpoint.EXPIRY_MID_DELETE);
                    });
            plan.expired().forEach(expire::expireSnapshotId);
            try {
                expire.commit();
            }
            catch (CommitFailedException e) {
                // another commit landed first; plan again on top of it
                if (attempt >= MAX_ATTEMPTS) {
                    throw new ArchivalException(COMMIT_FAILED, "Expiring snapshots of table '%s' lost the commit race %s times: other writers keep committing; run 'expire' again later"
                            .formatted(table.name(), attempt), e);
                }
                log.info("Expiring snapshots of table '%s' lost a commit race; attempt %s of %s", table.name(), attempt + 1, MAX_ATTEMPTS);
                continue;
            }
            return new Expired(plan.expired().size(), deleted.get(), plan.kept(), plan.oldestKept());
        }
    }

    /** Adds to {@code kept} every ancestor a kept snapshot's watermark is read from: up to the nearest one carrying it. */
    private static void keepWatermarkChains(Table table, Set<Long> kept)
    {
        Deque<Long> pending = new ArrayDeque<>(kept);
        while (!pending.isEmpty()) {
            Snapshot snapshot = table.snapshot(pending.pop());
            while (snapshot != null && TieringWatermark.fromSummary(snapshot.summary()).isEmpty() && snapshot.parentId() != null) {
                Snapshot parent = table.snapshot(snapshot.parentId());
                if (parent == null) {
                    // already broken by someone else: there is nothing left to keep
                    break;
                }
                if (!kept.add(parent.snapshotId())) {
                    // kept already, and its own chain with it
                    break;
                }
                snapshot = parent;
            }
        }
    }
}
