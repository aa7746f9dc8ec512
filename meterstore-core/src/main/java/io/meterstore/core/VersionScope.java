package io.meterstore.core;

import java.time.Instant;
import java.time.YearMonth;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * The scope within which correction versions compete: {@code <13-digit network operator id>:<YYYY-MM>}, the month
 * being the settlement month of the interval (for gas cut at 06:00 local time), never the month of delivery.
 */
public record VersionScope(String operatorId, YearMonth month)
{
    public VersionScope
    {
        requireNonNull(operatorId, "operatorId is null");
        requireNonNull(month, "month is null");
        if (operatorId.length() != 13 || !digits(operatorId, 0, 13)) {
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
        requireNonNull(value, "value is null");
        // (\d{13}):(\d{4})-(0[1-9]|1[0-2]), by hand: every archived row is checked
        if (value.length() != 21 || value.charAt(13) != ':' || value.charAt(18) != '-'
                || !digits(value, 0, 13) || !digits(value, 14, 18) || !digits(value, 19, 21)) {
            return Optional.empty();
        }
        int month = Integer.parseInt(value, 19, 21, 10);
        if (month < 1 || month > 12) {
            return Optional.empty();
        }
        return Optional.of(new VersionScope(value.substring(0, 13), YearMonth.of(Integer.parseInt(value, 14, 18, 10), month)));
    }

    private static boolean digits(String value, int from, int to)
    {
        for (int index = from; index < to; index++) {
            if (value.charAt(index) < '0' || value.charAt(index) > '9') {
                return false;
            }
        }
        return true;
    }

    @Override
    public String toString()
    {
        return operatorId + ":" + month;
    }
}
