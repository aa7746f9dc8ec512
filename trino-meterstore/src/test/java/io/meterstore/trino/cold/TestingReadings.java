package io.meterstore.trino.cold;

import io.meterstore.core.MaloId;
import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.Sparte;
import io.meterstore.core.Sparte.MeasurementUnit;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/** Readings whose every column varies: nulls in the nullable columns, negative and full-precision quantities, 20-digit versions. */
final class TestingReadings
{
    /** The order of {@link ReadingsColumn#SORT_KEY}, in which data files are written. */
    static final Comparator<Reading> SORT_KEY = Comparator.comparing(Reading::maloId)
            .thenComparing(Reading::obisCode)
            .thenComparing(Reading::from)
            .thenComparing(Reading::version);

    private static final Duration QUARTER_HOUR = Duration.ofMinutes(15);

    private TestingReadings() {}

    static String maloId(int number)
    {
        String firstTenDigits = "5%09d".formatted(number);
        return firstTenDigits + MaloId.checkDigit(firstTenDigits);
    }

    /** {@code intervals} quarter hours from {@code first} for every MaLo and OBIS code, in sort-key order. */
    static List<Reading> readings(List<String> maloIds, List<String> obisCodes, Instant first, int intervals)
    {
        List<Reading> readings = new ArrayList<>();
        int sequence = 0;
        for (String maloId : maloIds) {
            for (String obisCode : obisCodes) {
                for (int interval = 0; interval < intervals; interval++) {
                    readings.add(reading(maloId, obisCode, first.plus(QUARTER_HOUR.multipliedBy(interval)), sequence));
                    sequence++;
                }
            }
        }
        readings.sort(SORT_KEY);
        return List.copyOf(readings);
    }

    private static Reading reading(String maloId, String obisCode, Instant from, int sequence)
    {
        // the full decimal(18,6) range, signs and scales; a version with all 20 digits
        BigDecimal value = BigDecimal.valueOf((sequence % 2 == 0 ? 1 : -1) * (999_999_999_999_999_999L - sequence * 7_919L), 6);
        BigInteger version = new BigInteger("99999999999999999999").subtract(BigInteger.valueOf(sequence));
        return new Reading(
                maloId,
                sequence % 3 == 0 ? Optional.empty() : Optional.of("DE0001234567890000000000000%06d".formatted(sequence)),
                obisCode,
                Sparte.STROM,
                from,
                from.plus(QUARTER_HOUR),
                value,
                MeasurementUnit.KWH,
                Quality.values()[sequence % Quality.values().length],
                "PT15M",
                "MSCONS",
                sequence % 2 == 0 ? Optional.empty() : Optional.of("{\"reference\":\"MSCONS-%s\",\"sender\":\"9900000000003\"}".formatted(sequence)),
                sequence % 5 == 0 ? Optional.empty() : Optional.of("[{\"event\":\"ingested\",\"by\":\"ä-ö-ü €\"}]"),
                version,
                Reading.versionScope("9900000000003", Sparte.STROM, from),
                // microsecond precision survives; the time zone of a timestamp with time zone is UTC on the way out
                from.plus(Duration.ofDays(2)).plusNanos(123_456_000L + sequence * 1_000L),
                MeteringCalendar.balancingDay(Sparte.STROM, from));
    }
}
