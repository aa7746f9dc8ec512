package io.meterstore.benchmark;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * What any query costs before it reads a row: {@code SELECT 1} through Trino (parse, analyse, plan, schedule, fetch over
 * HTTP) and through PostgreSQL, from the same client as the pairs. A pair whose work is pushed into PostgreSQL whole
 * (Q3) costs PostgreSQL's time plus at least Trino's floor, so the floor is the least gap such a pair can show.
 *
 * @param trinoSeconds median of {@link #ROUNDS} rounds of {@code SELECT 1} through Trino
 * @param postgresSeconds the same through PostgreSQL's JDBC driver
 */
record EngineFloor(double trinoSeconds, double postgresSeconds)
{
    static final int ROUNDS = 15;
    static final String SQL = "SELECT 1";

    static EngineFloor measure(Connection trino, Connection postgres)
            throws SQLException
    {
        return new EngineFloor(median(new TimedQuery("trino", trino, SQL)), median(new TimedQuery("postgresql", postgres, SQL)));
    }

    private static double median(TimedQuery query)
            throws SQLException
    {
        query.execute();
        List<Long> samples = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
            samples.add(query.execute().nanos());
        }
        return Medians.seconds(Math.round(Medians.median(samples)));
    }

    String describe()
    {
        return "Engine floor, measured after the pairs: `%s` takes %.3f s through Trino and %.4f s through PostgreSQL (medians of %s rounds, same client). Every MeterStore query pays Trino's; a query that PostgreSQL answers whole (Q3) takes PostgreSQL's time plus at least that."
                .formatted(SQL, trinoSeconds, postgresSeconds, ROUNDS);
    }
}
