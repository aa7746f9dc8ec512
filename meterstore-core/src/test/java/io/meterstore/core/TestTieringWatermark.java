package io.meterstore.core;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.Map;

import static io.meterstore.core.MeterstoreException.Reason.WATERMARK_MALFORMED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class TestTieringWatermark
{
    private static final Instant W = Instant.parse("2026-08-20T00:00:00Z");

    @Test
    void testIsHot()
    {
        TieringWatermark watermark = TieringWatermark.of(W);
        assertThat(watermark.isHot(W)).isTrue();
        assertThat(watermark.isHot(W.plusNanos(1_000))).isTrue();
        assertThat(watermark.isHot(W.minusNanos(1_000))).isFalse();
        assertThat(TieringWatermark.EPOCH.isHot(Instant.EPOCH)).isTrue();
        assertThat(TieringWatermark.EPOCH.isHot(Instant.parse("1969-12-31T23:59:59Z"))).isFalse();
    }

    @Test
    void testSummaryKeys()
    {
        // the Rust MeterStore reads and writes exactly these keys
        assertThat(TieringWatermark.WATERMARK_KEY).isEqualTo("meterstore.tiering_watermark");
        assertThat(TieringWatermark.ROW_COUNT_KEY).isEqualTo("meterstore.row_count");
        assertThat(TieringWatermark.ARCHIVED_RANGE_KEY).isEqualTo("meterstore.archived_range");
        assertThat(TieringWatermark.ARCHIVAL_STEP_KEY).isEqualTo("meterstore.archival_step");
        assertThat(TieringWatermark.ARCHIVED_AT_KEY).isEqualTo("meterstore.archived_at");
    }

    @Test
    void testProperty()
    {
        assertThat(TieringWatermark.of(W).toProperty()).isEqualTo("2026-08-20T00:00:00Z");
        assertThat(TieringWatermark.of(Instant.parse("2026-08-20T00:00:00.123456Z")).toProperty()).isEqualTo("2026-08-20T00:00:00.123456Z");
        for (String property : new String[] {"2026-08-20T00:00:00Z", "2026-08-20T00:00:00.000001Z", "1970-01-01T00:00:00Z"}) {
            assertThat(TieringWatermark.fromSummary(Map.of(TieringWatermark.WATERMARK_KEY, property)).orElseThrow().toProperty()).isEqualTo(property);
        }
        // RFC 3339 with an offset names the same instant
        assertThat(TieringWatermark.fromSummary(Map.of(TieringWatermark.WATERMARK_KEY, "2026-08-20T02:00:00+02:00"))).contains(TieringWatermark.of(W));
    }

    @Test
    void testFromSummary()
    {
        assertThat(TieringWatermark.fromSummary(Map.of())).isEmpty();
        assertThat(TieringWatermark.fromSummary(null)).isEmpty();
        assertThat(TieringWatermark.fromSummary(Map.of("operation", "append", TieringWatermark.ROW_COUNT_KEY, "5"))).isEmpty();
        assertThat(TieringWatermark.fromSummary(Map.of(TieringWatermark.WATERMARK_KEY, "2026-08-20T00:00:00Z"))).contains(TieringWatermark.of(W));
    }

    @Test
    void testMalformed()
    {
        for (String malformed : new String[] {"", "yesterday", "2026-08-20", "2026-08-20T00:00:00", "1755648000"}) {
            assertThatThrownBy(() -> TieringWatermark.fromSummary(Map.of(TieringWatermark.WATERMARK_KEY, malformed)))
                    .isInstanceOfSatisfying(MeterstoreException.class, e -> assertThat(e.reason()).isEqualTo(WATERMARK_MALFORMED))
                    .hasMessage("Snapshot property 'meterstore.tiering_watermark' is '%s', which is not an RFC 3339 instant: repair the snapshot summary or reassert the watermark".formatted(malformed));
        }
    }

    @Test
    void testOrder()
    {
        TieringWatermark earlier = TieringWatermark.of(W);
        TieringWatermark later = TieringWatermark.of(W.plusNanos(1_000));
        assertThat(later.isAfter(earlier)).isTrue();
        assertThat(earlier.isAfter(later)).isFalse();
        assertThat(earlier.isAfter(TieringWatermark.of(W))).isFalse();
        assertThat(earlier).isLessThan(later);
        assertThat(TieringWatermark.EPOCH).isLessThan(earlier);
    }
}
