package io.meterstore.trino.base;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

final class TestFairConnectionQueue
{
    @Test
    void testQueriesNeverServedComeInTheOrderTheyCame()
    {
        FairConnectionQueue queue = new FairConnectionQueue(1);
        List<FairConnectionQueue.Turn> held = new ArrayList<>();
        List<String> served = new ArrayList<>();
        queue.take("heavy", new CompletableFuture<>(), held::add);
        for (String query : List.of("first", "second", "third")) {
            queue.take(query, new CompletableFuture<>(), turn -> {
                served.add(query);
                held.add(turn);
            });
        }
        assertThat(queue.waiting()).isEqualTo(3);
        assertThat(queue.waiting("first")).isEqualTo(1);
        assertThat(queue.waiting("heavy")).isZero();
        for (int turn = 0; turn < 3; turn++) {
            held.removeFirst().giveBack();
        }
        assertThat(served).containsExactly("first", "second", "third");
    }

    @Test
    void testQueryWhoseSplitsGaveUpIsForgotten()
    {
        FairConnectionQueue queue = new FairConnectionQueue(1);
        List<FairConnectionQueue.Turn> held = new ArrayList<>();
        queue.take("heavy", new CompletableFuture<>(), held::add);
        // a query cancelled while its two splits waited
        CompletableFuture<Void> first = new CompletableFuture<>();
        CompletableFuture<Void> second = new CompletableFuture<>();
        queue.take("cancelled", first, _ -> { throw new AssertionError("A split that gave up got a turn"); });
        queue.take("cancelled", second, _ -> { throw new AssertionError("A split that gave up got a turn"); });
        assertThat(queue.waiting("cancelled")).isEqualTo(2);
        first.cancel(false);
        assertThat(queue.waiting("cancelled")).isEqualTo(1);
        second.cancel(false);
        assertThat(queue.waiting()).isZero();
        assertThat(queue.waiting("cancelled")).isZero();
        assertThat(queue.queries()).isEqualTo(2);

        held.removeFirst().giveBack();
        // nobody waits: the turn stays free, and neither query is remembered
        assertThat(queue.queries()).isZero();
        assertThat(queue.waiting("cancelled")).isZero();
        queue.take("light", new CompletableFuture<>(), held::add);
        assertThat(held).hasSize(1);
    }
}
