package io.meterstore.core;

import static java.util.Objects.requireNonNull;

/** A metering location id (Messlokations-ID): 33 characters, country code, 6 digits, 25 uppercase letters or digits. */
public record MeloId(String value)
{
    public static final int LENGTH = 33;

    public MeloId
    {
        requireNonNull(value, "value is null");
        if (value.length() != LENGTH) {
            throw new InvalidReadingException("Invalid MeLo-ID '%s': a MeLo-ID has exactly 33 characters, this has %s".formatted(value, value.length()));
        }
        if (!hasShape(value)) {
            throw new InvalidReadingException("Invalid MeLo-ID '%s': a MeLo-ID is 2 uppercase letters, 6 digits and 25 uppercase letters or digits".formatted(value));
        }
    }

    /** Whether INSERT accepts {@code value} as a MeLo-ID, as it is (no blanks, uppercase). */
    public static boolean isValid(String value)
    {
        return value != null && value.length() == LENGTH && hasShape(value);
    }

    // [A-Z]{2}[0-9]{6}[A-Z0-9]{25}, by hand: every archived row is checked
    private static boolean hasShape(String value)
    {
        for (int index = 0; index < LENGTH; index++) {
            char character = value.charAt(index);
            boolean letter = character >= 'A' && character <= 'Z';
            boolean digit = character >= '0' && character <= '9';
            if (index < 2 ? !letter : index < 8 ? !digit : !(letter || digit)) {
                return false;
            }
        }
        return true;
    }

    @Override
    public String toString()
    {
        return value;
    }
}
