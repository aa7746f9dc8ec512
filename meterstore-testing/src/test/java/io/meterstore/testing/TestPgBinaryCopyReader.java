package io.meterstore.testing;

import io.meterstore.core.PgBinaryCopy;
import io.meterstore.core.PgBinaryCopyReader;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyOut;

import java.io.ByteArrayOutputStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What real PostgreSQL sends for COPY ... (FORMAT binary), decoded without text parsing. */
final class TestPgBinaryCopyReader
{
    private static final TestingDatabase DATABASE = TestingPostgresServer.shared().createDatabase("binary_copy");

    @Test
    void testDecodesEveryColumnKind()
            throws Exception
    {
        List<String> numerics = List.of("0", "-1.5", "123456789012.123456", "0.000001", "-0.000001", "999999999999.999999", "10000", "0.1", "20000.000100");
        List<String> timestamps = List.of("1999-12-31T23:59:59.999999Z", "2026-03-29T01:00:00Z", "1970-01-01T00:00:00Z", "1900-01-01T00:00:00.000001Z");
        List<byte[]> messages = copy("""
                SELECT n::numeric(18,6), t::timestamptz, t::timestamptz::date, 'Zähler ' || n, NULL::text
                FROM unnest(ARRAY[%s]) WITH ORDINALITY AS numbers(n, i), unnest(ARRAY[%s]) WITH ORDINALITY AS timestamps(t, j)
                ORDER BY i, j""".formatted(quoted(numerics), quoted(timestamps)));
        for (List<byte[]> chunks : List.of(messages, rechunked(messages, 7))) {
            PgBinaryCopyReader reader = reader(chunks);
            for (String numeric : numerics) {
                for (String timestamp : timestamps) {
                    assertThat(reader.nextRow()).isTrue();
                    assertThat(reader.fieldCount()).isEqualTo(5);
                    assertThat(reader.numericUnscaled(0, 6)).isEqualTo(new BigDecimal(numeric).setScale(6).unscaledValue().longValueExact());
                    assertThat(reader.numericUnscaledBig(0, 6)).isEqualTo(new BigDecimal(numeric).setScale(6).unscaledValue());
                    Instant instant = Instant.parse(timestamp);
                    assertThat(reader.timestampMicros(1)).isEqualTo(Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000L), instant.getNano() / 1_000));
                    assertThat(reader.epochDay(2)).isEqualTo(LocalDate.ofInstant(instant, ZoneOffset.UTC).toEpochDay());
                    assertThat(reader.text(3)).isEqualTo("Zähler " + numeric);
                    assertThat(reader.isNull(4)).isTrue();
                    assertThat(reader.isNull(3)).isFalse();
                }
            }
            assertThat(reader.nextRow()).isFalse();
            assertThat(reader.rows()).isEqualTo((long) numerics.size() * timestamps.size());
        }
    }

    @Test
    void testLargeNumericsAndManyRows()
            throws Exception
    {
        PgBinaryCopyReader reader = reader(copy("SELECT 99999999999999999999::numeric(20,0), g::numeric(20,0), '' FROM generate_series(1, 20000) g"));
        for (long row = 1; row <= 20_000; row++) {
            assertThat(reader.nextRow()).isTrue();
            assertThat(reader.numericUnscaledBig(0, 0)).isEqualTo(new BigInteger("99999999999999999999"));
            assertThat(reader.numericUnscaled(1, 0)).isEqualTo(row);
            assertThat(reader.length(2)).isZero();
            assertThat(reader.text(2)).isEmpty();
        }
        assertThat(reader.nextRow()).isFalse();
        PgBinaryCopyReader large = reader(copy("SELECT 99999999999999999999::numeric(20,0), 1.25::numeric(18,6)"));
        assertThat(large.nextRow()).isTrue();
        assertThatThrownBy(() -> large.numericUnscaled(0, 0)).isInstanceOf(ArithmeticException.class);
        // 1.25 has two fraction digits: exact at scale 2, refused at scale 1 rather than rounded
        assertThat(large.numericUnscaled(1, 2)).isEqualTo(125);
        assertThatThrownBy(() -> large.numericUnscaled(1, 1)).isInstanceOf(ArithmeticException.class);
    }

    @Test
    void testNumericFitsLongOnlyWhereALongHoldsTheUnscaledValue()
            throws Exception
    {
        // a version from epoch microseconds (16 digits) takes the long path; 17 digits and more take BigInteger's
        List<String> numerics = List.of("0", "-1234", "1764547200000000", "9999999999999999", "10000000000000000", "9223372036854775807", "99999999999999999999");
        List<Boolean> fits = List.of(true, true, true, true, false, false, false);
        PgBinaryCopyReader reader = reader(copy("SELECT n::numeric(20,0) FROM unnest(ARRAY[%s]) WITH ORDINALITY AS t(n, i) ORDER BY i".formatted(quoted(numerics))));
        for (int index = 0; index < numerics.size(); index++) {
            assertThat(reader.nextRow()).isTrue();
            BigInteger expected = new BigInteger(numerics.get(index));
            assertThat(reader.numericFitsLong(0, 0)).as(numerics.get(index)).isEqualTo(fits.get(index));
            if (fits.get(index)) {
                assertThat(reader.numericUnscaled(0, 0)).isEqualTo(expected.longValueExact());
            }
            assertThat(reader.numericUnscaledBig(0, 0)).isEqualTo(expected);
        }
        assertThat(reader.nextRow()).isFalse();
    }

    @Test
    void testParametersAreBoundValuesReadOncePerStatement()
            throws Exception
    {
        String query = "SELECT g::text AS n FROM generate_series(1, 100) g WHERE g >= %s AND g::text <> ALL(%s) ORDER BY g LIMIT %s"
                .formatted(PgBinaryCopy.parameter(1, "int8"), PgBinaryCopy.parameter(2, "text[]"), PgBinaryCopy.parameter(3, "int8"));
        try (Connection connection = DATABASE.connect()) {
            connection.setAutoCommit(false);
            PgBinaryCopyReader rows = PgBinaryCopy.start(connection, query, List.of("95", "{96,\"x'); DROP TABLE y; --\"}", "3")).rows();
            List<String> values = new ArrayList<>();
            while (rows.nextRow()) {
                values.add(rows.text(0));
            }
            assertThat(values).containsExactly("95", "97", "98");
            // a scalar subquery is an InitPlan, evaluated once; a bare current_setting(...)::type is parsed again for every row
            try (Statement statement = connection.createStatement();
                    ResultSet plan = statement.executeQuery("EXPLAIN " + query)) {
                StringBuilder text = new StringBuilder();
                while (plan.next()) {
                    text.append(plan.getString(1)).append('\n');
                }
                assertThat(text.toString()).contains("InitPlan 1", "InitPlan 2", "InitPlan 3").doesNotContain("current_setting('meterstore.p1'::text))::bigint)");
            }
            connection.rollback();
        }
    }

    @Test
    void testIndexOrderStreamsFromTheIndexWithoutSorting()
            throws Exception
    {
        try (Connection connection = DATABASE.connect(); Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE indexed (k int PRIMARY KEY, v int NOT NULL)");
            // stored out of key order, as corrections and late deliveries leave a partition: the index walk is random access
            statement.execute("INSERT INTO indexed SELECT g, g % 10 FROM generate_series(1, 200000) g ORDER BY md5(g::text)");
            statement.execute("ANALYZE indexed");
            // the planner sees what it sees in a large partition: random heap access through the index costs more than a sort
            statement.execute("SET random_page_cost = 1000");
            connection.setAutoCommit(false);
            String query = "SELECT k::text AS key FROM indexed WHERE v >= %s ORDER BY k".formatted(PgBinaryCopy.parameter(1, "int8"));
            PgBinaryCopyReader rows = PgBinaryCopy.startInIndexOrder(connection, query, List.of("5")).rows();
            long previous = 0;
            long count = 0;
            while (rows.nextRow()) {
                long key = Long.parseLong(rows.text(0));
                assertThat(key).isGreaterThan(previous);
                previous = key;
                count++;
            }
            assertThat(count).isEqualTo(100_000);
            // the same transaction plans the same query as the COPY did: a walk of the primary key, the bound inside it
            try (ResultSet plan = statement.executeQuery("EXPLAIN " + query)) {
                StringBuilder text = new StringBuilder();
                while (plan.next()) {
                    text.append(plan.getString(1)).append('\n');
                }
                assertThat(text.toString()).contains("Index Scan using indexed_pkey").doesNotContain("Sort");
            }
            connection.rollback();
        }
    }

    @Test
    void testRejectsWhatIsNotBinaryCopy()
    {
        assertThatThrownBy(() -> reader(List.of("a,b\n".getBytes())).nextRow())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Binary COPY data has no header");
        assertThatThrownBy(() -> reader(List.of("0123456789abcdefghijkl".getBytes())).nextRow())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("signature is missing");
    }

    private static List<byte[]> copy(String query)
            throws Exception
    {
        List<byte[]> messages = new ArrayList<>();
        try (Connection connection = DATABASE.connect()) {
            CopyOut copy = connection.unwrap(PGConnection.class).getCopyAPI().copyOut("COPY (" + query + ") TO STDOUT (FORMAT binary)");
            for (byte[] message = copy.readFromCopy(); message != null; message = copy.readFromCopy()) {
                messages.add(message);
            }
        }
        return messages;
    }

    /** The same bytes cut into pieces that split headers, lengths and values. */
    private static List<byte[]> rechunked(List<byte[]> messages, int size)
    {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        messages.forEach(all::writeBytes);
        byte[] bytes = all.toByteArray();
        List<byte[]> chunks = new ArrayList<>();
        for (int offset = 0; offset < bytes.length; offset += size) {
            chunks.add(Arrays.copyOfRange(bytes, offset, Math.min(bytes.length, offset + size)));
        }
        return chunks;
    }

    private static PgBinaryCopyReader reader(List<byte[]> chunks)
    {
        Iterator<byte[]> iterator = chunks.iterator();
        return new PgBinaryCopyReader(() -> iterator.hasNext() ? iterator.next() : null);
    }

    private static String quoted(List<String> values)
    {
        return String.join(", ", values.stream().map(value -> "'" + value + "'").toList());
    }
}
