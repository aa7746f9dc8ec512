package io.meterstore.trino.system;

import com.google.common.collect.ImmutableList;
import io.airlift.slice.Slice;
import io.meterstore.core.IntervalResolution;
import io.meterstore.core.InvalidReadingException;
import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.Sparte;
import io.meterstore.core.VersionScope;
import io.trino.spi.TrinoException;
import io.trino.spi.function.Description;
import io.trino.spi.function.LiteralParameters;
import io.trino.spi.function.ScalarFunction;
import io.trino.spi.function.SqlNullable;
import io.trino.spi.function.SqlType;
import io.trino.spi.type.LongTimestampWithTimeZone;
import io.trino.spi.type.StandardTypes;

import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Optional;

import static io.airlift.slice.Slices.utf8Slice;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_INVALID_ARGUMENT;
import static io.trino.spi.type.DateTimeEncoding.unpackMillisUtc;
import static io.trino.spi.type.Timestamps.PICOSECONDS_PER_NANOSECOND;

/**
 * The metering calendar in SQL, in {@code meterstore.system}: Berlin days and months, gas days, the balancing day and
 * month of a commodity, the intervals a day holds and the version scope of an interval. Each is a thin call into
 * meterstore-core's {@link MeteringCalendar}, the code INSERT derives balancing_day and checks version_scope with.
 * Timestamps of any precision are taken with their time zone; one without a zone is read in the session's zone, as
 * Trino coerces it.
 */
public final class CalendarFunctions
{
    private CalendarFunctions() {}

    /** Every function class of the calendar, for the connector's function bundle. */
    public static final List<Class<?>> CLASSES = ImmutableList.of(
            CalendarFunctions.class,
            LocalDay.class,
            GasDay.class,
            BalancingDay.class,
            LocalMonth.class,
            BalancingMonth.class,
            VersionScopeFunction.class);

    @ScalarFunction("meter_expected_intervals")
    @Description("Intervals of a resolution a Berlin calendar day holds: 92, 96 or 100 quarter-hours; P1D 1; P1M 1 on the 1st, else 0; NULL for another calendar period such as P1Y")
    @SqlNullable
    @SqlType(StandardTypes.BIGINT)
    public static Long expectedIntervals(@SqlType(StandardTypes.DATE) long day, @SqlType(StandardTypes.VARCHAR) Slice resolution)
    {
        return expected(day, resolution, Sparte.STROM);
    }

    @ScalarFunction("meter_expected_intervals")
    @Description("Intervals of a resolution the balancing day of a commodity holds; for GAS the gas day, whose 23- and 25-hour days are the Saturdays")
    @SqlNullable
    @SqlType(StandardTypes.BIGINT)
    public static Long expectedIntervalsOfCommodity(@SqlType(StandardTypes.DATE) long day, @SqlType(StandardTypes.VARCHAR) Slice resolution, @SqlType(StandardTypes.VARCHAR) Slice sparte)
    {
        return expected(day, resolution, sparte(sparte));
    }

    private static Long expected(long day, Slice resolution, Sparte sparte)
    {
        Optional<Long> intervals = MeteringCalendar.expectedIntervals(LocalDate.ofEpochDay(day), resolution(resolution), sparte);
        return intervals.orElse(null);
    }

    @ScalarFunction("meter_local_day")
    @Description("The Berlin calendar day of an instant")
    public static final class LocalDay
    {
        private LocalDay() {}

        @LiteralParameters("p")
        @SqlType(StandardTypes.DATE)
        public static long localDay(@SqlType("timestamp(p) with time zone") long packedEpochMillis)
        {
            return MeteringCalendar.localDay(instant(packedEpochMillis)).toEpochDay();
        }

        @LiteralParameters("p")
        @SqlType(StandardTypes.DATE)
        public static long localDay(@SqlType("timestamp(p) with time zone") LongTimestampWithTimeZone timestamp)
        {
            return MeteringCalendar.localDay(instant(timestamp)).toEpochDay();
        }
    }

    @ScalarFunction("meter_gas_day")
    @Description("The gas day (Gastag) of an instant: the day its 06:00 to 06:00 Berlin span starts on")
    public static final class GasDay
    {
        private GasDay() {}

        @LiteralParameters("p")
        @SqlType(StandardTypes.DATE)
        public static long gasDay(@SqlType("timestamp(p) with time zone") long packedEpochMillis)
        {
            return MeteringCalendar.gasDay(instant(packedEpochMillis)).toEpochDay();
        }

        @LiteralParameters("p")
        @SqlType(StandardTypes.DATE)
        public static long gasDay(@SqlType("timestamp(p) with time zone") LongTimestampWithTimeZone timestamp)
        {
            return MeteringCalendar.gasDay(instant(timestamp)).toEpochDay();
        }
    }

    @ScalarFunction("meter_balancing_day")
    @Description("The balancing day of an instant for a commodity: the gas day for GAS, the Berlin calendar day for STROM, WAERME and WASSER")
    public static final class BalancingDay
    {
        private BalancingDay() {}

