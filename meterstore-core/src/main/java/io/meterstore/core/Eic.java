package io.meterstore.core;

import java.util.Locale;

import static java.util.Objects.requireNonNull;

/**
 * An Energy Identification Code (ENTSO-E EIC): 16 characters of digits, uppercase letters and '-': the issuing office
 * (2 characters), the object type (a letter: X a party, Y an area, Z a measurement point, W a resource, T a tieline,
 * V a location, A a substation), 12 characters of the code, and a check character over the first 15 that is never '-'.
 */
public record Eic(String value)
{
    public static final int LENGTH = 16;
    /** The object types ENTSO-E gives an EIC, in the order a declaration lists them. */
    public static final String OBJECT_TYPES = "XYZWTVA";
    // the value of each character in the check: 0-9, then A-Z as 10-35, then '-' as 36
    private static final String CHARACTERS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-";

    public Eic
    {
        requireNonNull(value, "value is null");
        String problem = problem(value);
        if (problem != null) {
            throw new InvalidReadingException("Invalid EIC '%s': %s".formatted(value, problem));
        }
    }

    /** The EIC {@code value} spells, trimmed and in uppercase: its canonical spelling. */
    public static Eic parse(String value)
    {
        return new Eic(value.trim().toUpperCase(Locale.ROOT));
    }

    /** The object type, the letter at position 3. */
    public char objectType()
    {
        return value.charAt(2);
    }

    /**
     * The check character of the first 15 characters (ENTSO-E: each character's value weighted 16 down to 2, then
     * 36 minus the sum less one modulo 37); '-' when the code has none, which ENTSO-E never issues.
     */
    public static char checkCharacter(String firstFifteen)
    {
        int sum = 0;
        for (int index = 0; index < LENGTH - 1; index++) {
            sum += CHARACTERS.indexOf(firstFifteen.charAt(index)) * (LENGTH - index);
        }
        return CHARACTERS.charAt(36 - Math.floorMod(sum - 1, 37));
    }

    private static String problem(String value)
    {
        if (value.length() != LENGTH) {
            return "an EIC has exactly 16 characters, this has %s".formatted(value.length());
        }
        for (int index = 0; index < LENGTH; index++) {
            if (CHARACTERS.indexOf(value.charAt(index)) < 0) {
                return "an EIC has only digits, uppercase letters and '-', character %s is '%s'".formatted(index + 1, value.charAt(index));
            }
        }
        char objectType = value.charAt(2);
        if (objectType < 'A' || objectType > 'Z') {
            return "character 3 of an EIC is its object type, a letter (one of %s), not '%s'".formatted(String.join(", ", OBJECT_TYPES.split("")), objectType);
        }
        char expected = checkCharacter(value);
        if (value.charAt(LENGTH - 1) != expected) {
            return expected == '-'
                    ? "its first 15 characters have no check character ENTSO-E issues, so no EIC starts with them"
                    : "check character is '%s', expected '%s'".formatted(value.charAt(LENGTH - 1), expected);
        }
        return null;
    }

    @Override
    public String toString()
    {
        return value;
    }
}
