package io.meterstore.trino;

import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.Sparte;
import io.meterstore.core.Sparte.MeasurementUnit;
import io.meterstore.testing.ReadingsGenerator;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Optional;

import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;
import static java.util.stream.Collectors.joining;

/** Corrections as INSERT statements, and where their rows ended up in each tier. */
final class TestingInserts
{
    private static final DateTimeFormatter TIMESTAMP = DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss.SSSSSS").withZone(ZoneOffset.UTC);

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
        return "INSERT INTO readings_versions VALUES " + readings.stream().map(TestingInserts::values).collect(joining(", "));
    }

    static String insert(Reading... readings)
    {
        return insert(List.of(readings));
    }

    /** As {@link #insert(List)}, with every column given: the rows are learned at their own recorded_at. */
    static String insertAsRecorded(List<Reading> readings)
    {
        return "INSERT INTO readings_versions VALUES " + readings.stream()
                .map(reading -> {
                    String values = values(reading);
                    return values.substring(0, values.length() - "NULL, NULL)".length()) + "%s, DATE '%s')".formatted(timestamp(reading.recordedAt()), reading.balancingDay());
                })
                .collect(joining(", "));
    }

    /** A row of VALUES with recorded_at and balancing_day NULL. */
    static String values(Reading reading)
    {
        return "(%s, %s, %s, %s, %s, %s, DECIMAL '%s', %s, %s, %s, %s, %s, %s, DECIMAL '%s', %s, NULL, NULL)".formatted(
                literal(reading.maloId()),
                reading.meloId().map(TestingInserts::literal).orElse("NULL"),
                literal(reading.obisCode()),
                literal(reading.sparte().name()),
                timestamp(reading.from()),
                timestamp(reading.to()),
                reading.value().toPlainString(),
                literal(reading.unit().name()),
                literal(reading.quality().name()),
                literal(reading.resolution()),
                literal(reading.sourceKind()),
                reading.sourceDetail().map(TestingInserts::literal).orElse("NULL"),
                reading.provenance().map(TestingInserts::literal).orElse("NULL"),
                reading.version(),
                literal(reading.versionScope()));
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

    /** A version number as the generator and the demo make them: the instant in microseconds since the epoch. */
    static BigInteger epochMicros(Instant instant)
    {
        return BigInteger.valueOf(instant.getEpochSecond()).multiply(BigInteger.valueOf(1_000_000)).add(BigInteger.valueOf(instant.getNano() / 1_000));
    }

    static String timestamp(Instant instant)
    {
        return "TIMESTAMP '%s UTC'".formatted(TIMESTAMP.format(instant));
    }

    static String literal(String value)
    {
        return "'" + value.replace("'", "''") + "'";
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
