package io.meterstore.core;

import com.google.common.base.Splitter;
import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import io.airlift.configuration.Config;
import io.airlift.configuration.ConfigDescription;
import io.airlift.configuration.ConfigSecuritySensitive;
import io.airlift.configuration.LegacyConfig;
import io.airlift.units.Duration;
import io.airlift.units.MinDuration;
import io.meterstore.core.IcebergCatalogs.JdbcCatalogSpec;
import io.meterstore.core.IcebergCatalogs.RestCatalogSpec;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.NotEmpty;
import jakarta.validation.constraints.NotNull;

import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.io.FileIO;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.function.Function;

import static java.util.concurrent.TimeUnit.DAYS;
import static java.util.concurrent.TimeUnit.HOURS;
import static java.util.concurrent.TimeUnit.SECONDS;

/**
 * The keys the connector and the archiver share: where both tiers of the readings tables live and how to reach them.
 * Both bind this one bean, so a key has the same name, default and meaning in {@code etc/catalog/meterstore.properties}
 * and in {@code etc/archiver.properties}; what only one of them reads stays in its own config.
 */
public class TiersConfig
{
    public static final String TABLES_PROPERTY = "meterstore.tables";
    public static final String LOCK_TIMEOUT_PROPERTY = "meterstore.postgresql.lock-timeout";
    public static final String ERASURE_HMAC_KEY_PROPERTY = "meterstore.erasure.hmac-key";

    public enum CatalogType
    {
        /** Iceberg's JDBC catalogue in PostgreSQL. */
        JDBC,
        /** A server speaking Iceberg's REST catalogue protocol. */
        REST,
    }

    private String postgresqlUrl;
    private String postgresqlUser;
    private Optional<String> postgresqlPassword = Optional.empty();
    private Duration lockTimeout = new Duration(5, SECONDS);
    private String schema = "metering";
    private List<String> tables = ImmutableList.of("readings");
    private Map<String, TableShape> declaredShapes = ImmutableMap.of();
    private String icebergCatalogName = "meterstore";
    private Optional<String> icebergJdbcUrl = Optional.empty();
    private String icebergWarehouse;
    private CatalogType catalogType = CatalogType.JDBC;
    private Optional<String> restUri = Optional.empty();
    private Optional<String> restWarehouse = Optional.empty();
    private Optional<String> restToken = Optional.empty();
    private Optional<String> restCredential = Optional.empty();
    private Duration settlementLag = new Duration(7, DAYS);
    private Duration readerGrace = new Duration(1, HOURS);
    private Optional<String> erasureHmacKey = Optional.empty();

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

