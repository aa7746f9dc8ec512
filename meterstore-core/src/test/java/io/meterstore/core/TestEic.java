package io.meterstore.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class TestEic
{
    @Test
    void testCodesEntsoeIssued()
    {
        // the four German control areas (Y), the German bidding zone, a party (X)
        for (String code : new String[] {"10YDE-RWENET---I", "10YDE-EON------1", "10YDE-VE-------2", "10YDE-ENBW-----N", "10Y1001A1001A82H", "10X1001A1001A450"}) {
            assertThat(Eic.parse(code).value()).isEqualTo(code);
            assertThat(Eic.checkCharacter(code)).isEqualTo(code.charAt(15));
        }
        assertThat(Eic.parse("10YDE-RWENET---I").objectType()).isEqualTo('Y');
        assertThat(Eic.parse("10X1001A1001A450").objectType()).isEqualTo('X');
    }

    @Test
    void testCanonicalSpellingIsTrimmedUppercase()
    {
        assertThat(Eic.parse("  10yde-rwenet---i\t").value()).isEqualTo("10YDE-RWENET---I");
    }

    @Test
    void testRefusals()
    {
        assertThatThrownBy(() -> Eic.parse("10YDE-RWENET---J"))
                .isInstanceOf(InvalidReadingException.class)
                .hasMessage("Invalid EIC '10YDE-RWENET---J': check character is 'J', expected 'I'");
        assertThatThrownBy(() -> Eic.parse("10YDE-RWENET--I"))
                .hasMessage("Invalid EIC '10YDE-RWENET--I': an EIC has exactly 16 characters, this has 15");
        assertThatThrownBy(() -> Eic.parse("10YDE_RWENET---I"))
                .hasMessage("Invalid EIC '10YDE_RWENET---I': an EIC has only digits, uppercase letters and '-', character 6 is '_'");
        assertThatThrownBy(() -> Eic.parse("1011001A1001A82H"))
                .hasMessage("Invalid EIC '1011001A1001A82H': character 3 of an EIC is its object type, a letter (one of X, Y, Z, W, T, V, A), not '1'");
    }
}
