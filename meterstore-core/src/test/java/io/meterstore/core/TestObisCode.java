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

    @Test
    void testValueGroups()
    {
        // direction is value group C alone, for electricity, whatever the kind of measurement D
        for (String code : new String[] {"1-0:1.8.0", "1-0:1.9.0", "1-1:1.29.0", "1-0:1.6.0", "1-0:1.8.1"}) {
            assertThat(new ObisCode(code).direction()).as(code).contains(ObisCode.Direction.IMPORT);
        }
        for (String code : new String[] {"1-0:2.8.0", "1-0:2.9.0", "1-0:2.29.0", "1-0:2.6.0"}) {
            assertThat(new ObisCode(code).direction()).as(code).contains(ObisCode.Direction.EXPORT);
        }
        // D = 9 is a Vorschub, not a reverse flag; C = 3 is reactive, not a direction
        ObisCode reactiveVorschub = new ObisCode("1-0:3.9.0");
        assertThat(reactiveVorschub.direction()).isEmpty();
        assertThat(reactiveVorschub.isReactive()).isTrue();
        assertThat(reactiveVorschub.isVorschub()).isTrue();
        assertThat(new ObisCode("1-0:8.8.0").isReactive()).isTrue();
        assertThat(new ObisCode("1-0:9.8.0").isReactive()).isFalse();
        // gas: no direction, no reactive, whatever C says
        assertThat(new ObisCode("7-0:1.8.0").direction()).isEmpty();
        assertThat(new ObisCode("7-0:3.8.0").isReactive()).isFalse();
        // E = 63 is the Fehlerregister, not tariff 63
        assertThat(new ObisCode("1-0:1.8.63").isFehlerregister()).isTrue();
        assertThat(new ObisCode("1-0:1.8.63").tariffRegister()).isEmpty();
        assertThat(new ObisCode("1-0:1.8.0").tariffRegister()).isEmpty();
        assertThat(new ObisCode("1-0:1.8.0").isTotalRegister()).isTrue();
        assertThat(new ObisCode("1-0:1.8.2").tariffRegister()).hasValue(2);
        assertThat(new ObisCode("1-0:1.8.62*1").tariffRegister()).hasValue(62);
        assertThat(new ObisCode("1-1:1.29.0").isLastgang()).isTrue();
        assertThat(new ObisCode("1-0:1.6.0").isMaximum()).isTrue();
        assertThat(new ObisCode("1-0:1.8.0").isZaehlerstand()).isTrue();
    }
}
