package io.meterstore.archiver.service;

import com.google.common.base.Stopwatch;
import com.google.errorprone.annotations.concurrent.GuardedBy;
import com.google.inject.Inject;
import io.airlift.log.Logger;
import io.airlift.units.Duration;
import io.meterstore.archiver.tables.ArchiverTables;
import io.meterstore.archiver.tables.Failures;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.maintenance.ColdTierLayout;
import io.meterstore.archiver.maintenance.MaintenanceCommand;
import io.meterstore.archiver.maintenance.MaintenanceOutcome;
import io.meterstore.archiver.maintenance.TableMaintenance;
import io.meterstore.core.InvariantCheck;
import io.meterstore.core.InvariantLog;
import io.meterstore.core.InvariantReport;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import org.apache.iceberg.Table;

import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.time.InstantSource;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.airlift.concurrent.Threads.threadsNamed;
import static java.lang.Thread.currentThread;
import static java.util.Objects.requireNonNull;
import static java.util.concurrent.TimeUnit.MILLISECONDS;

/**
 * Runs the cycles of every table: each configured table, and each one CREATE TABLE created (looked for every schedule
 * interval), on its own thread, one cycle after another, a pause of the
 * schedule interval after a cycle that found nothing to archive and none after one that archived (a backlog is worked
 * off at once). After each cycle the table's invariant is checked; once no window is left, the maintenance commands
 * that are due run (expire, compact), each under the table's lease like a cycle.
 * <p>
 * Draining stops new cycles and waits, up to the shutdown timeout, for the ones in flight to finish their step, so a
 * shutdown leaves no half-done step behind. A cycle still running at the timeout is interrupted and abandoned; that is
 * safe, only slower, because an interrupted cycle leaves what a successful one leaves and the next run finishes it.
 */
public final class ArchiverScheduler
{
    private static final Logger log = Logger.get(ArchiverScheduler.class);

    private final ArchiverTables tables;
    private final ArchiverStats stats;
    private final InstantSource clock;
    private final Duration interval;
    private final Duration shutdownTimeout;
    private final Duration maintenanceInterval;
    private final ScheduledThreadPoolExecutor executor;
    private final AtomicBoolean draining = new AtomicBoolean();

    @GuardedBy("this")
    private boolean started;
    // the tables whose cycles run: a thread each, and one that looks for tables CREATE TABLE created
    @GuardedBy("this")
    private final Set<String> scheduled = new HashSet<>();

