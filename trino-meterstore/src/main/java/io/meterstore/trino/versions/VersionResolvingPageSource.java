package io.meterstore.trino.versions;

import io.airlift.slice.Slice;
import io.meterstore.core.ResolutionRule;
import io.trino.spi.Page;
import io.trino.spi.block.Block;
import io.trino.spi.block.Int128ArrayBlock;
import io.trino.spi.block.VariableWidthBlock;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.SourcePage;
import io.trino.spi.metrics.Metrics;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;

import static io.meterstore.trino.base.MeterstoreTypes.epochMicros;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * Resolves versions in one pass over a split whose rows arrive sorted by (malo_id, obis_code, "from", the key's other
 * columns, version): all
 * versions of a merge key are adjacent, so the winner of a key is known when the next key starts, and nothing but the
 * key being resolved is held. Versions recorded after the AS OF instant are dropped before they can win.
 * <p>
 * A key's versions may straddle two pages; its winner is then carried over as a one-row page. Rows of the query's
 * columns are selected, never copied.
 */
public final class VersionResolvingPageSource
        implements ConnectorPageSource
{
    private final ConnectorPageSource delegate;
    private final VersionResolution.Layout layout;
    private final boolean resolve;
    private final long knownAtEpochMicros;
    private final int[] outputChannels;
    private final ArrayDeque<Page> ready = new ArrayDeque<>();

    // the merge key whose versions are being read, and its best version per version scope so far
    private boolean runOpen;
    private long runFrom;
    // the key's identifiers, once it has come over from an earlier page
    private Slice runMaloId;
    private Slice runObisCode;
    // the key's other columns (melo_id, identity columns) of a key come over from an earlier page; none for the default key
    private final int[] keyChannels;
    private final Slice[] runKey;
    private final List<Candidate> runCandidates = new ArrayList<>();

    private boolean delegateFinished;
    private long completedPositions;

    public VersionResolvingPageSource(ConnectorPageSource delegate, VersionResolution resolution, VersionResolution.Layout layout)
    {
        this.delegate = requireNonNull(delegate, "delegate is null");
        this.layout = requireNonNull(layout, "layout is null");
        this.resolve = resolution.resolve();
        this.knownAtEpochMicros = resolution.knownAtEpochMicros().orElse(Long.MAX_VALUE);
        this.outputChannels = IntStream.range(0, layout.outputChannels()).toArray();
        this.keyChannels = layout.keyChannels();
        this.runKey = new Slice[keyChannels.length];
    }

    @Override
    public SourcePage getNextSourcePage()
    {
        while (ready.isEmpty() && !delegateFinished) {
            SourcePage page = delegate.getNextSourcePage();
            if (page == null) {
                if (!delegate.isFinished()) {
                    return null;
                }
                delegateFinished = true;
                finishRun(new int[0], 0);
                break;
            }
            if (resolve) {
                resolve(page);
            }
            else {
                filterKnownAt(page);
            }
        }
        Page page = ready.poll();
        if (page == null) {
            return null;
        }
        completedPositions += page.getPositionCount();
        return SourcePage.create(page);
    }

    private void filterKnownAt(SourcePage page)
    {
        Block recordedAt = page.getBlock(layout.recordedAt());
        int[] selected = new int[page.getPositionCount()];
        int count = 0;
        for (int position = 0; position < page.getPositionCount(); position++) {
            if (epochMicros(recordedAt, position) <= knownAtEpochMicros) {
                selected[count++] = position;
            }
        }
        emit(page.getColumns(outputChannels), selected, count);
    }

    private void resolve(SourcePage page)
    {
        Block maloIds = page.getBlock(layout.maloId());
        Block obisCodes = page.getBlock(layout.obisCode());
        Block froms = page.getBlock(layout.from());
        Block scopes = page.getBlock(layout.versionScope());
        // a tier in version order has neither read: its rows are already known at the AS OF instant, and arrive in order
        Optional<Block> versions = layout.inVersionOrder() ? Optional.empty() : Optional.of(page.getBlock(layout.version()));
        Optional<Block> recordedAts = layout.inVersionOrder() ? Optional.empty() : Optional.of(page.getBlock(layout.recordedAt()));
        Page output = page.getColumns(outputChannels);

        int[] selected = new int[page.getPositionCount()];
        int count = 0;
        // the first row of the key being read while it is in this page; -1 while the key came over from the last page
        int runStart = -1;
        for (int position = 0; position < page.getPositionCount(); position++) {
            long recordedAt = recordedAts.isEmpty() ? Long.MIN_VALUE : epochMicros(recordedAts.get(), position);
            if (recordedAt > knownAtEpochMicros) {
                // not yet known at the AS OF instant: it neither shows nor hides an older version
                continue;
            }
            long from = epochMicros(froms, position);
            boolean sameKey = runOpen && from == runFrom && (runStart >= 0
                    ? sameValue(maloIds, position, runStart) && sameValue(obisCodes, position, runStart)
                    : equalsValue(maloIds, position, runMaloId) && equalsValue(obisCodes, position, runObisCode))
                    && (keyChannels.length == 0 || sameKeyColumns(page, position, runStart));
            if (!sameKey) {
                count = finishRun(selected, count);
                runOpen = true;
                runFrom = from;
                runStart = position;
            }
            offer(scopes, versions, position, recordedAt);
        }
        if (runOpen) {
            // the last key may go on in the next page: carry its key and its winners as one-row pages, not this page
            if (runStart >= 0) {
                runMaloId = VARCHAR.getSlice(maloIds, runStart).copy();
                runObisCode = VARCHAR.getSlice(obisCodes, runStart).copy();
                for (int index = 0; index < keyChannels.length; index++) {
                    runKey[index] = VARCHAR.getSlice(page.getBlock(keyChannels[index]), runStart).copy();
                }
            }
            for (int index = 0; index < runCandidates.size(); index++) {
                Candidate candidate = runCandidates.get(index);
                if (candidate.row().isEmpty()) {
                    runCandidates.set(index, candidate.carried(VARCHAR.getSlice(scopes, candidate.position()).copy(), output.getSingleValuePage(candidate.position())));
                }
            }
        }
        emit(output, selected, count);
    }

    /**
     * Offers the version at {@code position} to the key being read: it wins its version scope if it beats the best so far,
     * or, without {@code versions} (a tier in version order), if it comes later.
     */
    private void offer(Block scopes, Optional<Block> versions, int position, long recordedAt)
    {
        long versionHigh = 0;
        long versionLow = 0;
        if (versions.isPresent()) {
            Int128ArrayBlock versionValues = (Int128ArrayBlock) versions.get().getUnderlyingValueBlock();
            int versionPosition = versions.get().getUnderlyingValuePosition(position);
            versionHigh = versionValues.getInt128High(versionPosition);
            versionLow = versionValues.getInt128Low(versionPosition);
        }
        for (int index = 0; index < runCandidates.size(); index++) {
            Candidate best = runCandidates.get(index);
            boolean sameScope = best.row().isEmpty()
                    ? sameValue(scopes, position, best.position())
                    : equalsValue(scopes, position, best.scope());
            if (sameScope) {
                if (versions.isEmpty() || ResolutionRule.compare(versionHigh, versionLow, recordedAt, best.versionHigh(), best.versionLow(), best.recordedAtEpochMicros()) > 0) {
                    runCandidates.set(index, new Candidate(null, versionHigh, versionLow, recordedAt, position, Optional.empty()));
                }
                return;
            }
        }
        // a key delivered under two version scopes has a winner in each, as the ROW_NUMBER definition has
        runCandidates.add(new Candidate(null, versionHigh, versionLow, recordedAt, position, Optional.empty()));
    }

    /** Emits the winners of the key being read; those in the current page become selected positions. */
    private int finishRun(int[] selected, int count)
    {
        for (Candidate winner : runCandidates) {
            if (winner.row().isPresent()) {
                ready.add(winner.row().get());
            }
            else {
                selected[count++] = winner.position();
            }
        }
        runCandidates.clear();
        runOpen = false;
        return count;
    }

    private void emit(Page output, int[] selected, int count)
    {
        if (count == output.getPositionCount()) {
            ready.add(output);
        }
        else if (count > 0) {
            ready.add(output.getPositions(selected, 0, count));
        }
    }

    /** Whether the key's other columns at {@code position} are those of the key being read, which started at {@code runStart} (-1: came over). */
    private boolean sameKeyColumns(SourcePage page, int position, int runStart)
    {
        for (int index = 0; index < keyChannels.length; index++) {
            Block block = page.getBlock(keyChannels[index]);
            if (!(runStart >= 0 ? sameValue(block, position, runStart) : equalsValue(block, position, runKey[index]))) {
                return false;
            }
        }
        return true;
    }

    /** Whether two positions of a varchar block hold the same bytes, without copying either. */
    private static boolean sameValue(Block block, int left, int right)
    {
        int leftPosition = block.getUnderlyingValuePosition(left);
        int rightPosition = block.getUnderlyingValuePosition(right);
        if (leftPosition == rightPosition) {
            // one dictionary entry, or one row
            return true;
        }
        VariableWidthBlock values = (VariableWidthBlock) block.getUnderlyingValueBlock();
        return values.getRawSlice().equals(values.getRawSliceOffset(leftPosition), values.getSliceLength(leftPosition),
                values.getRawSlice(), values.getRawSliceOffset(rightPosition), values.getSliceLength(rightPosition));
    }

    private static boolean equalsValue(Block block, int position, Slice value)
    {
        VariableWidthBlock values = (VariableWidthBlock) block.getUnderlyingValueBlock();
        int valuePosition = block.getUnderlyingValuePosition(position);
        return values.getRawSlice().equals(values.getRawSliceOffset(valuePosition), values.getSliceLength(valuePosition), value, 0, value.length());
    }

    /**
     * The best version of a key within one version scope so far.
     *
     * @param scope the version scope of a carried version; read from the page while {@code row} is empty
     * @param position its position in the page being read, while {@code row} is empty
     * @param row the version carried over from an earlier page, as a one-row page of the query's columns
     */
    private record Candidate(Slice scope, long versionHigh, long versionLow, long recordedAtEpochMicros, int position, Optional<Page> row)
    {
        Candidate carried(Slice scope, Page row)
        {
            return new Candidate(scope, versionHigh, versionLow, recordedAtEpochMicros, -1, Optional.of(row));
        }
    }

    @Override
    public boolean isFinished()
    {
        return delegateFinished && ready.isEmpty();
    }

    @Override
    public CompletableFuture<?> isBlocked()
    {
        return delegate.isBlocked();
    }

    @Override
    public long getCompletedBytes()
    {
        return delegate.getCompletedBytes();
    }

    @Override
    public OptionalLong getCompletedPositions()
    {
        return OptionalLong.of(completedPositions);
    }

    @Override
    public long getReadTimeNanos()
    {
        return delegate.getReadTimeNanos();
    }

    @Override
    @SuppressWarnings("deprecation") // forwards the tier's reader memory as the tiers' own page sources do
    public long getMemoryUsage()
    {
        return delegate.getMemoryUsage() + ready.stream().mapToLong(Page::getRetainedSizeInBytes).sum();
    }

    @Override
    public Metrics getMetrics()
    {
        return delegate.getMetrics();
    }

    @Override
    public void close()
            throws IOException
    {
        ready.clear();
        delegate.close();
    }
}
