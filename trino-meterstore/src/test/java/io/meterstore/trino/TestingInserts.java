package io.meterstore.trino;

import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.Sparte;
import io.meterstore.core.Sparte.MeasurementUnit;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsInserts;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;

import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;

/** Corrections as INSERT statements, and where their rows ended up in each tier. */
final class TestingInserts
{
    private TestingInserts() {}

    /** A quarter-hour correction of meter {@code meter}; recorded_at and balancing_day are left for the INSERT to fill. */
    static Reading correction(int meter, Instant from, long version, String value)
    {
        Instant to = from.plus(Duration.ofMinutes(15));
        return new Reading(
                ReadingsGenerator.maloId(meter),
                Optional.empty(),
                ReadingsGenerator.OBIS_CODE,
                Sparte.STROM,
                from,
                to,
                new BigDecimal(value),
                MeasurementUnit.KWH,
                Quality.CORRECTED,
                ReadingsGenerator.RESOLUTION,
                "MANUAL_ENTRY",
                Optional.of("{\"ticket\": \"COR-%s\"}".formatted(version)),
                Optional.empty(),
                BigInteger.valueOf(version),
                Reading.versionScope(ReadingsGenerator.DEFAULT_OPERATOR_ID, Sparte.STROM, from),
                Instant.EPOCH,
                MeteringCalendar.balancingDay(Sparte.STROM, from));
    }

    static String insert(List<Reading> readings)
    {
        return ReadingsInserts.insert(readings);
    }

    static String insert(Reading... readings)
    {
        return insert(List.of(readings));
    }

    /** As {@link #insert(List)}, with every column given: the rows are learned at their own recorded_at. */
    static String insertAsRecorded(List<Reading> readings)
    {
        return ReadingsInserts.insertAsRecorded(readings);
    }

    /**
     * A correction of {@code winner} learned at {@code recordedAt}, as a late MSCONS correction arrives: another value,
     * CORRECTED, entered by hand with {@code sourceDetail}, versioned by the instant it was recorded.
     */
    static Reading lateCorrection(Reading winner, Instant recordedAt, String sourceDetail)
    {
        return new Reading(winner.maloId(), winner.meloId(), winner.obisCode(), winner.sparte(), winner.from(), winner.to(),
                winner.value().add(new BigDecimal("0.125")), winner.unit(), Quality.CORRECTED, winner.resolution(), "MANUAL_ENTRY",
                Optional.of(sourceDetail), winner.provenance(), epochMicros(recordedAt), winner.versionScope(), recordedAt, winner.balancingDay());
    }

    /** A row of VALUES with recorded_at and balancing_day NULL. */
    static String values(Reading reading)
    {
        return ReadingsInserts.values(reading);
    }

    static BigInteger epochMicros(Instant instant)
    {
        return ReadingsInserts.epochMicros(instant);
    }

    static String timestamp(Instant instant)
    {
        return ReadingsInserts.timestamp(instant);
    }

    static String literal(String value)
    {
        return ReadingsInserts.literal(value);
    }

    /** The key of a reading as a SQL predicate. */
    static String keyPredicate(Reading reading)
    {
        return "malo_id = '%s' AND obis_code = '%s' AND \"from\" = %s AND version = %s".formatted(reading.maloId(), reading.obisCode(), timestamp(reading.from()), reading.version());
    }

    /** How many rows with the key of {@code reading} PostgreSQL holds in the partition of its day, read by name. */
    static long hotRows(Connection connection, Reading reading)
            throws SQLException
    {
        String partition = TestingMeterstoreTables.hotTier().naming().partitionName(TestingMeterstoreTables.hotTier().naming().alignDown(reading.from()));
        if (!TestingMeterstoreTables.hotTier().relationExists(connection, partition)) {
            return 0;
        }
        try (PreparedStatement statement = connection.prepareStatement("SELECT count(*) FROM %s.%s WHERE malo_id = ? AND obis_code = ? AND \"from\" = ? AND version = ?"
                .formatted(SCHEMA, partition))) {
            statement.setString(1, reading.maloId());
            statement.setString(2, reading.obisCode());
            statement.setObject(3, reading.from().atOffset(ZoneOffset.UTC));
            statement.setBigDecimal(4, new BigDecimal(reading.version()));
            try (ResultSet result = statement.executeQuery()) {
                result.next();
                return result.getLong(1);
            }
        }
    }
}
