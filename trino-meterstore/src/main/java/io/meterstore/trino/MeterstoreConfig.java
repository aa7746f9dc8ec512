package io.meterstore.trino;

import com.google.common.base.Splitter;
import com.google.common.collect.ImmutableList;
import io.airlift.configuration.Config;
import io.airlift.configuration.ConfigDescription;
import io.airlift.configuration.ConfigSecuritySensitive;
import io.airlift.configuration.DefunctConfig;
import io.airlift.units.Duration;
import io.airlift.units.MinDuration;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;

import java.util.List;
import java.util.Optional;

import static java.util.concurrent.TimeUnit.DAYS;
import static java.util.concurrent.TimeUnit.HOURS;
import static java.util.concurrent.TimeUnit.SECONDS;

// hot partitions stream as binary COPY, which has no fetch size
@DefunctConfig("meterstore.postgresql.fetch-rows")
public class MeterstoreConfig
{
    private String postgresqlUrl;
    private String postgresqlUser = "postgres";
    private String postgresqlPassword;
    private String schema = "metering";
    private List<String> tables = ImmutableList.of("readings");
    private String icebergCatalogName = "meterstore";
    private String icebergJdbcUrl;
    private String icebergWarehouse;
    private Duration lockTimeout = new Duration(5, SECONDS);
    private Duration settlementLag = new Duration(7, DAYS);
    private Duration readerGrace = new Duration(1, HOURS);

    @NotNull
    public String getPostgresqlUrl()
    {
        return postgresqlUrl;
    }

    @Config("meterstore.postgresql.url")
    @ConfigDescription("JDBC URL of the PostgreSQL database that holds the hot tier, e.g. jdbc:postgresql://host:5432/metering")
    public MeterstoreConfig setPostgresqlUrl(String postgresqlUrl)
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
    @ConfigDescription("PostgreSQL user; needs no superuser, only ownership of the MeterStore schema")
    public MeterstoreConfig setPostgresqlUser(String postgresqlUser)
    {
        this.postgresqlUser = postgresqlUser;
        return this;
    }

    public Optional<String> getPostgresqlPassword()
    {
        return Optional.ofNullable(postgresqlPassword);
    }

    @Config("meterstore.postgresql.password")
    @ConfigDescription("PostgreSQL password")
    @ConfigSecuritySensitive
    public MeterstoreConfig setPostgresqlPassword(String postgresqlPassword)
    {
        this.postgresqlPassword = postgresqlPassword;
        return this;
    }

    @NotNull
    public String getSchema()
    {
        return schema;
    }

    @Config("meterstore.schema")
    @ConfigDescription("The schema: PostgreSQL schema of the hot tables, Iceberg namespace of the cold tables, and Trino schema")
    public MeterstoreConfig setSchema(String schema)
    {
        this.schema = schema;
        return this;
    }

    @NotNull
    @Size(min = 1)
    public List<String> getTables()
    {
        return tables;
    }

    @Config("meterstore.tables")
    @ConfigDescription("Comma-separated readings tables; each is exposed as <table> (winning versions) and <table>_versions (every version)")
    public MeterstoreConfig setTables(String tables)
    {
        this.tables = ImmutableList.copyOf(Splitter.on(',').trimResults().omitEmptyStrings().split(tables));
        return this;
    }

    @NotNull
    public String getIcebergCatalogName()
    {
        return icebergCatalogName;
    }

    @Config("meterstore.iceberg.catalog-name")
    @ConfigDescription("Name of the Iceberg JDBC catalogue; the archiver and Trino's Iceberg connector must use the same")
    public MeterstoreConfig setIcebergCatalogName(String icebergCatalogName)
    {
        this.icebergCatalogName = icebergCatalogName;
        return this;
    }

    public Optional<String> getIcebergJdbcUrl()
    {
        return Optional.ofNullable(icebergJdbcUrl);
    }

    @Config("meterstore.iceberg.jdbc-url")
    @ConfigDescription("JDBC URL of the Iceberg catalogue database; defaults to meterstore.postgresql.url")
    public MeterstoreConfig setIcebergJdbcUrl(String icebergJdbcUrl)
    {
        this.icebergJdbcUrl = icebergJdbcUrl;
        return this;
    }

    @NotNull
    public String getIcebergWarehouse()
    {
        return icebergWarehouse;
    }

    @Config("meterstore.iceberg.warehouse")
    @ConfigDescription("Warehouse location of the Iceberg tables, e.g. file:///var/lib/meterstore/warehouse")
    public MeterstoreConfig setIcebergWarehouse(String icebergWarehouse)
    {
        this.icebergWarehouse = icebergWarehouse;
        return this;
    }

    @MinDuration("1ms")
    public Duration getLockTimeout()
    {
        return lockTimeout;
    }

    @Config("meterstore.postgresql.lock-timeout")
    @ConfigDescription("lock_timeout for MeterStore's DDL in PostgreSQL")
    public MeterstoreConfig setLockTimeout(Duration lockTimeout)
    {
        this.lockTimeout = lockTimeout;
        return this;
    }

    @MinDuration("1m")
    public Duration getSettlementLag()
    {
        return settlementLag;
    }

    @Config("meterstore.settlement-lag")
    @ConfigDescription("The archiver's settlement lag, for the system tables: a watermark further behind than this plus two steps is reported as behind")
    public MeterstoreConfig setSettlementLag(Duration settlementLag)
    {
        this.settlementLag = settlementLag;
        return this;
    }

    @MinDuration("0s")
    public Duration getReaderGrace()
    {
        return readerGrace;
    }

    @Config("meterstore.reader-grace")
    @ConfigDescription("The archiver's reader grace, for the system tables: when an archived partition becomes droppable")
    public MeterstoreConfig setReaderGrace(Duration readerGrace)
    {
        this.readerGrace = readerGrace;
        return this;
    }
}
