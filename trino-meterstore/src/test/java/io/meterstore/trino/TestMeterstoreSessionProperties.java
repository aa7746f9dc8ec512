package io.meterstore.trino;

import io.airlift.units.Duration;
import io.meterstore.trino.base.MeterstoreConfig;
import io.trino.spi.connector.ConnectorSession;
import io.trino.testing.TestingConnectorSession;
import org.junit.jupiter.api.Test;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;

final class TestMeterstoreSessionProperties
{
    @Test
    void testDynamicFilteringWaitTimeoutDefaultsToTheCatalogProperty()
    {
        assertThat(dynamicFilteringWaitTimeout(new MeterstoreConfig())).isEqualTo(new Duration(1, SECONDS));
        assertThat(dynamicFilteringWaitTimeout(new MeterstoreConfig().setDynamicFilteringWaitTimeout(new Duration(30, SECONDS))))
                .isEqualTo(new Duration(30, SECONDS));
    }

    /** The wait of a session that does not set it: the catalog's. */
    private static Duration dynamicFilteringWaitTimeout(MeterstoreConfig config)
    {
        ConnectorSession session = TestingConnectorSession.builder()
                .setPropertyMetadata(new MeterstoreSessionProperties(config).getSessionProperties())
                .build();
        return MeterstoreSessionProperties.getDynamicFilteringWaitTimeout(session);
    }
}
