package io.meterstore.benchmark;

import com.google.common.collect.ImmutableList;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;

/**
 * Y3: how long Trino takes to plan a one-day query of {@code readings}, as {@code EXPLAIN} measures it from the client:
 * the table's metadata, the watermark, the statistics (which plan the day's files from the manifests) and the plan, but
 * no split is read. Ten warm-up runs first: the first measurement falls early in the engine's life, when its planner is
 * not compiled yet, and would otherwise flatter the comparison.
 */
final class PlanningTime
{
    private static final int WARM_UP = 10;

    private static final DateTimeFormatter LITERAL = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

    private PlanningTime() {}

    static String oneDay(String table, LocalDate day)
    {
        return "EXPLAIN SELECT count(*), sum(value) FROM meterstore.%s.%s WHERE \"from\" >= TIMESTAMP '%s UTC' AND \"from\" < TIMESTAMP '%s UTC'".formatted(
                YearsDataset.SCHEMA, table, LITERAL.format(day.atStartOfDay(ZoneOffset.UTC)), LITERAL.format(day.plusDays(1).atStartOfDay(ZoneOffset.UTC)));
    }

    /** The planning times of two statements, in nanoseconds, each round running both, the order swapped every round. */
    record Compared(List<Long> first, List<Long> second)
    {
        Compared
        {
            first = ImmutableList.copyOf(first);
            second = ImmutableList.copyOf(second);
        }
    }

    static Compared compare(Connection trino, String first, String second, int rounds)
            throws SQLException
    {
        TimedQuery one = new TimedQuery("meterstore", trino, first);
        TimedQuery other = new TimedQuery("meterstore", trino, second);
        for (int run = 0; run < WARM_UP; run++) {
            one.execute();
            other.execute();
        }
        ImmutableList.Builder<Long> firstNanos = ImmutableList.builder();
        ImmutableList.Builder<Long> secondNanos = ImmutableList.builder();
        for (int round = 0; round < rounds; round++) {
            if (round % 2 == 0) {
                firstNanos.add(one.execute().nanos());
                secondNanos.add(other.execute().nanos());
            }
            else {
                secondNanos.add(other.execute().nanos());
                firstNanos.add(one.execute().nanos());
            }
        }
        return new Compared(firstNanos.build(), secondNanos.build());
    }

    /** The planning time of each round, in nanoseconds. */
    static List<Long> measure(Connection trino, String sql, int rounds)
            throws SQLException
    {
        TimedQuery query = new TimedQuery("meterstore", trino, sql);
        for (int run = 0; run < WARM_UP; run++) {
            query.execute();
        }
        ImmutableList.Builder<Long> nanos = ImmutableList.builder();
        for (int round = 0; round < rounds; round++) {
            nanos.add(query.execute().nanos());
        }
        return nanos.build();
    }
}
