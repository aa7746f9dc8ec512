package io.meterstore.core;

import com.google.common.collect.ImmutableMap;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.catalog.SessionCatalog;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.rest.HTTPClient;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.rest.RESTClient;
import org.apache.iceberg.rest.RESTSessionCatalog;
import org.apache.iceberg.rest.RESTUtil;
import org.apache.iceberg.rest.auth.OAuth2Properties;

import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

import static java.util.Objects.requireNonNull;

/**
 * The Iceberg catalogues MeterStore works with. The JDBC catalogue stores its pointers in PostgreSQL (by default the
 * hot tier's own database) with schema V1, exactly as Trino's Iceberg connector reads it; the REST catalogue is any
 * server speaking Iceberg's REST protocol.
 */
public final class IcebergCatalogs
{
    // SQLSTATEs of a session PostgreSQL ended (admin_shutdown, crash_shutdown, cannot_connect_now): after a restart the
    // pool's idle connections fail with these once; the pool then reconnects and retries, as it does for class 08
    private static final String RETRYABLE_STATUS_CODES = "57P01,57P02,57P03";

    private IcebergCatalogs() {}

    public record JdbcCatalogSpec(String catalogName, String url, String user, Optional<String> password, String warehouse)
    {
        public JdbcCatalogSpec
        {
            requireNonNull(catalogName, "catalogName is null");
            requireNonNull(url, "url is null");
            requireNonNull(user, "user is null");
            requireNonNull(password, "password is null");
            requireNonNull(warehouse, "warehouse is null");
        }
    }

    public static Catalog jdbc(JdbcCatalogSpec spec, Function<Map<String, String>, FileIO> fileIo)
    {
        ImmutableMap.Builder<String, String> properties = ImmutableMap.<String, String>builder()
                .put(CatalogProperties.URI, spec.url())
                .put(JdbcCatalog.PROPERTY_PREFIX + "user", spec.user())
                .put(JdbcCatalog.PROPERTY_PREFIX + "schema-version", "V1")
                .put("retryable_status_codes", RETRYABLE_STATUS_CODES)
                .put(CatalogProperties.WAREHOUSE_LOCATION, spec.warehouse());
        spec.password().ifPresent(password -> properties.put(JdbcCatalog.PROPERTY_PREFIX + "password", password));
        // a pool that never re-runs a write whose connection was lost: a re-run pointer swap loses the commit it made
        JdbcCatalog catalog = new JdbcCatalog(fileIo, catalogProperties -> new WriteOnceClientPool(catalogProperties.get(CatalogProperties.URI), catalogProperties), true);
        catalog.initialize(spec.catalogName(), properties.buildOrThrow());
        return catalog;
    }

    public static Catalog jdbc(JdbcCatalogSpec spec)
    {
        return jdbc(spec, properties -> new LocalFileIo());
    }

    /**
     * An Iceberg REST catalogue, reached as Trino's Iceberg connector reaches one: {@code uri}, an optional
     * {@code warehouse} the server knows the catalogue by, an OAuth2 bearer {@code token} or client {@code credential}.
     */
    public record RestCatalogSpec(String catalogName, String uri, Optional<String> warehouse, Optional<String> token, Optional<String> credential)
    {
        public RestCatalogSpec
        {
            requireNonNull(catalogName, "catalogName is null");
            requireNonNull(uri, "uri is null");
            requireNonNull(warehouse, "warehouse is null");
            requireNonNull(token, "token is null");
            requireNonNull(credential, "credential is null");
        }

        @Override
        public String toString()
        {
            // the record's own toString would print the secrets
            return "RestCatalogSpec[catalogName=%s, uri=%s, warehouse=%s, token=%s, credential=%s]".formatted(
                    catalogName, uri, warehouse, token.map(_ -> "***"), credential.map(_ -> "***"));
        }
    }

    /**
     * A REST catalogue that reads and writes files with {@code fileIo} (MeterStore's own storage configuration), not with
     * a FileIO the server names. Its commits are POSTs, which Iceberg's HTTP client never re-sends; a 500, 502, 503 or
     * 504 reply to one is a {@link org.apache.iceberg.exceptions.CommitStateUnknownException}, a lost reply a
     * {@link org.apache.iceberg.exceptions.RESTException} that {@link CommitOutcome} takes for an unknown outcome too.
     */
    public static Catalog rest(RestCatalogSpec spec, Function<Map<String, String>, FileIO> fileIo)
    {
        ImmutableMap.Builder<String, String> properties = ImmutableMap.<String, String>builder()
                .put(CatalogProperties.URI, spec.uri());
        spec.warehouse().ifPresent(warehouse -> properties.put(CatalogProperties.WAREHOUSE_LOCATION, warehouse));
        spec.token().ifPresent(token -> properties.put(OAuth2Properties.TOKEN, token));
        spec.credential().ifPresent(credential -> properties.put(OAuth2Properties.CREDENTIAL, credential));
        RESTCatalog catalog = new RESTCatalog(SessionCatalog.SessionContext.createEmpty(), config -> HTTPClient.builder(config)
                .uri(config.get(CatalogProperties.URI))
                .withHeaders(RESTUtil.configHeaders(config))
                .build())
        {
            @Override
            protected RESTSessionCatalog newSessionCatalog(Function<Map<String, String>, RESTClient> clientBuilder)
            {
                // called from RESTCatalog's constructor: fileIo is a captured local, set before it runs
                return new RESTSessionCatalog(clientBuilder, (context, catalogProperties) -> fileIo.apply(catalogProperties));
            }
        };
        catalog.initialize(spec.catalogName(), properties.buildOrThrow());
        return catalog;
    }
}
