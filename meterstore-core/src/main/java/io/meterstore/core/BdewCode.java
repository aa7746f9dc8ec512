package io.meterstore.core;

import static java.util.Objects.requireNonNull;

/**
 * A BDEW (or DVGW) market partner code: 13 digits. The 13th is meant as a check digit, but it is not enforced, as in the
 * Rust MeterStore: codes issued as GS1 GLNs follow another rule, and a refused operator id would refuse a delivery.
 */
public record BdewCode(String value)
{
    public static final int LENGTH = 13;

    public BdewCode
    {
        requireNonNull(value, "value is null");
        if (value.length() != LENGTH) {
            throw new InvalidReadingException("Invalid BDEW code '%s': a BDEW code has exactly 13 digits, this has %s characters".formatted(value, value.length()));
        }
        for (int index = 0; index < LENGTH; index++) {
            char character = value.charAt(index);
            if (character < '0' || character > '9') {
                throw new InvalidReadingException("Invalid BDEW code '%s': a BDEW code has only digits, character %s is '%s'".formatted(value, index + 1, character));
            }
        }
    }

    /** The BDEW code {@code value} spells, trimmed: its canonical spelling. */
    public static BdewCode parse(String value)
    {
        return new BdewCode(value.trim());
    }

    @Override
    public String toString()
    {
        return value;
    }
}
