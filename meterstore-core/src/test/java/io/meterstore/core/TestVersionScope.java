package io.meterstore.core;

import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.time.YearMonth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class TestVersionScope
{
    @Test
    void testSettlementMonth()
    {
        // 05:45 CET on 1 March: February for gas, March for electricity
        Instant from = Instant.parse("2026-03-01T04:45:00Z");
        assertThat(VersionScope.of("9900000000003", Sparte.GAS, from)).hasToString("9900000000003:2026-02");
        assertThat(VersionScope.of("9900000000003", Sparte.STROM, from)).hasToString("9900000000003:2026-03");
        assertThat(VersionScope.tryParse("9900000000003:2026-02")).contains(new VersionScope("9900000000003", YearMonth.of(2026, 2)));
        assertThat(VersionScope.tryParse("9900000000003:2026-13")).isEmpty();
        assertThat(VersionScope.tryParse("990000000003:2026-02")).isEmpty();
        assertThatThrownBy(() -> VersionScope.of("99000000000x3", Sparte.GAS, from))
                .hasMessage("Invalid network operator id '99000000000x3': it has exactly 13 digits (a BDEW or DVGW market partner id)");
    }
}
