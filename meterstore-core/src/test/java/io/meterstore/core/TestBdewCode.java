package io.meterstore.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class TestBdewCode
{
    @Test
    void testThirteenDigitsTrimmed()
    {
        assertThat(BdewCode.parse("9900000000003").value()).isEqualTo("9900000000003");
        assertThat(BdewCode.parse(" 9900000000003 ").value()).isEqualTo("9900000000003");
        // the 13th digit is not enforced, as in the Rust MeterStore: a GLN carries its own
        assertThat(BdewCode.parse("9900000000004").value()).isEqualTo("9900000000004");
    }

    @Test
    void testRefusals()
    {
        assertThatThrownBy(() -> BdewCode.parse("990000000000"))
                .isInstanceOf(InvalidReadingException.class)
                .hasMessage("Invalid BDEW code '990000000000': a BDEW code has exactly 13 digits, this has 12 characters");
        assertThatThrownBy(() -> BdewCode.parse("99000000000O3"))
                .hasMessage("Invalid BDEW code '99000000000O3': a BDEW code has only digits, character 12 is 'O'");
    }
}
