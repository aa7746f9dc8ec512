package io.meterstore.trino.base;

import io.airlift.configuration.Config;
import io.airlift.configuration.ConfigDescription;
import io.airlift.configuration.DefunctConfig;
import io.airlift.units.Duration;
import io.airlift.units.MinDuration;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;

import static java.util.concurrent.TimeUnit.MINUTES;
import static java.util.concurrent.TimeUnit.SECONDS;

/**
 * What only the connector reads. The keys it shares with the archiver (PostgreSQL, schema, tables, Iceberg catalogue,
 * warehouse, lock timeout, settlement lag, reader grace) are {@link io.meterstore.core.TiersConfig}, one definition for both.
 */
// hot partitions stream as binary COPY, which has no fetch size
@DefunctConfig("meterstore.postgresql.fetch-rows")
public class MeterstoreConfig
{
    public static final String MAX_CLOCK_SKEW_PROPERTY = "meterstore.max-clock-skew";
    public static final String COORDINATOR_FILE_CACHE_PROPERTY = "meterstore.coordinator-file-cache.enabled";
    public static final String DYNAMIC_FILTERING_WAIT_TIMEOUT_PROPERTY = "meterstore.dynamic-filtering.wait-timeout";
    public static final String ALLOW_DROP_TABLE_PROPERTY = "meterstore.allow-drop-table";

    private Duration maxClockSkew = new Duration(1, MINUTES);
    private int postgresqlMaxConnections = 10;
    private int postgresqlReservedConnections = 1;
    // a deadlock detector's patience: holders that give no connection back, read no row and have no statement executing for this long wait for something that waits for the pool
    private Duration postgresqlPoolStallTimeout = new Duration(30, SECONDS);
    private boolean coordinatorFileCacheEnabled = true;
    // as Trino's Iceberg connector (iceberg.dynamic-filtering.wait-timeout): a meter list's build side is usually done by then
    private Duration dynamicFilteringWaitTimeout = new Duration(1, SECONDS);
    // metering data is kept for years by law: dropping a table is an operator's decision, made in the catalogue's file
    private boolean allowDropTable;

    @NotNull
    public Duration getMaxClockSkew()
    {
        return maxClockSkew;
    }

    @Config(MAX_CLOCK_SKEW_PROPERTY)
    @ConfigDescription("How far a recorded_at an INSERT provides may lie after the statement's start (the clocks of the systems that deliver readings); a later one is refused")
    public MeterstoreConfig setMaxClockSkew(Duration maxClockSkew)
    {
        this.maxClockSkew = maxClockSkew;
        return this;
    }

    @Min(1)
    public int getPostgresqlMaxConnections()
    {
        return postgresqlMaxConnections;
    }

    @Config("meterstore.postgresql.max-connections")
    @ConfigDescription("Most PostgreSQL connections one Trino node holds at once, for planning, hot splits and INSERT; splits beyond it wait for a free one")
    public MeterstoreConfig setPostgresqlMaxConnections(int postgresqlMaxConnections)
    {
        this.postgresqlMaxConnections = postgresqlMaxConnections;
        return this;
    }

    @Min(0)
    public int getPostgresqlReservedConnections()
    {
        return postgresqlReservedConnections;
    }

    @Config("meterstore.postgresql.reserved-connections")
    @ConfigDescription("Of meterstore.postgresql.max-connections, how many hot splits never take: planning, statistics and the metadata tables do not wait behind splits")
    public MeterstoreConfig setPostgresqlReservedConnections(int postgresqlReservedConnections)
    {
        this.postgresqlReservedConnections = postgresqlReservedConnections;
        return this;
    }

    @NotNull
    @MinDuration("1s")
    public Duration getPostgresqlPoolStallTimeout()
    {
        return postgresqlPoolStallTimeout;
    }

    @Config("meterstore.postgresql.pool-stall-timeout")
    @ConfigDescription("How long a query waiting for a PostgreSQL connection (or a snapshot's) waits while none is given back, no hot split holding one reads a row and PostgreSQL executes none of their statements; it then fails, its holders stuck")
    public MeterstoreConfig setPostgresqlPoolStallTimeout(Duration postgresqlPoolStallTimeout)
    {
        this.postgresqlPoolStallTimeout = postgresqlPoolStallTimeout;
        return this;
    }

    @AssertTrue(message = "meterstore.postgresql.reserved-connections must be less than meterstore.postgresql.max-connections: splits need at least one")
    public boolean isReservedConnectionsBelowMaxConnections()
    {
        return postgresqlReservedConnections < postgresqlMaxConnections;
    }

    public boolean isCoordinatorFileCacheEnabled()
    {
        return coordinatorFileCacheEnabled;
    }

    @Config(COORDINATOR_FILE_CACHE_PROPERTY)
    @ConfigDescription("Keep the cold tier's small files that the coordinator reads in its memory, as Trino's Iceberg connector does (iceberg.metadata-cache.enabled); sized by fs.memory-cache.*")
    public MeterstoreConfig setCoordinatorFileCacheEnabled(boolean coordinatorFileCacheEnabled)
    {
        this.coordinatorFileCacheEnabled = coordinatorFileCacheEnabled;
        return this;
    }

    @NotNull
    public Duration getDynamicFilteringWaitTimeout()
    {
        return dynamicFilteringWaitTimeout;
    }

    @Config(DYNAMIC_FILTERING_WAIT_TIMEOUT_PROPERTY)
    @ConfigDescription("How long a scan's splits wait for a join's dynamic filter (e.g. a list of meters) before they are planned and scheduled, so that it prunes hot partitions and Iceberg files; the default of the session property dynamic_filtering_wait_timeout")
    public MeterstoreConfig setDynamicFilteringWaitTimeout(Duration dynamicFilteringWaitTimeout)
    {
        this.dynamicFilteringWaitTimeout = dynamicFilteringWaitTimeout;
        return this;
    }

    public boolean isAllowDropTable()
    {
        return allowDropTable;
    }

    @Config(ALLOW_DROP_TABLE_PROPERTY)
    @ConfigDescription("Allow DROP TABLE of a readings table, which drops both tiers and every file of it for good; off by default (metering data is kept by law)")
    public MeterstoreConfig setAllowDropTable(boolean allowDropTable)
    {
        this.allowDropTable = allowDropTable;
        return this;
    }
}
