package io.meterstore.trino.system;

import io.airlift.slice.Slice;
import io.meterstore.core.InvalidReadingException;
import io.meterstore.core.MaloId;
import io.meterstore.core.MeloId;
import io.meterstore.core.ObisCode;
import io.trino.spi.function.Description;
import io.trino.spi.function.ScalarFunction;
import io.trino.spi.function.SqlNullable;
import io.trino.spi.function.SqlType;
import io.trino.spi.type.StandardTypes;

import java.util.OptionalInt;

import static io.airlift.slice.Slices.utf8Slice;
import static io.meterstore.trino.system.CalendarFunctions.invalidArgument;

/**
 * Market location, metering location and OBIS codes in SQL, in {@code meterstore.system}: the validity rules INSERT
 * applies and the value-group predicates of the German market. An OBIS code that cannot be read is an error naming the
 * rule it breaks, never a silent NULL.
 */
public final class IdentifierFunctions
{
    private IdentifierFunctions() {}

    @ScalarFunction("malo_is_valid")
    @Description("Whether a text is a MaLo-ID as INSERT accepts it: 11 digits, the first not 0, the last the check digit")
    @SqlType(StandardTypes.BOOLEAN)
    public static boolean maloIsValid(@SqlType(StandardTypes.VARCHAR) Slice maloId)
    {
        return MaloId.isValid(maloId.toStringUtf8());
    }

    @ScalarFunction("melo_is_valid")
    @Description("Whether a text is a MeLo-ID as INSERT accepts it: 33 characters, 2 uppercase letters, 6 digits, 25 uppercase letters or digits")
    @SqlType(StandardTypes.BOOLEAN)
    public static boolean meloIsValid(@SqlType(StandardTypes.VARCHAR) Slice meloId)
    {
        return MeloId.isValid(meloId.toStringUtf8());
    }

    @ScalarFunction("obis_normalise")
    @Description("The canonical spelling of an OBIS code, as it is stored: surrounding blanks and leading zeros removed, *255 dropped")
    @SqlType(StandardTypes.VARCHAR)
    public static Slice obisNormalise(@SqlType(StandardTypes.VARCHAR) Slice code)
    {
        return utf8Slice(obis(code).value());
    }

    @ScalarFunction("obis_direction")
    @Description("IMPORT (Bezug, C = 1) or EXPORT (Lieferung, C = 2) for an electricity code, else NULL")
    @SqlNullable
    @SqlType(StandardTypes.VARCHAR)
    public static Slice obisDirection(@SqlType(StandardTypes.VARCHAR) Slice code)
    {
        return obis(code).direction().map(direction -> utf8Slice(direction.name())).orElse(null);
    }

    @ScalarFunction("obis_is_import")
    @Description("Whether an OBIS code is electricity taken from the grid (Bezug): A = 1 and C = 1, whatever D")
    @SqlType(StandardTypes.BOOLEAN)
    public static boolean obisIsImport(@SqlType(StandardTypes.VARCHAR) Slice code)
    {
        return obis(code).direction().filter(direction -> direction == ObisCode.Direction.IMPORT).isPresent();
    }

    @ScalarFunction("obis_is_export")
    @Description("Whether an OBIS code is electricity fed into the grid (Lieferung): A = 1 and C = 2, whatever D")
    @SqlType(StandardTypes.BOOLEAN)
    public static boolean obisIsExport(@SqlType(StandardTypes.VARCHAR) Slice code)
    {
        return obis(code).direction().filter(direction -> direction == ObisCode.Direction.EXPORT).isPresent();
    }

    @ScalarFunction("obis_is_reactive")
    @Description("Whether an OBIS code is reactive energy or power (Blindarbeit): A = 1 and C = 3 to 8")
    @SqlType(StandardTypes.BOOLEAN)
    public static boolean obisIsReactive(@SqlType(StandardTypes.VARCHAR) Slice code)
    {
        return obis(code).isReactive();
    }

    @ScalarFunction("obis_is_lastgang")
    @Description("Whether an OBIS code is a Lastgang, energy per equidistant interval (D = 29)")
    @SqlType(StandardTypes.BOOLEAN)
    public static boolean obisIsLastgang(@SqlType(StandardTypes.VARCHAR) Slice code)
    {
        return obis(code).isLastgang();
    }

    @ScalarFunction("obis_is_zaehlerstand")
    @Description("Whether an OBIS code is a Zählerstand, a cumulative register reading (D = 8)")
    @SqlType(StandardTypes.BOOLEAN)
    public static boolean obisIsZaehlerstand(@SqlType(StandardTypes.VARCHAR) Slice code)
    {
        return obis(code).isZaehlerstand();
    }

    @ScalarFunction("obis_is_vorschub")
    @Description("Whether an OBIS code is a Vorschub, the energy over an arbitrary period (D = 9)")
    @SqlType(StandardTypes.BOOLEAN)
    public static boolean obisIsVorschub(@SqlType(StandardTypes.VARCHAR) Slice code)
    {
        return obis(code).isVorschub();
    }

    @ScalarFunction("obis_is_maximum")
    @Description("Whether an OBIS code is a maximum register, a power (D = 6)")
    @SqlType(StandardTypes.BOOLEAN)
    public static boolean obisIsMaximum(@SqlType(StandardTypes.VARCHAR) Slice code)
    {
        return obis(code).isMaximum();
    }

    @ScalarFunction("obis_is_fehlerregister")
    @Description("Whether an OBIS code is the Fehlerregister, a fault counter that is never billed (E = 63)")
    @SqlType(StandardTypes.BOOLEAN)
    public static boolean obisIsFehlerregister(@SqlType(StandardTypes.VARCHAR) Slice code)
    {
        return obis(code).isFehlerregister();
    }

    @ScalarFunction("obis_is_total_register")
    @Description("Whether an OBIS code is the total register (E = 0)")
    @SqlType(StandardTypes.BOOLEAN)
    public static boolean obisIsTotalRegister(@SqlType(StandardTypes.VARCHAR) Slice code)
    {
        return obis(code).isTotalRegister();
    }

    @ScalarFunction("obis_tariff_register")
    @Description("The tariff register of an OBIS code, 1 to 62; NULL for the total register (E = 0) and the Fehlerregister (E = 63)")
    @SqlNullable
    @SqlType(StandardTypes.INTEGER)
    public static Long obisTariffRegister(@SqlType(StandardTypes.VARCHAR) Slice code)
    {
        OptionalInt tariff = obis(code).tariffRegister();
        return tariff.isPresent() ? (long) tariff.getAsInt() : null;
    }

    private static ObisCode obis(Slice code)
    {
        try {
            return ObisCode.parse(code.toStringUtf8());
        }
        catch (InvalidReadingException e) {
            throw invalidArgument(e);
        }
    }
}
