package io.meterstore.archiver.cli;

import io.meterstore.archiver.lease.ArchiverLease;
import io.meterstore.archiver.lease.ArchiverLease.LeaseHolder;
import io.meterstore.archiver.tables.ArchiverConfig;
import io.meterstore.archiver.tables.ArchiverTables;
import io.meterstore.archiver.tables.Failures;
import io.meterstore.archiver.maintenance.ColdTierLayout;
import io.meterstore.archiver.maintenance.ErasureCompletion;
import io.meterstore.archiver.maintenance.MaintenanceClock;
import io.meterstore.archiver.maintenance.MaintenanceCommand;
import io.meterstore.core.ColdFileCheck;
import io.meterstore.core.HotPartition;
import io.meterstore.core.HotTier;
import io.meterstore.core.InvariantCheck;
import io.meterstore.core.InvariantReport;
import io.meterstore.core.SnapshotRetention;
import io.meterstore.core.TableStatus;
import org.apache.iceberg.Table;

import java.io.PrintStream;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.InstantSource;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

import static io.airlift.units.Duration.succinctDuration;
import static io.meterstore.core.TieringWatermark.formatInstant;
import static java.util.Objects.requireNonNull;
import static java.util.concurrent.TimeUnit.MILLISECONDS;

/**
 * {@code status}: per table, where the watermark stands and how far it trails, the hot partitions, the detached ones
 * and the invariant. A table is unhealthy when it is not {@link TableStatus#healthy() healthy} as {@code "<table>$watermark"}
 * says too (its invariant violated, or hot partitions but none ahead of now), when it cannot be read, when a file of its
 * current snapshot is damaged, or when its watermark trails by more than the settlement lag plus two steps: the archiver
 * is then not keeping up.
 */
final class StatusReport
{
    private final ArchiverConfig config;
    private final ArchiverTables tables;
    private final InstantSource clock;
    private final PrintStream out;
    private final PrintStream err;

    StatusReport(ArchiverConfig config, ArchiverTables tables, InstantSource clock, PrintStream out, PrintStream err)
    {
        this.config = requireNonNull(config, "config is null");
        this.tables = requireNonNull(tables, "tables is null");
        this.clock = requireNonNull(clock, "clock is null");
        this.out = requireNonNull(out, "out is null");
        this.err = requireNonNull(err, "err is null");
    }

    /** Prints each table's status; returns whether every table is healthy. */
    boolean run()
    {
        try (Connection connection = tables.connect()) {
            if (!ConfigurationCheck.catalogTablesExist(tables)) {
                err.println("catalogue: the Iceberg JDBC catalogue has no tables in '%s': run the archiver's 'create' command, or check meterstore.iceberg.jdbc-url".formatted(tables.tiers().catalogJdbcUrl()));
                return false;
            }
            // the tables CREATE TABLE created beyond meterstore.tables are reported too
            ArchiverCli.findCreatedTables(tables, err);
            boolean healthy = true;
            for (String table : tables.tables()) {
                healthy &= report(connection, table);
            }
            return healthy;
        }
        catch (SQLException e) {
            err.println("postgresql: " + ConfigurationCheck.cannotLogIn(tables.tiers(), tables.tiers().getPostgresqlUrl(), e) + "; run the archiver's 'check' command");
            return false;
        }
    }

    private boolean report(Connection connection, String table)
    {
        String name = tables.qualifiedName(table);
        HotTier hotTier = tables.hotTier(table);
        InvariantReport report;
        Table icebergTable;
        List<String> damagedFiles;
        try {
            if (!hotTier.parentExists(connection)) {
                err.println("%s: unhealthy: PostgreSQL table %s does not exist: fix meterstore.tables, or run the archiver's 'create' command".formatted(name, hotTier.qualifiedParent()));
                return false;
            }
            icebergTable = tables.catalog().loadTable(tables.identifier(table));
            report = InvariantCheck.check(icebergTable, hotTier, connection);
            damagedFiles = ColdFileCheck.damagedFiles(icebergTable);
        }
        catch (SQLException | RuntimeException e) {
            err.println("%s: unhealthy: %s".formatted(name, Failures.describe(e)));
            return false;
        }

        TableStatus status = new TableStatus(report, clock.instant(), config.getArchivalStep().toJavaTime(), tables.tiers().getSettlementLag().toJavaTime());
        Duration lag = status.lag();
        Duration tolerated = status.toleratedLag();
        boolean behind = status.behind();
        boolean healthy = status.healthy() && !behind && damagedFiles.isEmpty();

        out.println("%s: %s".formatted(name, healthy ? "healthy" : "unhealthy"));
        out.println("  watermark      %s, lag %s%s".formatted(
                report.watermark(),
                succinct(lag),
                behind ? " (behind: more than the settlement lag plus two steps, %s; is the archiver running?)".formatted(succinct(tolerated)) : ""));
        List<HotPartition> attached = report.attachedPartitions();
        out.println("  hot            %s%s".formatted(
                attached.isEmpty()
                        ? "no partition attached"
                        : "%s attached, %s to %s".formatted(partitions(attached.size()), formatInstant(attached.getFirst().start()), formatInstant(attached.getLast().end())),
                status.hotPartitions() > 0 && status.partitionsAhead() == 0
                        ? " (none ahead of now: each cycle creates meterstore.partition-headroom ahead; is the archiver running?)"
                        : ""));
        out.println("  awaiting drop  %s".formatted(names(report.partitionsAwaitingDrop(), "detached below the watermark, dropped once the reader grace has passed")));
        if (!report.partitionsAwaitingArchival().isEmpty()) {
            // a cycle holding the table's lease right now is archiving them, not interrupted
            Optional<LeaseHolder> holder = leaseHolder(connection, table);
            if (holder.isPresent()) {
                out.println("  archiving      %s".formatted(names(report.partitionsAwaitingArchival(), "detached at or above the watermark by the cycle in flight (PostgreSQL backend %s holds the table's lease)".formatted(holder.get().pid()))));
            }
            else {
                out.println("  interrupted    %s".formatted(names(report.partitionsAwaitingArchival(), "detached at or above the watermark by an interrupted cycle; the next cycle archives them")));
            }
        }
        if (!damagedFiles.isEmpty()) {
            out.println("  cold files     %s damaged: queries that read them fail; restore them from a backup".formatted(damagedFiles.size()));
            damagedFiles.forEach(damaged -> out.println("    " + damaged));
        }
        if (report.holds()) {
            out.println("  invariant      holds");
        }
        else {
            out.println("  invariant      violated");
            report.violations().forEach(violation -> out.println("    " + violation));
        }
        erasures(connection, table, hotTier, icebergTable);
        coldTier(table, icebergTable);
        return healthy;
    }