    @Config(TABLES_PROPERTY)
    @ConfigDescription("Comma-separated readings tables, each a partitioned PostgreSQL table and an Iceberg table of the same name; an entry may declare the table's shape: name(time_model=interval; reading_id=malo_id)")
    public TiersConfig setTables(List<String> tables)
    {
        ImmutableList.Builder<String> names = ImmutableList.builder();
        ImmutableMap.Builder<String, TableShape> shapes = ImmutableMap.builder();
        for (String entry : tables) {
            int open = entry.indexOf('(');
            if (open < 0) {
                names.add(entry);
                continue;
            }
            String name = entry.substring(0, open).trim();
            if (!entry.endsWith(")")) {
                throw new IllegalArgumentException("Entry '%s' of %s declares a shape without its closing parenthesis: write %s(time_model=interval; reading_id=malo_id)".formatted(entry, TABLES_PROPERTY, name));
            }
            Map<String, String> settings = new LinkedHashMap<>();
            for (String setting : Splitter.on(';').trimResults().omitEmptyStrings().split(entry.substring(open + 1, entry.length() - 1))) {
                int equals = setting.indexOf('=');
                if (equals < 0) {
                    throw new IllegalArgumentException("Setting '%s' of table '%s' in %s is not setting=value".formatted(setting, name, TABLES_PROPERTY));
                }
                settings.put(setting.substring(0, equals).trim(), setting.substring(equals + 1).trim());
            }
            try {
                shapes.put(name, TableShape.declared(settings));
            }
            catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("Table '%s' of %s: %s".formatted(name, TABLES_PROPERTY, e.getMessage()), e);
            }
            names.add(name);
        }
        this.tables = names.build();
        this.declaredShapes = shapes.buildKeepingLast();
        return this;
    }

    /**
     * The shape an entry of {@code meterstore.tables} declares for {@code table}; empty for an entry that is its name
     * alone, which takes the shape the table stores.
     */
    public Optional<TableShape> declaredShape(String table)
    {
        return Optional.ofNullable(declaredShapes.get(table));
    }

    // every partition's name is the table's with a suffix, and must survive PostgreSQL's 63-byte identifiers intact
    @AssertTrue(message = "meterstore.tables must name each table in lowercase letters, digits and underscores, at most " + PartitionNaming.MAX_TABLE_NAME_LENGTH + " characters")
    public boolean isTablesNamedForPostgres()
    {
        return tables.stream().allMatch(PartitionNaming::isValidTableName);
    }

    @NotEmpty
    public String getIcebergCatalogName()
    {
        return icebergCatalogName;
    }

    @Config("meterstore.iceberg.catalog-name")
    @ConfigDescription("Name of the Iceberg catalogue; the connector, the archiver and Trino's Iceberg connector use the same")
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

    @NotNull
    public CatalogType getCatalogType()
    {
        return catalogType;
    }

    @Config("meterstore.iceberg.catalog-type")
    @ConfigDescription("Iceberg catalogue of the cold tables: JDBC (in PostgreSQL) or REST")
    public TiersConfig setCatalogType(CatalogType catalogType)
    {
        this.catalogType = catalogType;
        return this;
    }

    public Optional<String> getRestUri()
    {
        return restUri;
    }

    @Config("meterstore.iceberg.rest-catalog.uri")
    @ConfigDescription("URI of the REST catalogue, e.g. http://iceberg-rest:8181 (Trino's iceberg.rest-catalog.uri)")
    public TiersConfig setRestUri(String restUri)
    {
        this.restUri = Optional.ofNullable(restUri);
        return this;
    }

    public Optional<String> getRestWarehouse()
    {
        return restWarehouse;
    }

    @Config("meterstore.iceberg.rest-catalog.warehouse")
    @ConfigDescription("Warehouse identifier the REST catalogue serves, if it serves several (Trino's iceberg.rest-catalog.warehouse)")
    public TiersConfig setRestWarehouse(String restWarehouse)
    {
        this.restWarehouse = Optional.ofNullable(restWarehouse);
        return this;
    }

    public Optional<String> getRestToken()
    {
        return restToken;
    }

    @Config("meterstore.iceberg.rest-catalog.oauth2.token")
    @ConfigSecuritySensitive
    @ConfigDescription("OAuth2 bearer token for the REST catalogue (Trino's iceberg.rest-catalog.oauth2.token)")
    public TiersConfig setRestToken(String restToken)
    {
        this.restToken = Optional.ofNullable(restToken);
        return this;
    }

    public Optional<String> getRestCredential()
    {
        return restCredential;
    }

    @Config("meterstore.iceberg.rest-catalog.oauth2.credential")
    @ConfigSecuritySensitive
    @ConfigDescription("OAuth2 client credential client_id:client_secret for the REST catalogue (Trino's iceberg.rest-catalog.oauth2.credential)")
    public TiersConfig setRestCredential(String restCredential)
    {
        this.restCredential = Optional.ofNullable(restCredential);
        return this;
    }

    @NotNull
    @MinDuration("1m")
    public Duration getSettlementLag()
    {
        return settlementLag;
    }

    @Config("meterstore.settlement-lag")
    @ConfigDescription("A window is archived once it ends this long before now; must exceed the market's correction window. The system tables report a watermark further behind than this plus two steps as behind")
    public TiersConfig setSettlementLag(Duration settlementLag)
    {
        this.settlementLag = settlementLag;
        return this;
    }

    @NotNull
    @MinDuration("0s")
    public Duration getReaderGrace()
    {
        return readerGrace;
    }

    @Config("meterstore.reader-grace")
    @ConfigDescription("An archived partition is dropped once its archival commit is this old; above the longest query the deployment runs")
    public TiersConfig setReaderGrace(Duration readerGrace)
    {
        this.readerGrace = readerGrace;
        return this;
    }

    public Optional<String> getErasureHmacKey()
    {
        return erasureHmacKey;
    }

    @Config(ERASURE_HMAC_KEY_PROPERTY)
    @ConfigSecuritySensitive
    @ConfigDescription("Secret under which erasures record the malo_ids they erased (HMAC-SHA256), at least 32 characters, the same for the connector and the archiver; DELETE is refused without it")
    public TiersConfig setErasureHmacKey(String erasureHmacKey)
    {
        this.erasureHmacKey = Optional.ofNullable(erasureHmacKey);
        return this;
    }

    @AssertTrue(message = ERASURE_HMAC_KEY_PROPERTY + " must have at least " + ErasureKey.MIN_LENGTH + " characters")
    public boolean isErasureHmacKeyLongEnough()
    {
        return erasureHmacKey.map(key -> key.length() >= ErasureKey.MIN_LENGTH).orElse(true);
    }

    /** The key erasures record their scope under; empty when none is configured. */
    public Optional<ErasureKey> erasureKey()
    {
        return erasureHmacKey.filter(key -> key.length() >= ErasureKey.MIN_LENGTH).map(ErasureKey::of);
    }

    @AssertTrue(message = "meterstore.iceberg.rest-catalog.uri must be set when meterstore.iceberg.catalog-type is REST")
    public boolean isRestUriSetForRest()
    {
        return catalogType != CatalogType.REST || restUri.isPresent();
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

    public RestCatalogSpec restCatalogSpec()
    {
        return new RestCatalogSpec(icebergCatalogName, restUri.orElseThrow(() -> new IllegalStateException("meterstore.iceberg.rest-catalog.uri is not set")), restWarehouse, restToken, restCredential);
    }

    /** Opens the configured catalogue, which reads and writes files with {@code fileIo}. */
    public Catalog openCatalog(Function<Map<String, String>, FileIO> fileIo)
    {
        return switch (catalogType) {
            case JDBC -> IcebergCatalogs.jdbc(catalogSpec(), fileIo);
            case REST -> IcebergCatalogs.rest(restCatalogSpec(), fileIo);
        };
    }

    /** Where the configured catalogue is, for messages: the database's JDBC URL or the REST server's URI. */
    public String catalogLocation()
    {
        return switch (catalogType) {
            case JDBC -> catalogJdbcUrl();
            case REST -> restUri.orElse("");
        };
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
