package io.meterstore.core;

import com.google.common.collect.ImmutableList;
import io.airlift.configuration.Config;
import io.airlift.configuration.ConfigDescription;
import io.airlift.configuration.ConfigSecuritySensitive;
import io.airlift.configuration.LegacyConfig;
import io.airlift.units.Duration;
import io.airlift.units.MinDuration;
import io.meterstore.core.IcebergCatalogs.JdbcCatalogSpec;
import jakarta.validation.constraints.NotEmpty;
import jakarta.validation.constraints.NotNull;

import java.util.List;
import java.util.Optional;
import java.util.Properties;

import static java.util.concurrent.TimeUnit.SECONDS;

/**
 * The keys the connector and the archiver share: where both tiers of the readings tables live and how to reach them.
 * Both bind this one bean, so a key has the same name, default and meaning in {@code etc/catalog/meterstore.properties}
 * and in {@code etc/archiver.properties}; what only one of them reads stays in its own config.
 */
public class TiersConfig
{
    public static final String LOCK_TIMEOUT_PROPERTY = "meterstore.postgresql.lock-timeout";

    private String postgresqlUrl;
    private String postgresqlUser;
    private Optional<String> postgresqlPassword = Optional.empty();
    private Duration lockTimeout = new Duration(5, SECONDS);
    private String schema = "metering";
    private List<String> tables = ImmutableList.of("readings");
    private String icebergCatalogName = "meterstore";
    private Optional<String> icebergJdbcUrl = Optional.empty();
    private String icebergWarehouse;

    @NotNull
    public String getPostgresqlUrl()
    {
        return postgresqlUrl;
    }

    @Config("meterstore.postgresql.url")
    @ConfigDescription("JDBC URL of the PostgreSQL database holding the hot tier, e.g. jdbc:postgresql://host:5432/metering")
    public TiersConfig setPostgresqlUrl(String postgresqlUrl)
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
    @ConfigDescription("PostgreSQL user, also of the Iceberg catalogue's database; needs no superuser, only ownership of the readings tables")
    public TiersConfig setPostgresqlUser(String postgresqlUser)
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
    public TiersConfig setPostgresqlPassword(String postgresqlPassword)
    {
        this.postgresqlPassword = Optional.ofNullable(postgresqlPassword);
        return this;
    }

    @NotNull
    @MinDuration("1ms")
    public Duration getLockTimeout()
    {
        return lockTimeout;
    }

    @Config(LOCK_TIMEOUT_PROPERTY)
    // the archiver's name for it until the keys were unified
    @LegacyConfig("meterstore.lock-timeout")
    @ConfigDescription("lock_timeout of MeterStore's DDL in PostgreSQL: creating a partition (INSERT, archiver), DETACH and DROP (archiver)")
    public TiersConfig setLockTimeout(Duration lockTimeout)
    {
        this.lockTimeout = lockTimeout;
        return this;
    }

    @NotEmpty
    public String getSchema()
    {
        return schema;
    }

    @Config("meterstore.schema")
    @ConfigDescription("PostgreSQL schema of the hot tables, Iceberg namespace of the cold tables, and the connector's Trino schema")
    public TiersConfig setSchema(String schema)
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
    @ConfigDescription("Comma-separated readings tables, each a partitioned PostgreSQL table and an Iceberg table of the same name")
    public TiersConfig setTables(List<String> tables)
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
    @ConfigDescription("Name of the Iceberg JDBC catalogue; the connector, the archiver and Trino's Iceberg connector use the same")
    public TiersConfig setIcebergCatalogName(String icebergCatalogName)
    {
        this.icebergCatalogName = icebergCatalogName;
        return this;
    }

    public Optional<String> getIcebergJdbcUrl()
    {
        return icebergJdbcUrl;
    }

    @Config("meterstore.iceberg.jdbc-url")
    @ConfigDescription("JDBC URL of the Iceberg catalogue's database (same user and password); defaults to meterstore.postgresql.url")
    public TiersConfig setIcebergJdbcUrl(String icebergJdbcUrl)
    {
        this.icebergJdbcUrl = Optional.ofNullable(icebergJdbcUrl);
        return this;
    }

    @NotNull
    public String getIcebergWarehouse()
    {
        return icebergWarehouse;
    }

    @Config("meterstore.iceberg.warehouse")
    @ConfigDescription("Warehouse location of the Iceberg tables, e.g. file:///var/lib/meterstore/warehouse")
    public TiersConfig setIcebergWarehouse(String icebergWarehouse)
    {
        this.icebergWarehouse = icebergWarehouse;
        return this;
    }

    /** The catalogue's database: the hot tier's own unless configured otherwise. */
    public String catalogJdbcUrl()
    {
        return icebergJdbcUrl.orElse(postgresqlUrl);
    }

    public JdbcCatalogSpec catalogSpec()
    {
        return new JdbcCatalogSpec(icebergCatalogName, catalogJdbcUrl(), postgresqlUser, postgresqlPassword, icebergWarehouse);
    }

    /** The hot tier of {@code table}, whose partitions are {@code step} long, with the configured lock timeout. */
    public HotTier hotTier(String table, java.time.Duration step)
    {
        return new HotTier(schema, new PartitionNaming(table, step), lockTimeout.toJavaTime());
    }

    /** The properties of a PostgreSQL connection as {@code applicationName} (shown in pg_stat_activity). */
    public Properties connectionProperties(String applicationName)
    {
        Properties properties = new Properties();
        properties.setProperty("user", postgresqlUser);
        postgresqlPassword.ifPresent(password -> properties.setProperty("password", password));
        properties.setProperty("ApplicationName", applicationName);
        return properties;
    }
}
