package io.meterstore.archiver.service;

import io.airlift.stats.CounterStat;
import io.airlift.stats.TimeStat;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.maintenance.MaintenanceOutcome;
import org.weakref.jmx.Managed;
import org.weakref.jmx.Nested;

import java.time.Duration;
import java.util.Arrays;
import java.util.Map;

import static com.google.common.collect.ImmutableMap.toImmutableMap;
import static java.util.concurrent.TimeUnit.NANOSECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static java.util.function.Function.identity;

/**
 * What the archiver's cycles and maintenance counted: each table's in its {@link TableArchiverStats}, the totals over
 * every table in {@link ArchiverStats}. One class, so that a counter added for a table is in the totals too; both
 * export it flattened, under the same attribute names.
 */
public final class ArchiverCounters
{
    private final CounterStat archivedRows = new CounterStat();
    private final CounterStat archivedBytes = new CounterStat();
    private final CounterStat archivedFiles = new CounterStat();
    private final Map<CycleResult, CounterStat> cycles = Arrays.stream(CycleResult.values())
            .collect(toImmutableMap(identity(), _ -> new CounterStat()));
    private final TimeStat cycleTime = new TimeStat(SECONDS);
    private final CounterStat expiredSnapshots = new CounterStat();
    private final CounterStat expiredFiles = new CounterStat();
    private final CounterStat orphanFilesRemoved = new CounterStat();
    private final CounterStat orphanBytesRemoved = new CounterStat();
    private final CounterStat rewrittenManifests = new CounterStat();
    private final CounterStat rewrittenBytes = new CounterStat();
    private final CounterStat compactedMonths = new CounterStat();
    private final CounterStat maintenanceFailures = new CounterStat();
    private final CounterStat erasuresCompleted = new CounterStat();
    private final CounterStat retainedMonths = new CounterStat();

    void cycleFinished(ArchiveOutcome outcome, Duration elapsed)
    {
        cycles.get(CycleResult.of(outcome.kind())).update(1);
        cycleTime.add(elapsed.toNanos(), NANOSECONDS);
        archivedRows.update(outcome.rows());
        archivedBytes.update(outcome.bytes());
        archivedFiles.update(outcome.files());
    }

    void cycleFailed(Duration elapsed)
    {
        cycles.get(CycleResult.FAILED).update(1);
        cycleTime.add(elapsed.toNanos(), NANOSECONDS);
    }

    /** A maintenance command finished; one without the lease changed nothing and is not counted. */
    void maintenanceFinished(MaintenanceOutcome outcome)
    {
        if (outcome.leaseContended()) {
            return;
        }
        outcome.expired().ifPresent(expired -> {
            expiredSnapshots.update(expired.snapshots());
            expiredFiles.update(expired.deletedFiles());
        });
        outcome.orphans().ifPresent(orphans -> {
            orphanFilesRemoved.update(orphans.files());
            orphanBytesRemoved.update(orphans.bytes());
        });
        outcome.rewritten().ifPresent(rewritten -> rewrittenManifests.update(rewritten.replacedManifests()));
        outcome.compaction().ifPresent(compaction -> compactedMonths.update(compaction.compacted().size()));
        rewrittenBytes.update(outcome.rewrittenBytes());
        outcome.erasures().ifPresent(erasures -> erasuresCompleted.update(erasures.erasures().size()));
        outcome.swept().ifPresent(swept -> retainedMonths.update(swept.months().size()));
    }

    void maintenanceFailed()
    {
        maintenanceFailures.update(1);
    }

    @Managed
    @Nested
    public CounterStat getArchivedRows()
    {
        return archivedRows;
    }

    @Managed
    @Nested
    public CounterStat getArchivedBytes()
    {
        return archivedBytes;
    }

    @Managed
    @Nested
    public CounterStat getArchivedFiles()
    {
        return archivedFiles;
    }

    @Managed
    @Nested
    public TimeStat getCycleTime()
    {
        return cycleTime;
    }

    @Managed
    @Nested
    public CounterStat getCyclesArchived()
    {
        return cycles.get(CycleResult.ARCHIVED);
    }

    @Managed
    @Nested
    public CounterStat getCyclesIdle()
    {
        return cycles.get(CycleResult.IDLE);
    }

    @Managed
    @Nested
    public CounterStat getCyclesLeaseContended()
    {
        return cycles.get(CycleResult.LEASE_CONTENDED);
    }

    @Managed
    @Nested
    public CounterStat getCyclesDeferred()
    {
        return cycles.get(CycleResult.DEFERRED);
    }

    @Managed
    @Nested
    public CounterStat getCyclesSuperseded()
    {
        return cycles.get(CycleResult.SUPERSEDED);
    }

    @Managed
    @Nested
    public CounterStat getCyclesFailed()
    {
        return cycles.get(CycleResult.FAILED);
    }

    @Managed
    @Nested
    public CounterStat getExpiredSnapshots()
    {
        return expiredSnapshots;
    }

    @Managed
    @Nested
    public CounterStat getExpiredFiles()
    {
        return expiredFiles;
    }

    @Managed
    @Nested
    public CounterStat getOrphanFilesRemoved()
    {
        return orphanFilesRemoved;
    }

    @Managed
    @Nested
    public CounterStat getOrphanBytesRemoved()
    {
        return orphanBytesRemoved;
    }

    @Managed
    @Nested
    public CounterStat getRewrittenManifests()
    {
        return rewrittenManifests;
    }

    @Managed
    @Nested
    public CounterStat getRewrittenBytes()
    {
        return rewrittenBytes;
    }

    @Managed
    @Nested
    public CounterStat getCompactedMonths()
    {
        return compactedMonths;
    }

    @Managed
    @Nested
    public CounterStat getMaintenanceFailures()
    {
        return maintenanceFailures;
    }

    @Managed
    @Nested
    public CounterStat getErasuresCompleted()
    {
        return erasuresCompleted;
    }

    @Managed
    @Nested
    public CounterStat getRetainedMonths()
    {
        return retainedMonths;
    }
}
