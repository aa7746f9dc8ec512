package io.meterstore.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class TestMaloId
{
    @Test
    void testValidIds()
    {
        assertThat(MaloId.parse("41373559241").value()).isEqualTo("41373559241");
        assertThat(MaloId.parse("51238696781").value()).isEqualTo("51238696781");
        assertThat(MaloId.isValid("41373559241")).isTrue();
        assertThat(MaloId.isValid("51238696781")).isTrue();
    }

    @Test
    void testCheckDigit()
    {
        // odd positions once, even positions twice: (4+3+3+5+2) + 2 * (1+7+5+9+4) = 69, whose tens complement is 1
        assertThat(MaloId.checkDigit("4137355924")).isEqualTo(1);
        assertThat(MaloId.checkDigit("5123869678")).isEqualTo(1);
        // every other last digit of a valid prefix is wrong
        for (int digit = 0; digit <= 9; digit++) {
            assertThat(MaloId.isValid("4137355924" + digit)).isEqualTo(digit == 1);
        }
    }

    @Test
    void testWrongCheckDigit()
    {
        assertThatThrownBy(() -> MaloId.parse("41373559242"))
                .isInstanceOf(InvalidReadingException.class)
                .hasMessage("Invalid MaLo-ID '41373559242': check digit is 2, expected 1");
        assertThat(MaloId.isValid("51238696780")).isFalse();
    }

    @Test
    void testWrongLength()
    {
        assertThatThrownBy(() -> MaloId.parse("4137355924"))
                .isInstanceOf(InvalidReadingException.class)
                .hasMessage("Invalid MaLo-ID '4137355924': a MaLo-ID has exactly 11 digits, this has 10 characters");
        assertThatThrownBy(() -> MaloId.parse("413735592411"))
                .hasMessageContaining("exactly 11 digits, this has 12 characters");
        assertThatThrownBy(() -> MaloId.parse(""))
                .hasMessageContaining("this has 0 characters");
    }

    @Test
    void testLetters()
    {
        assertThatThrownBy(() -> MaloId.parse("4137355924A"))
                .isInstanceOf(InvalidReadingException.class)
                .hasMessage("Invalid MaLo-ID '4137355924A': a MaLo-ID has only digits, character 11 is 'A'");
        assertThatThrownBy(() -> MaloId.parse("41 73559241"))
                .hasMessageContaining("character 3 is ' '");
        assertThat(MaloId.isValid("DE373559241")).isFalse();
    }

    @Test
    void testLeadingZero()
    {
        // a correct check digit, so only the leading-zero rule can reject it
        String prefix = "0137355924";
        String maloId = prefix + MaloId.checkDigit(prefix);
        assertThatThrownBy(() -> MaloId.parse(maloId))
                .isInstanceOf(InvalidReadingException.class)
                .hasMessage("Invalid MaLo-ID '%s': the first digit of a MaLo-ID is never 0".formatted(maloId));
        assertThat(MaloId.isValid(maloId)).isFalse();
        assertThat(MaloId.isValid(null)).isFalse();
    }
}
