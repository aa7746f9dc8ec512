package io.meterstore.benchmark;

import com.google.common.collect.ImmutableList;
import io.meterstore.testing.TestingDatabase;
import io.trino.testing.DistributedQueryRunner;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

import static java.util.Objects.requireNonNull;

/**
 * Statements of one's own, timed against the benchmark's dataset and engine instead of the benchmark:
 * {@code bin/benchmark -Dbenchmark.probe=FILE}. One statement per line; a line starting {@code postgresql:} runs
 * natively on PostgreSQL, any other on Trino (catalog {@code meterstore}, schema {@code metering}); blank lines and
 * lines starting {@code --} are skipped. Each runs {@code benchmark.rounds} times in a row as a {@link TimedQuery}
 * (every row fetched, as the benchmark does); the first round's first rows are printed. Session state carries over, so {@code SET SESSION} lines apply to what follows.
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

    /** Runs the statements of {@code file} on {@code engine} (catalog {@code meterstore}) and natively on {@code database}. */
    static void run(Path file, DistributedQueryRunner engine, TestingDatabase database, int rounds, PrintStream console)
            throws Exception
    {
        try (Connection trino = MeterstoreBenchmark.trinoConnection(engine);
                Connection postgres = database.connect()) {
            run(parse(Files.readAllLines(file)), trino, postgres, rounds, console);
        }
    }

    static void run(List<Probe> probes, Connection trino, Connection postgres, int rounds, PrintStream console)
            throws SQLException
    {
        for (Probe probe : probes) {
            String engine = probe.engine().name().toLowerCase(Locale.ROOT);
            TimedQuery query = new TimedQuery(engine, probe.engine() == Engine.TRINO ? trino : postgres, probe.sql());
            // the first round's rows are shown; later rounds keep only their time
            TimedQuery.Execution first = query.execute();
            List<Long> nanos = new ArrayList<>(List.of(first.nanos()));
            for (int round = 1; round < rounds; round++) {
                nanos.add(query.execute().nanos());
            }
            List<List<String>> rows = first.rows();
            console.printf("%n%s: %s%n  %s rows; rounds %s%n", engine, probe.sql(), rows.size(), nanos.stream()
                    .map(time -> BenchmarkReport.figure(Medians.seconds(time), BenchmarkResult.Unit.SECONDS))
                    .collect(Collectors.joining(", ")));
            rows.stream().limit(PRINTED_ROWS).forEach(row -> console.printf("  %s%n", String.join(" | ", row)));
        }
    }
}
