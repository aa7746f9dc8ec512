package io.meterstore.core;

import io.meterstore.core.Sparte.MeasurementUnit;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class TestCheckedColumns
{
    private static final Instant FROM = Instant.parse("2026-08-20T10:15:00Z");
    private static final CheckedColumns NETZE = CheckedColumns.of(TableShape.declared(Map.of(
            "attribute_columns", "contract_ref grid_area supplier",
            "checked_columns", "grid_area:EIC:Y supplier:BDEW")));

    @Test
    void testWritePathStoresCanonicalSpelling()
    {
        Reading written = reading(" 41373559241", Optional.of("de0001234567890123456789012345678"), Optional.of(" any text "), Optional.of(" 10yde-rwenet---i"), Optional.empty());
        Reading stored = NETZE.canonical(written);
        assertThat(stored.maloId()).isEqualTo("41373559241");
        assertThat(stored.meloId()).contains("DE0001234567890123456789012345678");
        // an attribute column without a check is carried as written, NULL stays NULL
        assertThat(stored.attributes()).containsExactly(Optional.of(" any text "), Optional.of("10YDE-RWENET---I"), Optional.empty());
        assertThat(stored.validate()).isEqualTo(stored);
    }

    @Test
    void testArchivalRefusesStoredValuesNotCanonical()
    {
        Reading canonical = reading("41373559241", Optional.empty(), Optional.empty(), Optional.of("10YDE-RWENET---I"), Optional.of("9900000000003"));
        assertThat(NETZE.requireCanonical(canonical)).isSameAs(canonical);
        // a wrong check character passes the hot tier's CHECK, which holds the shape only
        assertThatThrownBy(() -> NETZE.requireCanonical(reading("41373559241", Optional.empty(), Optional.empty(), Optional.of("10YDE-RWENET---J"), Optional.empty())))
                .isInstanceOf(InvalidReadingException.class)
                .hasMessageStartingWith("Column 'grid_area' holds '10YDE-RWENET---J', which its check EIC:Y refuses: Invalid EIC '10YDE-RWENET---J': check character is 'J', expected 'I'");
        assertThatThrownBy(() -> NETZE.requireCanonical(reading("41373559241", Optional.empty(), Optional.empty(), Optional.empty(), Optional.of(" 9900000000003"))))
                .hasMessage("Column 'supplier' holds ' 9900000000003', whose canonical spelling as BDEW is '9900000000003'");
    }

    private static Reading reading(String maloId, Optional<String> meloId, Optional<String> contract, Optional<String> gridArea, Optional<String> supplier)
    {
        return new Reading(maloId, meloId, "1-1:1.29.0", Sparte.STROM, FROM, Optional.of(FROM.plusSeconds(900)), new BigDecimal("0.25"), MeasurementUnit.KWH, Quality.MEASURED,
                "PT15M", "MSCONS", Optional.empty(), Optional.empty(), BigInteger.ONE, "9900000000003:2026-08", FROM, LocalDate.of(2026, 8, 20), List.of(contract, gridArea, supplier));
    }
}
