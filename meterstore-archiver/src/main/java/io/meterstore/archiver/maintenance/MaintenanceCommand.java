package io.meterstore.archiver.maintenance;

import io.meterstore.core.TieringWatermark;
import org.apache.iceberg.Table;

import java.time.Instant;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * The maintenance the archiver runs on a table's cold tier, each a command of its own and a step of the service's
 * schedule. When one last finished is recorded as a table property, so the schedule survives restarts and replicas
 * share it, and {@code status} shows it.
 */
public enum MaintenanceCommand
{
    /** Expire the snapshots past the retention, then remove the files no snapshot references. */
    EXPIRE("expire", "meterstore.maintenance.last_expire"),
    /** Rewrite the manifests one per month (month compaction, once it exists, belongs here too). */
    COMPACT("compact", "meterstore.maintenance.last_compact"),
    /**/;

    private final String commandName;
    private final String lastRunProperty;

    MaintenanceCommand(String commandName, String lastRunProperty)
    {
        this.commandName = requireNonNull(commandName, "commandName is null");
        this.lastRunProperty = requireNonNull(lastRunProperty, "lastRunProperty is null");
    }

    /** The name on the command line and in logs and metrics: {@code expire}. */
    public String commandName()
    {
        return commandName;
    }

    /** The table property recording when this command last finished on the table (RFC 3339, the archiver's clock). */
    public String lastRunProperty()
    {
        return lastRunProperty;
    }

    /** When this command last finished on {@code table}, if it ever did. */
    public Optional<Instant> lastRun(Table table)
    {
        return Optional.ofNullable(table.properties().get(lastRunProperty))
                .map(value -> TieringWatermark.parseInstant(lastRunProperty, value));
    }
}
