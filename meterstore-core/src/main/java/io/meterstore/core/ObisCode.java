package io.meterstore.core;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static java.util.Objects.requireNonNull;

/**
 * An OBIS code in canonical form {@code A-B:C.D.E}, or {@code A-B:C.D.E*F} where F is not 255.
 * The storage form never carries {@code *255}: it means "current value" and is what {@code A-B:C.D.E} means.
 */
public record ObisCode(String value)
{
    private static final Pattern SHAPE = Pattern.compile("(\\d{1,3})-(\\d{1,3}):(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})(?:\\*(\\d{1,3}))?");
    private static final String FORM = "an OBIS code has the form A-B:C.D.E or A-B:C.D.E*F with each group 0 to 255";

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

    public static String canonicalize(String value)
    {
        requireNonNull(value, "value is null");
        Matcher matcher = SHAPE.matcher(value.trim());
        if (!matcher.matches()) {
            throw new InvalidReadingException("Invalid OBIS code '%s': %s".formatted(value, FORM));
        }
        StringBuilder canonical = new StringBuilder();
        for (int group = 1; group <= 6; group++) {
            String text = matcher.group(group);
            if (text == null) {
                break;
            }
            int number = Integer.parseInt(text);
            if (number > 255) {
                throw new InvalidReadingException("Invalid OBIS code '%s': value group %s is %s, %s".formatted(value, "ABCDEF".charAt(group - 1), number, FORM));
            }
            if (group == 6 && number == 255) {
                break;
            }
            canonical.append(switch (group) {
                case 1 -> "";
                case 2 -> "-";
                case 3 -> ":";
                case 4, 5 -> ".";
                default -> "*";
            });
            canonical.append(number);
        }
        return canonical.toString();
    }

    @Override
    public String toString()
    {
        return value;
    }
}
