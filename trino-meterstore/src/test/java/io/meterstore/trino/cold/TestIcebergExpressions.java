package io.meterstore.trino.cold;

import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.ReadingsSchema;
import io.meterstore.core.TieringWatermark;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.Range;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.predicate.ValueSet;
import io.trino.spi.type.Int128;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.ExpressionUtil;
import org.apache.iceberg.types.Types.StructType;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import static io.airlift.slice.Slices.utf8Slice;
import static io.meterstore.trino.base.MeterstoreTypes.QUANTITY;
import static io.meterstore.trino.base.MeterstoreTypes.TIMESTAMP_TZ_MICROS;
import static io.meterstore.trino.base.MeterstoreTypes.VERSION;
import static io.meterstore.trino.base.MeterstoreTypes.columnHandle;
import static io.meterstore.trino.base.MeterstoreTypes.toEpochMicros;
import static io.meterstore.trino.base.MeterstoreTypes.toTimestamp;
import static io.meterstore.trino.cold.IcebergExpressions.belowWatermark;
import static io.meterstore.trino.cold.IcebergExpressions.toIcebergExpression;
import static io.trino.spi.type.DateType.DATE;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static org.apache.iceberg.expressions.Expressions.alwaysFalse;
import static org.apache.iceberg.expressions.Expressions.alwaysTrue;
import static org.apache.iceberg.expressions.Expressions.and;
import static org.apache.iceberg.expressions.Expressions.equal;
import static org.apache.iceberg.expressions.Expressions.greaterThan;
import static org.apache.iceberg.expressions.Expressions.greaterThanOrEqual;
import static org.apache.iceberg.expressions.Expressions.in;
import static org.apache.iceberg.expressions.Expressions.isNull;
import static org.apache.iceberg.expressions.Expressions.lessThan;
import static org.apache.iceberg.expressions.Expressions.lessThanOrEqual;
import static org.apache.iceberg.expressions.Expressions.notNull;
import static org.apache.iceberg.expressions.Expressions.or;
import static org.assertj.core.api.Assertions.assertThat;

final class TestIcebergExpressions
{
    private static final StructType SCHEMA = ReadingsSchema.icebergSchema().asStruct();
    private static final MeterstoreColumnHandle MALO_ID = columnHandle(ReadingsColumn.MALO_ID);
    private static final MeterstoreColumnHandle MELO_ID = columnHandle(ReadingsColumn.MELO_ID);
    private static final MeterstoreColumnHandle FROM = columnHandle(ReadingsColumn.FROM);
    private static final MeterstoreColumnHandle VALUE = columnHandle(ReadingsColumn.VALUE);
    private static final MeterstoreColumnHandle VERSION_COLUMN = columnHandle(ReadingsColumn.VERSION);
    private static final MeterstoreColumnHandle BALANCING_DAY = columnHandle(ReadingsColumn.BALANCING_DAY);

    @Test
    void testBelowWatermark()
    {
        Instant watermark = Instant.parse("2024-03-01T00:00:00.000001Z");
        assertEquivalent(belowWatermark(TieringWatermark.of(watermark)), lessThan("from", 1_709_251_200_000_001L));
    }

    @Test
    void testAllAndNone()
    {
        assertEquivalent(toIcebergExpression(TupleDomain.all()), alwaysTrue());
        assertEquivalent(toIcebergExpression(TupleDomain.none()), alwaysFalse());
    }

    @Test
    void testEqualityAndInList()
    {
        assertEquivalent(
                toIcebergExpression(domain(MALO_ID, Domain.singleValue(VARCHAR, utf8Slice("51238696788")))),
                equal("malo_id", "51238696788"));
        assertEquivalent(
                toIcebergExpression(domain(MALO_ID, Domain.multipleValues(VARCHAR, List.of(utf8Slice("51238696788"), utf8Slice("41373559241"))))),
                in("malo_id", "41373559241", "51238696788"));
    }

    @Test
    void testRangesOnEveryKind()
    {
        Instant start = Instant.parse("2024-02-01T00:00:00Z");
        Instant end = Instant.parse("2024-03-01T00:00:00Z");
        assertEquivalent(
                toIcebergExpression(domain(FROM, Domain.create(ValueSet.ofRanges(Range.range(TIMESTAMP_TZ_MICROS, toTimestamp(toEpochMicros(start)), true, toTimestamp(toEpochMicros(end)), false)), false))),
                and(greaterThanOrEqual("from", toEpochMicros(start)), lessThan("from", toEpochMicros(end))));
        assertEquivalent(
                toIcebergExpression(domain(VALUE, Domain.create(ValueSet.ofRanges(Range.greaterThan(QUANTITY, -1_500_000L)), false))),
                greaterThan("value", new BigDecimal("-1.500000")));
        assertEquivalent(
                toIcebergExpression(domain(VERSION_COLUMN, Domain.create(ValueSet.ofRanges(Range.lessThanOrEqual(VERSION, Int128.valueOf(new BigInteger("99999999999999999999")))), false))),
                lessThanOrEqual("version", new BigDecimal("99999999999999999999")));
        assertEquivalent(
                toIcebergExpression(domain(BALANCING_DAY, Domain.singleValue(DATE, LocalDate.parse("2024-02-29").toEpochDay()))),
                equal("balancing_day", (int) LocalDate.parse("2024-02-29").toEpochDay()));
    }

    @Test
    void testNulls()
    {
        assertEquivalent(toIcebergExpression(domain(MELO_ID, Domain.onlyNull(VARCHAR))), isNull("melo_id"));
        assertEquivalent(toIcebergExpression(domain(MELO_ID, Domain.notNull(VARCHAR))), notNull("melo_id"));
        assertEquivalent(
                toIcebergExpression(domain(MELO_ID, Domain.create(ValueSet.of(VARCHAR, utf8Slice("DE0001")), true))),
                or(equal("melo_id", "DE0001"), isNull("melo_id")));
    }

    @Test
    void testDomainsAreConjoined()
    {
        TupleDomain<MeterstoreColumnHandle> constraint = TupleDomain.withColumnDomains(Map.of(
                MALO_ID, Domain.singleValue(VARCHAR, utf8Slice("51238696788")),
                MELO_ID, Domain.notNull(VARCHAR)));
        assertEquivalent(toIcebergExpression(constraint), and(equal("malo_id", "51238696788"), notNull("melo_id")));
    }

    @Test
    void testLongInListIsCompactedToItsRange()
    {
        List<Object> values = IntStream.range(0, 2_000).mapToObj(value -> (Object) utf8Slice("5%010d".formatted(value))).toList();
        // wider than the list, never narrower
        assertEquivalent(
                toIcebergExpression(domain(MALO_ID, Domain.multipleValues(VARCHAR, values))),
                and(greaterThanOrEqual("malo_id", "50000000000"), lessThanOrEqual("malo_id", "50000001999")));
    }

    private static TupleDomain<MeterstoreColumnHandle> domain(MeterstoreColumnHandle column, Domain domain)
    {
        return TupleDomain.withColumnDomains(Map.of(column, domain));
    }

    private static void assertEquivalent(Expression actual, Expression expected)
    {
        assertThat(ExpressionUtil.equivalent(expected, actual, SCHEMA, true))
                .as("%s is equivalent to %s", actual, expected)
                .isTrue();
    }
}
