package io.meterstore.core;

import io.meterstore.core.TableShape.CheckedKind;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class TestValueCheck
{
    @Test
    void testDeclarationsAsTheRustMeterstoreWritesThem()
    {
        assertThat(ValueCheck.parse("grid_area", "EIC")).isEqualTo(ValueCheck.of(CheckedKind.EIC));
        assertThat(ValueCheck.parse("grid_area", "eic:y|x")).isEqualTo(new ValueCheck(CheckedKind.EIC, "XY"));
        assertThat(ValueCheck.parse("grid_area", "EIC:Y|X")).hasToString("EIC:X|Y");
        assertThat(ValueCheck.parse("supplier", "bdew")).hasToString("BDEW");
        assertThatThrownBy(() -> ValueCheck.parse("grid_area", "EIC:Q"))
                .hasMessage("Check 'EIC:Q' of column 'grid_area' allows EIC object type 'Q', which ENTSO-E does not give: list letters among X Y Z W T V A, separated by '|' (EIC:X|Y)");
        assertThatThrownBy(() -> ValueCheck.parse("grid_area", "GLN"))
                .hasMessage("Unknown check 'GLN' of column 'grid_area': write one of EIC, EIC:<object types among X Y Z W T V A separated by '|'>, MALO, MELO, BDEW");
        assertThatThrownBy(() -> ValueCheck.parse("supplier", "BDEW:X"))
                .hasMessage("Check 'BDEW:X' of column 'supplier' lists object types, which only an EIC has: write BDEW");
    }

    @Test
    void testCanonicalValues()
    {
        ValueCheck area = ValueCheck.parse("grid_area", "EIC:Y");
        assertThat(area.canonical("grid_area", " 10yde-rwenet---i ")).isEqualTo("10YDE-RWENET---I");
        assertThatThrownBy(() -> area.canonical("grid_area", "10X1001A1001A450"))
                .isInstanceOf(InvalidReadingException.class)
                .hasMessage("Column 'grid_area' holds '10X1001A1001A450', which its check EIC:Y refuses: Invalid EIC '10X1001A1001A450': its object type (character 3) is 'X', this column takes Y; "
                        + "a valid value is 16 characters of digits, uppercase letters and '-', the 3rd its object type (Y), the 16th the check character (e.g. '10YDE-RWENET---I')");
        assertThat(ValueCheck.of(CheckedKind.MELO).canonical("melo_id", "de0001234567890123456789012345678 ")).isEqualTo("DE0001234567890123456789012345678");
        assertThat(ValueCheck.of(CheckedKind.MALO).canonical("malo_id", " 41373559241")).isEqualTo("41373559241");
        assertThatThrownBy(() -> ValueCheck.of(CheckedKind.BDEW).canonical("supplier", "990000000000"))
                .hasMessage("Column 'supplier' holds '990000000000', which its check BDEW refuses: Invalid BDEW code '990000000000': a BDEW code has exactly 13 digits, this has 12 characters; a valid value is 13 digits (e.g. '9900000000003')");
    }

    @Test
    void testPatterns()
    {
        assertThat(ValueCheck.of(CheckedKind.EIC).pattern()).isEqualTo("^[0-9A-Z-]{2}[A-Z][0-9A-Z-]{12}[0-9A-Z]$");
        assertThat(ValueCheck.parse("grid_area", "EIC:X|Y").pattern()).isEqualTo("^[0-9A-Z-]{2}[XY][0-9A-Z-]{12}[0-9A-Z]$");
        assertThat(ValueCheck.of(CheckedKind.BDEW).pattern()).isEqualTo("^[0-9]{13}$");
        assertThat("10YDE-RWENET---I").matches(ValueCheck.parse("grid_area", "EIC:Y").pattern());
    }
}
