package io.meterstore.archiver.service;

import com.google.common.collect.ImmutableMap;
import com.google.inject.Inject;
import io.airlift.stats.CounterStat;
import io.airlift.stats.TimeStat;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.maintenance.MaintenanceCommand;
import io.meterstore.archiver.maintenance.MaintenanceOutcome;
import io.meterstore.core.InvariantReport;
import org.weakref.jmx.Managed;
import org.weakref.jmx.Nested;

import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import java.util.stream.DoubleStream;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.collect.ImmutableMap.toImmutableMap;
import static java.util.Objects.requireNonNull;
import static java.util.concurrent.TimeUnit.NANOSECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static java.util.function.Function.identity;

/**
 * The archiver's statistics: totals over every table here, each table's own in a {@link TableArchiverStats} exported
 * separately with the table's name. Every counter also appears on {@code /metrics}.
 */
public final class ArchiverStats
{
    private final Map<String, TableArchiverStats> tables;

    private final CounterStat archivedRows = new CounterStat();
    private final CounterStat archivedBytes = new CounterStat();
    private final Map<CycleResult, CounterStat> cycles = Arrays.stream(CycleResult.values())
            .collect(toImmutableMap(identity(), _ -> new CounterStat()));
    private final TimeStat cycleTime = new TimeStat(SECONDS);
    private final CounterStat expiredSnapshots = new CounterStat();
    private final CounterStat orphanFilesRemoved = new CounterStat();
    private final CounterStat rewrittenBytes = new CounterStat();
    private final CounterStat maintenanceFailures = new CounterStat();
    private final CounterStat erasuresCompleted = new CounterStat();
    private final CounterStat retainedMonths = new CounterStat();

    @Inject
    public ArchiverStats(Map<String, TableArchiverStats> tables)
    {
        this.tables = ImmutableMap.copyOf(requireNonNull(tables, "tables is null"));
    }

    /** The statistics of {@code table}, as configured (without the schema). */
    public TableArchiverStats table(String table)
    {
        TableArchiverStats stats = tables.get(table);
        checkArgument(stats != null, "Table '%s' is not configured", table);
        return stats;
    }

    public void cycleFinished(String table, ArchiveOutcome outcome, Duration elapsed)
    {
        table(table).cycleFinished(outcome, elapsed);
        cycles.get(CycleResult.of(outcome.kind())).update(1);
        cycleTime.add(elapsed.toNanos(), NANOSECONDS);
        archivedRows.update(outcome.rows());
        archivedBytes.update(outcome.bytes());
    }

    public void cycleFailed(String table, String message, Duration elapsed)
    {
        table(table).cycleFailed(message, elapsed);
        cycles.get(CycleResult.FAILED).update(1);
        cycleTime.add(elapsed.toNanos(), NANOSECONDS);
    }

    public void maintenanceFinished(String table, MaintenanceOutcome outcome, Instant finishedAt)
    {
        table(table).maintenanceFinished(outcome, finishedAt);
        if (outcome.leaseContended()) {
            return;
        }
        outcome.expired().ifPresent(expired -> expiredSnapshots.update(expired.snapshots()));
        outcome.orphans().ifPresent(orphans -> orphanFilesRemoved.update(orphans.files()));
        rewrittenBytes.update(outcome.rewrittenBytes());
        outcome.erasures().ifPresent(erasures -> erasuresCompleted.update(erasures.erasures().size()));
        outcome.swept().ifPresent(swept -> retainedMonths.update(swept.months().size()));
    }

    public void maintenanceFailed(String table, MaintenanceCommand command, String message)
    {
        table(table).maintenanceFailed(command, message);
        maintenanceFailures.update(1);
    }

    public void invariantChecked(String table, InvariantReport report)
    {
        table(table).invariantChecked(report);
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

    @Managed
    @Nested
    public CounterStat getExpiredSnapshots()
    {
        return expiredSnapshots;
    }

    @Managed
    @Nested
    public CounterStat getOrphanFilesRemoved()
    {
        return orphanFilesRemoved;
    }

    @Managed
    @Nested
    public CounterStat getRewrittenBytes()
    {
        return rewrittenBytes;
    }

    @Managed
    @Nested
    public CounterStat getMaintenanceFailures()
    {
        return maintenanceFailures;
    }

    /** The one number to alert on for "maintenance is not running", whichever table and command it is. */
    @Managed(description = "The most seconds since any maintenance command last finished on any table; NaN until one has")
    public double getMaxSecondsSinceMaintenance()
    {
        return tables.values().stream()
                .flatMapToDouble(stats -> DoubleStream.of(stats.getSecondsSinceExpire(), stats.getSecondsSinceCompact()))
                .filter(seconds -> !Double.isNaN(seconds))
                .max()
                .orElse(Double.NaN);
    }

    /** The one number to alert on for "archival is not keeping up", whichever table it is. */
    @Managed(description = "The largest watermark lag of any table, in seconds; NaN until a watermark was read")
    public double getMaxWatermarkLagSeconds()
    {
        return tables.values().stream()
                .mapToDouble(TableArchiverStats::getWatermarkLagSeconds)
                .filter(lag -> !Double.isNaN(lag))
                .max()
                .orElse(Double.NaN);
    }

    @Managed(description = "Violations of the tiering invariant found by the last check of every table")
    public int getInvariantViolations()
    {
        return tables.values().stream().mapToInt(TableArchiverStats::getInvariantViolations).sum();
    }
}
