package io.meterstore.trino;

import com.google.common.collect.ImmutableMap;
import io.airlift.units.Duration;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static io.airlift.configuration.testing.ConfigAssertions.assertFullMapping;
import static io.airlift.configuration.testing.ConfigAssertions.assertRecordedDefaults;
import static io.airlift.configuration.testing.ConfigAssertions.recordDefaults;
import static java.util.concurrent.TimeUnit.DAYS;
import static java.util.concurrent.TimeUnit.HOURS;
import static java.util.concurrent.TimeUnit.MINUTES;
import static java.util.concurrent.TimeUnit.SECONDS;

final class TestMeterstoreConfig
{
    @Test
    void testDefaults()
    {
        assertRecordedDefaults(recordDefaults(MeterstoreConfig.class)
                .setPostgresqlUrl(null)
                .setPostgresqlUser("postgres")
                .setPostgresqlPassword(null)
                .setSchema("metering")
                .setTables("readings")
                .setIcebergCatalogName("meterstore")
                .setIcebergJdbcUrl(null)
                .setIcebergWarehouse(null)
                .setLockTimeout(new Duration(5, SECONDS))
                .setSettlementLag(new Duration(7, DAYS))
                .setReaderGrace(new Duration(1, HOURS)));
    }

    @Test
    void testExplicitPropertyMappings()
    {
        Map<String, String> properties = ImmutableMap.<String, String>builder()
                .put("meterstore.postgresql.url", "jdbc:postgresql://db:5432/metering")
                .put("meterstore.postgresql.user", "meterstore")
                .put("meterstore.postgresql.password", "secret")
                .put("meterstore.schema", "tenant_a")
                .put("meterstore.tables", "readings, gas_readings")
                .put("meterstore.iceberg.catalog-name", "archive")
                .put("meterstore.iceberg.jdbc-url", "jdbc:postgresql://catalog:5432/iceberg")
                .put("meterstore.iceberg.warehouse", "file:///var/lib/meterstore/warehouse")
                .put("meterstore.postgresql.lock-timeout", "2s")
                .put("meterstore.settlement-lag", "10d")
                .put("meterstore.reader-grace", "30m")
                .buildOrThrow();
        MeterstoreConfig expected = new MeterstoreConfig()
                .setPostgresqlUrl("jdbc:postgresql://db:5432/metering")
                .setPostgresqlUser("meterstore")
                .setPostgresqlPassword("secret")
                .setSchema("tenant_a")
                .setTables("readings,gas_readings")
                .setIcebergCatalogName("archive")
                .setIcebergJdbcUrl("jdbc:postgresql://catalog:5432/iceberg")
                .setIcebergWarehouse("file:///var/lib/meterstore/warehouse")
                .setLockTimeout(new Duration(2, SECONDS))
                .setSettlementLag(new Duration(10, DAYS))
                .setReaderGrace(new Duration(30, MINUTES));
        assertFullMapping(properties, expected);
    }
}
