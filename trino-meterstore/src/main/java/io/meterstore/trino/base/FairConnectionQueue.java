package io.meterstore.trino.base;

import com.google.common.annotations.VisibleForTesting;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * Turns at the connections the pool lends to splits, shared among the queries waiting rather than first come, first
 * served: a turn given back goes to the waiting query that holds the fewest, and among those to the one served longest
 * ago. A dashboard's one split so waits for a connection to come back for each other query waiting that was served
 * less, not behind every split a month's aggregation queued before it. Of two turns or more, one is kept from scans:
 * only a short read (one statement over a few meters' rows) takes the last, so a dashboard finds it free however long
 * the scans' splits hold theirs, unless other short reads hold it.
 */
final class FairConnectionQueue
{
    private static final Comparator<QueryTurns> SERVED_FIRST = Comparator.<QueryTurns>comparingInt(query -> query.held).thenComparingLong(query -> query.lastGrant);

    private final int turns;
    // the turns scans may hold: all but one kept for short reads, when there is more than one
    private final int scanTurns;
    // the queries holding a turn or waiting for one, in the order they came: of two never served, the first comes first
    private final Map<String, QueryTurns> queries = new LinkedHashMap<>();
    private int held;
    private int heldByScans;
    private long grants;

    FairConnectionQueue(int turns)
    {
        checkArgument(turns > 0, "turns is not positive: %s", turns);
        this.turns = turns;
        this.scanTurns = turns > 1 ? turns - 1 : turns;
    }

    /**
     * Runs {@code start} with a turn for {@code queryId}: at once while one is free, else once the query's turn comes.
     * {@code start} must give the turn back. A waiter that is done by then (a split closed before its turn, a query
     * cancelled) is passed over.
     *
     * @param shortRead one statement over a few meters' rows, which may take the turn kept from scans
     */
    void take(String queryId, boolean shortRead, CompletableFuture<?> waiter, Consumer<Turn> start)
    {
        requireNonNull(queryId, "queryId is null");
        requireNonNull(waiter, "waiter is null");
        requireNonNull(start, "start is null");
        Turn turn;
        synchronized (this) {
            QueryTurns query = queries.computeIfAbsent(queryId, QueryTurns::new);
            if (held == turns || (!shortRead && heldByScans == scanTurns)) {
                query.waiting.add(new Waiter(waiter, start, shortRead));
                return;
            }
            turn = grant(query, shortRead);
        }
        start.accept(turn);
    }

    /** The queries holding a turn or waiting for one. */
    @VisibleForTesting
    synchronized int queries()
    {
        return queries.size();
    }

    /** The splits waiting for a turn. */
    synchronized int waiting()
    {
        return queries.values().stream().mapToInt(QueryTurns::waitingSplits).sum();
    }

    /** The splits of {@code queryId} waiting for a turn. */
    synchronized int waiting(String queryId)
    {
        QueryTurns query = queries.get(queryId);
        return query == null ? 0 : query.waitingSplits();
    }

    private void giveBack(String queryId, boolean shortRead)
    {
        List<Runnable> next = new ArrayList<>();
        synchronized (this) {
            QueryTurns query = queries.get(queryId);
            query.held--;
            held--;
            if (!shortRead) {
                heldByScans--;
            }
            forget(query);
            while (held < turns) {
                boolean scansMayTake = heldByScans < scanTurns;
                Optional<QueryTurns> fewest = nextServed(scansMayTake);
                if (fewest.isEmpty()) {
                    break;
                }
                Waiter waiter = fewest.get().takeWaiter(scansMayTake).orElseThrow();
                Turn turn = grant(fewest.get(), waiter.shortRead());
                next.add(() -> waiter.start().accept(turn));
            }
        }
        // outside the lock: the work may give its turn back at once
        next.forEach(Runnable::run);
    }

    /**
     * The waiting query holding the fewest turns, then the one served longest ago, among those with a split that may
     * take the free turn: each waiting query gets its turn however many splits another has queued. Forgets the queries
     * whose waiters all gave up before their turn.
     */
    private Optional<QueryTurns> nextServed(boolean scansMayTake)
    {
        Optional<QueryTurns> fewest = Optional.empty();
        for (Iterator<QueryTurns> iterator = queries.values().iterator(); iterator.hasNext(); ) {
            QueryTurns query = iterator.next();
            if (!query.waits()) {
                if (query.held == 0) {
                    iterator.remove();
                }
                continue;
            }
            if (!scansMayTake && !query.waitsForShortRead()) {
                continue;
            }
            if (fewest.isEmpty() || SERVED_FIRST.compare(query, fewest.get()) < 0) {
                fewest = Optional.of(query);
            }
        }
        return fewest;
    }

    private Turn grant(QueryTurns query, boolean shortRead)
    {
        query.held++;
        query.lastGrant = ++grants;
        held++;
        if (!shortRead) {
            heldByScans++;
        }
        return new Turn(query.queryId, shortRead);
    }

    private void forget(QueryTurns query)
    {
        if (query.held == 0 && !query.waits()) {
            queries.remove(query.queryId);
        }
    }

    private static final class QueryTurns
    {
        private final String queryId;
        private final Queue<Waiter> waiting = new ArrayDeque<>();
        private int held;
        // when the query was last granted a turn, in grants; 0 for one never served
        private long lastGrant;

        private QueryTurns(String queryId)
        {
            this.queryId = queryId;
        }

        private int waitingSplits()
        {
            return (int) waiting.stream().filter(waiter -> !waiter.future().isDone()).count();
        }

        // drops the waiters that gave up (a split closed before its turn, a query cancelled)
        private boolean waits()
        {
            waiting.removeIf(waiter -> waiter.future().isDone());
            return !waiting.isEmpty();
        }

        private boolean waitsForShortRead()
        {
            return waiting.stream().anyMatch(Waiter::shortRead);
        }

        // the first waiting split that may take the free turn, taken out of the queue
        private Optional<Waiter> takeWaiter(boolean scansMayTake)
        {
            for (Iterator<Waiter> iterator = waiting.iterator(); iterator.hasNext(); ) {
                Waiter waiter = iterator.next();
                if (scansMayTake || waiter.shortRead()) {
                    iterator.remove();
                    return Optional.of(waiter);
                }
            }
            return Optional.empty();
        }
    }

    private record Waiter(CompletableFuture<?> future, Consumer<Turn> start, boolean shortRead) {}

    /** One query's use of one connection; giving it back more than once changes nothing. */
    final class Turn
    {
        private final String queryId;
        private final boolean shortRead;
        private final AtomicBoolean givenBack = new AtomicBoolean();

        private Turn(String queryId, boolean shortRead)
        {
            this.queryId = queryId;
            this.shortRead = shortRead;
        }

        void giveBack()
        {
            if (givenBack.compareAndSet(false, true)) {
                FairConnectionQueue.this.giveBack(queryId, shortRead);
            }
        }
    }
}
