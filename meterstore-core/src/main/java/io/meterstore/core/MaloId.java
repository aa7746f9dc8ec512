package io.meterstore.core;

import static java.util.Objects.requireNonNull;

/**
 * A market location id (Marktlokations-ID): 11 digits, the first not zero, the last a check digit over the
 * first ten (BDEW: digits at odd positions plus twice the digits at even positions, then the tens complement).
 */
public record MaloId(String value)
{
    public static final int LENGTH = 11;

    public MaloId
    {
        requireNonNull(value, "value is null");
        String problem = problem(value);
        if (problem != null) {
            throw new InvalidReadingException("Invalid MaLo-ID '%s': %s".formatted(value, problem));
        }
    }

    public static MaloId parse(String value)
    {
        return new MaloId(value);
    }

    public static boolean isValid(String value)
    {
        return value != null && problem(value) == null;
    }

    /** The check digit for the first ten digits of a MaLo-ID. */
    public static int checkDigit(String firstTenDigits)
    {
        int sum = 0;
        for (int index = 0; index < 10; index++) {
            int digit = firstTenDigits.charAt(index) - '0';
            // positions are counted from 1: odd positions count once, even positions twice
            sum += (index % 2 == 0) ? digit : 2 * digit;
        }
        return (10 - sum % 10) % 10;
    }

    private static String problem(String value)
    {
        if (value.length() != LENGTH) {
            return "a MaLo-ID has exactly 11 digits, this has %s characters".formatted(value.length());
        }
        for (int index = 0; index < LENGTH; index++) {
            char character = value.charAt(index);
            if (character < '0' || character > '9') {
                return "a MaLo-ID has only digits, character %s is '%s'".formatted(index + 1, character);
            }
        }
        if (value.charAt(0) == '0') {
            return "the first digit of a MaLo-ID is never 0";
        }
        int expected = checkDigit(value);
        if (value.charAt(10) - '0' != expected) {
            return "check digit is %s, expected %s".formatted(value.charAt(10), expected);
        }
        return null;
    }

    @Override
    public String toString()
    {
        return value;
    }
}
