package io.meterstore.trino;

import com.google.common.collect.ImmutableList;
import com.google.inject.Inject;
import io.meterstore.trino.base.MeterstoreConfig;
import io.meterstore.trino.cold.ColdSplitPlanner;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.ConnectorSession;
import io.airlift.units.Duration;
import io.trino.spi.session.PropertyMetadata;

import java.util.List;

import static io.trino.plugin.base.session.PropertyMetadataUtil.durationProperty;
import static io.trino.spi.StandardErrorCode.INVALID_SESSION_PROPERTY;
import static io.trino.spi.session.PropertyMetadata.booleanProperty;
import static io.trino.spi.session.PropertyMetadata.longProperty;

/** Per-query switches: {@code SET SESSION meterstore.<name> = ...}. */
public final class MeterstoreSessionProperties
{
    public static final String AGGREGATION_PUSHDOWN_ENABLED = "aggregation_pushdown_enabled";
    public static final String DYNAMIC_FILTERING_WAIT_TIMEOUT = "dynamic_filtering_wait_timeout";
    public static final String RESOLUTION_SPLIT_ROWS = "resolution_split_rows";

    private final List<PropertyMetadata<?>> sessionProperties;

    @Inject
    public MeterstoreSessionProperties(MeterstoreConfig config)
    {
        sessionProperties = ImmutableList.of(
                booleanProperty(
                        AGGREGATION_PUSHDOWN_ENABLED,
                        "Push count, sum, min and max over a range that lies entirely in the hot tier into one PostgreSQL statement",
                        true,
                        false),
                durationProperty(
                        DYNAMIC_FILTERING_WAIT_TIMEOUT,
                        "How long splits wait for a join's dynamic filter (e.g. a list of meters) before they are scheduled, as Trino's Iceberg connector does",
                        config.getDynamicFilteringWaitTimeout(),
                        false),
                longProperty(
                        RESOLUTION_SPLIT_ROWS,
                        "Rows a cold split that resolves versions aims at: a month that is not resolved when written, or read AS OF, is cut into parts of about this size by \"from\" and malo_id ranges",
                        ColdSplitPlanner.DEFAULT_RESOLUTION_SPLIT_ROWS,
                        value -> {
                            if (value < 1) {
                                throw new TrinoException(INVALID_SESSION_PROPERTY, "Session property 'meterstore.%s' must be positive, not %s: set the rows a resolving cold split should read, e.g. %s".formatted(RESOLUTION_SPLIT_ROWS, value, ColdSplitPlanner.DEFAULT_RESOLUTION_SPLIT_ROWS));
                            }
                        },
                        false));
    }

    public List<PropertyMetadata<?>> getSessionProperties()
    {
        return sessionProperties;
    }

    public static Duration getDynamicFilteringWaitTimeout(ConnectorSession session)
    {
        return session.getProperty(DYNAMIC_FILTERING_WAIT_TIMEOUT, Duration.class);
    }

    public static long getResolutionSplitRows(ConnectorSession session)
    {
        return session.getProperty(RESOLUTION_SPLIT_ROWS, Long.class);
    }

    public static boolean isAggregationPushdownEnabled(ConnectorSession session)
    {
        return session.getProperty(AGGREGATION_PUSHDOWN_ENABLED, Boolean.class);
    }
}
