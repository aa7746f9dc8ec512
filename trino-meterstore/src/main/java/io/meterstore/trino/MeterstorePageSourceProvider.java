package io.meterstore.trino;

import com.google.common.collect.ImmutableList;
import com.google.inject.Inject;
import io.meterstore.core.ErasureKey;
import io.meterstore.core.Tier;
import io.meterstore.trino.base.HiddenColumnsPageSource;
import io.meterstore.trino.base.MeterstoreTables;
import io.meterstore.trino.base.LimitingPageSource;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.meterstore.trino.base.MeterstoreTypes;
import io.meterstore.trino.base.PostgresConnectionPool;
import io.meterstore.trino.cold.ColdFileGroupSplit;
import io.meterstore.trino.cold.ColdPageSourceProvider;
import io.meterstore.trino.cold.ColdPageSourceProvider.ReadOptions;
import io.meterstore.trino.cold.ColdSplit;
import io.meterstore.trino.completeness.CompletenessColumnHandle;
import io.meterstore.trino.completeness.CompletenessPageSource;
import io.meterstore.trino.completeness.CompletenessSplit;
import io.meterstore.trino.completeness.CompletenessTableHandle;
import io.meterstore.trino.completeness.ForCompleteness;
import io.meterstore.trino.handle.MeterstoreTableHandle;
import io.meterstore.trino.hot.ConnectionAwaitingPageSource;
import io.meterstore.trino.hot.HotAggregationPageSource;
import io.meterstore.trino.hot.HotAggregationSplit;
import io.meterstore.trino.hot.HotPageSource;
import io.meterstore.trino.hot.HotSplit;
import io.meterstore.trino.versions.KeyRangePageSource;
import io.meterstore.trino.versions.SortedMergePageSource;
import io.meterstore.trino.versions.VersionResolution;
import io.meterstore.trino.versions.ErasedRowsPageSource;
import io.meterstore.trino.versions.VersionResolvingPageSource;
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
import io.trino.spi.connector.MemoryUsageReportingPageSource;
import io.trino.spi.predicate.TupleDomain;

import java.sql.Connection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.function.Function;

import static java.util.Objects.requireNonNull;

