package io.meterstore.trino;

import com.google.common.collect.ImmutableMap;
import io.trino.spi.connector.ConnectorFactory;
import io.trino.testing.TestingConnectorContext;
import org.junit.jupiter.api.Test;

import static com.google.common.collect.Iterables.getOnlyElement;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class TestMeterstorePlugin
{
    @Test
    void testCreateConnector()
    {
        ConnectorFactory factory = getOnlyElement(new MeterstorePlugin().getConnectorFactories());
        assertThat(factory.getName()).isEqualTo("meterstore");
        factory.create(
                        "test",
                        ImmutableMap.of(
                                "meterstore.postgresql.url", "jdbc:postgresql://localhost:1/none",
                                "meterstore.postgresql.user", "meterstore",
                                "meterstore.iceberg.warehouse", "file:///tmp/none",
                                "bootstrap.quiet", "true"),
                        new TestingConnectorContext())
                .shutdown();
    }

    @Test
    void testMissingRequiredConfiguration()
    {
        ConnectorFactory factory = getOnlyElement(new MeterstorePlugin().getConnectorFactories());
        assertThatThrownBy(() -> factory.create("test", ImmutableMap.of("bootstrap.quiet", "true"), new TestingConnectorContext()))
                .hasMessageContaining("meterstore.postgresql.url");
    }
}
