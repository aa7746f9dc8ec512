package io.meterstore.core;

/** The quality of a value (MSCONS 220 measured, 67 substituted, 187 estimated, Z18 preliminary, 20 faulty, ...). */
public enum Quality
{
    MEASURED(true),
    ESTIMATED(true),
    SUBSTITUTED(true),
    CALCULATED(true),
    CORRECTED(true),
    PRELIMINARY(true),
    FAULTY(false),
    UNKNOWN(false);

    private final boolean billable;

    Quality(boolean billable)
    {
        this.billable = billable;
    }

    public boolean billable()
    {
        return billable;
    }

    /** Whether a stored quality counts as a substitute value (Ersatzwert). */
    public static boolean isSubstituted(String value)
    {
        return SUBSTITUTED.name().equals(value);
    }

    /** Whether a stored quality may be billed; a quality this model does not know is not billable, the safe direction. */
    public static boolean isBillable(String value)
    {
        for (Quality quality : values()) {
            if (quality.name().equals(value)) {
                return quality.billable;
            }
        }
        return false;
    }

    public static Quality parse(String value)
    {
        for (Quality quality : values()) {
            if (quality.name().equals(value)) {
                return quality;
            }
        }
        throw new InvalidReadingException("Invalid quality '%s': use one of MEASURED, ESTIMATED, SUBSTITUTED, CALCULATED, CORRECTED, PRELIMINARY, FAULTY, UNKNOWN".formatted(value));
    }
}
