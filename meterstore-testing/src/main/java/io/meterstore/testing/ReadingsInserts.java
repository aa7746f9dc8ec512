package io.meterstore.testing;

import io.meterstore.core.Reading;

import java.math.BigInteger;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.IntStream;

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

    /**
     * One INSERT of {@code readings} with every column given, as {@link #insertAsRecorded}, written as a bulk loader
     * writes it: {@code SELECT * FROM UNNEST} of one array per column, each an array of string literals cast to the
     * column's type. Trino plans such a statement in a fraction of the time of the same rows as VALUES, which it
     * analyses row by row (docs/sql.md, "Writing many rows": 1,920 rows, 1.6 s against 8.6 s an INSERT; the rows stored are the same).
     */
    public static String insertAsRecordedUnnested(List<Reading> readings)
    {
        return insertAsRecordedUnnested(readings, ReadingsInserts::array);
    }

    /**
     * The same INSERT as {@link #insertAsRecordedUnnested}, each column's array one JSON text instead of one literal a
     * value: {@code CAST(CAST(json_parse('["a", null]') AS array(varchar)) AS array(<type>))}. Trino parses, analyses and
     * plans a literal at a time, so the statement of 1,920 rows and 17 columns is 17 literals instead of 32,640; the
     * rows stored are the same.
     */
    public static String insertAsRecordedJson(List<Reading> readings)
    {
        return insertAsRecordedUnnested(readings, ReadingsInserts::jsonArray);
    }

    /** How a column's values are written as an array of {@code type}. */
    private interface ColumnArray
    {
        String array(List<Reading> readings, String type, Function<Reading, Optional<String>> value);
    }

    private static String insertAsRecordedUnnested(List<Reading> readings, ColumnArray form)
    {
        List<String> arrays = List.of(
                form.array(readings, "varchar", reading -> Optional.of(reading.maloId())),
                form.array(readings, "varchar", Reading::meloId),
                form.array(readings, "varchar", reading -> Optional.of(reading.obisCode())),
                form.array(readings, "varchar", reading -> Optional.of(reading.sparte().name())),
                form.array(readings, "timestamp(6) with time zone", reading -> Optional.of(TIMESTAMP.format(reading.from()) + " UTC")),
                form.array(readings, "timestamp(6) with time zone", reading -> reading.to().map(to -> TIMESTAMP.format(to) + " UTC")),
                form.array(readings, "decimal(18,6)", reading -> Optional.of(reading.value().toPlainString())),
                form.array(readings, "varchar", reading -> Optional.of(reading.unit().name())),
                form.array(readings, "varchar", reading -> Optional.of(reading.quality().name())),
                form.array(readings, "varchar", reading -> Optional.of(reading.resolution())),
                form.array(readings, "varchar", reading -> Optional.of(reading.sourceKind())),
                form.array(readings, "varchar", Reading::sourceDetail),
                form.array(readings, "varchar", Reading::provenance),
                form.array(readings, "decimal(20,0)", reading -> Optional.of(reading.version().toString())),
                form.array(readings, "varchar", reading -> Optional.of(reading.versionScope())),
                form.array(readings, "timestamp(6) with time zone", reading -> Optional.of(TIMESTAMP.format(reading.recordedAt()) + " UTC")),
                form.array(readings, "date", reading -> Optional.of(reading.balancingDay().toString())));
        int attributeColumns = readings.isEmpty() ? 0 : readings.getFirst().attributes().size();
        List<String> attributes = IntStream.range(0, attributeColumns)
                .mapToObj(index -> form.array(readings, "varchar", reading -> reading.attributes().get(index)))
                .toList();
        return "INSERT INTO readings_versions SELECT * FROM UNNEST(" + String.join(", ", arrays)
                + attributes.stream().map(column -> ", " + column).collect(joining()) + ")";
    }

    private static String array(List<Reading> readings, String type, Function<Reading, Optional<String>> value)
    {
        return readings.stream()
                .map(reading -> value.apply(reading).map(ReadingsInserts::literal).orElse("NULL"))
                .collect(joining(", ", "CAST(ARRAY[", "] AS array(%s))".formatted(type)));
    }

    private static String jsonArray(List<Reading> readings, String type, Function<Reading, Optional<String>> value)
    {
        String json = readings.stream()
                .map(reading -> value.apply(reading).map(ReadingsInserts::jsonString).orElse("null"))
                .collect(joining(",", "[", "]"));
        return "CAST(CAST(json_parse(%s) AS array(varchar)) AS array(%s))".formatted(literal(json), type);
    }

    private static String jsonString(String value)
    {
        StringBuilder json = new StringBuilder(value.length() + 2).append('"');
        for (char character : value.toCharArray()) {
            switch (character) {
                case '"' -> json.append("\\\"");
                case '\\' -> json.append("\\\\");
                default -> {
                    if (character < 0x20) {
                        json.append("\\u%04x".formatted((int) character));
                    }
                    else {
                        json.append(character);
                    }
                }
            }
        }
        return json.append('"').toString();
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
