package io.meterstore.benchmark;

import io.airlift.log.Level;
import io.airlift.log.Logger;
import io.airlift.log.Logging;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingS3Server;
import io.meterstore.testing.TestingWarehouse;

import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * {@code bin/soak}: one {@link SoakRun} on a fresh PostgreSQL data directory and warehouse under {@code soak.dir}
 * (default var/soak, deleted first), then its figures on the console and its report in the marked section of
 * {@code soak.report} (default docs/soak.md, {@link SoakReport}). The run's settings are system properties:
 * soak.days, soak.meters, soak.meters-per-statement, soak.delivery-connections, soak.correction-rate, soak.erasure-every, soak.engine-restarts, soak.archiver-kills,
 * soak.postgres-restarts, soak.storage-outages, soak.retention-days ({@code off}, or the days the archiver's expire keeps the readings, 120 by default), soak.snapshot-retention-days (the days it keeps snapshots, 30 by default), soak.seed; soak.storage says where the warehouse lives ({@code s3}, the default: a bucket of an S3
 * server of the run's own under soak.dir, which the outages stop; or {@code local}).
 */
public final class SoakMain
{
    private static final Logger log = Logger.get(SoakMain.class);
    // as a deployment keeps readings far longer than it takes corrections (60 days back) and its settlement lag: a
    // year's run sweeps its first months, and no correction or redelivery of the workload reaches them; and longer than
    // a month takes to settle (82 days after its end, SoakRun.correctionsSettled), so the report shows settled months
    static final int DEFAULT_RETENTION_DAYS = 120;
    // a deployment keeps its snapshots ten years (SnapshotRetention.DEFAULT); a year's run keeps a month of them, so
    // that expiry has something to do and the report shows the snapshots bounded by the retention
    static final int DEFAULT_SNAPSHOT_RETENTION_DAYS = 30;

    private SoakMain() {}

    public static void main(String[] args)
            throws Exception
    {
        Locale.setDefault(Locale.ROOT);
        // airlift's logging takes over System.out; the figures go to the real console
        PrintStream console = System.out;
        Logging logging = Logging.initialize();
        logging.setLevel("io.trino", Level.WARN);
        logging.setLevel("org.apache.iceberg", Level.WARN);
        logging.setLevel("io.meterstore.archiver", Level.WARN);

        SoakRun.Settings settings = new SoakRun.Settings(
                Integer.getInteger("soak.days", 365),
                Integer.getInteger("soak.meters", 1_000),
                Integer.getInteger("soak.meters-per-statement", SoakRun.DEFAULT_METERS_PER_STATEMENT),
                Integer.getInteger("soak.delivery-connections", SoakRun.DEFAULT_DELIVERY_CONNECTIONS),
                Double.parseDouble(System.getProperty("soak.correction-rate", "0.03")),
                Integer.getInteger("soak.erasure-every", 10),
                Integer.getInteger("soak.engine-restarts", 12),
                Integer.getInteger("soak.archiver-kills", 12),
                Integer.getInteger("soak.postgres-restarts", 12),
                Integer.getInteger("soak.storage-outages", 12),
                retentionDays(System.getProperty("soak.retention-days", String.valueOf(DEFAULT_RETENTION_DAYS))),
                Integer.getInteger("soak.snapshot-retention-days", DEFAULT_SNAPSHOT_RETENTION_DAYS),
                Long.getLong("soak.seed", 34),
                SoakRun.defaultLastDay());
        Path directory = Path.of(System.getProperty("soak.dir", "var/soak"));
        Path report = Path.of(System.getProperty("soak.report", "docs/soak.md"));
        int exit = 0;
        try {
            BenchmarkStorage storage = storage(System.getProperty("soak.storage", "s3"));
            BenchmarkDataset.deleteRecursively(directory);
            Files.createDirectories(directory.resolve("warehouse"));
            try (TestingPostgresServer postgres = TestingPostgresServer.persistent(directory.resolve("pgdata"), 0);
                    TestingS3Server s3 = TestingS3Server.persistent(directory.resolve("s3"))) {
                TestingWarehouse warehouse = switch (storage) {
                    case LOCAL -> new TestingWarehouse(postgres.database("soak"), directory.resolve("warehouse"), TestingWarehouse.CATALOG_NAME);
                    case S3 -> new TestingWarehouse(postgres.database("soak"), directory.resolve("warehouse"), TestingWarehouse.CATALOG_NAME,
                            Optional.of(new TestingWarehouse.TestingBucket(s3, s3.bucket("soak"))), Optional.empty());
                };
                long start = System.nanoTime();
                SoakRun.Result result = new SoakRun(warehouse, settings, SoakRun.Tampering.NONE).run();
                Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
                console.println(describe(settings, result, elapsed));
                double loadAverage = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
                SoakReport.write(report, SoakReport.section(settings, result, elapsed, Instant.now(), loadAverage));
                console.println("Report written to " + report);
            }
        }
        catch (Exception e) {
            log.error(e, "Soak failed");
            console.println("Soak failed: " + e.getMessage());
            exit = 1;
        }
        // the engine's and the embedded server's threads would keep the JVM alive
        System.exit(exit);
    }

    /** {@code 90} (days), or {@code off}. */
    private static OptionalInt retentionDays(String value)
    {
        if (value.trim().equalsIgnoreCase("off")) {
            return OptionalInt.empty();
        }
        try {
            int days = Integer.parseInt(value.trim());
            if (days >= 1) {
                return OptionalInt.of(days);
            }
        }
        catch (NumberFormatException _) {
            // refused below
        }
        throw new IllegalArgumentException("Invalid soak.retention-days '%s': write a number of days of at least 1 (e.g. 90), or 'off' for no retention".formatted(value));
    }

    private static BenchmarkStorage storage(String value)
    {
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "s3" -> BenchmarkStorage.S3;
            case "local" -> BenchmarkStorage.LOCAL;
            default -> throw new IllegalArgumentException("Invalid soak.storage '%s': write 's3' (a bucket of an S3 server of the run's own, which the storage outages stop) or 'local'".formatted(value));
        };
    }

    static String describe(SoakRun.Settings settings, SoakRun.Result result, Duration elapsed)
    {
        List<Duration> days = result.dayTimes();
        List<Duration> store = result.storeTimes();
        int sample = SoakReport.sampleDays(days.size());
        return """
                Soak: %s simulated days of %s meters (%s meters a statement over %s connections at once, corrections %s of a day's rows, seed %s) in %s s
                rows sent %,d (recorded by the oracle %,d); refused statements %s (rows of them past the retention %,d); retention sweeps %s; erasures %s (lifted %s, made physical %s); archival commits %s; maintenance runs %s (snapshots expired %s, orphan files removed %s); faults injected and survived %s; failed during the storage outages, naming the storage %s
                oracle checks passed %s; dashboard queries %s
                time per simulated day: first %s days %.2f s median, last %s days %.2f s median; the store's part (without the oracle's): first %.2f s, last %.2f s"""
                .formatted(settings.days(), settings.meters(), settings.metersPerStatement(), settings.deliveryConnections(), settings.correctionRate(), settings.seed(), elapsed.toSeconds(),
                        result.rowsSent(), result.rowsRecorded(), result.refused(), result.rowsRefusedPastRetention(), result.sweeps(), result.erasures(), result.lifts(), result.erasuresCompleted(),
                        result.archivalCommits(), result.maintenanceRuns(), result.snapshotsExpired(), result.orphansRemoved(), result.faults(), result.outageFailures(),
                        result.checks(), result.dashboardQueries(),
                        sample, median(days.subList(0, sample)), sample, median(days.subList(days.size() - sample, days.size())),
                        median(store.subList(0, sample)), median(store.subList(store.size() - sample, store.size())));
    }

    private static double median(List<Duration> durations)
    {
        return SoakReport.median(durations);
    }
}
