package io.meterstore.core;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * The commodity of a reading and the units its quantities may be stored in. Which of them a reading takes is decided by
 * its OBIS code too ({@link #unitsFor}): energy or volume, a maximum register's demand (D = 6), reactive energy or
 * demand (electricity, C = 3 to 8).
 */
public enum Sparte
{
    STROM(EnumSet.of(MeasurementUnit.KWH, MeasurementUnit.MWH, MeasurementUnit.KW, MeasurementUnit.KVARH, MeasurementUnit.KVAR), "electricity"),
    // a gas maximum register counts the largest hourly energy, kWh/h
    GAS(EnumSet.of(MeasurementUnit.M3, MeasurementUnit.KWH, MeasurementUnit.MWH, MeasurementUnit.KW), "gas"),
    WAERME(EnumSet.of(MeasurementUnit.KWH, MeasurementUnit.MWH, MeasurementUnit.KW), "heat"),
    WASSER(EnumSet.of(MeasurementUnit.M3), "water");

    private final Set<MeasurementUnit> units;
    private final String commodity;

    Sparte(Set<MeasurementUnit> units, String commodity)
    {
        this.units = units;
        this.commodity = commodity;
    }

    public boolean allows(MeasurementUnit unit)
    {
        return units.contains(unit);
    }

    /**
     * The units a reading of this commodity under {@code obisCode} may be stored in: what the commodity allows and the
     * code measures. A reactive code (electricity, C = 3 to 8) is kvarh, or kvar for its maximum register; another
     * maximum register (D = 6) is a demand, kW; any other code an energy or a volume, kWh, MWh or m³.
     */
    public Set<MeasurementUnit> unitsFor(ObisCode obisCode)
    {
        Set<MeasurementUnit> measured = switch (Quantity.of(obisCode)) {
            case REACTIVE_DEMAND -> EnumSet.of(MeasurementUnit.KVAR);
            case REACTIVE_ENERGY -> EnumSet.of(MeasurementUnit.KVARH);
            case DEMAND -> EnumSet.of(MeasurementUnit.KW);
            case ENERGY_OR_VOLUME -> EnumSet.of(MeasurementUnit.KWH, MeasurementUnit.MWH, MeasurementUnit.M3);
        };
        measured.retainAll(units);
        return measured;
    }

    /** Throws {@link InvalidReadingException} naming the units that fit, unless {@code unit} fits this commodity and {@code obisCode}. */
    public void requireFits(MeasurementUnit unit, ObisCode obisCode)
    {
        Set<MeasurementUnit> fitting = unitsFor(obisCode);
        if (fitting.contains(unit)) {
            return;
        }
        Quantity quantity = Quantity.of(obisCode);
        if (fitting.isEmpty()) {
            throw new InvalidReadingException("Unit %s does not fit OBIS code '%s' of sparte %s: the code measures %s, for which %s has no unit (%s is %s); store it under a code %s measures"
                    .formatted(unit, obisCode, this, quantity.description, commodity, commodity, describe(units), commodity));
        }
        if (!units.contains(unit)) {
            throw new InvalidReadingException("Unit %s does not fit sparte %s: %s is %s; under OBIS code '%s', which measures %s, use %s"
                    .formatted(unit, this, commodity, describe(units), obisCode, quantity.description, describe(fitting)));
        }
        throw new InvalidReadingException("Unit %s does not fit OBIS code '%s' of sparte %s: the code measures %s; use %s"
                .formatted(unit, obisCode, this, quantity.description, describe(fitting)));
    }

    private static String describe(Set<MeasurementUnit> units)
    {
        String names = units.stream().sorted().map(MeasurementUnit::name).collect(Collectors.joining(", "));
        int last = names.lastIndexOf(", ");
        return last < 0 ? names : names.substring(0, last) + " or " + names.substring(last + 2);
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

    /** What an OBIS code measures, as far as its unit goes. */
    private enum Quantity
    {
        REACTIVE_DEMAND("a reactive demand (electricity, C = 3 to 8, maximum register D = 6)"),
        REACTIVE_ENERGY("reactive energy (electricity, C = 3 to 8)"),
        DEMAND("a demand (maximum register, D = 6)"),
        ENERGY_OR_VOLUME("an energy or a volume");

        private final String description;

        Quantity(String description)
        {
            this.description = description;
        }

        // a table holds a few hundred codes at most, each read once: the archiver validates every row it archives
        private static final Map<String, Quantity> OF_CODE = new ConcurrentHashMap<>();
        private static final int MAX_CODES = 4096;

        static Quantity of(ObisCode obisCode)
        {
            Quantity quantity = OF_CODE.get(obisCode.value());
            if (quantity != null) {
                return quantity;
            }
            if (obisCode.isReactive()) {
                quantity = obisCode.isMaximum() ? REACTIVE_DEMAND : REACTIVE_ENERGY;
            }
            else {
                quantity = obisCode.isMaximum() ? DEMAND : ENERGY_OR_VOLUME;
            }
            if (OF_CODE.size() < MAX_CODES) {
                OF_CODE.put(obisCode.value(), quantity);
            }
            return quantity;
        }
    }

    public enum MeasurementUnit
    {
        KWH,
        MWH,
        KW,
        KVARH,
        KVAR,
        M3;

        public static MeasurementUnit parse(String value)
        {
            for (MeasurementUnit unit : values()) {
                if (unit.name().equals(value)) {
                    return unit;
                }
            }
            throw new InvalidReadingException("Invalid unit '%s': use KWH, MWH, KW, KVARH, KVAR or M3".formatted(value));
        }
    }
}
