package io.meterstore.core;

import java.time.Instant;
import java.time.YearMonth;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static java.util.Objects.requireNonNull;

/**
 * The scope within which correction versions compete: {@code <13-digit network operator id>:<YYYY-MM>}, the month
 * being the settlement month of the interval (for gas cut at 06:00 local time), never the month of delivery.
 */
public record VersionScope(String operatorId, YearMonth month)
{
    private static final Pattern OPERATOR_ID = Pattern.compile("\\d{13}");
    private static final Pattern SCOPE = Pattern.compile("(\\d{13}):(\\d{4}-(0[1-9]|1[0-2]))");

    public VersionScope
    {
        requireNonNull(operatorId, "operatorId is null");
        requireNonNull(month, "month is null");
        if (!OPERATOR_ID.matcher(operatorId).matches()) {
            throw new InvalidReadingException("Invalid network operator id '%s': it has exactly 13 digits (a BDEW or DVGW market partner id)".formatted(operatorId));
        }
    }

    /** The scope of an interval starting at {@code from}: its settlement month under this operator. */
    public static VersionScope of(String operatorId, Sparte sparte, Instant from)
    {
        return new VersionScope(operatorId, MeteringCalendar.settlementMonth(sparte, from));
    }

    /** Reads a stored scope; empty when it is not {@code <13 digits>:<YYYY-MM>}. */
    public static Optional<VersionScope> tryParse(String value)
    {
        Matcher matcher = SCOPE.matcher(requireNonNull(value, "value is null"));
        if (!matcher.matches()) {
            return Optional.empty();
        }
        return Optional.of(new VersionScope(matcher.group(1), YearMonth.parse(matcher.group(2))));
    }

    @Override
    public String toString()
    {
        return operatorId + ":" + month;
    }
}
