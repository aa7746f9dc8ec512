package io.meterstore.trino;

import com.google.common.collect.ImmutableList;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.session.PropertyMetadata;

import java.util.List;

import static io.trino.spi.session.PropertyMetadata.booleanProperty;

/** Per-query switches: {@code SET SESSION meterstore.<name> = ...}. */
public final class MeterstoreSessionProperties
{
    public static final String AGGREGATION_PUSHDOWN_ENABLED = "aggregation_pushdown_enabled";

    private final List<PropertyMetadata<?>> sessionProperties = ImmutableList.of(
            booleanProperty(
                    AGGREGATION_PUSHDOWN_ENABLED,
                    "Push count, sum, min and max over a range that lies entirely in the hot tier into one PostgreSQL statement",
                    true,
                    false));

    public List<PropertyMetadata<?>> getSessionProperties()
    {
        return sessionProperties;
    }

    public static boolean isAggregationPushdownEnabled(ConnectorSession session)
    {
        return session.getProperty(AGGREGATION_PUSHDOWN_ENABLED, Boolean.class);
    }
}
