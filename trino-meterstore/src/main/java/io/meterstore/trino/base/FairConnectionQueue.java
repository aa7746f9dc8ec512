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
 * less, not behind every split a month's aggregation queued before it.
 */
final class FairConnectionQueue
{
    private static final Comparator<QueryTurns> SERVED_FIRST = Comparator.<QueryTurns>comparingInt(query -> query.held).thenComparingLong(query -> query.lastGrant);

    private final int turns;
    // the queries holding a turn or waiting for one, in the order they came: of two never served, the first comes first
    private final Map<String, QueryTurns> queries = new LinkedHashMap<>();
    private int held;
    private long grants;

    FairConnectionQueue(int turns)
    {
        checkArgument(turns > 0, "turns is not positive: %s", turns);
        this.turns = turns;
    }

    /**
     * Runs {@code start} with a turn for {@code queryId}: at once while one is free, else once the query's turn comes.
     * {@code start} must give the turn back. A waiter that is done by then (a split closed before its turn, a query
     * cancelled) is passed over.
     */
    void take(String queryId, CompletableFuture<?> waiter, Consumer<Turn> start)
    {
        requireNonNull(queryId, "queryId is null");
        requireNonNull(waiter, "waiter is null");
        requireNonNull(start, "start is null");
        Turn turn;
        synchronized (this) {
            QueryTurns query = queries.computeIfAbsent(queryId, QueryTurns::new);
            if (held == turns) {
                query.waiting.add(new Waiter(waiter, start));
                return;
            }
            turn = grant(query);
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

    private void giveBack(String queryId)
    {
        List<Runnable> next = new ArrayList<>();
        synchronized (this) {
            QueryTurns query = queries.get(queryId);
            query.held--;
            held--;
            forget(query);
            while (held < turns) {
                Optional<QueryTurns> fewest = nextServed();
                if (fewest.isEmpty()) {
                    break;
                }
                Waiter waiter = fewest.get().waiting.poll();
                Turn turn = grant(fewest.get());
                next.add(() -> waiter.start().accept(turn));
            }
        }
        // outside the lock: the work may give its turn back at once
        next.forEach(Runnable::run);
    }

    /**
     * The waiting query holding the fewest turns, then the one served longest ago: each waiting query gets its turn
     * however many splits another has queued. Forgets the queries whose waiters all gave up before their turn.
     */
    private Optional<QueryTurns> nextServed()
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
            if (fewest.isEmpty() || SERVED_FIRST.compare(query, fewest.get()) < 0) {
                fewest = Optional.of(query);
            }
        }
        return fewest;
    }

    private Turn grant(QueryTurns query)
    {
        query.held++;
        query.lastGrant = ++grants;
        held++;
        return new Turn(query.queryId);
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
            while (!waiting.isEmpty() && waiting.peek().future().isDone()) {
                waiting.poll();
            }
            return !waiting.isEmpty();
        }
    }

    private record Waiter(CompletableFuture<?> future, Consumer<Turn> start) {}

    /** One query's use of one connection; giving it back more than once changes nothing. */
    final class Turn
    {
        private final String queryId;
        private final AtomicBoolean givenBack = new AtomicBoolean();

        private Turn(String queryId)
        {
            this.queryId = queryId;
        }

        void giveBack()
        {
            if (givenBack.compareAndSet(false, true)) {
                FairConnectionQueue.this.giveBack(queryId);
            }
        }
    }
}
