package io.meterstore.core;

import io.meterstore.core.TierSplit.Range;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

final class TestTierSplit
{
    private static final Instant W = Instant.parse("2026-08-20T00:00:00Z");
    private static final Instant BEFORE = Instant.parse("2026-08-10T00:00:00Z");
    private static final Instant AFTER = Instant.parse("2026-08-25T00:00:00Z");
    // a span of a few days around the watermarks, so bounds and watermarks often fall close together or coincide
    private static final long SPAN_MICROS = 5L * 86_400 * 1_000_000;
    private static final Instant BASE = Instant.parse("2026-08-18T00:00:00Z");

    @Test
    void testExamples()
    {
        TieringWatermark watermark = TieringWatermark.of(W);
        assertThat(TierSplit.of(Range.ALL, watermark))
                .isEqualTo(new TierSplit(Optional.of(new Range(Optional.empty(), Optional.of(W))), Optional.of(new Range(Optional.of(W), Optional.empty()))));
        // entirely cold, entirely hot
        assertThat(TierSplit.of(range(BEFORE, W), watermark)).isEqualTo(new TierSplit(Optional.of(range(BEFORE, W)), Optional.empty()));
        assertThat(TierSplit.of(range(W, AFTER), watermark)).isEqualTo(new TierSplit(Optional.empty(), Optional.of(range(W, AFTER))));
        // across the boundary
        assertThat(TierSplit.of(range(BEFORE, AFTER), watermark)).isEqualTo(new TierSplit(Optional.of(range(BEFORE, W)), Optional.of(range(W, AFTER))));
        // an empty query range reads nothing
        assertThat(TierSplit.of(range(AFTER, BEFORE), watermark)).isEqualTo(new TierSplit(Optional.empty(), Optional.empty()));
        assertThat(TierSplit.of(range(W, W), watermark)).isEqualTo(new TierSplit(Optional.empty(), Optional.empty()));
        // a fresh table (W = epoch) is all hot
        assertThat(TierSplit.of(range(BEFORE, AFTER), TieringWatermark.EPOCH)).isEqualTo(new TierSplit(Optional.empty(), Optional.of(range(BEFORE, AFTER))));
    }

    @Test
    void testEveryInstantInExactlyOneTier()
    {
        long cases = 0;
        long sampled = 0;
        for (long seed = 1; seed <= 20; seed++) {
            Random random = new Random(seed);
            for (int iteration = 0; iteration < 500; iteration++) {
                TieringWatermark watermark = random.nextInt(20) == 0 ? TieringWatermark.EPOCH : TieringWatermark.of(randomInstant(random));
                Optional<Instant> lower = randomBound(random, watermark);
                Optional<Instant> upper = randomBound(random, watermark);
                Range query = new Range(lower, upper);
                TierSplit split = TierSplit.of(query, watermark);
                cases++;

                // what the split hands out is never an empty range, and each side stays on its side of W
                split.cold().ifPresent(cold -> {
                    assertThat(cold.isEmpty()).isFalse();
                    assertThat(cold.upper()).isPresent();
                    assertThat(cold.upper().get()).isBeforeOrEqualTo(watermark.instant());
                });
                split.hot().ifPresent(hot -> {
                    assertThat(hot.isEmpty()).isFalse();
                    assertThat(hot.lower()).isPresent();
                    assertThat(hot.lower().get()).isAfterOrEqualTo(watermark.instant());
                });

                for (Instant instant : samples(random, query, watermark)) {
                    sampled++;
                    boolean inQuery = query.contains(instant);
                    boolean cold = split.coldContains(instant);
                    boolean hot = split.hotContains(instant);
                    String description = "seed %s: %s in %s split at %s: cold %s, hot %s".formatted(seed, instant, query, watermark, cold, hot);
                    if (inQuery) {
                        assertThat(cold ^ hot).as(description).isTrue();
                    }
                    else {
                        assertThat(cold || hot).as(description).isFalse();
                    }
                    if (cold) {
                        assertThat(instant.isBefore(watermark.instant())).as(description).isTrue();
                        assertThat(watermark.isHot(instant)).as(description).isFalse();
                    }
                    if (hot) {
                        assertThat(instant.isBefore(watermark.instant())).as(description).isFalse();
                        assertThat(watermark.isHot(instant)).as(description).isTrue();
                    }
                }
            }
        }
        assertThat(cases).isEqualTo(10_000);
        assertThat(sampled).isGreaterThan(200_000);
    }

    private static List<Instant> samples(Random random, Range query, TieringWatermark watermark)
    {
        List<Instant> samples = new ArrayList<>();
        Instant boundary = watermark.instant();
        samples.add(boundary);
        samples.add(boundary.minusNanos(1_000));
        samples.add(boundary.plusNanos(1_000));
        for (Optional<Instant> bound : List.of(query.lower(), query.upper())) {
            bound.ifPresent(instant -> {
                samples.add(instant);
                samples.add(instant.minusNanos(1_000));
                samples.add(instant.plusNanos(1_000));
            });
        }
        samples.add(Instant.EPOCH);
        samples.add(Instant.EPOCH.minusNanos(1_000));
        samples.add(Instant.parse("2000-01-01T00:00:00Z"));
        samples.add(Instant.parse("2100-01-01T00:00:00Z"));
        for (int index = 0; index < 10; index++) {
            samples.add(randomInstant(random));
        }
        return samples;
    }

    private static Optional<Instant> randomBound(Random random, TieringWatermark watermark)
    {
        return switch (random.nextInt(6)) {
            case 0 -> Optional.empty();
            // exactly on the watermark, or a microsecond to either side of it
            case 1 -> Optional.of(watermark.instant());
            case 2 -> Optional.of(watermark.instant().plusNanos((random.nextInt(3) - 1) * 1_000L));
            default -> Optional.of(randomInstant(random));
        };
    }

    private static Instant randomInstant(Random random)
    {
        // microsecond precision, and often on a quarter-hour like real interval starts
        long micros = random.nextLong(SPAN_MICROS);
        if (random.nextBoolean()) {
            micros -= micros % (15L * 60 * 1_000_000);
        }
        return BASE.plusNanos(micros * 1_000);
    }

    private static Range range(Instant lower, Instant upper)
    {
        return new Range(Optional.of(lower), Optional.of(upper));
    }
}
