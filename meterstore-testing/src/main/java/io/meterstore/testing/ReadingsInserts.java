package io.meterstore.testing;

import io.meterstore.core.Reading;

import java.math.BigInteger;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;

import static java.util.stream.Collectors.joining;

/** Readings as Trino INSERT statements into {@code readings_versions}, as a client writes them, and the literals they take. */
public final class ReadingsInserts
{
    private static final DateTimeFormatter TIMESTAMP = DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss.SSSSSS").withZone(ZoneOffset.UTC);

    private ReadingsInserts() {}

    /** One INSERT of {@code readings} with recorded_at and balancing_day NULL, for the INSERT to fill. */
    public static String insert(List<Reading> readings)
    {
        return "INSERT INTO readings_versions VALUES " + readings.stream().map(reading -> values(reading, false)).collect(joining(", "));
    }

    /** One INSERT of {@code readings} with every column given: the rows are learned at their own recorded_at. */
    public static String insertAsRecorded(List<Reading> readings)
    {
        return "INSERT INTO readings_versions VALUES " + readings.stream().map(reading -> values(reading, true)).collect(joining(", "));
    }

    /** A row of VALUES with recorded_at and balancing_day NULL. */
    public static String values(Reading reading)
    {
        return values(reading, false);
    }

    private static String values(Reading reading, boolean asRecorded)
    {
        // the values of the table's attribute columns, which follow the readings columns
        String attributes = reading.attributes().stream().map(value -> ", " + value.map(ReadingsInserts::literal).orElse("NULL")).collect(joining());
        return "(%s, %s, %s, %s, %s, %s, DECIMAL '%s', %s, %s, %s, %s, %s, %s, DECIMAL '%s', %s, %s, %s%s)".formatted(
                literal(reading.maloId()),
                reading.meloId().map(ReadingsInserts::literal).orElse("NULL"),
                literal(reading.obisCode()),
                literal(reading.sparte().name()),
                timestamp(reading.from()),
                reading.to().map(ReadingsInserts::timestamp).orElse("NULL"),
                reading.value().toPlainString(),
                literal(reading.unit().name()),
                literal(reading.quality().name()),
                literal(reading.resolution()),
                literal(reading.sourceKind()),
                reading.sourceDetail().map(ReadingsInserts::literal).orElse("NULL"),
                reading.provenance().map(ReadingsInserts::literal).orElse("NULL"),
                reading.version(),
                literal(reading.versionScope()),
                asRecorded ? timestamp(reading.recordedAt()) : "NULL",
                asRecorded ? "DATE '%s'".formatted(reading.balancingDay()) : "NULL",
                attributes);
    }

    public static String timestamp(Instant instant)
    {
        return "TIMESTAMP '%s UTC'".formatted(TIMESTAMP.format(instant));
    }

    public static String literal(String value)
    {
        return "'" + value.replace("'", "''") + "'";
    }

    /** A version number as the generator and the demo make them: the instant in microseconds since the epoch. */
    public static BigInteger epochMicros(Instant instant)
    {
        return BigInteger.valueOf(instant.getEpochSecond()).multiply(BigInteger.valueOf(1_000_000)).add(BigInteger.valueOf(instant.getNano() / 1_000));
    }
}
