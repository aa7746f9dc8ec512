package io.meterstore.archiver.maintenance;

import io.meterstore.archiver.maintenance.ManifestRewrite.Rewritten;
import io.meterstore.archiver.maintenance.OrphanFiles.Removed;
import io.meterstore.archiver.maintenance.SnapshotExpiry.Expired;
import io.meterstore.core.SnapshotRetention;

import java.time.Duration;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static io.meterstore.archiver.maintenance.ColdTierLayout.count;
import static io.meterstore.core.SnapshotRetention.format;
import static java.util.Objects.requireNonNull;

/**
 * What one maintenance command did to one table: the steps it ran and the cold tier's layout after them. Without the
 * table's lease nothing ran and the layout is not read.
 */
public record MaintenanceOutcome(
        String table,
        MaintenanceCommand command,
        boolean leaseContended,
        Optional<Expired> expired,
        Optional<Removed> orphans,
        Optional<Rewritten> rewritten,
        Optional<MonthCompaction.Result> compaction,
        ColdTierLayout layout,
        SnapshotRetention retention,
        Duration orphanSafetyAge,
        Optional<RetentionSweep.Swept> swept,
        Optional<ErasureCompletion.Completed> erasures)
{
    public MaintenanceOutcome
    {
        requireNonNull(table, "table is null");
        requireNonNull(command, "command is null");
        requireNonNull(expired, "expired is null");
        requireNonNull(orphans, "orphans is null");
        requireNonNull(rewritten, "rewritten is null");
        requireNonNull(compaction, "compaction is null");
        requireNonNull(layout, "layout is null");
        requireNonNull(retention, "retention is null");
        requireNonNull(orphanSafetyAge, "orphanSafetyAge is null");
        requireNonNull(swept, "swept is null");
        requireNonNull(erasures, "erasures is null");
        checkArgument(!leaseContended || (expired.isEmpty() && orphans.isEmpty() && rewritten.isEmpty() && compaction.isEmpty() && swept.isEmpty() && erasures.isEmpty()), "Without the lease nothing runs");
        checkArgument(command == MaintenanceCommand.EXPIRE || (expired.isEmpty() && orphans.isEmpty() && swept.isEmpty() && erasures.isEmpty()), "Only 'expire' expires, sweeps, completes erasures and removes orphans");
        checkArgument(command == MaintenanceCommand.COMPACT || (rewritten.isEmpty() && compaction.isEmpty()), "Only 'compact' rewrites");
    }

    /** Of a command that neither swept nor completed erasures. */
    public MaintenanceOutcome(String table, MaintenanceCommand command, boolean leaseContended, Optional<Expired> expired, Optional<Removed> orphans, Optional<Rewritten> rewritten,
            Optional<MonthCompaction.Result> compaction, ColdTierLayout layout, SnapshotRetention retention, Duration orphanSafetyAge)
    {
        this(table, command, leaseContended, expired, orphans, rewritten, compaction, layout, retention, orphanSafetyAge, Optional.empty(), Optional.empty());
    }

    static MaintenanceOutcome leaseContended(String table, MaintenanceCommand command, MaintenanceSettings settings)
    {
        return new MaintenanceOutcome(table, command, true, Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), ColdTierLayout.EMPTY, settings.retention(), settings.orphanSafetyAge());
    }

    /** Bytes written by rewriting: the months' new data files and the manifests. */
    public long rewrittenBytes()
    {
        return rewritten.map(Rewritten::createdBytes).orElse(0L) + compaction.map(MonthCompaction.Result::bytesWritten).orElse(0L);
    }

    /** One line for an operator: what ran, what it removed or rewrote, and how the cold tier is laid out now. */
    public String describe()
    {
        if (leaseContended) {
            return "%s: %s: lease contended, another archiver holds this table's lease; nothing changed".formatted(table, command.commandName());
        }
        return switch (command) {
            case EXPIRE -> "%s: expire: %s%s; %s; %s; now %s".formatted(table,
                    swept.map(sweep -> "retention: " + sweep.describe() + "; ").orElse(""),
                    erasures.map(completed -> "erasures: " + completed.describe()).orElse("no erasure log"),
                    describeExpiry(), describeOrphans(), layout.describe());
            case COMPACT -> "%s: compact: %s; manifests: %s; now %s".formatted(table, compaction.map(MonthCompaction.Result::describe).orElse("no month compacted"), describeRewrite(), layout.describe());
        };
    }

    private String describeExpiry()
    {
        Expired expiry = expired.orElseThrow();
        String kept = "kept %s%s (retention: %s)".formatted(
                count(expiry.kept(), "snapshot"),
                expiry.oldestKept().map(oldest -> ", the oldest from %s".formatted(oldest)).orElse(""),
                retention.describe());
        if (expiry.snapshots() == 0) {
            return "no snapshot expired, %s".formatted(kept);
        }
        return "%s expired with %s only they referenced, %s".formatted(count(expiry.snapshots(), "snapshot"), count(expiry.deletedFiles(), "file"), kept);
    }

    private String describeOrphans()
    {
        Removed removed = orphans.orElseThrow();
        return "%s no snapshot references removed (%s bytes) of %s listed, older than %s".formatted(count(removed.files(), "file"), removed.bytes(), removed.listed(), format(orphanSafetyAge));
    }

    private String describeRewrite()
    {
        return rewritten
                .map(rewrite -> "%s rewritten into %s by month (%s bytes), watermark %s republished".formatted(count(rewrite.replacedManifests(), "manifest"), rewrite.createdManifests(), rewrite.createdBytes(), rewrite.watermark()))
                .orElse("already one per month, nothing rewritten");
    }
}
