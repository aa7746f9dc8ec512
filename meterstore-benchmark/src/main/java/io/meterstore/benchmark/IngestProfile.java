package io.meterstore.benchmark;

import com.google.common.collect.ImmutableMap;
import com.google.common.collect.Lists;
import io.airlift.log.Level;
import io.airlift.log.Logging;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.Reading;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsInserts;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.trino.execution.QueryStats;
import io.trino.spi.QueryId;
import io.trino.testing.DistributedQueryRunner;
import org.apache.iceberg.catalog.TableIdentifier;

import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;

/**
 * Where a delivery statement's time goes (issue 34, SK1): days of {@code profile.meters} meters INSERTed into the hot
 * tier as the soak delivers them, {@code profile.meters-per-statement} meters' days a statement, into an embedded
 * PostgreSQL and a local warehouse under {@code var/ingest-profile/} (deleted first). Each day takes the next entry of
 * {@code profile.plan}, cycled: {@code form:connections}, the form {@code unnest} (an array of literals a column),
 * {@code json} (one JSON text a column) or {@code mixed} (the two alternating statement by statement), sent over that
 * many Trino connections at once. Prints each day's rows a second, Trino's own figures of the INSERTs of each form
 * (queued, analysis, planning, execution; the engine keeps the last 100 queries) and PostgreSQL's time in the rules'
 * and the marks' triggers ({@code track_functions}).
 * <p>
 * {@code java -Dprofile.days=7 -Dprofile.plan=json:2,unnest:1,json:1 -cp <meterstore-benchmark's classpath> io.meterstore.benchmark.IngestProfile}
 */
public final class IngestProfile
{
    private IngestProfile() {}

