package io.meterstore.trino.base;

import com.google.common.collect.ImmutableMap;
import io.airlift.units.Duration;
import io.airlift.units.MinDuration;
import jakarta.validation.constraints.AssertTrue;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static io.airlift.configuration.testing.ConfigAssertions.assertFullMapping;
import static io.airlift.configuration.testing.ConfigAssertions.assertRecordedDefaults;
import static io.airlift.configuration.testing.ConfigAssertions.recordDefaults;
import static io.airlift.testing.ValidationAssertions.assertFailsValidation;
import static io.airlift.testing.ValidationAssertions.assertValidates;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.MINUTES;
import static java.util.concurrent.TimeUnit.SECONDS;

final class TestMeterstoreConfig
{
    @Test
    void testDefaults()
    {
        assertRecordedDefaults(recordDefaults(MeterstoreConfig.class)
                .setMaxClockSkew(new Duration(1, MINUTES))
                .setPostgresqlMaxConnections(10)
                .setPostgresqlReservedConnections(1)
                .setPostgresqlPoolStallTimeout(new Duration(30, SECONDS))
                .setCoordinatorFileCacheEnabled(true)
                .setDynamicFilteringWaitTimeout(new Duration(1, SECONDS))
                .setAllowDropTable(false));
    }

    @Test
    void testExplicitPropertyMappings()
    {
        Map<String, String> properties = ImmutableMap.<String, String>builder()
                .put("meterstore.max-clock-skew", "10s")
                .put("meterstore.postgresql.max-connections", "4")
                .put("meterstore.postgresql.reserved-connections", "2")
                .put("meterstore.postgresql.pool-stall-timeout", "5m")
                .put("meterstore.coordinator-file-cache.enabled", "false")
                .put("meterstore.dynamic-filtering.wait-timeout", "30s")
                .put("meterstore.allow-drop-table", "true")
                .buildOrThrow();
        MeterstoreConfig expected = new MeterstoreConfig()
                .setMaxClockSkew(new Duration(10, SECONDS))
                .setPostgresqlMaxConnections(4)
                .setPostgresqlReservedConnections(2)
                .setPostgresqlPoolStallTimeout(new Duration(5, MINUTES))
                .setCoordinatorFileCacheEnabled(false)
                .setDynamicFilteringWaitTimeout(new Duration(30, SECONDS))
                .setAllowDropTable(true);
        assertFullMapping(properties, expected);
    }

    @Test
    void testPoolStallTimeoutIsASecondAtLeast()
    {
        assertValidates(new MeterstoreConfig().setPostgresqlPoolStallTimeout(new Duration(1, SECONDS)));
        assertFailsValidation(
                new MeterstoreConfig().setPostgresqlPoolStallTimeout(new Duration(100, MILLISECONDS)),
                "postgresqlPoolStallTimeout",
                "must be greater than or equal to 1s",
                MinDuration.class);
    }

    @Test
    void testSplitsKeepAConnection()
    {
        assertValidates(new MeterstoreConfig().setPostgresqlMaxConnections(2).setPostgresqlReservedConnections(1));
        assertValidates(new MeterstoreConfig().setPostgresqlMaxConnections(1).setPostgresqlReservedConnections(0));
        assertFailsValidation(
                new MeterstoreConfig().setPostgresqlMaxConnections(1),
                "reservedConnectionsBelowMaxConnections",
                "meterstore.postgresql.reserved-connections must be less than meterstore.postgresql.max-connections: splits need at least one",
                AssertTrue.class);
    }
}
