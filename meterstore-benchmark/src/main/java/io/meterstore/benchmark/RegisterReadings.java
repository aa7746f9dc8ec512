package io.meterstore.benchmark;

import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.Sparte;
import io.meterstore.core.Sparte.MeasurementUnit;
import io.meterstore.testing.ReadingsGenerator;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.base.Preconditions.checkState;

/**
 * Daily register readings of electricity meters (Zählerstände, OBIS 1-1:1.8.0, STROM), one at each Berlin midnight at
 * cadence P1D, for P1's point table: each meter's register starts somewhere between 1,000 and 50,000 kWh and grows by a
 * day's consumption, drawn from the meter's yearly consumption (1,500 to 7,500 kWh) with a season, weekends, the day's
 * hours (23 and 25 on the DST days), noise and now and then a day away; never less than 10 Wh, so a register never runs
 * backwards. One reading in {@link #CORRECTED_ONE_IN} is delivered misread first (a register 100 to 900 kWh too high) and
 * corrected by a second version two days later, as a meter operator's correction arrives: both versions are written, so
 * the archiver writes the superseded one apart and a reader must resolve them.
 * <p>
 * Days are generated in order, each from the registers the day before left ({@link #day}).
 */
final class RegisterReadings
{
    static final String REGISTER = "1-1:1.8.0";
    static final int CORRECTED_ONE_IN = 50;

    private final long seed;
    private final int meters;
    private final double[] dailyKwh;
    private final long[] registerWh;
    private LocalDate next;

    RegisterReadings(long seed, int meters, LocalDate startDay)
    {
        checkArgument(meters > 0, "meters must be positive");
        this.seed = seed;
        this.meters = meters;
        this.dailyKwh = new double[meters];
        this.registerWh = new long[meters];
        for (int meter = 0; meter < meters; meter++) {
            SplittableRandom random = new SplittableRandom(mix(seed, meter, Long.MIN_VALUE));
            dailyKwh[meter] = (1_500 + random.nextDouble() * 6_000) / 365.25;
            registerWh[meter] = 1_000_000 + random.nextLong(49_000_000);
        }
        this.next = startDay;
    }

    int meters()
    {
        return meters;
    }

    /** Every version of Berlin day {@code day}'s readings, by meter; {@code day} must be the day after the last one generated. */
    List<Reading> day(LocalDate day)
    {
        checkState(day.equals(next), "Register readings are generated day by day: expected %s, not %s", next, day);
        Instant from = MeteringCalendar.startOfBalancingDay(Sparte.STROM, day);
        double hours = Duration.between(from, MeteringCalendar.startOfBalancingDay(Sparte.STROM, day.plusDays(1))).toHours();
        double season = 1 + 0.3 * Math.cos(2 * Math.PI * (day.getDayOfYear() - 15) / 365.25);
        double weekend = day.getDayOfWeek() == DayOfWeek.SATURDAY || day.getDayOfWeek() == DayOfWeek.SUNDAY ? 1.15 : 1.0;
        String versionScope = Reading.versionScope(ReadingsGenerator.DEFAULT_OPERATOR_ID, Sparte.STROM, from);
        List<Reading> readings = new ArrayList<>(meters + meters / CORRECTED_ONE_IN * 2);
        for (int meter = 0; meter < meters; meter++) {
            SplittableRandom random = new SplittableRandom(mix(seed, meter, day.toEpochDay()));
            String maloId = ReadingsGenerator.maloId(meter);
            long register = registerWh[meter];
            if (random.nextInt(CORRECTED_ONE_IN) == 0) {
                long misread = 100_000L * (1 + random.nextInt(9));
                readings.add(reading(maloId, from, register + misread, Quality.MEASURED, 1, versionScope, from.plus(Duration.ofHours(8)), day));
                readings.add(reading(maloId, from, register, Quality.CORRECTED, 2, versionScope, from.plus(Duration.ofDays(2).plusHours(8)), day));
            }
            else {
                readings.add(reading(maloId, from, register, Quality.MEASURED, 1, versionScope, from.plus(Duration.ofHours(8)), day));
            }
            double away = random.nextInt(40) == 0 ? 0.1 : 1.0;
            double noise = 0.6 + 0.8 * random.nextDouble();
            registerWh[meter] = register + Math.max(10, Math.round(dailyKwh[meter] * 1_000 * season * weekend * hours / 24 * noise * away));
        }
        next = day.plusDays(1);
        return readings;
    }

    private static Reading reading(String maloId, Instant from, long registerWh, Quality quality, long version, String versionScope, Instant recordedAt, LocalDate day)
    {
        return new Reading(maloId, Optional.empty(), REGISTER, Sparte.STROM, from, Optional.empty(), BigDecimal.valueOf(registerWh, 3).setScale(Reading.VALUE_SCALE), MeasurementUnit.KWH,
                quality, "P1D", "MSCONS", Optional.empty(), Optional.empty(), BigInteger.valueOf(version), versionScope, recordedAt, day);
    }

    private static long mix(long seed, long meter, long day)
    {
        long hash = seed * 0x9E3779B97F4A7C15L + meter;
        hash = (hash ^ (hash >>> 31)) * 0xBF58476D1CE4E5B9L + day;
        return (hash ^ (hash >>> 29)) * 0x94D049BB133111EBL;
    }
}
