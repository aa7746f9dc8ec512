package io.meterstore.archiver.service;

import io.airlift.configuration.Config;
import io.airlift.configuration.ConfigDescription;
import io.airlift.units.Duration;
import io.airlift.units.MinDuration;
import jakarta.validation.constraints.NotNull;

import static java.util.concurrent.TimeUnit.DAYS;
import static java.util.concurrent.TimeUnit.MINUTES;

public class SchedulerConfig
{
    private Duration scheduleInterval = new Duration(1, MINUTES);
    private Duration shutdownTimeout = new Duration(5, MINUTES);
    private Duration maintenanceInterval = new Duration(1, DAYS);

    @NotNull
    @MinDuration("1s")
    public Duration getScheduleInterval()
    {
        return scheduleInterval;
    }

    @Config("meterstore.schedule-interval")
    @ConfigDescription("Pause between the end of a table's idle cycle and the start of its next; a cycle that archived a window is followed at once by the next")
    public SchedulerConfig setScheduleInterval(Duration scheduleInterval)
    {
        this.scheduleInterval = scheduleInterval;
        return this;
    }

    @NotNull
    @MinDuration("0s")
    public Duration getShutdownTimeout()
    {
        return shutdownTimeout;
    }

    @Config("meterstore.shutdown-timeout")
    @ConfigDescription("How long a shutdown waits for the cycles in flight to finish their step before it abandons them; an abandoned cycle is finished by the next run")
    public SchedulerConfig setShutdownTimeout(Duration shutdownTimeout)
    {
        this.shutdownTimeout = shutdownTimeout;
        return this;
    }

    @NotNull
    @MinDuration("1m")
    public Duration getMaintenanceInterval()
    {
        return maintenanceInterval;
    }

    @Config("meterstore.maintenance-interval")
    @ConfigDescription("How often the service runs 'expire' (snapshot expiry, orphan-file removal) and 'compact' (manifest rewrite) on each table, between its archival cycles")
    public SchedulerConfig setMaintenanceInterval(Duration maintenanceInterval)
    {
        this.maintenanceInterval = maintenanceInterval;
        return this;
    }
}