        @LiteralParameters("p")
        @SqlType(StandardTypes.DATE)
        public static long balancingDay(@SqlType("timestamp(p) with time zone") long packedEpochMillis, @SqlType(StandardTypes.VARCHAR) Slice sparte)
        {
            return MeteringCalendar.balancingDay(sparte(sparte), instant(packedEpochMillis)).toEpochDay();
        }

        @LiteralParameters("p")
        @SqlType(StandardTypes.DATE)
        public static long balancingDay(@SqlType("timestamp(p) with time zone") LongTimestampWithTimeZone timestamp, @SqlType(StandardTypes.VARCHAR) Slice sparte)
        {
            return MeteringCalendar.balancingDay(sparte(sparte), instant(timestamp)).toEpochDay();
        }
    }

    @ScalarFunction("meter_local_month")
    @Description("The Berlin calendar month of an instant, as its first day")
    public static final class LocalMonth
    {
        private LocalMonth() {}

        @LiteralParameters("p")
        @SqlType(StandardTypes.DATE)
        public static long localMonth(@SqlType("timestamp(p) with time zone") long packedEpochMillis)
        {
            return MeteringCalendar.localMonth(instant(packedEpochMillis)).toEpochDay();
        }

        @LiteralParameters("p")
        @SqlType(StandardTypes.DATE)
        public static long localMonth(@SqlType("timestamp(p) with time zone") LongTimestampWithTimeZone timestamp)
        {
            return MeteringCalendar.localMonth(instant(timestamp)).toEpochDay();
        }
    }

    @ScalarFunction("meter_balancing_month")
    @Description("The settlement month (Bilanzierungsmonat) of an instant for a commodity, as its first day; for GAS cut at 06:00 Berlin time")
    public static final class BalancingMonth
    {
        private BalancingMonth() {}

        @LiteralParameters("p")
        @SqlType(StandardTypes.DATE)
        public static long balancingMonth(@SqlType("timestamp(p) with time zone") long packedEpochMillis, @SqlType(StandardTypes.VARCHAR) Slice sparte)
        {
            return MeteringCalendar.balancingMonth(sparte(sparte), instant(packedEpochMillis)).toEpochDay();
        }

        @LiteralParameters("p")
        @SqlType(StandardTypes.DATE)
        public static long balancingMonth(@SqlType("timestamp(p) with time zone") LongTimestampWithTimeZone timestamp, @SqlType(StandardTypes.VARCHAR) Slice sparte)
        {
            return MeteringCalendar.balancingMonth(sparte(sparte), instant(timestamp)).toEpochDay();
        }
    }

    @ScalarFunction("meter_version_scope")
    @Description("The version scope of an interval: '<13-digit network operator id>:<YYYY-MM>' with the settlement month of the interval")
    public static final class VersionScopeFunction
    {
        private VersionScopeFunction() {}

        @LiteralParameters("p")
        @SqlType(StandardTypes.VARCHAR)
        public static Slice versionScope(@SqlType(StandardTypes.VARCHAR) Slice operatorId, @SqlType("timestamp(p) with time zone") long packedEpochMillis, @SqlType(StandardTypes.VARCHAR) Slice sparte)
        {
            return versionScope(operatorId, instant(packedEpochMillis), sparte);
        }

        @LiteralParameters("p")
        @SqlType(StandardTypes.VARCHAR)
        public static Slice versionScope(@SqlType(StandardTypes.VARCHAR) Slice operatorId, @SqlType("timestamp(p) with time zone") LongTimestampWithTimeZone timestamp, @SqlType(StandardTypes.VARCHAR) Slice sparte)
        {
            return versionScope(operatorId, instant(timestamp), sparte);
        }

        private static Slice versionScope(Slice operatorId, Instant from, Slice sparte)
        {
            try {
                return utf8Slice(VersionScope.of(operatorId.toStringUtf8(), sparte(sparte), from).toString());
            }
            catch (InvalidReadingException e) {
                throw invalidArgument(e);
            }
        }
    }

    private static Instant instant(long packedEpochMillis)
    {
        return Instant.ofEpochMilli(unpackMillisUtc(packedEpochMillis));
    }

    private static Instant instant(LongTimestampWithTimeZone timestamp)
    {
        return Instant.ofEpochMilli(timestamp.getEpochMillis()).plusNanos(timestamp.getPicosOfMilli() / PICOSECONDS_PER_NANOSECOND);
    }

    static Sparte sparte(Slice sparte)
    {
        try {
            return Sparte.parse(sparte.toStringUtf8());
        }
        catch (InvalidReadingException e) {
            throw invalidArgument(e);
        }
    }

    private static IntervalResolution resolution(Slice resolution)
    {
        try {
            return IntervalResolution.parse(resolution.toStringUtf8());
        }
        catch (InvalidReadingException e) {
            throw invalidArgument(e);
        }
    }

    static TrinoException invalidArgument(InvalidReadingException e)
    {
        return new TrinoException(METERSTORE_INVALID_ARGUMENT, e.getMessage(), e);
    }
}
