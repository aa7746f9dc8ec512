package io.meterstore.archiver.maintenance;

import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.Sparte;

import java.time.Instant;
import java.time.LocalDate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static com.google.common.base.Preconditions.checkArgument;

/**
 * How long readings are kept, in whole settlement years as the Rust MeterStore counts them ({@code CalendarYears}):
 * with {@code 3y} a reading whose settlement year is 2025 is kept to the end of 2028 and removed from 2029 on, never
 * earlier. Written {@code <years>y}.
 * <p>
 * Or in days ({@link #ofDays}), which no configuration key writes: the soak's, whose simulated weeks hold no month a
 * year's retention would remove.
 */
public record RetentionPeriod(int settlementYears, int days)
{
    private static final Pattern FORMAT = Pattern.compile("([1-9][0-9]{0,2})y");

    public RetentionPeriod
    {
        checkArgument(settlementYears >= 0 && days >= 0 && (settlementYears == 0) != (days == 0), "Exactly one of settlementYears and days must be positive");
    }

    public RetentionPeriod(int settlementYears)
    {
        this(settlementYears, 0);
    }

    /**
     * Readings kept {@code days} Berlin days: at {@code now} the cut is the start of the Berlin day {@code days} before
     * now's. For the soak and tests only, which pass it as {@link MaintenanceSettings}; a deployment keeps whole years.
     */
    public static RetentionPeriod ofDays(int days)
    {
        checkArgument(days >= 1, "days must be at least 1");
        return new RetentionPeriod(0, days);
    }

    /** {@code 3y}; anything else is refused with what to write. */
    public static RetentionPeriod parse(String value)
    {
        Matcher matcher = FORMAT.matcher(value.trim());
        checkArgument(matcher.matches(), "Invalid retention '%s': write whole settlement years, e.g. '3y'", value);
        return new RetentionPeriod(Integer.parseInt(matcher.group(1)));
    }

    /**
     * The instant every reading with "from" before which is past the retention at {@code now}: for a retention of days
     * the start of the Berlin day that many days before now's ({@link #ofDays}); otherwise the start of the Berlin
     * year {@code settlementYears} before the current settlement year. The current year is the gas year, which begins
     * at 06:00 on 1 January, after the electricity year: a table holding both is never swept early for either.
     */
    public Instant cut(Instant now)
    {
        if (days > 0) {
            return MeteringCalendar.startOfLocalDay(MeteringCalendar.localDay(now).minusDays(days));
        }
        int currentYear = MeteringCalendar.settlementMonth(Sparte.GAS, now).getYear();
        return MeteringCalendar.startOfLocalDay(LocalDate.of(currentYear - settlementYears, 1, 1));
    }

    @Override
    public String toString()
    {
        return days > 0 ? days + "d" : settlementYears + "y";
    }
}
