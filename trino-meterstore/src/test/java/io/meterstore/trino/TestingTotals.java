package io.meterstore.trino;

import io.meterstore.testing.ReadingsOracle.MeterDay;
import io.meterstore.testing.ReadingsOracle.Totals;
import io.trino.testing.MaterializedRow;
import io.trino.testing.QueryRunner;

import java.math.BigDecimal;
import java.time.LocalDate;
import java.util.SortedMap;
import java.util.TreeMap;

/** What a query answers, in the shape {@link io.meterstore.testing.ReadingsOracle} gives its expectations. */
final class TestingTotals
{
    private TestingTotals() {}

    /** Count and sum of value of {@code relation} by meter and Berlin day. */
    static SortedMap<MeterDay, Totals> totalsByMeterDay(QueryRunner queryRunner, String relation)
    {
        SortedMap<MeterDay, Totals> totals = new TreeMap<>();
        for (MaterializedRow row : queryRunner.execute("""
                SELECT malo_id, CAST(date("from" AT TIME ZONE 'Europe/Berlin') AS varchar), count(*), sum(value)
                FROM %s GROUP BY 1, 2""".formatted(relation)).getMaterializedRows()) {
            totals.put(new MeterDay((String) row.getField(0), LocalDate.parse((String) row.getField(1))), new Totals((long) row.getField(2), ((BigDecimal) row.getField(3)).setScale(6)));
        }
        return totals;
    }
}
