package io.meterstore.core;

import java.util.Set;

/** The commodity of a reading and the units its quantities may be stored in. */
public enum Sparte
{
    STROM(Set.of(MeasurementUnit.KWH)),
    GAS(Set.of(MeasurementUnit.M3, MeasurementUnit.KWH)),
    WAERME(Set.of(MeasurementUnit.KWH)),
    WASSER(Set.of(MeasurementUnit.M3));

    private final Set<MeasurementUnit> units;

    Sparte(Set<MeasurementUnit> units)
    {
        this.units = units;
    }

    public boolean allows(MeasurementUnit unit)
    {
        return units.contains(unit);
    }

    public static Sparte parse(String value)
    {
        for (Sparte sparte : values()) {
            if (sparte.name().equals(value)) {
                return sparte;
            }
        }
        throw new InvalidReadingException("Invalid sparte '%s': use one of STROM, GAS, WAERME, WASSER".formatted(value));
    }

    public enum MeasurementUnit
    {
        KWH,
        M3;

        public static MeasurementUnit parse(String value)
        {
            for (MeasurementUnit unit : values()) {
                if (unit.name().equals(value)) {
                    return unit;
                }
            }
            throw new InvalidReadingException("Invalid unit '%s': use KWH or M3".formatted(value));
        }
    }
}
