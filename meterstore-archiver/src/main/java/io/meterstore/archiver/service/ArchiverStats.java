package io.meterstore.archiver.service;

import com.google.common.annotations.VisibleForTesting;
import com.google.inject.Inject;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.maintenance.MaintenanceCommand;
import io.meterstore.archiver.maintenance.MaintenanceOutcome;
import io.meterstore.core.InvariantReport;
import io.meterstore.core.TiersConfig;
import org.weakref.jmx.MBeanExporter;
import org.weakref.jmx.Flatten;
import org.weakref.jmx.Managed;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.DoubleStream;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * The archiver's statistics: totals over every table here, each table's own in a {@link TableArchiverStats} exported
 * separately with the table's name. Every counter also appears on {@code /metrics}.
 */
public final class ArchiverStats
{
    private final Map<String, TableArchiverStats> tables;
    private final String schema;
    private final InstantSource clock;
    private final Optional<MBeanExporter> exporter;

    // the totals over every table: each table's counters count into them too
    private final ArchiverCounters totals = new ArchiverCounters();

    @Inject
    public ArchiverStats(Map<String, TableArchiverStats> tables, TiersConfig tiers, InstantSource clock, MBeanExporter exporter)
    {
        this(tables, tiers.getSchema(), clock, Optional.of(exporter));
    }

    @VisibleForTesting
    public ArchiverStats(Map<String, TableArchiverStats> tables, String schema, InstantSource clock, Optional<MBeanExporter> exporter)
    {
        this.tables = new ConcurrentHashMap<>(requireNonNull(tables, "tables is null"));
        this.schema = requireNonNull(schema, "schema is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.exporter = requireNonNull(exporter, "exporter is null");
    }

    /** The statistics of {@code table} (without the schema). */
    public TableArchiverStats table(String table)
    {
        TableArchiverStats stats = tables.get(table);
        checkArgument(stats != null, "Table '%s' is not archived here", table);
        return stats;
    }

    public boolean counts(String table)
    {
        return tables.containsKey(table);
    }

    /** The statistics of {@code table} if it is counted: a created table may be found, or found dropped, at any time. */
    public Optional<TableArchiverStats> counted(String table)
    {
        return Optional.ofNullable(tables.get(table));
    }

    /**
     * Counts {@code table}, one CREATE TABLE created after the archiver started, from now on: exported under its name as
     * the configured tables' are, and into the totals.
     */
    public void addTable(String table)
    {
        TableArchiverStats stats = new TableArchiverStats(schema + "." + table, clock);
        if (tables.putIfAbsent(table, stats) == null) {
            exporter.ifPresent(mbeans -> mbeans.exportWithGeneratedName(stats, TableArchiverStats.class, table));
        }
    }

    /** Counts {@code table}, a created table found dropped, no longer: neither exported nor in the gauges over every table. */
    public void removeTable(String table)
    {
        if (tables.remove(table) != null) {
            exporter.ifPresent(mbeans -> mbeans.unexportWithGeneratedName(TableArchiverStats.class, table));
        }
    }

    public void cycleFinished(String table, ArchiveOutcome outcome, Duration elapsed)
    {
        table(table).cycleFinished(outcome, elapsed);
        totals.cycleFinished(outcome, elapsed);
    }

    public void cycleFailed(String table, String message, Duration elapsed)
    {
        table(table).cycleFailed(message, elapsed);
        totals.cycleFailed(elapsed);
    }

    public void maintenanceFinished(String table, MaintenanceOutcome outcome, Instant finishedAt)
    {
        table(table).maintenanceFinished(outcome, finishedAt);
        totals.maintenanceFinished(outcome);
    }

    public void maintenanceFailed(String table, MaintenanceCommand command, String message)
    {
        table(table).maintenanceFailed(command, message);
        totals.maintenanceFailed();
    }

    public void invariantChecked(String table, InvariantReport report)
    {
        table(table).invariantChecked(report);
    }

    @Managed
    @Flatten
    public ArchiverCounters getCounters()
    {
        return totals;
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