    public static void main(String[] args)
            throws Exception
    {
        PrintStream console = System.out;
        Logging logging = Logging.initialize();
        logging.setLevel("io.trino", Level.WARN);
        logging.setLevel("org.apache.iceberg", Level.WARN);
        int days = Integer.getInteger("profile.days", 2);
        int meters = Integer.getInteger("profile.meters", 1_000);
        int metersPerStatement = Integer.getInteger("profile.meters-per-statement", SoakRun.DEFAULT_METERS_PER_STATEMENT);
        // each day the next of these, cycled: the statements' form and the connections they are sent over at once
        List<String> plan = List.of(System.getProperty("profile.plan", "unnest:1").split(","));
        List<String> forms = plan.stream().map(entry -> entry.split(":")[0]).flatMap(form -> form.equals("mixed") ? Stream.of("unnest", "json") : Stream.of(form)).distinct().toList();
        int connections = plan.stream().mapToInt(entry -> Integer.parseInt(entry.split(":")[1])).max().orElseThrow();
        Path directory = Path.of(System.getProperty("profile.dir", "var/ingest-profile"));
        int exit = 0;
        try {
            BenchmarkDataset.deleteRecursively(directory);
            Files.createDirectories(directory.resolve("warehouse"));
            try (TestingPostgresServer postgres = TestingPostgresServer.persistent(directory.resolve("pgdata"), 0)) {
                TestingWarehouse warehouse = new TestingWarehouse(postgres.database("profile"), directory.resolve("warehouse"), TestingWarehouse.CATALOG_NAME);
                try (Connection connection = warehouse.database().connect(); Statement statement = connection.createStatement()) {
                    BenchmarkDataset.HOT_TIER.createParent(connection);
                    // the triggers' PL/pgSQL functions timed by PostgreSQL itself, in pg_stat_user_functions
                    statement.execute("ALTER SYSTEM SET track_functions = 'pl'");
                    statement.execute("SELECT pg_reload_conf()");
                }
                IcebergTableSpec.createIfMissing(warehouse.catalog(), TableIdentifier.of(BenchmarkDataset.SCHEMA, BenchmarkDataset.TABLE));
                ReadingsGenerator generator = ReadingsGenerator.builder()
                        .seed(34)
                        .meters(meters)
                        .startDay(LocalDate.now(ZoneOffset.UTC).minusDays(days + 1))
                        .days(days)
                        .correctionsFraction(0)
                        .build();
                DistributedQueryRunner queryRunner = MeterstoreBenchmark.queryRunner(warehouse, false, BenchmarkDataset.TABLE,
                        ImmutableMap.of("query.max-length", String.valueOf(SoakRun.QUERY_MAX_LENGTH)), ImmutableMap.of());
                List<Connection> trino = new ArrayList<>();
                for (int index = 0; index < connections; index++) {
                    trino.add(MeterstoreBenchmark.trinoConnection(queryRunner));
                }
                console.printf("%s days of %s meters, %s meters a statement, plan %s, load average %.1f%n", days, meters, metersPerStatement, plan,
                        ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
                long rows = 0;
                long allStart = System.nanoTime();
                for (LocalDate day : generator.localDays()) {
                    String entry = plan.get(generator.localDays().indexOf(day) % plan.size());
                    String form = entry.split(":")[0];
                    int dayConnections = Integer.parseInt(entry.split(":")[1]);
                    List<String> statements = new ArrayList<>();
                    long dayRows = 0;
                    for (List<Integer> group : Lists.partition(IntStream.range(0, meters).boxed().toList(), metersPerStatement)) {
                        List<Reading> batch = new ArrayList<>();
                        for (int meter : group) {
                            batch.addAll(generator.readings(meter, day));
                        }
                        dayRows += batch.size();
                        // mixed: the two forms statement by statement, for Trino's figures of each side by side
                        String statementForm = form.equals("mixed") ? List.of("unnest", "json").get(statements.size() % 2) : form;
                        statements.add(switch (statementForm) {
                            case "unnest" -> ReadingsInserts.insertAsRecordedUnnested(batch);
                            case "json" -> ReadingsInserts.insertAsRecordedJson(batch);
                            default -> throw new IllegalArgumentException("Unknown form: " + form);
                        });
                    }
                    long start = System.nanoTime();
                    // as the soak sends them: each connection takes the next statement as it finishes one
                    SoakRun.executeAtOnce(trino.subList(0, dayConnections), statements);
                    double seconds = (System.nanoTime() - start) / 1e9;
                    rows += dayRows;
                    console.printf("day %s, %s: %,d rows in %s statements over %s connection(s) in %.1f s, %.0f rows/s, load average %.1f%n", day, form, dayRows, statements.size(), dayConnections, seconds, dayRows / seconds,
                            ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
                }
                double allSeconds = (System.nanoTime() - allStart) / 1e9;
                console.printf("all: %,d rows in %.1f s, %.0f rows/s, load average %.1f%n", rows, allSeconds, rows / allSeconds, ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
                for (String form : forms) {
                    printQueries(console, queryRunner, trino.getFirst(), form);
                }
                try (Connection connection = warehouse.database().connect(); Statement statement = connection.createStatement();
                        ResultSet result = statement.executeQuery("SELECT funcname, calls, total_time, self_time FROM pg_stat_user_functions ORDER BY total_time DESC")) {
                    while (result.next()) {
                        console.printf("pg function %s: %s calls, %.0f ms total (%.1f ms a call), %.0f ms self%n", result.getString(1), result.getLong(2), result.getDouble(3),
                                result.getDouble(3) / result.getLong(2), result.getDouble(4));
                    }
                }
            }
        }
        catch (Exception e) {
            e.printStackTrace(console);
            exit = 1;
        }
        System.exit(exit);
    }

    private static void printQueries(PrintStream console, DistributedQueryRunner queryRunner, Connection trino, String form)
            throws SQLException
    {
        List<String> ids = new ArrayList<>();
        try (Statement statement = trino.createStatement();
                ResultSet result = statement.executeQuery("SELECT query_id FROM system.runtime.queries WHERE query LIKE 'INSERT%%' AND state = 'FINISHED' AND strpos(query, 'json_parse') %s 0 ORDER BY created"
                        .formatted(form.equals("json") ? ">" : "="))) {
            while (result.next()) {
                ids.add(result.getString(1));
            }
        }
        double[] sums = new double[7];
        for (String id : ids) {
            QueryStats stats = queryRunner.getCoordinator().getQueryManager().getFullQueryInfo(new QueryId(id)).getQueryStats();
            double[] figures = {
                    stats.getElapsedTime().toMillis(),
                    stats.getQueuedTime().toMillis(),
                    stats.getAnalysisTime().toMillis(),
                    stats.getPlanningTime().toMillis(),
                    stats.getExecutionTime().toMillis(),
                    stats.getFinishingTime().toMillis(),
                    stats.getTotalCpuTime().toMillis()};
            for (int index = 0; index < sums.length; index++) {
                sums[index] += figures[index];
            }
        }
        int count = Math.max(1, ids.size());
        console.printf("trino, %s, mean of %s INSERTs (ms): elapsed %.0f, queued %.0f, analysis %.0f, planning %.0f, execution %.0f (of which finishing %.0f), task cpu %.0f%n",
                form, ids.size(), sums[0] / count, sums[1] / count, sums[2] / count, sums[3] / count, sums[4] / count, sums[5] / count, sums[6] / count);
    }
}
