package io.meterstore.core;

import com.google.common.collect.ImmutableMap;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.jdbc.JdbcCatalog;

import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

import static java.util.Objects.requireNonNull;

/**
 * The Iceberg catalogues MeterStore works with. The JDBC catalogue stores its pointers in PostgreSQL (by default the
 * hot tier's own database) with schema V1, exactly as Trino's Iceberg connector reads it.
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
}
