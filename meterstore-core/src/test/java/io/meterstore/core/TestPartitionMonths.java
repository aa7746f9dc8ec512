package io.meterstore.core;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.time.YearMonth;

import static org.assertj.core.api.Assertions.assertThat;

final class TestPartitionMonths
{
    @Test
    void testMonthsOfUtc()
    {
        YearMonth february = YearMonth.of(2024, 2);
        assertThat(PartitionMonths.start(february)).isEqualTo(Instant.parse("2024-02-01T00:00:00Z"));
        // a leap year's February ends where March starts
        assertThat(PartitionMonths.end(february)).isEqualTo(Instant.parse("2024-03-01T00:00:00Z"));
        assertThat(PartitionMonths.end(YearMonth.of(2024, 12))).isEqualTo(Instant.parse("2025-01-01T00:00:00Z"));
        // a month holds its start, not its end; German midnight on 1 March is still February in UTC
        assertThat(PartitionMonths.of(Instant.parse("2024-02-01T00:00:00Z"))).isEqualTo(february);
        assertThat(PartitionMonths.of(Instant.parse("2024-02-29T23:00:00Z"))).isEqualTo(february);
        assertThat(PartitionMonths.of(Instant.parse("2024-03-01T00:00:00Z"))).isEqualTo(YearMonth.of(2024, 3));
    }

    @Test
    void testPartitionValues()
    {
        // Iceberg's month transform: months since January 1970
        assertThat(PartitionMonths.ofPartitionValue(0)).isEqualTo(YearMonth.of(1970, 1));
        assertThat(PartitionMonths.ofPartitionValue(649)).isEqualTo(YearMonth.of(2024, 2));
        assertThat(PartitionMonths.ofPartitionValue(-1)).isEqualTo(YearMonth.of(1969, 12));
        assertThat(PartitionMonths.iceberg(YearMonth.of(2024, 2)).toString())
                .isEqualTo(Tier.icebergBetween(Instant.parse("2024-02-01T00:00:00Z"), Instant.parse("2024-03-01T00:00:00Z")).toString());
    }
}
