package io.meterstore.trino.completeness;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import io.meterstore.core.ChannelCompleteness;
import io.meterstore.core.CompletenessPeriod;
import io.airlift.slice.Slice;
import io.meterstore.core.CompletenessTally;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.TableColumns;
import io.meterstore.trino.base.MeterstoreMetrics;
import io.meterstore.trino.base.PostgresConnectionPool;
import io.meterstore.trino.hot.HotSplit;
import io.trino.spi.Page;
import io.trino.spi.PageBuilder;
import io.trino.spi.TrinoException;
import io.trino.spi.block.BlockBuilder;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.ConnectorSplit;
import io.trino.spi.connector.SourcePage;
import io.trino.spi.metrics.Metrics;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static com.google.common.collect.ImmutableSet.toImmutableSet;
import static io.airlift.slice.Slices.utf8Slice;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_HOT_READ_FAILED;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.BooleanType.BOOLEAN;
import static io.trino.spi.type.DateType.DATE;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * Computes a completeness report: counts the winners of every split of the period per reading, grid and day,
 * {@code readers} splits at a time on the connector's executor (a hot partition in PostgreSQL, {@link HotWinnerCounts};
 * a cold split as its key columns stream past, {@link WinnerCounter}), and rolls the counts up on the metering calendar. The engine's driver is not held meanwhile: {@link #isBlocked} waits for the reads, as
 * trino-base-jdbc's page source waits for its statement. Rows go out once every read has been counted.
 */
