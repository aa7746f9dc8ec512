package io.meterstore.core;

import java.util.Optional;
import java.util.OptionalInt;

import static java.util.Objects.requireNonNull;

/**
 * An OBIS code in canonical form {@code A-B:C.D.E}, or {@code A-B:C.D.E*F} where F is not 255.
 * The storage form never carries {@code *255}: it means "current value" and is what {@code A-B:C.D.E} means.
 * <p>
 * The value groups are read as the German market assigns them (EDI@Energy Codeliste der OBIS-Kennzahlen): A is the
 * medium (1 electricity, 7 gas), C the measured quantity, which alone carries the direction (1 Bezug, 2 Lieferung),
 * D the kind of measurement (6 maximum, 8 Zählerstand, 9 Vorschub, 29 Lastgang), E the tariff, where 63 is the
 * Fehlerregister rather than a tariff.
 */
public record ObisCode(String value)
{
    private static final String FORM = "an OBIS code has the form A-B:C.D.E or A-B:C.D.E*F with each group 0 to 255";
    private static final char[] SEPARATORS = {'-', ':', '.', '.', '*'};
    private static final int ELECTRICITY = 1;
    private static final int FEHLERREGISTER = 63;
    private static final int STORAGE_UNUSED = 255;

    public enum Direction
    {
        /** Bezug: energy the customer takes from the grid (electricity, C = 1). */
        IMPORT,
        /** Lieferung: energy the customer feeds into the grid (electricity, C = 2). */
        EXPORT,
    }

    public ObisCode
    {
        requireNonNull(value, "value is null");
        String canonical = canonicalize(value);
        if (!canonical.equals(value)) {
            throw new InvalidReadingException("OBIS code '%s' is not canonical: store it as '%s'".formatted(value, canonical));
        }
    }

    /** Accepts any spelling of an OBIS code and returns its canonical form. */
    public static ObisCode parse(String value)
    {
        return new ObisCode(canonicalize(value));
    }

    /** The canonical form of any spelling: surrounding blanks and leading zeros removed, {@code *255} dropped. */
    public static String canonicalize(String value)
    {
        requireNonNull(value, "value is null");
        int[] groups = groups(value);
        StringBuilder canonical = new StringBuilder(19);
        for (int group = 0; group < 6; group++) {
            int number = groups[group];
            if (number < 0 || (group == 5 && number == STORAGE_UNUSED)) {
                break;
            }
            if (group > 0) {
                canonical.append(SEPARATORS[group - 1]);
            }
            canonical.append(number);
        }
        return canonical.toString();
    }

    /** Value group A, the medium: 1 electricity, 4 heat cost allocator, 5 cooling, 6 heat, 7 gas, 8 cold water, 9 hot water. */
    public int medium()
    {
        return groups(value)[0];
    }

    /** Value group C, the measured quantity; for electricity 1 active import, 2 active export, 3 to 8 reactive. */
    public int quantity()
    {
        return groups(value)[2];
    }

    /** Value group D, the kind of measurement: 6 maximum, 8 Zählerstand, 9 Vorschub, 29 Lastgang. Never a direction. */
    public int measurementType()
    {
        return groups(value)[3];
    }

    /** Value group E: 0 the total register, 1 to 62 tariffs, 63 the Fehlerregister. */
    public int tariff()
    {
        return groups(value)[4];
    }

    /** Import (Bezug) or export (Lieferung): electricity only, read off value group C alone, whatever D says. */
    public Optional<Direction> direction()
    {
        if (medium() != ELECTRICITY) {
            return Optional.empty();
        }
        return switch (quantity()) {
            case 1 -> Optional.of(Direction.IMPORT);
            case 2 -> Optional.of(Direction.EXPORT);
            default -> Optional.empty();
        };
    }

    /** Reactive energy or power (Blindarbeit): electricity with C = 3 (positive), 4 (negative) or 5 to 8 (quadrants I to IV). */
    public boolean isReactive()
    {
        int quantity = quantity();
        return medium() == ELECTRICITY && quantity >= 3 && quantity <= 8;
    }

    /** A Lastgang: energy per equidistant interval (D = 29). */
    public boolean isLastgang()
    {
        return measurementType() == 29;
    }

    /** A Zählerstand: a cumulative register reading (D = 8). */
    public boolean isZaehlerstand()
    {
        return measurementType() == 8;
    }

    /** A Vorschub: the energy over an arbitrary period (D = 9). */
    public boolean isVorschub()
    {
        return measurementType() == 9;
    }

    /** A maximum register (D = 6), a power rather than an energy. */
    public boolean isMaximum()
    {
        return measurementType() == 6;
    }

    /** The Fehlerregister (E = 63): it counts faults and is never a billable quantity. */
    public boolean isFehlerregister()
    {
        return tariff() == FEHLERREGISTER;
    }

    /** The total register (E = 0). */
    public boolean isTotalRegister()
    {
        return tariff() == 0;
    }

    /** The tariff register 1 to 62; empty for the total register and for the Fehlerregister, which is not a tariff. */
    public OptionalInt tariffRegister()
    {
        int tariff = tariff();
        return tariff == 0 || tariff == FEHLERREGISTER ? OptionalInt.empty() : OptionalInt.of(tariff);
    }

    // the six value groups of A-B:C.D.E[*F], F -1 when absent; each group one to three digits, at most 255
    private static int[] groups(String value)
    {
        String text = value.trim();
        int[] groups = {-1, -1, -1, -1, -1, -1};
        int position = 0;
        for (int group = 0; group < 6; group++) {
            int start = position;
            int number = 0;
            while (position < text.length() && position - start < 4 && isDigit(text.charAt(position))) {
                number = number * 10 + (text.charAt(position) - '0');
                position++;
            }
            int digits = position - start;
            if (digits == 0 || digits > 3) {
                throw malformed(value);
            }
            if (number > 255) {
                throw new InvalidReadingException("Invalid OBIS code '%s': value group %s is %s, %s".formatted(value, "ABCDEF".charAt(group), number, FORM));
            }
            groups[group] = number;
            if (position == text.length()) {
                // E ends the short form, F the long one
                if (group == 4 || group == 5) {
                    return groups;
                }
                throw malformed(value);
            }
            if (group == 5 || text.charAt(position) != SEPARATORS[group]) {
                throw malformed(value);
            }
            position++;
        }
        throw malformed(value);
    }

    private static boolean isDigit(char character)
    {
        return character >= '0' && character <= '9';
    }

    private static InvalidReadingException malformed(String value)
    {
        return new InvalidReadingException("Invalid OBIS code '%s': %s".formatted(value, FORM));
    }

    @Override
    public String toString()
    {
        return value;
    }
}
