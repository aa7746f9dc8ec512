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
