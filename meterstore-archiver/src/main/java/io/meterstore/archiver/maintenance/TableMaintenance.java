package io.meterstore.archiver.maintenance;

import io.airlift.log.Logger;
import io.meterstore.archiver.cycle.ArchivalException;
import io.meterstore.archiver.cycle.ConnectionFactory;
import io.meterstore.archiver.cycle.Failpoints;
import io.meterstore.archiver.cycle.Failpoints.Failpoint;
import io.meterstore.archiver.lease.ArchiverLease;
import io.meterstore.core.ErasureLog;
import io.meterstore.core.HotPartition;
import io.meterstore.core.HotTier;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.MeterstoreException;
import io.meterstore.core.TieringWatermark;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.util.PropertyUtil;

import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.Optional;

import static io.meterstore.archiver.cycle.ArchivalException.Reason.GC_DISABLED;
import static io.meterstore.core.MeterstoreException.Reason.TABLE_MISSING;
import static java.util.Objects.requireNonNull;

/**
 * The maintenance of one table's cold tier, under the same lease as its archival cycles, so it never runs beside one:
 * {@link #expire()} removes the months past the readings' retention ({@link RetentionSweep}, when configured), makes
 * the erasures past the reader grace physical ({@link ErasureCompletion}), expires the snapshots past the snapshot
 * retention and removes the files no snapshot references;
 * {@link #compact()} compacts the months below W into few large files of the resolved layout and rewrites the manifests
 * one per month.
 * <p>
 * Each step is one Iceberg commit, or deletes only what no snapshot references, so an interrupted step leaves what a
 * finished one leaves or files no snapshot references, which the next {@code expire} removes once they are older than
 * the safety age. Without the lease a command reports it and changes nothing.
 */
public final class TableMaintenance
{
    private static final Logger log = Logger.get(TableMaintenance.class);

    private final Catalog catalog;
    private final TableIdentifier identifier;
    private final HotTier hotTier;
    private final ConnectionFactory connections;
    private final MaintenanceSettings settings;
    private final MaintenanceClock clock;
    private final ManifestRewrite manifestRewrite;
    private final MonthCompaction monthCompaction;

    public TableMaintenance(Catalog catalog, TableIdentifier identifier, HotTier hotTier, ConnectionFactory connections, MaintenanceSettings settings, InstantSource clock)
    {
        this(catalog, identifier, hotTier, connections, settings, clock, () -> {});
    }

    /** With {@code beforeCompactionCommit} run after each month is written, before the lease is taken for its commit: a test's race. */
    public TableMaintenance(Catalog catalog, TableIdentifier identifier, HotTier hotTier, ConnectionFactory connections, MaintenanceSettings settings, InstantSource clock, Runnable beforeCompactionCommit)
    {
        this.catalog = requireNonNull(catalog, "catalog is null");
        this.identifier = requireNonNull(identifier, "identifier is null");
        this.hotTier = requireNonNull(hotTier, "hotTier is null");
        this.connections = requireNonNull(connections, "connections is null");
        this.settings = requireNonNull(settings, "settings is null");
        this.clock = MaintenanceClock.of(clock);
        this.manifestRewrite = new ManifestRewrite();
        this.monthCompaction = new MonthCompaction(settings.compaction(), beforeCompactionCommit);
    }

    public String tableName()
    {
        return identifier.toString();
    }

    public MaintenanceOutcome run(MaintenanceCommand command)
            throws SQLException, IOException
    {
        return switch (command) {
            case EXPIRE -> expire();
            case COMPACT -> compact();
        };
    }

    /**
     * Restates the retention's table properties, sweeps the months past the readings' retention, makes the due erasures
     * physical, expires the snapshots past the snapshot retention and removes the files no snapshot references that are
     * older than the safety age. In this order: an erasure's files go with its own expiry, not after the safety age.
     */
    public MaintenanceOutcome expire()
            throws SQLException
    {
        Optional<ArchiverLease> lease = ArchiverLease.tryAcquire(connections.open(), hotTier.schema(), hotTier.naming().table(), hotTier.lockTimeout());
        if (lease.isEmpty()) {
            return MaintenanceOutcome.leaseContended(tableName(), MaintenanceCommand.EXPIRE, settings);
        }
        try (ArchiverLease held = lease.get(); Connection connection = connections.open()) {
            Table table = loadTable();
            requireGarbageCollection(table);
            Instant now = clock.instant();
            // any engine expiring the table by its properties keeps what MeterStore keeps
            IcebergTableSpec.restateMaintenanceProperties(table, settings.retention());
            // first the months past the retention go (each month's files out in one commit, its audit row, its hot partitions)
            Optional<RetentionSweep.Swept> swept = Optional.empty();
            if (settings.dataRetention().isPresent()) {
                held.verifyHeld();
                ErasureLog.create(connection, hotTier.schema());
                // a late correction into a swept month either commits before the sweep reads the month, or reads its audit
                // row, which refuses it: it holds this lock from its read of the refusals to its commit
                if (!held.holdColdWrites()) {
                    throw new ArchivalException(ArchivalException.Reason.COMMIT_FAILED,
                            "A MeterStore writer held the cold tier of table '%s' for longer than %s, so the months past the retention were not swept: run 'expire' again"
                                    .formatted(tableName(), hotTier.lockTimeout()));
                }
                swept = Optional.of(RetentionSweep.sweep(table, connection, hotTier, settings.dataRetention().get(), now));
                held.releaseColdWrites();
            }
            // the archival commits of every partition still in PostgreSQL are kept: its drop counts their rows
            List<HotPartition> partitions = hotTier.partitions(connection);
            // then erasures (DELETE and retention alike) past the reader grace become physical, whatever the snapshot retention says
            held.verifyHeld();
            ErasureCompletion.Completed erasures = ErasureCompletion.complete(table, connection, hotTier.schema(), hotTier.naming().table(), clock, settings.readerGrace(), partitions);
            held.verifyHeld();
            SnapshotExpiry.Expired expired = SnapshotExpiry.expire(table, clock, settings, partitions);
            held.verifyHeld();
            OrphanFiles.Removed orphans = OrphanFiles.remove(table, clock, settings.orphanSafetyAge());
            recordRun(table, MaintenanceCommand.EXPIRE, now);
            return new MaintenanceOutcome(tableName(), MaintenanceCommand.EXPIRE, false, Optional.of(expired), Optional.of(orphans), Optional.empty(), Optional.empty(),
                    ColdTierLayout.of(table), settings.retention(), settings.orphanSafetyAge(), swept, Optional.of(erasures));
        }
    }

