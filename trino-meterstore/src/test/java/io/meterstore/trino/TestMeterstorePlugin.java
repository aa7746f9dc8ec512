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
    void testTableThatCannotNamePartitionsIsRefused()
    {
        // the hot tier's partitions are named after the table: a name PostgreSQL would fold or cut refuses the catalog
        ConnectorFactory factory = getOnlyElement(new MeterstorePlugin().getConnectorFactories());
        for (String tables : new String[] {"readings,Readings_Archive", "readings," + "r".repeat(48)}) {
            assertThatThrownBy(() -> factory.create("test", ImmutableMap.of(
                            "meterstore.postgresql.url", "jdbc:postgresql://localhost:1/none",
                            "meterstore.postgresql.user", "meterstore",
                            "meterstore.iceberg.warehouse", "file:///tmp/none",
                            "meterstore.tables", tables,
                            "bootstrap.quiet", "true"),
                    new TestingConnectorContext()))
                    .hasMessageContaining("meterstore.tables");
        }
    }

    @Test
    void testMissingRequiredConfiguration()
    {
        ConnectorFactory factory = getOnlyElement(new MeterstorePlugin().getConnectorFactories());
        assertThatThrownBy(() -> factory.create("test", ImmutableMap.of("bootstrap.quiet", "true"), new TestingConnectorContext()))
                .hasMessageContaining("meterstore.postgresql.url");
    }
}
