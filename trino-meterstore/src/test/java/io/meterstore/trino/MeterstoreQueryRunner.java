package io.meterstore.trino;

import com.google.common.collect.ImmutableMap;
import io.airlift.log.Level;
import io.airlift.log.Logger;
import io.airlift.log.Logging;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.trino.plugin.iceberg.IcebergPlugin;
import io.trino.testing.DistributedQueryRunner;
import io.trino.testing.QueryRunner;

import java.util.Map;
import java.util.Optional;

import static io.airlift.testing.Closeables.closeAllSuppress;
import static io.trino.testing.TestingSession.testSessionBuilder;
import static java.util.Objects.requireNonNull;
import static java.util.Objects.requireNonNullElse;

/**
 * A real Trino engine (coordinator and one worker) with the {@code meterstore} catalog and, for interop, Trino's own
 * Iceberg connector as catalog {@code iceberg} over the same JDBC catalogue and warehouse.
 */
public final class MeterstoreQueryRunner
{
    public static final String CATALOG = "meterstore";
    public static final String ICEBERG_CATALOG = "iceberg";
    public static final String SCHEMA = "metering";

    private MeterstoreQueryRunner() {}

    public static Builder builder(TestingWarehouse warehouse)
    {
        return new Builder(catalogProperties(warehouse), Optional.of(icebergCatalogProperties(warehouse)));
    }

    /**
     * An engine whose meterstore catalog has {@code catalogProperties} (as {@link #catalogProperties} gives them for a
     * warehouse of another JVM), without the {@code iceberg} catalog.
     */
    public static Builder builder(Map<String, String> catalogProperties)
    {
        return new Builder(catalogProperties, Optional.empty());
    }

    /** The meterstore catalog properties for a warehouse, as etc/catalog/meterstore.properties would hold them. */
    public static Map<String, String> catalogProperties(TestingWarehouse warehouse)
    {
        return ImmutableMap.<String, String>builder()
                .put("meterstore.postgresql.url", warehouse.database().jdbcUrl())
                .put("meterstore.postgresql.user", warehouse.database().user())
                .put("meterstore.schema", SCHEMA)
                .put("meterstore.tables", "readings")
                .put("meterstore.iceberg.catalog-name", warehouse.catalogName())
                .put("meterstore.iceberg.warehouse", warehouse.location())
                .putAll(warehouse.catalogProperties())
                .putAll(warehouse.storageProperties())
                .buildOrThrow();
    }

    public static Map<String, String> icebergCatalogProperties(TestingWarehouse warehouse)
    {
        if (warehouse.restCatalogUri().isPresent()) {
            return ImmutableMap.<String, String>builder()
                    .put("iceberg.catalog.type", "rest")
                    .put("iceberg.rest-catalog.uri", warehouse.restCatalogUri().get())
                    .putAll(warehouse.storageProperties())
                    .buildOrThrow();
        }
        return ImmutableMap.<String, String>builder()
                .put("iceberg.catalog.type", "jdbc")
                .put("iceberg.jdbc-catalog.driver-class", "org.postgresql.Driver")
                .put("iceberg.jdbc-catalog.connection-url", warehouse.database().jdbcUrl())
                .put("iceberg.jdbc-catalog.connection-user", warehouse.database().user())
                .put("iceberg.jdbc-catalog.catalog-name", warehouse.catalogName())
                .put("iceberg.jdbc-catalog.default-warehouse-dir", warehouse.location())
                .put("fs.local.enabled", "true")
                // the archiver writes absolute file:/// locations; Trino's local file system resolves them against this root
                .put("local.location", "/")
                .putAll(warehouse.storageProperties())
                .buildOrThrow();
    }

    public static final class Builder
            extends DistributedQueryRunner.Builder<Builder>
    {
        private final Map<String, String> catalogProperties;
        private Optional<Map<String, String>> icebergProperties;
        private Map<String, String> catalogOverrides = ImmutableMap.of();

        private Builder(Map<String, String> catalogProperties, Optional<Map<String, String>> icebergProperties)
        {
            super(testSessionBuilder()
                    .setCatalog(CATALOG)
                    .setSchema(SCHEMA)
                    .build());
            this.catalogProperties = ImmutableMap.copyOf(requireNonNull(catalogProperties, "catalogProperties is null"));
            this.icebergProperties = requireNonNull(icebergProperties, "icebergProperties is null");
            setWorkerCount(0);
        }

        /**
         * {@code workers} workers and a coordinator that schedules no splits, as a production cluster runs: every split
         * is read on a worker, in a node other than the one that planned it.
         */
        public Builder withWorkersOnly(int workers)
        {
            setWorkerCount(workers);
            addCoordinatorProperty("node-scheduler.include-coordinator", "false");
            return this;
        }

        public Builder withoutIceberg()
        {
            this.icebergProperties = Optional.empty();
            return this;
        }

        public Builder withCatalogOverrides(Map<String, String> overrides)
        {
            this.catalogOverrides = ImmutableMap.copyOf(overrides);
            return this;
        }

        @Override
        public DistributedQueryRunner build()
                throws Exception
        {
            DistributedQueryRunner queryRunner = super.build();
            try {
                queryRunner.installPlugin(new MeterstorePlugin());
                Map<String, String> properties = new java.util.HashMap<>(catalogProperties);
                properties.putAll(catalogOverrides);
                queryRunner.createCatalog(CATALOG, "meterstore", properties);
                if (icebergProperties.isPresent()) {
                    queryRunner.installPlugin(new IcebergPlugin());
                    queryRunner.createCatalog(ICEBERG_CATALOG, "iceberg", icebergProperties.get());
                }
                return queryRunner;
            }
            catch (Throwable e) {
                closeAllSuppress(e, queryRunner);
                throw e;
            }
        }
    }

    /** Starts an empty MeterStore on localhost:8080 (or $TRINO_PORT); see MeterstoreDemo for one with data. */
    public static void main(String[] args)
            throws Exception
    {
        Logging logging = Logging.initialize();
        logging.setLevel("io.trino", Level.INFO);
        TestingWarehouse warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("meterstore"));
        QueryRunner queryRunner = builder(warehouse)
                .setCoordinatorProperties(Map.of("http-server.http.port", requireNonNullElse(System.getenv("TRINO_PORT"), "8080")))
                .build();
        Logger log = Logger.get(MeterstoreQueryRunner.class);
        log.info("======== SERVER STARTED ========");
        log.info("\n====\n%s\n====", ((DistributedQueryRunner) queryRunner).getCoordinator().getBaseUrl());
    }
}
