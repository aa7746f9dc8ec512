package io.meterstore.archiver;

import com.google.common.collect.ImmutableList;
import io.airlift.configuration.Config;
import io.airlift.configuration.ConfigDescription;
import io.airlift.configuration.ConfigSecuritySensitive;
import io.airlift.units.Duration;
import io.airlift.units.MinDuration;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotEmpty;
import jakarta.validation.constraints.NotNull;

import java.util.List;
import java.util.Optional;

import static java.util.concurrent.TimeUnit.DAYS;
import static java.util.concurrent.TimeUnit.HOURS;
import static java.util.concurrent.TimeUnit.SECONDS;

public class ArchiverConfig
{
    private String postgresqlUrl;
    private String postgresqlUser;
    private Optional<String> postgresqlPassword = Optional.empty();
    private String schema = "metering";
    private List<String> tables = ImmutableList.of("readings");
    private String icebergCatalogName = "meterstore";
    private String icebergWarehouse;
    private Optional<String> icebergJdbcUrl = Optional.empty();
    private Duration archivalStep = new Duration(1, DAYS);
    private Duration settlementLag = new Duration(7, DAYS);
    private Duration readerGrace = new Duration(1, HOURS);
    private Duration lockTimeout = new Duration(5, SECONDS);
    private int chunkRows = 10_000;
    private Duration snapshotRetention = new Duration(3653, DAYS);
    private int minSnapshotsToKeep = 20;
    private Duration orphanSafetyAge = new Duration(3, DAYS);

    @NotNull
    public String getPostgresqlUrl()
    {
        return postgresqlUrl;
    }

    @Config("meterstore.postgresql.url")
    @ConfigDescription("JDBC URL of the PostgreSQL database holding the hot tier")
    public ArchiverConfig setPostgresqlUrl(String postgresqlUrl)
    {
        this.postgresqlUrl = postgresqlUrl;
        return this;
    }

    @NotNull
    public String getPostgresqlUser()
    {
        return postgresqlUser;
    }

    @Config("meterstore.postgresql.user")
    @ConfigDescription("PostgreSQL user; needs no superuser, only ownership of the readings tables")
    public ArchiverConfig setPostgresqlUser(String postgresqlUser)
    {
        this.postgresqlUser = postgresqlUser;
        return this;
    }

    public Optional<String> getPostgresqlPassword()
    {
        return postgresqlPassword;
    }

    @Config("meterstore.postgresql.password")
    @ConfigSecuritySensitive
    @ConfigDescription("PostgreSQL password")
    public ArchiverConfig setPostgresqlPassword(String postgresqlPassword)
    {
        this.postgresqlPassword = Optional.ofNullable(postgresqlPassword);
        return this;
    }

    @NotEmpty
    public String getSchema()
    {
        return schema;
    }

    @Config("meterstore.schema")
    @ConfigDescription("PostgreSQL schema and Iceberg namespace of the readings tables")
    public ArchiverConfig setSchema(String schema)
    {
        this.schema = schema;
        return this;
    }

    @NotEmpty
    public List<String> getTables()
    {
        return tables;
    }

    @Config("meterstore.tables")
    @ConfigDescription("Comma-separated readings tables to archive, each a partitioned PostgreSQL table and an Iceberg table of the same name")
    public ArchiverConfig setTables(List<String> tables)
    {
        this.tables = ImmutableList.copyOf(tables);
        return this;
    }

    @NotEmpty
    public String getIcebergCatalogName()
    {
        return icebergCatalogName;
    }

    @Config("meterstore.iceberg.catalog-name")
    @ConfigDescription("Name of the Iceberg JDBC catalogue, as Trino's Iceberg connector is configured with it")
    public ArchiverConfig setIcebergCatalogName(String icebergCatalogName)
    {
        this.icebergCatalogName = icebergCatalogName;
        return this;
    }

    @NotNull
    public String getIcebergWarehouse()
    {
        return icebergWarehouse;
    }

    @Config("meterstore.iceberg.warehouse")
    @ConfigDescription("Warehouse location of the Iceberg tables (file:///... URI)")
    public ArchiverConfig setIcebergWarehouse(String icebergWarehouse)
    {
        this.icebergWarehouse = icebergWarehouse;
        return this;
    }

    public Optional<String> getIcebergJdbcUrl()
    {
        return icebergJdbcUrl;
    }

