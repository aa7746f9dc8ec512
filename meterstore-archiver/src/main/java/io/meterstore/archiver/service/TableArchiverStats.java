package io.meterstore.archiver.service;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.maintenance.ColdTierLayout;
import io.meterstore.archiver.maintenance.ErasureCompletion;
import io.meterstore.archiver.maintenance.MaintenanceCommand;
import io.meterstore.archiver.maintenance.MaintenanceOutcome;
import io.meterstore.archiver.service.TableInfo.ColdTierInfo;
import io.meterstore.archiver.service.TableInfo.MaintenanceInfo;
import io.meterstore.core.InvariantReport;
import io.meterstore.core.TieringWatermark;
import org.weakref.jmx.Flatten;
import org.weakref.jmx.Managed;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.airlift.units.Duration.succinctDuration;
import static java.util.Objects.requireNonNull;
import static java.util.concurrent.TimeUnit.MILLISECONDS;

/** The statistics of one table, exported with the table's name in its JMX name and so in every metric name on /metrics. */
public final class TableArchiverStats
{
    private final String table;
    private final InstantSource clock;

    private final ArchiverCounters counters = new ArchiverCounters();

    @GuardedBy("this")
    private Optional<TieringWatermark> watermark = Optional.empty();
    @GuardedBy("this")
    private Optional<ColdTierLayout> layout = Optional.empty();
    @GuardedBy("this")
    private Optional<List<ErasureCompletion.Awaiting>> erasuresAwaiting = Optional.empty();
    @GuardedBy("this")
    private final Map<MaintenanceCommand, LastMaintenance> lastMaintenance = new EnumMap<>(MaintenanceCommand.class);
    @GuardedBy("this")
    private Optional<LastCycle> lastCycle = Optional.empty();
    @GuardedBy("this")
    private Optional<InvariantReport> lastInvariantReport = Optional.empty();

    public TableArchiverStats(String table, InstantSource clock)
    {
        this.table = requireNonNull(table, "table is null");
        this.clock = requireNonNull(clock, "clock is null");
    }

    public void cycleFinished(ArchiveOutcome outcome, Duration elapsed)
    {
        counters.cycleFinished(outcome, elapsed);
        CycleResult result = CycleResult.of(outcome.kind());
        synchronized (this) {
            watermark = Optional.of(outcome.watermark());
            lastCycle = Optional.of(new LastCycle(result, outcome.describe(), clock.instant()));
        }
    }

    public void cycleFailed(String message, Duration elapsed)
    {
        counters.cycleFailed(elapsed);
        synchronized (this) {
            lastCycle = Optional.of(new LastCycle(CycleResult.FAILED, message, clock.instant()));
        }
    }

    /** A maintenance command finished; one without the lease changed nothing and is not counted. */
    public void maintenanceFinished(MaintenanceOutcome outcome, Instant finishedAt)
    {
        if (outcome.leaseContended()) {
            return;
        }
        counters.maintenanceFinished(outcome);
        synchronized (this) {
            outcome.erasures().ifPresent(erasures -> erasuresAwaiting = Optional.of(erasures.awaiting()));
            layout = Optional.of(outcome.layout());
            lastMaintenance.put(outcome.command(), new LastMaintenance(Optional.of(finishedAt), outcome.describe()));
        }
    }

    public void maintenanceFailed(MaintenanceCommand command, String message)
    {
        counters.maintenanceFailed();
        synchronized (this) {
            Optional<Instant> finished = Optional.ofNullable(lastMaintenance.get(command)).flatMap(LastMaintenance::finishedAt);
            lastMaintenance.put(command, new LastMaintenance(finished, message));
        }
    }

    /** When {@code command} last finished on the table as the table records it: by this archiver or another replica. */
    public synchronized void maintenanceRecorded(MaintenanceCommand command, Optional<Instant> finishedAt)
    {
        LastMaintenance last = lastMaintenance.get(command);
        if (finishedAt.isEmpty() || (last != null && last.finishedAt().filter(known -> !known.isBefore(finishedAt.get())).isPresent())) {
            return;
        }
        lastMaintenance.put(command, new LastMaintenance(finishedAt, last == null ? "%s ran on %s".formatted(command.commandName(), finishedAt.get()) : last.description()));
    }

    /** The layout read when the service found its maintenance not due, so that the gauges have values after a restart. */
    public synchronized void layoutRead(ColdTierLayout read)
    {
        if (layout.isEmpty()) {
            layout = Optional.of(read);
        }
    }

    public synchronized Optional<ColdTierLayout> layout()
    {
        return layout;
    }

    public synchronized void invariantChecked(InvariantReport report)
    {
        watermark = Optional.of(report.watermark());
        lastInvariantReport = Optional.of(report);
    }

    public synchronized Optional<TieringWatermark> watermark()
    {
        return watermark;
    }

    /** How far the watermark trails the clock; a healthy table stays near the settlement lag plus one step. */
    public synchronized Optional<Duration> watermarkLag()
    {
        return watermark.map(value -> Duration.between(value.instant(), clock.instant()));
    }