public class MeterstorePageSourceProvider
        implements ConnectorPageSourceProvider
{
    private final PostgresConnectionPool postgres;
    private final ColdPageSourceProvider coldPageSources;
    private final ExecutorService completenessExecutor;
    private final MeterstoreTables tables;

    @Inject
    public MeterstorePageSourceProvider(PostgresConnectionPool postgres, ColdPageSourceProvider coldPageSources, @ForCompleteness ExecutorService completenessExecutor, MeterstoreTables tables)
    {
        this.tables = requireNonNull(tables, "tables is null");
        this.postgres = requireNonNull(postgres, "postgres is null");
        this.coldPageSources = requireNonNull(coldPageSources, "coldPageSources is null");
        this.completenessExecutor = requireNonNull(completenessExecutor, "completenessExecutor is null");
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
        if (split instanceof CompletenessSplit completenessSplit) {
            CompletenessTableHandle completeness = (CompletenessTableHandle) table;
            // each cold split of the winners' read is opened as a query of readings would open it, without a dynamic filter;
            // a hot partition's winners are counted in PostgreSQL
            return new CompletenessPageSource(
                    completeness,
                    completenessSplit,
                    columns.stream().map(CompletenessColumnHandle.class::cast).toList(),
                    (read, readColumns) -> createPageSource(transaction, session, read, completeness.readings(), Optional.empty(), ImmutableList.copyOf(readColumns), DynamicFilter.EMPTY, MemoryContext.NO_LIMIT),
                    postgres,
                    session.getQueryId(),
                    completenessExecutor,
                    Runtime.getRuntime().availableProcessors());
        }
        MeterstoreTableHandle handle = (MeterstoreTableHandle) table;
        if (split instanceof HotAggregationSplit aggregationSplit) {
            // the statement enforces the handle's constraint; a dynamic filter is only an optimisation and is not needed
            return withConnection(session, false, true, connection -> new HotAggregationPageSource(postgres, connection, aggregationSplit, handle.aggregation().orElseThrow(), columns, handle.constraint(), handle.resolution(),
                    handle.columns().keyNames()));
        }
        if (HiddenColumnsPageSource.hasHiddenColumns(columns)) {
            // a split reads one tier at the handle's W: the tier reads the stored columns, the hidden ones are constants
            Tier tier = switch (split) {
                case HotSplit _ -> Tier.HOT;
                case ColdSplit _, ColdFileGroupSplit _ -> Tier.COLD;
                default -> throw new IllegalArgumentException("Unknown split " + split);
            };
            List<ColumnHandle> stored = ImmutableList.copyOf(HiddenColumnsPageSource.storedColumns(columns));
            ConnectorPageSource source = createPageSource(transaction, session, split, table, tableCredentials, stored, dynamicFilter, memoryContext);
            return new HiddenColumnsPageSource(source, columns, tier, handle.watermarkEpochMicros());
        }
        List<MeterstoreColumnHandle> meterstoreColumns = columns.stream().map(MeterstoreColumnHandle.class::cast).toList();
        // a plain cold split of a resolving read holds one version per key (a resolved month's winners, or a file proven
        // to): only AS OF applies to it
        VersionResolution resolution = split instanceof ColdSplit
                ? new VersionResolution(false, handle.resolution().knownAtEpochMicros())
                : handle.resolution();
        // what the dynamic filter knows by now (e.g. the meters of a join's build side) narrows both tiers' reads
        TupleDomain<MeterstoreColumnHandle> predicate = handle.resolution().pruning(handle.constraint()
                .intersect(dynamicFilter.getCurrentPredicate()
                        // a join on a hidden column filters the split's constants, after the read; one on an attribute column
                        // the rows the tiers return, as any predicate on it
                        .filter((column, _) -> column instanceof MeterstoreColumnHandle stored && !stored.attributeColumn())
                        .transformKeys(MeterstoreColumnHandle.class::cast)));
        if (predicate.isNone()) {
            return new EmptyPageSource();
        }
        if (split instanceof HotSplit hotSplit && (!resolution.resolve() || hotSplit.marked())) {
            // the statement itself drops versions recorded after an AS OF instant, or selects a marked partition's
            // winners, and carries a pushed LIMIT
            return withConnection(session, hotSplit.fewMeters(), false, connection -> new HotPageSource(postgres, connection, hotSplit, meterstoreColumns, predicate, resolution));
        }
        if (resolution.isNone() && !handle.erased().isEmpty() && split instanceof ColdSplit coldSplit) {
            // an older snapshot's files still hold erased rows: the key columns are read to drop them, the query's passed on
            VersionResolution.Layout layout = resolution.layout(meterstoreColumns);
            ConnectorPageSource source = coldPageSources.createPageSource(session, coldSplit, layout.columns(), predicate, memoryContext);
            return limited(handle, new ErasedRowsPageSource(source, handle.erased(), erasureKey(), layout, true));
        }
        if (resolution.isNone()) {
            return switch (split) {
                case ColdSplit coldSplit -> limited(handle, coldPageSources.createPageSource(session, coldSplit, meterstoreColumns, predicate, memoryContext));
                default -> throw new IllegalArgumentException("Unknown split " + split);
            };
        }

        // the tier reads the columns resolution needs too; the resolving page source returns the query's columns. A hot
        // partition returns a key's versions in primary-key order, so it is read without version and recorded_at
        // a table whose key has more columns (melo_id, identity columns) resolves by them too
        List<MeterstoreColumnHandle> keyColumns = handle.columns().keyColumns().stream().map(MeterstoreTypes::columnHandle).toList();
        VersionResolution.Layout layout = split instanceof HotSplit
                ? resolution.layoutInVersionOrder(meterstoreColumns, keyColumns)
                : resolution.layout(meterstoreColumns, keyColumns);
        ConnectorPageSource source = switch (split) {
            case HotSplit hotSplit -> withConnection(session, hotSplit.fewMeters(), false, connection -> new HotPageSource(postgres, connection, hotSplit, layout.columns(), predicate, resolution, handle.columns().keyNames()));
            case ColdSplit coldSplit -> coldPageSources.createPageSource(session, coldSplit, layout.columns(), predicate);
            case ColdFileGroupSplit group -> resolutionGroup(session, group, layout, predicate);
            default -> throw new IllegalArgumentException("Unknown split " + split);
        };
        if (!handle.erased().isEmpty() && !(split instanceof HotSplit)) {
            // every version of an erased key goes, so before resolution
            source = new ErasedRowsPageSource(source, handle.erased(), erasureKey(), layout, false);
        }
        // a pushed LIMIT counts winners: a split stops once it has resolved that many
        return limited(handle, new MemoryUsageReportingPageSource(new VersionResolvingPageSource(source, resolution, layout), memoryContext));
    }

    /**
     * The rows of a resolution split's files in merge-key order, limited to the split's part of the key space: its
     * bounds prune row groups, and the rows of a row group shared with another part are dropped here.
     */
    private ConnectorPageSource resolutionGroup(ConnectorSession session, ColdFileGroupSplit group, VersionResolution.Layout layout, TupleDomain<MeterstoreColumnHandle> predicate)
    {
        TupleDomain<MeterstoreColumnHandle> owned = predicate.intersect(group.keys().toTupleDomain());
        if (owned.isNone()) {
            return new EmptyPageSource();
        }
        List<ConnectorPageSource> files = group.files().stream()
                .map(file -> {
                    ConnectorPageSource source = coldPageSources.createPageSource(session, file, layout.columns(), owned, ReadOptions.RESOLVING);
                    return group.keys().isAll() ? source : new KeyRangePageSource(source, group.keys(), layout);
                })
                .toList();
        return files.size() == 1 ? files.getFirst() : new SortedMergePageSource(files, layout);
    }

    private ErasureKey erasureKey()
    {
        // the coordinator refused to plan a read with erasures to hide when no key is configured
        return tables.erasureKey().orElseThrow(() -> new IllegalStateException("meterstore.erasure.hmac-key is not set on this node"));
    }

    /**
     * A hot page source, started once the pool hands out a connection at the query's turn; the driver's thread is free
     * while it waits, and while a long start runs on the pool's threads.
     *
     * @param shortRead one statement over a few meters' rows, which may take the turn kept from scans
     * @param longStart its start runs the whole statement (a pushed-down aggregation), not only its beginning
     */
    private ConnectorPageSource withConnection(ConnectorSession session, boolean shortRead, boolean longStart, Function<Connection, ConnectorPageSource> start)
    {
        Optional<Executor> starter = longStart ? Optional.of(postgres.splitStarters()) : Optional.empty();
        return new ConnectionAwaitingPageSource(postgres.connectionAsync(session.getQueryId(), shortRead), starter, postgres.maxConnections(), start);
    }

    /** A pushed LIMIT: a split stops reading once it has that many rows; Trino still applies the limit. */
    private static ConnectorPageSource limited(MeterstoreTableHandle handle, ConnectorPageSource pageSource)
    {
        return handle.limit().isPresent() ? new LimitingPageSource(pageSource, handle.limit().getAsLong()) : pageSource;
    }
}
