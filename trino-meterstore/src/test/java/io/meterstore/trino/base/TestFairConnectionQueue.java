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
        queue.take("heavy", false, new CompletableFuture<>(), held::add);
        for (String query : List.of("first", "second", "third")) {
            queue.take(query, false, new CompletableFuture<>(), turn -> {
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
        queue.take("heavy", false, new CompletableFuture<>(), held::add);
        // a query cancelled while its two splits waited
        CompletableFuture<Void> first = new CompletableFuture<>();
        CompletableFuture<Void> second = new CompletableFuture<>();
        queue.take("cancelled", false, first, _ -> { throw new AssertionError("A split that gave up got a turn"); });
        queue.take("cancelled", false, second, _ -> { throw new AssertionError("A split that gave up got a turn"); });
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
        queue.take("light", false, new CompletableFuture<>(), held::add);
        assertThat(held).hasSize(1);
    }
    @Test
    void testOneTurnIsKeptFromScansForShortReads()
    {
        FairConnectionQueue queue = new FairConnectionQueue(3);
        List<FairConnectionQueue.Turn> scans = new ArrayList<>();
        List<String> served = new ArrayList<>();
        // a month's scan queues ten splits: two run, the third turn stays free
        for (int split = 0; split < 10; split++) {
            int number = split;
            queue.take("month", false, new CompletableFuture<>(), turn -> {
                served.add("month " + number);
                scans.add(turn);
            });
        }
        assertThat(scans).hasSize(2);
        assertThat(queue.waiting("month")).isEqualTo(8);
        // a dashboard's one statement over a few meters takes it at once, however many scan splits wait
        List<FairConnectionQueue.Turn> shortReads = new ArrayList<>();
        queue.take("dashboard", true, new CompletableFuture<>(), shortReads::add);
        assertThat(shortReads).hasSize(1);
        // given back, it stays kept: no scan split takes it
        shortReads.removeFirst().giveBack();
        assertThat(queue.waiting("month")).isEqualTo(8);
        assertThat(scans).hasSize(2);
        // a scan's turn given back goes to the next scan split
        scans.removeFirst().giveBack();
        assertThat(served).containsExactly("month 0", "month 1", "month 2");
        // a short read takes the kept turn again; another waits while every turn is held, and comes first when one is given back
        queue.take("dashboard", true, new CompletableFuture<>(), shortReads::add);
        queue.take("other dashboard", true, new CompletableFuture<>(), shortReads::add);
        assertThat(shortReads).hasSize(1);
        scans.removeFirst().giveBack();
        assertThat(shortReads).hasSize(2);
        assertThat(queue.waiting("month")).isEqualTo(7);
    }

    @Test
    void testOneTurnIsNotKept()
    {
        // a pool whose splits hold one connection keeps none from scans
        FairConnectionQueue queue = new FairConnectionQueue(1);
        List<FairConnectionQueue.Turn> held = new ArrayList<>();
        queue.take("scan", false, new CompletableFuture<>(), held::add);
        assertThat(held).hasSize(1);
    }
}