    @Config("meterstore.iceberg.jdbc-url")
    @ConfigDescription("JDBC URL of the Iceberg catalogue's database; defaults to the hot tier's database")
    public ArchiverConfig setIcebergJdbcUrl(String icebergJdbcUrl)
    {
        this.icebergJdbcUrl = Optional.ofNullable(icebergJdbcUrl);
        return this;
    }

    @NotNull
    @MinDuration("1m")
    public Duration getArchivalStep()
    {
        return archivalStep;
    }

    @Config("meterstore.archival-step")
    @ConfigDescription("Length of one hot partition and of one archival window; must match the step the table was archived with")
    public ArchiverConfig setArchivalStep(Duration archivalStep)
    {
        this.archivalStep = archivalStep;
        return this;
    }

    @NotNull
    public Duration getSettlementLag()
    {
        return settlementLag;
    }

    @Config("meterstore.settlement-lag")
    @ConfigDescription("A window is archived once it ends this long before now; must exceed the market's correction window")
    public ArchiverConfig setSettlementLag(Duration settlementLag)
    {
        this.settlementLag = settlementLag;
        return this;
    }

    @NotNull
    public Duration getReaderGrace()
    {
        return readerGrace;
    }

    @Config("meterstore.reader-grace")
    @ConfigDescription("An archived partition is dropped once its archival commit is this old; above the longest query the deployment runs")
    public ArchiverConfig setReaderGrace(Duration readerGrace)
    {
        this.readerGrace = readerGrace;
        return this;
    }

    @NotNull
    @MinDuration("1ms")
    public Duration getLockTimeout()
    {
        return lockTimeout;
    }

    @Config("meterstore.lock-timeout")
    @ConfigDescription("How long DETACH and DROP wait for their lock before the cycle is deferred")
    public ArchiverConfig setLockTimeout(Duration lockTimeout)
    {
        this.lockTimeout = lockTimeout;
        return this;
    }

    @Min(1)
    public int getChunkRows()
    {
        return chunkRows;
    }

    @Config("meterstore.chunk-rows")
    @ConfigDescription("Rows per page streamed from PostgreSQL into the Parquet writer; bounds the archiver's memory")
    public ArchiverConfig setChunkRows(int chunkRows)
    {
        this.chunkRows = chunkRows;
        return this;
    }

    @NotNull
    public Duration getSnapshotRetention()
    {
        return snapshotRetention;
    }

    @Config("meterstore.snapshot-retention")
    @ConfigDescription("Snapshots older than this are expired (FOR VERSION AS OF them fails from then on) and the files only they referenced deleted; recorded as the table property history.expire.max-snapshot-age-ms")
    public ArchiverConfig setSnapshotRetention(Duration snapshotRetention)
    {
        this.snapshotRetention = snapshotRetention;
        return this;
    }

    @Min(1)
    public int getMinSnapshotsToKeep()
    {
        return minSnapshotsToKeep;
    }

    @Config("meterstore.min-snapshots-to-keep")
    @ConfigDescription("The newest snapshots kept whatever their age; recorded as the table property history.expire.min-snapshots-to-keep")
    public ArchiverConfig setMinSnapshotsToKeep(int minSnapshotsToKeep)
    {
        this.minSnapshotsToKeep = minSnapshotsToKeep;
        return this;
    }

    @NotNull
    @MinDuration("1h")
    public Duration getOrphanSafetyAge()
    {
        return orphanSafetyAge;
    }

    @Config("meterstore.orphan-safety-age")
    @ConfigDescription("A file in a table's directories that no snapshot references is removed once it is this old; above the longest write of any engine writing the table")
    public ArchiverConfig setOrphanSafetyAge(Duration orphanSafetyAge)
    {
        this.orphanSafetyAge = orphanSafetyAge;
        return this;
    }

    @AssertTrue(message = "meterstore.snapshot-retention must be at least meterstore.reader-grace")
    public boolean isSnapshotRetentionAtLeastReaderGrace()
    {
        return snapshotRetention == null || readerGrace == null || snapshotRetention.compareTo(readerGrace) >= 0;
    }

    @AssertTrue(message = "meterstore.settlement-lag must be at least meterstore.archival-step")
    public boolean isSettlementLagAtLeastArchivalStep()
    {
        return settlementLag == null || archivalStep == null || settlementLag.compareTo(archivalStep) >= 0;
    }

    /** The catalogue database: the hot tier's own unless configured otherwise. */
    public String effectiveIcebergJdbcUrl()
    {
        return icebergJdbcUrl.orElse(postgresqlUrl);
    }
}
