package io.meterstore.core;

import io.meterstore.core.TierSplit.Range;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

final class TestTier
{
    private static final Instant W = Instant.parse("2026-08-20T00:00:00Z");
    private static final Instant START = Instant.parse("2026-08-19T00:00:00Z");
    private static final long W_MICROS = 1_787_184_000_000_000L;

    @Test
    void testTheRule()
    {
        TieringWatermark watermark = TieringWatermark.of(W);
        // a row on the watermark is hot; a microsecond before it, cold
        assertThat(Tier.of(W, watermark)).isEqualTo(Tier.HOT);
        assertThat(Tier.of(W.minusNanos(1_000), watermark)).isEqualTo(Tier.COLD);
        assertThat(Tier.of(W.plusSeconds(900), watermark)).isEqualTo(Tier.HOT);
        assertThat(watermark.isHot(W)).isTrue();
        assertThat(watermark.isHot(W.minusNanos(1_000))).isFalse();
        assertThat(Tier.COLD.holds(W.minusNanos(1_000), W)).isTrue();
        assertThat(Tier.COLD.holds(W, W)).isFalse();
    }

    @Test
    void testRenderings()
    {
        assertThat(Tier.HOT.sql("?")).isEqualTo("\"from\" >= ?");
        assertThat(Tier.COLD.sql("$1::timestamptz")).isEqualTo("\"from\" < $1::timestamptz");
        assertThat(Tier.sqlBetween("?", "?")).isEqualTo("\"from\" >= ? AND \"from\" < ?");

        assertThat(W_MICROS).isEqualTo(W.getEpochSecond() * 1_000_000);
        assertThat(Tier.COLD.iceberg(W).toString()).isEqualTo(Expressions.lessThan("from", W_MICROS).toString());
        assertThat(Tier.HOT.iceberg(W).toString()).isEqualTo(Expressions.greaterThanOrEqual("from", W_MICROS).toString());
        Expression between = Tier.icebergBetween(START, W);
        assertThat(between.toString()).isEqualTo(Expressions.and(Expressions.greaterThanOrEqual("from", W_MICROS - 86_400_000_000L), Expressions.lessThan("from", W_MICROS)).toString());

        assertThat(Tier.COLD.range(W)).isEqualTo(new Range(Optional.empty(), Optional.of(W)));
        assertThat(Tier.HOT.range(W)).isEqualTo(new Range(Optional.of(W), Optional.empty()));
    }

    @Test
    void testRanges()
    {
        Range day = new Range(Optional.of(START), Optional.of(W));
        assertThat(day.contains(START)).isTrue();
        assertThat(day.contains(W)).isFalse();
        assertThat(day.intersect(Tier.COLD.range(W))).isEqualTo(day);
        assertThat(day.intersect(Tier.HOT.range(W)).isEmpty()).isTrue();
        assertThat(Range.ALL.intersect(day)).isEqualTo(day);
        assertThat(day.intersect(Range.ALL)).isEqualTo(day);

        // a range enclosing every cold instant has no lower bound and reaches W
        assertThat(Range.ALL.encloses(Tier.COLD.range(W))).isTrue();
        assertThat(new Range(Optional.empty(), Optional.of(W)).encloses(Tier.COLD.range(W))).isTrue();
        assertThat(new Range(Optional.empty(), Optional.of(W.minusNanos(1_000))).encloses(Tier.COLD.range(W))).isFalse();
        assertThat(new Range(Optional.of(START), Optional.empty()).encloses(Tier.COLD.range(W))).isFalse();

        // a partition is below W exactly when it ends at or before W
        assertThat(new HotPartition("p", START, W, false).isBelow(TieringWatermark.of(W))).isTrue();
        assertThat(new HotPartition("p", START, W.plusNanos(1_000), false).isBelow(TieringWatermark.of(W))).isFalse();
        assertThat(new HotPartition("p", START, W, false).contains(W)).isFalse();
        assertThat(new HotPartition("p", START, W, false).contains(START)).isTrue();
    }
}
