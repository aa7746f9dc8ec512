package io.meterstore.core;

import com.google.common.base.Splitter;
import io.meterstore.core.TableShape.CheckedKind;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * How the values of a checked column ({@link TableShape#checkedColumns()}) are parsed and stored canonical: as an EIC,
 * of any object type or of those listed, a MaLo-ID, a MeLo-ID or a BDEW code. Declared as the Rust MeterStore declares
 * its {@code check}: {@code EIC}, {@code EIC:X|Y} (the object types allowed, among X Y Z W T V A), {@code MALO},
 * {@code MELO}, {@code BDEW}. The write path parses each value ({@link #canonical}); the hot tier holds the shape as a
 * CHECK ({@link #pattern()}), the arithmetic (check characters) needing the write path.
 *
 * @param objectTypes the EIC object types allowed, in the order of {@link Eic#OBJECT_TYPES}; empty for any, and for every other kind
 */
public record ValueCheck(CheckedKind kind, String objectTypes)
{
    public ValueCheck
    {
        requireNonNull(kind, "kind is null");
        requireNonNull(objectTypes, "objectTypes is null");
        checkArgument(objectTypes.isEmpty() || kind == CheckedKind.EIC, "Only an EIC check lists object types");
        String allowed = objectTypes;
        checkArgument(allowed.chars().allMatch(type -> Eic.OBJECT_TYPES.indexOf(type) >= 0), "Object types '%s' are not among %s", allowed, Eic.OBJECT_TYPES);
        // in one order, so that two declarations listing the same letters otherwise agree
        objectTypes = Eic.OBJECT_TYPES.chars().filter(type -> allowed.indexOf(type) >= 0)
                .mapToObj(type -> String.valueOf((char) type)).collect(Collectors.joining());
    }

    public static ValueCheck of(CheckedKind kind)
    {
        return new ValueCheck(kind, "");
    }

    /**
     * The check {@code declaration} writes for {@code column} ({@code EIC:X|Y}, {@code malo}); throws
     * {@link IllegalArgumentException} naming the column and what it takes.
     */
    public static ValueCheck parse(String column, String declaration)
    {
        String text = declaration.trim().toUpperCase(Locale.ROOT);
        int colon = text.indexOf(':');
        String kindName = colon < 0 ? text : text.substring(0, colon);
        CheckedKind kind = Arrays.stream(CheckedKind.values()).filter(candidate -> candidate.name().equals(kindName)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("Unknown check '%s' of column '%s': write one of %s".formatted(kindName, column, declarations())));
        if (colon < 0) {
            return of(kind);
        }
        checkArgument(kind == CheckedKind.EIC, "Check '%s' of column '%s' lists object types, which only an EIC has: write %s", declaration.trim(), column, kindName);
        StringBuilder types = new StringBuilder();
        for (String type : Splitter.on('|').trimResults().split(text.substring(colon + 1))) {
            checkArgument(type.length() == 1 && Eic.OBJECT_TYPES.contains(type),
                    "Check '%s' of column '%s' allows EIC object type '%s', which ENTSO-E does not give: list letters among %s, separated by '|' (EIC:X|Y)",
                    declaration.trim(), column, type, String.join(" ", Eic.OBJECT_TYPES.split("")));
            types.append(type);
        }
        return new ValueCheck(kind, types.toString());
    }

    // what a declaration may write, for the messages
    private static String declarations()
    {
        return "EIC, EIC:<object types among %s separated by '|'>, MALO, MELO, BDEW".formatted(String.join(" ", Eic.OBJECT_TYPES.split("")));
    }

    /**
     * The canonical spelling of {@code value}, a value of {@code column}: trimmed, an EIC and a MeLo-ID in uppercase.
     * Throws {@link InvalidReadingException} naming the column, the value, the check and what a valid value looks like.
     */
    public String canonical(String column, String value)
    {
        try {
            return switch (kind) {
                case EIC -> {
                    Eic eic = Eic.parse(value);
                    if (!objectTypes.isEmpty() && objectTypes.indexOf(eic.objectType()) < 0) {
                        throw new InvalidReadingException("Invalid EIC '%s': its object type (character 3) is '%s', this column takes %s"
                                .formatted(eic, eic.objectType(), String.join(" or ", objectTypes.split(""))));
                    }
                    yield eic.value();
                }
                case MALO -> MaloId.parse(value.trim()).value();
                case MELO -> new MeloId(value.trim().toUpperCase(Locale.ROOT)).value();
                case BDEW -> BdewCode.parse(value).value();
            };
        }
        catch (InvalidReadingException e) {
            throw new InvalidReadingException("Column '%s' holds '%s', which its check %s refuses: %s; a valid value is %s"
                    .formatted(column, value, this, e.getMessage(), validExample()));
        }
    }

    // what a valid value looks like, with an example
    private String validExample()
    {
        return switch (kind) {
            case EIC -> "16 characters of digits, uppercase letters and '-', the 3rd its object type%s, the 16th the check character (e.g. '10YDE-RWENET---I')"
                    .formatted(objectTypes.isEmpty() ? "" : " (" + String.join(" or ", objectTypes.split("")) + ")");
            case MALO -> "11 digits, the first not 0, the last the check digit (e.g. '41373559241')";
            case MELO -> "33 characters: 2 letters, 6 digits, 25 letters or digits (e.g. 'DE0001234567890123456789012345678')";
            case BDEW -> "13 digits (e.g. '9900000000003')";
        };
    }

    /** The regular expression (PostgreSQL's) a canonical value matches: the shape, without the arithmetic of a check character. */
    public String pattern()
    {
        return switch (kind) {
            case EIC -> "^[0-9A-Z-]{2}%s[0-9A-Z-]{12}[0-9A-Z]$".formatted(objectTypes.isEmpty() ? "[A-Z]" : "[" + objectTypes + "]");
            case MALO -> "^[1-9][0-9]{10}$";
            case MELO -> "^[A-Z]{2}[0-9]{6}[A-Z0-9]{25}$";
            case BDEW -> "^[0-9]{13}$";
        };
    }

    /** The check as a declaration writes it: {@code EIC}, {@code EIC:X|Y}, {@code MALO}. */
    @Override
    public String toString()
    {
        return objectTypes.isEmpty() ? kind.name() : kind.name() + ":" + String.join("|", objectTypes.split(""));
    }
}