    public synchronized TableInfo info()
    {
        return new TableInfo(
                table,
                watermark.map(TieringWatermark::instant),
                watermarkLag().map(lag -> succinctDuration(Math.max(lag.toMillis(), 0), MILLISECONDS)),
                lastCycle.map(LastCycle::result),
                lastCycle.map(LastCycle::description),
                lastCycle.map(LastCycle::finishedAt),
                lastInvariantReport.map(InvariantReport::violations).orElse(List.of()),
                layout.map(ColdTierInfo::of),
                lastMaintenance.entrySet().stream()
                        .map(entry -> new MaintenanceInfo(entry.getKey().commandName(), entry.getValue().finishedAt(), entry.getValue().description()))
                        .toList());
    }

    @Managed
    @Flatten
    public ArchiverCounters getCounters()
    {
        return counters;
    }

    /** NaN until the first cycle or check has read the watermark. */
    @Managed(description = "Seconds the tiering watermark trails the archiver's clock")
    public synchronized double getWatermarkLagSeconds()
    {
        return watermarkLag().map(lag -> lag.toMillis() / 1000.0).orElse(Double.NaN);
    }

    @Managed(description = "Violations of the tiering invariant found by the last check")
    public synchronized int getInvariantViolations()
    {
        return lastInvariantReport.map(report -> report.violations().size()).orElse(0);
    }

    @Managed(description = "Hot partitions attached to the parent table, as of the last check")
    public synchronized int getAttachedPartitions()
    {
        return lastInvariantReport.map(report -> report.attachedPartitions().size()).orElse(0);
    }

    @Managed(description = "Detached partitions below the watermark waiting for the reader grace to pass, as of the last check")
    public synchronized int getPartitionsAwaitingDrop()
    {
        return lastInvariantReport.map(report -> report.partitionsAwaitingDrop().size()).orElse(0);
    }

    /** NaN until 'expire' has run. */
    @Managed(description = "Erasures whose rows some snapshot still holds, as of the last 'expire'")
    public synchronized double getErasuresAwaiting()
    {
        return erasuresAwaiting.map(awaiting -> (double) awaiting.size()).orElse(Double.NaN);
    }

    /** NaN until 'expire' has run; 0 when none is overdue. */
    @Managed(description = "Seconds the oldest erasure awaiting physical completion is past its due time (its commit plus the reader grace), as of the last 'expire'")
    public synchronized double getErasureOverdueSeconds()
    {
        return erasuresAwaiting.map(awaiting -> awaiting.stream()
                        .map(ErasureCompletion.Awaiting::due)
                        .min(Instant::compareTo)
                        .map(due -> Math.max(0, Duration.between(due, clock.instant()).toSeconds()))
                        .orElse(0L)
                        .doubleValue())
                .orElse(Double.NaN);
    }

    /** NaN until maintenance has read the table's layout. */
    @Managed(description = "Snapshots the Iceberg table keeps, as of the last maintenance")
    public synchronized double getSnapshots()
    {
        return layout.map(value -> (double) value.snapshots()).orElse(Double.NaN);
    }

    @Managed(description = "Data files of the current snapshot, as of the last maintenance")
    public synchronized double getDataFiles()
    {
        return layout.map(value -> (double) value.dataFiles()).orElse(Double.NaN);
    }

    @Managed(description = "The most data files of any month of \"from\", as of the last maintenance")
    public synchronized double getMaxDataFilesPerMonth()
    {
        return layout.map(value -> (double) value.maxDataFilesPerMonth()).orElse(Double.NaN);
    }

    @Managed(description = "Months of \"from\" holding files of no role of the resolved layout, which readers resolve while reading; compaction resolves them")
    public synchronized double getUnresolvedMonths()
    {
        return layout.map(value -> (double) value.unresolvedMonths()).orElse(Double.NaN);
    }

    @Managed(description = "Seconds since month compaction last rewrote the month it rewrote least recently; NaN until a month is compacted")
    public synchronized double getSecondsSinceOldestMonthCompaction()
    {
        return layout.flatMap(value -> value.lastCompactions().values().stream().min(Instant::compareTo))
                .map(oldest -> (double) Duration.between(oldest, clock.instant()).toSeconds())
                .orElse(Double.NaN);
    }

    @Managed(description = "Data manifests of the current snapshot, as of the last maintenance")
    public synchronized double getManifests()
    {
        return layout.map(value -> (double) value.manifests()).orElse(Double.NaN);
    }

    @Managed(description = "Seconds since 'expire' last finished on the table; NaN until it has")
    public synchronized double getSecondsSinceExpire()
    {
        return secondsSince(MaintenanceCommand.EXPIRE);
    }

    @Managed(description = "Seconds since 'compact' last finished on the table; NaN until it has")
    public synchronized double getSecondsSinceCompact()
    {
        return secondsSince(MaintenanceCommand.COMPACT);
    }

    @GuardedBy("this")
    private double secondsSince(MaintenanceCommand command)
    {
        return Optional.ofNullable(lastMaintenance.get(command))
                .flatMap(LastMaintenance::finishedAt)
                .map(finished -> Math.max(Duration.between(finished, clock.instant()).toMillis(), 0) / 1000.0)
                .orElse(Double.NaN);
    }

    private record LastMaintenance(Optional<Instant> finishedAt, String description)
    {
        private LastMaintenance
        {
            requireNonNull(finishedAt, "finishedAt is null");
            requireNonNull(description, "description is null");
        }
    }

    private record LastCycle(CycleResult result, String description, Instant finishedAt)
    {
        private LastCycle
        {
            requireNonNull(result, "result is null");
            requireNonNull(description, "description is null");
            requireNonNull(finishedAt, "finishedAt is null");
        }
    }
}
