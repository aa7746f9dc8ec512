package io.meterstore.core;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

final class TestTableStatus
{
    private static final Instant NOW = Instant.parse("2026-03-20T12:00:00Z");
    private static final TieringWatermark WATERMARK = TieringWatermark.of(Instant.parse("2026-03-12T00:00:00Z"));

    @Test
    void testHealthyAsTheRustMeterstoreDefinesIt()
    {
        // a table not written yet is healthy
        assertThat(status(List.of(), List.of()).healthy()).isTrue();
        // partitions, but none reaching past now: writes of now would find none
        TableStatus noneAhead = status(List.of(day("2026-03-12", true), day("2026-03-13", true)), List.of());
        assertThat(noneAhead.partitionsAhead()).isZero();
        assertThat(noneAhead.healthy()).isFalse();
        // one ahead: healthy; a detached one below W is not ahead, whatever its extent
        TableStatus ahead = status(List.of(day("2026-03-11", false), day("2026-03-12", true), day("2026-03-20", true)), List.of());
        assertThat(ahead.partitionsAhead()).isEqualTo(1);
        assertThat(ahead.hotPartitions()).isEqualTo(3);
        assertThat(ahead.healthy()).isTrue();
        // a violation is never healthy
        assertThat(status(List.of(day("2026-03-20", true)), List.of("Partition 'x' is attached below the watermark")).healthy()).isFalse();
    }

    @Test
    void testBehind()
    {
        TableStatus status = status(List.of(), List.of());
        assertThat(status.lag()).isEqualTo(Duration.ofHours(8 * 24 + 12));
        assertThat(status.toleratedLag()).isEqualTo(Duration.ofDays(9));
        assertThat(status.behind()).isFalse();
        assertThat(new TableStatus(status.invariant(), NOW.plus(Duration.ofDays(1)), Duration.ofDays(1), Duration.ofDays(7)).behind()).isTrue();
        // a watermark ahead of the clock is no lag
        assertThat(new TableStatus(status.invariant(), Instant.parse("2026-03-01T00:00:00Z"), Duration.ofDays(1), Duration.ofDays(7)).lag()).isZero();
    }

    private static TableStatus status(List<HotPartition> partitions, List<String> violations)
    {
        return new TableStatus(new InvariantReport("metering.readings", WATERMARK, Optional.of(1L), partitions, violations), NOW, Duration.ofDays(1), Duration.ofDays(7));
    }

    private static HotPartition day(String day, boolean attached)
    {
        Instant start = Instant.parse(day + "T00:00:00Z");
        return new HotPartition("readings_" + day.replace('-', '_') + "_0000", start, start.plus(Duration.ofDays(1)), attached);
    }
}
