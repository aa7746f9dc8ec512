package io.meterstore.trino;

import com.google.inject.Inject;
import io.meterstore.trino.cold.ColdPageSourceProvider;
import io.meterstore.trino.cold.ColdSplit;
import io.meterstore.trino.hot.HotAggregationPageSource;
import io.meterstore.trino.hot.HotAggregationSplit;
import io.meterstore.trino.hot.HotPageSource;
import io.meterstore.trino.hot.HotSplit;
import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.ConnectorPageSourceProvider;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.ConnectorSplit;
import io.trino.spi.connector.ConnectorTableCredentials;
import io.trino.spi.connector.ConnectorTableHandle;
import io.trino.spi.connector.ConnectorTransactionHandle;
import io.trino.spi.connector.DynamicFilter;
import io.trino.spi.connector.EmptyPageSource;
import io.trino.spi.connector.MemoryContext;
import io.trino.spi.predicate.TupleDomain;

import java.util.List;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

public class MeterstorePageSourceProvider
        implements ConnectorPageSourceProvider
{
    private final MeterstoreTables tables;
    private final ColdPageSourceProvider coldPageSources;

    @Inject
    public MeterstorePageSourceProvider(MeterstoreTables tables, ColdPageSourceProvider coldPageSources)
    {
        this.tables = requireNonNull(tables, "tables is null");
        this.coldPageSources = requireNonNull(coldPageSources, "coldPageSources is null");
    }

    @Override
    public ConnectorPageSource createPageSource(
            ConnectorTransactionHandle transaction,
            ConnectorSession session,
            ConnectorSplit split,
            ConnectorTableHandle table,
            Optional<ConnectorTableCredentials> tableCredentials,
            List<ColumnHandle> columns,
            DynamicFilter dynamicFilter,
            MemoryContext memoryContext)
    {
        MeterstoreTableHandle handle = (MeterstoreTableHandle) table;
        if (split instanceof HotAggregationSplit aggregationSplit) {
            // the statement enforces the handle's constraint; a dynamic filter is only an optimisation and is not needed
            return new HotAggregationPageSource(tables.connectPostgres(), aggregationSplit, handle.aggregation().orElseThrow(), columns, handle.constraint());
        }
        List<MeterstoreColumnHandle> meterstoreColumns = columns.stream().map(MeterstoreColumnHandle.class::cast).toList();
        // what the dynamic filter knows by now (e.g. the meters of a join's build side) narrows both tiers' reads
        TupleDomain<MeterstoreColumnHandle> predicate = handle.constraint()
                .intersect(dynamicFilter.getCurrentPredicate().transformKeys(MeterstoreColumnHandle.class::cast));
        if (predicate.isNone()) {
            return new EmptyPageSource();
        }
        ConnectorPageSource pageSource = switch (split) {
            case HotSplit hotSplit -> new HotPageSource(tables.connectPostgres(), hotSplit, meterstoreColumns, predicate, tables.hotFetchRows());
            case ColdSplit coldSplit -> coldPageSources.createPageSource(session, coldSplit, meterstoreColumns, predicate, memoryContext);
            default -> throw new IllegalArgumentException("Unknown split " + split);
        };
        // a pushed LIMIT: the hot statement already carries it; a cold split stops reading once it has that many rows
        return handle.limit().isPresent() ? new LimitingPageSource(pageSource, handle.limit().getAsLong()) : pageSource;
    }
}