    /**
     * Compacts the months that need it ({@link MonthCompaction}), then rewrites the manifests that are not one per month
     * yet. The lease is taken to begin, for each month's commit and for the manifests: a month is read and written
     * without it, because a month takes much longer than a day's archival cycle, which waits for the lease.
     */
    public MaintenanceOutcome compact()
            throws SQLException, IOException
    {
        Optional<ArchiverLease> lease = acquireLease();
        if (lease.isEmpty()) {
            return MaintenanceOutcome.leaseContended(tableName(), MaintenanceCommand.COMPACT, settings);
        }
        Table table;
        try (ArchiverLease held = lease.get()) {
            table = loadTable();
        }
        Instant now = clock.instant();
        MonthCompaction.Result compacted = monthCompaction.compact(table, clock, this::acquireLease);
        Failpoints.hit(Failpoint.COMPACTION_BEFORE_CLEANUP);
        Optional<ArchiverLease> manifestLease = acquireLease();
        if (manifestLease.isEmpty()) {
            // the months are committed; only the manifests wait for the next run
            return new MaintenanceOutcome(tableName(), MaintenanceCommand.COMPACT, false, Optional.empty(), Optional.empty(), Optional.empty(), Optional.of(compacted),
                    ColdTierLayout.of(table), settings.retention(), settings.orphanSafetyAge());
        }
        try (ArchiverLease held = manifestLease.get()) {
            held.verifyHeld();
            Optional<ManifestRewrite.Rewritten> rewritten = manifestRewrite.rewrite(table);
            recordRun(table, MaintenanceCommand.COMPACT, now);
            return new MaintenanceOutcome(tableName(), MaintenanceCommand.COMPACT, false, Optional.empty(), Optional.empty(), rewritten, Optional.of(compacted),
                    ColdTierLayout.of(table), settings.retention(), settings.orphanSafetyAge());
        }
    }

    private Optional<ArchiverLease> acquireLease()
            throws SQLException
    {
        return ArchiverLease.tryAcquire(connections.open(), hotTier.schema(), hotTier.naming().table(), hotTier.lockTimeout());
    }

    /**
     * Whether an erasure of the table is due to become physical ({@link ErasureCompletion}): the schedule then runs
     * {@code expire} without waiting for the maintenance interval, so an erasure is physical soon after its reader grace.
     */
    public boolean erasureDue()
            throws SQLException
    {
        Table table = loadTable();
        Instant now = clock.instant();
        try (Connection connection = connections.open()) {
            return ErasureCompletion.awaiting(table, connection, hotTier.schema(), hotTier.naming().table(), settings.readerGrace(), clock).stream()
                    .anyMatch(erasure -> !erasure.due().isAfter(now));
        }
    }

    /** When {@code command} last finished on the table, as the table records it. */
    public Optional<Instant> lastRun(MaintenanceCommand command)
    {
        return command.lastRun(loadTable());
    }

    private void recordRun(Table table, MaintenanceCommand command, Instant at)
    {
        try {
            table.updateProperties().set(command.lastRunProperty(), TieringWatermark.formatInstant(at)).commit();
        }
        catch (CommitFailedException e) {
            // only the schedule's memory: the command runs again a little early, which changes nothing
            log.warn("Cannot record that '%s' ran on table '%s' (%s): it runs again at the next cycle", command.commandName(), tableName(), e.getMessage());
        }
    }

    private void requireGarbageCollection(Table table)
    {
        if (!PropertyUtil.propertyAsBoolean(table.properties(), TableProperties.GC_ENABLED, TableProperties.GC_ENABLED_DEFAULT)) {
            throw new ArchivalException(GC_DISABLED, "Table '%s' sets '%s' = false, which says its files may belong to other tables: the archiver neither expires its snapshots nor removes orphan files; set it to true if only this table uses its files"
                    .formatted(tableName(), TableProperties.GC_ENABLED));
        }
    }

    private Table loadTable()
    {
        Table table;
        try {
            table = catalog.loadTable(identifier);
        }
        catch (NoSuchTableException e) {
            throw new MeterstoreException(TABLE_MISSING, "Iceberg table '%s' does not exist: run the archiver's 'create' command first".formatted(identifier), e);
        }
        IcebergTableSpec.verify(table);
        return table;
    }
}