    @Inject
    public ArchiverScheduler(ArchiverTables tables, ArchiverStats stats, SchedulerConfig config, InstantSource clock)
    {
        this.tables = requireNonNull(tables, "tables is null");
        this.stats = requireNonNull(stats, "stats is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.interval = config.getScheduleInterval();
        this.shutdownTimeout = config.getShutdownTimeout();
        this.maintenanceInterval = config.getMaintenanceInterval();
        this.executor = new ScheduledThreadPoolExecutor(tables.tables().size() + 1, threadsNamed("archiver-%s"));
    }

    @PostConstruct
    public synchronized void start()
    {
        if (started || draining.get()) {
            return;
        }
        // a warehouse it cannot write would fail every cycle after detaching a partition: refused before the first
        tables.requireWritableWarehouse();
        started = true;
        tables.tables().forEach(this::schedule);
        log.info("Archiving %s every %s", tables.tables().stream().map(tables::qualifiedName).toList(), interval);
        executor.scheduleWithFixedDelay(this::findCreatedTables, 0, interval.toMillis(), MILLISECONDS);
    }

    private synchronized void schedule(String table)
    {
        if (draining.get() || !scheduled.add(table)) {
            return;
        }
        executor.setCorePoolSize(scheduled.size() + 1);
        try {
            // fixed delay: a long cycle never overlaps the next one of the same table
            executor.scheduleWithFixedDelay(() -> runCyclesWhileArchived(table), 0, interval.toMillis(), MILLISECONDS);
        }
        catch (RejectedExecutionException e) {
            // draining began meanwhile: no new cycle starts
        }
    }

    /**
     * Archives, from its first cycle on, each table CREATE TABLE created beyond meterstore.tables since the last look
     * (every schedule interval): a table created through the connector is archived without restarting the archiver.
     */
    private void findCreatedTables()
    {
        try {
            scheduleCreatedTables();
        }
        catch (RuntimeException e) {
            // an exception escaping a periodic run ends it for good: no table created from then on would be archived
            log.error(e, "Cannot schedule the tables CREATE TABLE created or dropped in namespace '%s'", tables.schema());
        }
    }

    private void scheduleCreatedTables()
    {
        ArchiverTables.CreatedTables created;
        try {
            created = tables.findCreatedTables();
        }
        catch (RuntimeException e) {
            log.warn("Cannot look for tables CREATE TABLE created in namespace '%s': %s", tables.schema(), Failures.describe(e));
            return;
        }
        for (String table : created.dropped()) {
            // its cycles find it gone and stop; its failures and growing watermark lag would otherwise alert until a restart
            stats.removeTable(table);
            log.info("%s: dropped; archiving it no longer", tables.qualifiedName(table));
        }
        for (String table : created.found()) {
            stats.addTable(table);
            log.info("%s: created by CREATE TABLE; archiving it every %s", tables.qualifiedName(table), interval);
            schedule(table);
        }
    }

    /**
     * Starts no new cycle and waits for those in flight to finish; idempotent. Returns whether every cycle finished
     * within the shutdown timeout.
     */
    @PreDestroy
    public boolean drain()
    {
        boolean first = draining.compareAndSet(false, true);
        if (first) {
            log.info("Draining: no new cycle starts; waiting up to %s for the cycles in flight", shutdownTimeout);
            // cancels the periodic runs that have not started; a running one finishes
            executor.shutdown();
        }
        try {
            if (executor.awaitTermination(shutdownTimeout.toMillis(), MILLISECONDS)) {
                if (first) {
                    log.info("Drained: no cycle is running");
                }
                return true;
            }
            log.warn("Cycles still running after %s: interrupting them; the next run of the archiver finishes their windows", shutdownTimeout);
            executor.shutdownNow();
            return false;
        }
        catch (InterruptedException e) {
            currentThread().interrupt();
            executor.shutdownNow();
            return false;
        }
    }

    public boolean isDraining()
    {
        return draining.get();
    }

    /** No cycle is running and none will start. */
    public boolean isTerminated()
    {
        return executor.isTerminated();
    }

    public List<TableInfo> tableInfos()
    {
        // a table found a moment ago is listed once it is counted, one found dropped a moment ago no longer
        return tables.tables().stream().map(stats::counted).flatMap(Optional::stream).map(TableArchiverStats::info).toList();
    }

    /**
     * The cycles of {@code table} while it is archived: a created table dropped since has none, and has them again once it
     * is created again (its periodic run stays scheduled). Nothing escapes, which would end its periodic runs for good.
     */
    private void runCyclesWhileArchived(String table)
    {
        if (!tables.isArchived(table)) {
            return;
        }
        try {
            runCycles(table);
        }
        catch (RuntimeException e) {
            log.error(e, "%s: cycle ended unexpectedly", tables.qualifiedName(table));
        }
    }

    private void runCycles(String table)
    {
        // a backlog (a first run, an outage) is worked off window by window without waiting for the schedule
        Optional<ArchiveOutcome.Kind> last = Optional.empty();
        while (!draining.get()) {
            last = runCycle(table);
            if (!last.equals(Optional.of(ArchiveOutcome.Kind.ARCHIVED))) {
                break;
            }
        }
        // writers need tomorrow's partitions whatever archival did
        ensureHeadroom(table);
        // maintenance only once no window is left: not beside a backlog, another replica's lease, a failing database
        if (last.equals(Optional.of(ArchiveOutcome.Kind.IDLE))) {
            maintain(table);
        }
    }

    /** Creates the partitions ahead of now the next writes need; a failure is logged, and the next cycle tries again. */
    private void ensureHeadroom(String table)
    {
        if (draining.get()) {
            return;
        }
        String name = tables.qualifiedName(table);
        try {
            List<String> created = tables.ensureHeadroom(table, clock);
            if (!created.isEmpty()) {
                log.info("%s: created partitions %s ahead of now", name, String.join(", ", created));
            }
        }
        catch (SQLException | RuntimeException e) {
            log.warn("%s: cannot create the partitions ahead of now: %s", name, Failures.describe(e));
        }
    }

    /**
     * Runs each maintenance command that is due on {@code table}: never run, or last finished (by this archiver or
     * another replica, as the table records it) at least the maintenance interval ago; {@code expire} also as soon as
     * an erasure is due to become physical. A command that fails or finds
     * the lease taken is not recorded, so the next cycle tries it again.
     */
    private void maintain(String table)
    {
        String name = tables.qualifiedName(table);
        if (stats.table(table).layout().isEmpty()) {
            // after a restart, maintenance may not be due for a day: the cold tier's gauges read the layout now
            try {
                stats.table(table).layoutRead(ColdTierLayout.of(tables.catalog().loadTable(tables.identifier(table))));
            }
            catch (RuntimeException e) {
                log.warn("%s: cannot read the cold tier's layout: %s", name, Failures.describe(e));
            }
        }
        for (MaintenanceCommand command : MaintenanceCommand.values()) {
            if (draining.get()) {
                return;
            }
            Stopwatch stopwatch = Stopwatch.createStarted();
            try {
                TableMaintenance maintenance = tables.maintenance(table, clock);
                Optional<Instant> lastRun = maintenance.lastRun(command);
                stats.table(table).maintenanceRecorded(command, lastRun);
                boolean recent = lastRun.isPresent() && lastRun.get().plus(maintenanceInterval.toJavaTime()).isAfter(clock.instant());
                // an erasure past its reader grace does not wait for the interval: its rows are still in older snapshots
                if (recent && !(command == MaintenanceCommand.EXPIRE && maintenance.erasureDue())) {
                    continue;
                }
                MaintenanceOutcome outcome = maintenance.run(command);
                stats.maintenanceFinished(table, outcome, clock.instant());
                log.info("%s (%s)", outcome.describe(), Duration.succinctNanos(stopwatch.elapsed().toNanos()));
            }
            catch (SQLException | IOException | RuntimeException e) {
                String message = "%s: %s failed: %s".formatted(name, command.commandName(), Failures.describe(e));
                stats.maintenanceFailed(table, command, message);
                logFailure(e, message);
            }
        }
    }

    /** Runs one cycle of {@code table} and checks its invariant; returns what the cycle did, empty if it failed. */
    private Optional<ArchiveOutcome.Kind> runCycle(String table)
    {
        String name = tables.qualifiedName(table);
        Stopwatch stopwatch = Stopwatch.createStarted();
        Optional<ArchiveOutcome.Kind> kind = Optional.empty();
        try {
            ArchiveOutcome outcome = tables.cycle(table, clock).archiveOnce();
            stats.cycleFinished(table, outcome, stopwatch.elapsed());
            log.info("%s (%s)", outcome.describe(), Duration.succinctNanos(stopwatch.elapsed().toNanos()));
            kind = Optional.of(outcome.kind());
        }
        catch (SQLException | IOException | RuntimeException e) {
            String message = "%s: failed: %s".formatted(name, Failures.describe(e));
            stats.cycleFailed(table, message, stopwatch.elapsed());
            logFailure(e, message);
        }
        checkInvariant(table);
        return kind;
    }

    /**
     * A failure that says what is wrong in its message (the database or the storage unreachable, MeterStore's own
     * errors) is one line: a stack trace every interval while PostgreSQL is down helps nobody. Anything else is a bug,
     * logged with its trace.
     */
    private static void logFailure(Exception e, String message)
    {
        if (Failures.isOperational(e)) {
            log.error("%s", message);
        }
        else {
            log.error(e, "%s", message);
        }
    }

    private void checkInvariant(String table)
    {
        String name = tables.qualifiedName(table);
        try (Connection connection = tables.connect()) {
            Table icebergTable = tables.catalog().loadTable(tables.identifier(table));
            InvariantReport report = InvariantCheck.check(icebergTable, tables.hotTier(table), connection);
            List<String> previous = stats.table(table).info().invariantViolations();
            stats.invariantChecked(table, report);
            // for "<table>$invariant": the connector shows what the archiver last found
            InvariantLog.record(connection, tables.hotTier(table), report, clock.instant());
            // a violation is logged when it appears, not once per cycle while it persists
            for (String violation : report.violations()) {
                if (!previous.contains(violation)) {
                    log.error("Invariant of table '%s' violated: %s", name, violation);
                }
            }
            if (report.holds() && !previous.isEmpty()) {
                log.info("Invariant of table '%s' holds again", name);
            }
        }
        catch (SQLException | RuntimeException e) {
            log.warn("Cannot check the invariant of table '%s': %s", name, Failures.describe(e));
        }
    }
}