public final class CompletenessPageSource
        implements ConnectorPageSource
{
    private final List<CompletenessColumnHandle> columns;
    private final TableColumns tableColumns;
    private final CompletenessPeriod period;
    private final Optional<Instant> seenSince;
    private final Optional<Set<Slice>> maloIds;
    private final Optional<Set<Slice>> obisCodes;
    private final WinnersReader reader;
    private final HotWinnerCounts hotCounts;
    private final ExecutorService executor;
    private final int readers;
    private final Queue<ConnectorSplit> pending;
    private final int splits;
    private final CompletenessTally tally = new CompletenessTally();
    private final AtomicLong rowsCounted = new AtomicLong();
    private final AtomicLong hotCountsRead = new AtomicLong();
    private final int poolConnections;
    // each hot partition's wait for a PostgreSQL connection
    private final AtomicReference<Metrics> connectionWaits = new AtomicReference<>(Metrics.EMPTY);
    private final List<ConnectorPageSource> open = new ArrayList<>();
    private volatile boolean closed;
    private CompletableFuture<Void> counted;
    private Iterator<ChannelCompleteness> report;
    private long completedPositions;
    private long startNanos;
    private long readTimeNanos;
    private boolean finished;

    /**
     * @param reader opens the resolved read of one cold split
     * @param postgres the connections a hot partition's winners are counted with, in PostgreSQL
     * @param queryId the report's query, whose turn at the pool's connections the hot partitions take
     * @param readers how many splits are read at once
     */
    public CompletenessPageSource(CompletenessTableHandle table, CompletenessSplit split, List<CompletenessColumnHandle> columns, WinnersReader reader, PostgresConnectionPool postgres, String queryId, ExecutorService executor, int readers)
    {
        requireNonNull(table, "table is null");
        requireNonNull(split, "split is null");
        this.columns = ImmutableList.copyOf(requireNonNull(columns, "columns is null"));
        this.period = table.period();
        this.seenSince = table.seenSince();
        this.maloIds = listed(table, ReadingsColumn.MALO_ID);
        this.obisCodes = listed(table, ReadingsColumn.OBIS_CODE);
        this.reader = requireNonNull(reader, "reader is null");
        this.tableColumns = table.readings().columns();
        this.hotCounts = new HotWinnerCounts(postgres, queryId, period, seenSince, maloIds, obisCodes, tableColumns.keyNames());
        this.poolConnections = postgres.maxConnections();
        this.executor = requireNonNull(executor, "executor is null");
        this.readers = Math.max(1, Math.min(readers, split.reads().size()));
        this.pending = new ConcurrentLinkedQueue<>(split.reads());
        this.splits = split.reads().size();
    }

    @Override
    public CompletableFuture<?> isBlocked()
    {
        if (counted == null || counted.isDone()) {
            return NOT_BLOCKED;
        }
        return counted;
    }

    @Override
    public SourcePage getNextSourcePage()
    {
        if (finished) {
            return null;
        }
        if (counted == null) {
            startNanos = System.nanoTime();
            List<CompletableFuture<Void>> reads = new ArrayList<>();
            for (int index = 0; index < readers; index++) {
                reads.add(CompletableFuture.runAsync(this::readPending, executor));
            }
            counted = CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new));
            return null;
        }
        if (!counted.isDone()) {
            return null;
        }
        if (report == null) {
            try {
                counted.join();
            }
            catch (RuntimeException e) {
                Throwable cause = e.getCause() == null ? e : e.getCause();
                if (cause instanceof TrinoException trinoException) {
                    throw trinoException;
                }
                throw new TrinoException(METERSTORE_HOT_READ_FAILED, "Cannot count the readings of the completeness report: " + cause.getMessage(), cause);
            }
            readTimeNanos = System.nanoTime() - startNanos;
            report = tally.rollUp(period).iterator();
        }
        PageBuilder page = new PageBuilder(columns.stream().map(CompletenessColumnHandle::type).toList());
        while (report.hasNext() && !page.isFull()) {
            ChannelCompleteness row = report.next();
            page.declarePosition();
            for (int channel = 0; channel < columns.size(); channel++) {
                write(row, columns.get(channel), page.getBlockBuilder(channel));
            }
        }
        finished = !report.hasNext();
        Page built = page.build();
        completedPositions += built.getPositionCount();
        return SourcePage.create(built);
    }

    // one reader: takes splits until none is left, counting each into a tally of its own, then adds it to the report's
    private void readPending()
    {
        WinnerCounter counter = new WinnerCounter(period, seenSince, maloIds, obisCodes, tableColumns);
        for (ConnectorSplit split = pending.poll(); split != null && !closed; split = pending.poll()) {
            if (split instanceof HotSplit hotSplit) {
                // a hot partition is counted where it lies: PostgreSQL returns the counts per reading, grid and day
                long waitNanos = hotCounts.count(hotSplit, counter);
                connectionWaits.accumulateAndGet(MeterstoreMetrics.connectionWait(poolConnections, waitNanos), Metrics::mergeWith);
                continue;
            }
            ConnectorPageSource source = reader.open(split, counter.columns());
            register(source);
            try {
                while (!closed && !source.isFinished()) {
                    SourcePage page = source.getNextSourcePage();
                    if (page != null) {
                        counter.add(page);
                    }
                    else {
                        // a source that is not ready yet (a Parquet read in flight) is waited for on this thread
                        source.isBlocked().join();
                    }
                }
            }
            finally {
                unregister(source);
                closeQuietly(source);
            }
        }
        rowsCounted.addAndGet(counter.rows());
        hotCountsRead.addAndGet(counter.groups());
        synchronized (tally) {
            tally.addAll(counter.tally());
        }
    }

    // the values of a column the report lists, as the read's constraint carries them
    private static Optional<Set<Slice>> listed(CompletenessTableHandle table, ReadingsColumn column)
    {
        return table.readings().constraint().getDomains().orElseThrow().entrySet().stream()
                .filter(entry -> entry.getKey().is(column))
                .findFirst()
                .map(entry -> entry.getValue().getValues().getDiscreteSet().stream().map(Slice.class::cast).collect(toImmutableSet()));
    }

    private void write(ChannelCompleteness row, CompletenessColumnHandle handle, BlockBuilder builder)
    {
        if (handle.keyColumn().isPresent()) {
            VARCHAR.writeSlice(builder, utf8Slice(row.keyValues().get(tableColumns.keyNames().indexOf(handle.keyColumn().get()))));
            return;
        }
        switch (handle.column().orElseThrow()) {
            case MALO_ID -> VARCHAR.writeSlice(builder, utf8Slice(row.maloId()));
            case OBIS_CODE -> VARCHAR.writeSlice(builder, utf8Slice(row.obisCode()));
            case SPARTE -> VARCHAR.writeSlice(builder, utf8Slice(row.sparte().name()));
            case RESOLUTION -> VARCHAR.writeSlice(builder, utf8Slice(row.resolution()));
            case EXPECTED -> BIGINT.writeLong(builder, row.expected());
            case ACTUAL -> BIGINT.writeLong(builder, row.actual());
            case MISSING -> BIGINT.writeLong(builder, row.missing());
            case SURPLUS -> BIGINT.writeLong(builder, row.surplus());
            case FIRST_GAP -> row.firstGap().ifPresentOrElse(day -> DATE.writeLong(builder, day.toEpochDay()), builder::appendNull);
            case SUBSTITUTED -> BIGINT.writeLong(builder, row.substituted());
            case NOT_BILLABLE -> BIGINT.writeLong(builder, row.notBillable());
            case COMPLETE -> BOOLEAN.writeBoolean(builder, row.complete());
            case MEASURABLE -> BOOLEAN.writeBoolean(builder, row.measurable());
        }
    }

    @Override
    public Metrics getMetrics()
    {
        return MeterstoreMetrics.counts(ImmutableMap.of(
                MeterstoreMetrics.COMPLETENESS_SPLITS_READ, (long) splits,
                MeterstoreMetrics.COMPLETENESS_ROWS_COUNTED, rowsCounted.get(),
                MeterstoreMetrics.COMPLETENESS_HOT_COUNTS_READ, hotCountsRead.get()))
                .mergeWith(connectionWaits.get());
    }

    @Override
    public long getCompletedBytes()
    {
        return 0;
    }

    @Override
    public OptionalLong getCompletedPositions()
    {
        return OptionalLong.of(completedPositions);
    }

    @Override
    public long getReadTimeNanos()
    {
        return readTimeNanos;
    }

    @Override
    public boolean isFinished()
    {
        return finished;
    }

    @Override
    public long getMemoryUsage()
    {
        long memory;
        synchronized (tally) {
            memory = tally.estimatedBytes();
        }
        synchronized (open) {
            for (ConnectorPageSource source : open) {
                memory += source.getMemoryUsage();
            }
        }
        return memory;
    }

    @Override
    public void close()
    {
        // the readers stop after their current page and close what they opened
        closed = true;
        finished = true;
    }

    private void register(ConnectorPageSource source)
    {
        synchronized (open) {
            open.add(source);
        }
    }

    private void unregister(ConnectorPageSource source)
    {
        synchronized (open) {
            open.remove(source);
        }
    }

    private static void closeQuietly(ConnectorPageSource source)
    {
        try {
            source.close();
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
