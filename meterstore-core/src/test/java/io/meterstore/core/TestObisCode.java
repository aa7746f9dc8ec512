package io.meterstore.core;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class TestObisCode
{
    @Test
    void testCanonicalize()
    {
        assertThat(ObisCode.canonicalize("1-1:1.29.0*255")).isEqualTo("1-1:1.29.0");
        assertThat(ObisCode.canonicalize("1-1:1.29.0")).isEqualTo("1-1:1.29.0");
        // only 255 is "current value"; any other F is part of the code
        assertThat(ObisCode.canonicalize("1-0:1.8.0*1")).isEqualTo("1-0:1.8.0*1");
        assertThat(ObisCode.canonicalize("01-001:1.029.00")).isEqualTo("1-1:1.29.0");
        assertThat(ObisCode.canonicalize(" 7-20:3.0.0*255 ")).isEqualTo("7-20:3.0.0");
        assertThat(ObisCode.canonicalize("255-255:255.255.255*254")).isEqualTo("255-255:255.255.255*254");
    }

    @Test
    void testParse()
    {
        assertThat(ObisCode.parse("1-1:1.29.0*255")).isEqualTo(new ObisCode("1-1:1.29.0"));
        assertThat(ObisCode.parse("1-1:1.29.0*255").toString()).isEqualTo("1-1:1.29.0");
    }

    @Test
    void testConstructorRejectsNonCanonical()
    {
        assertThatThrownBy(() -> new ObisCode("1-1:1.29.0*255"))
                .isInstanceOf(InvalidReadingException.class)
                .hasMessage("OBIS code '1-1:1.29.0*255' is not canonical: store it as '1-1:1.29.0'");
        assertThatThrownBy(() -> new ObisCode("01-1:1.29.0"))
                .hasMessage("OBIS code '01-1:1.29.0' is not canonical: store it as '1-1:1.29.0'");
        assertThatThrownBy(() -> new ObisCode(" 1-1:1.29.0"))
                .hasMessageContaining("store it as '1-1:1.29.0'");
    }

    @Test
    void testGroupAbove255()
    {
        assertThatThrownBy(() -> ObisCode.canonicalize("1-1:256.29.0"))
                .isInstanceOf(InvalidReadingException.class)
                .hasMessage("Invalid OBIS code '1-1:256.29.0': value group C is 256, an OBIS code has the form A-B:C.D.E or A-B:C.D.E*F with each group 0 to 255");
        assertThatThrownBy(() -> ObisCode.canonicalize("1-1:1.29.0*999"))
                .hasMessageContaining("value group F is 999");
        assertThatThrownBy(() -> new ObisCode("300-1:1.29.0"))
                .hasMessageContaining("value group A is 300");
    }

    @Test
    void testMalformed()
    {
        for (String malformed : new String[] {"", "1.29.0", "1-1:1.29", "1-1:1.29.0*", "1-1.1.29.0", "1-1:1.29.0.0", "A-1:1.29.0", "1-1:1.2a.0", "1-1:1.29.0*255*255", "1-1:1.2900.0"}) {
            assertThatThrownBy(() -> ObisCode.canonicalize(malformed))
                    .isInstanceOf(InvalidReadingException.class)
                    .hasMessage("Invalid OBIS code '%s': an OBIS code has the form A-B:C.D.E or A-B:C.D.E*F with each group 0 to 255".formatted(malformed));
        }
    }
}