    /** The erasures not physical yet and when each becomes due; for information, not part of health. */
    private void erasures(Connection connection, String table, HotTier hotTier, Table icebergTable)
    {
        List<ErasureCompletion.Awaiting> awaiting;
        try {
            awaiting = ErasureCompletion.awaiting(icebergTable, connection, hotTier.schema(), table, tables.tiers().getReaderGrace().toJavaTime(), MaintenanceClock.of(clock));
        }
        catch (SQLException | RuntimeException e) {
            out.println("  erasures       cannot be read: %s".formatted(Failures.describe(e)));
            return;
        }
        if (awaiting.isEmpty()) {
            out.println("  erasures       none awaiting physical completion");
            return;
        }
        out.println("  erasures       %s awaiting physical completion ('expire' expires the snapshots that still hold their rows once due)".formatted(awaiting.size()));
        for (ErasureCompletion.Awaiting erasure : awaiting) {
            out.println("    erasure %s due %s%s".formatted(erasure.erasureId(), formatInstant(erasure.due()), erasure.due().isAfter(clock.instant()) ? "" : " (due now)"));
        }
    }

    /** The cold tier's layout and when each maintenance command last ran; for information, not part of health. */
    private void coldTier(String table, Table icebergTable)
    {
        ColdTierLayout layout;
        try {
            layout = ColdTierLayout.of(icebergTable);
        }
        catch (RuntimeException e) {
            out.println("  cold tier      cannot be read: %s".formatted(Failures.describe(e)));
            return;
        }
        out.println("  cold tier      %s%s".formatted(
                layout.describe(),
                layout.oldestSnapshot().map(oldest -> ", the oldest from %s".formatted(formatInstant(oldest))).orElse("")));
        out.println("  retention      %s; orphan files removed once older than %s; readings %s".formatted(
                tables.maintenanceSettings().retention().describe(), SnapshotRetention.format(tables.maintenanceSettings().orphanSafetyAge()),
                tables.maintenanceSettings().dataRetention()
                        .map(period -> "kept %s (before %s removed)".formatted(ColdTierLayout.count(period.settlementYears(), "settlement year"), formatInstant(period.cut(clock.instant()))))
                        .orElse("kept for ever (meterstore.retention unset)")));
        List<String> runs = Arrays.stream(MaintenanceCommand.values())
                .map(command -> "%s %s".formatted(command.commandName(), command.lastRun(icebergTable)
                        .map(last -> "%s (%s ago)".formatted(formatInstant(last.truncatedTo(ChronoUnit.SECONDS)), succinct(Duration.between(last, clock.instant()))))
                        .orElse("never ran")))
                .toList();
        out.println("  maintenance    %s".formatted(String.join(", ", runs)));
        out.println("  compaction     %s".formatted(layout.describeCompaction()));
    }

    static String partitions(int count)
    {
        return count == 1 ? "1 partition" : "%s partitions".formatted(count);
    }

    private static String names(List<HotPartition> partitions, String meaning)
    {
        if (partitions.isEmpty()) {
            return "none";
        }
        return "%s (%s): %s".formatted(partitions.size(), meaning, String.join(", ", partitions.stream().map(HotPartition::name).toList()));
    }

    private static String succinct(Duration duration)
    {
        // a watermark ahead of this machine's clock shows as no lag rather than failing the report
        return succinctDuration(Math.max(duration.toMillis(), 0), MILLISECONDS).toString();
    }

    /** The backend holding {@code table}'s lease now, if any; unknown counts as none. */
    private Optional<LeaseHolder> leaseHolder(Connection connection, String table)
    {
        try {
            return ArchiverLease.holder(connection, tables.schema(), table);
        }
        catch (SQLException | RuntimeException e) {
            return Optional.empty();
        }
    }
}
