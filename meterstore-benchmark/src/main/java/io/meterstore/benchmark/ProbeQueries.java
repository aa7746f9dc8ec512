package io.meterstore.benchmark;

import com.google.common.collect.ImmutableList;

import java.io.PrintStream;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import static java.util.Objects.requireNonNull;

/**
 * Statements of one's own, timed against the benchmark's dataset and engine instead of the benchmark:
 * {@code bin/benchmark -Dbenchmark.probe=FILE}. One statement per line; a line starting {@code postgresql:} runs
 * natively on PostgreSQL, any other on Trino (catalog {@code meterstore}, schema {@code metering}); blank lines and
 * lines starting {@code --} are skipped. Each runs {@code benchmark.rounds} times in a row, every row fetched; the
 * first round's first rows are printed. Session state carries over, so {@code SET SESSION} lines apply to what follows.
 */
final class ProbeQueries
{
    static final String POSTGRESQL_PREFIX = "postgresql:";
    private static final int PRINTED_ROWS = 20;

    enum Engine
    {
        TRINO,
        POSTGRESQL,
    }

    record Probe(Engine engine, String sql)
    {
        Probe
        {
            requireNonNull(engine, "engine is null");
            requireNonNull(sql, "sql is null");
        }
    }

    private ProbeQueries() {}

    static List<Probe> parse(List<String> lines)
    {
        ImmutableList.Builder<Probe> probes = ImmutableList.builder();
        for (String line : lines) {
            String text = line.strip();
            if (text.isEmpty() || text.startsWith("--")) {
                continue;
            }
            if (text.toLowerCase(Locale.ROOT).startsWith(POSTGRESQL_PREFIX)) {
                probes.add(new Probe(Engine.POSTGRESQL, text.substring(POSTGRESQL_PREFIX.length()).strip()));
            }
            else {
                probes.add(new Probe(Engine.TRINO, text));
            }
        }
        return probes.build();
    }

    static void run(List<Probe> probes, Connection trino, Connection postgres, int rounds, PrintStream console)
            throws SQLException
    {
        for (Probe probe : probes) {
            List<String> firstRows = new ArrayList<>();
            List<String> times = new ArrayList<>();
            long rows = 0;
            for (int round = 0; round < rounds; round++) {
                long start = System.nanoTime();
                rows = 0;
                try (Statement statement = (probe.engine() == Engine.TRINO ? trino : postgres).createStatement()) {
                    if (statement.execute(probe.sql())) {
                        try (ResultSet result = statement.getResultSet()) {
                            int columns = result.getMetaData().getColumnCount();
                            while (result.next()) {
                                if (round == 0 && rows < PRINTED_ROWS) {
                                    List<String> values = new ArrayList<>();
                                    for (int column = 1; column <= columns; column++) {
                                        values.add(result.getString(column));
                                    }
                                    firstRows.add(String.join(" | ", values));
                                }
                                rows++;
                            }
                        }
                    }
                }
                times.add(BenchmarkReport.figure(Medians.seconds(System.nanoTime() - start), BenchmarkResult.Unit.SECONDS));
            }
            console.printf("%n%s: %s%n  %s rows; rounds %s%n", probe.engine().name().toLowerCase(Locale.ROOT), probe.sql(), rows, String.join(", ", times));
            firstRows.forEach(row -> console.printf("  %s%n", row));
        }
    }
}
