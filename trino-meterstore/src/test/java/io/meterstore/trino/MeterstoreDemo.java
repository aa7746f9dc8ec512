package io.meterstore.trino;

import io.airlift.log.Level;
import io.airlift.log.Logger;
import io.airlift.log.Logging;
import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.cycle.PartitionHeadroom;
import io.meterstore.archiver.tables.ArchiverConfig;
import io.meterstore.core.HotPartition;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.TestingDatabase;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingRestCatalog;
import io.meterstore.testing.TestingS3Server;
import io.meterstore.testing.TestingWarehouse;
import io.meterstore.testing.TestingWarehouse.TestingBucket;
import io.trino.testing.DistributedQueryRunner;
import org.apache.iceberg.Table;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Instant;
import java.time.InstantSource;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static java.util.Objects.requireNonNullElse;

/**
 * The demo: embedded PostgreSQL and a local warehouse under {@code var/demo/}, 1,000 meters x 60 days of generated
 * readings (loaded once), every closed day archived, and Trino with the plugin on localhost:8080 until stopped.
 * Its data survives a restart; delete {@code var/demo/} to start over. With {@code meterstore.demo.storage=s3}
 * ({@code bin/demo --s3}) the warehouse is a bucket of an S3 server and the tables are in a REST catalogue, both child
 * processes, and Trino runs a coordinator and two workers: the distributed shape on one machine.
 */
public final class MeterstoreDemo
{
    private static final Logger log = Logger.get(MeterstoreDemo.class);
    private static final int METERS = Integer.getInteger("meterstore.demo.meters", 1_000);
    private static final int DAYS = Integer.getInteger("meterstore.demo.days", 60);
    private static final String DEMO_HMAC_KEY = "meterstore-demo-key-not-a-secret";

    private MeterstoreDemo() {}

    public static void main(String[] args)
            throws Exception
    {
        // airlift's logging takes over System.out; the banner goes to the real console
        PrintStream console = System.out;
        Logging logging = Logging.initialize();
        logging.setLevel("io.trino", Level.WARN);
        logging.setLevel("org.apache.iceberg", Level.WARN);

        Path directory = Path.of(System.getProperty("meterstore.demo.dir", "var/demo")).toAbsolutePath();
        boolean distributed = System.getProperty("meterstore.demo.storage", "local").equalsIgnoreCase("s3");
        Files.createDirectories(directory.resolve("warehouse"));
        TestingPostgresServer postgres = TestingPostgresServer.persistent(directory.resolve("pgdata"), 0);
        TestingDatabase database = postgres.database("metering");
        TestingWarehouse local = new TestingWarehouse(database, directory.resolve("warehouse"), TestingWarehouse.CATALOG_NAME);
        // --s3: the objects of the S3 server and the REST catalogue's tables (in PostgreSQL) are kept under the directory too
        Optional<TestingS3Server> s3 = distributed ? Optional.of(TestingS3Server.persistent(directory.resolve("s3"))) : Optional.empty();
        Optional<TestingRestCatalog> restCatalog = s3.map(server -> TestingRestCatalog.start(
                new TestingWarehouse(database, local.directory(), local.catalogName(), Optional.of(new TestingBucket(server, server.bucket("demo"))), Optional.empty())));
        TestingWarehouse warehouse = restCatalog.map(TestingRestCatalog::warehouse).orElse(local);
        // as bin/archiver create makes them: the shape stored in both tiers, shown by "readings$config"
        Table table = TestingMeterstoreTables.createDeclaredTables(warehouse);

        try (Connection connection = database.connect()) {
            List<HotPartition> partitions = TestingMeterstoreTables.hotTier().partitions(connection);
            if (partitions.isEmpty() && table.currentSnapshot() == null) {
                // the 60 days up to yesterday: the last week is still open for corrections, the rest gets archived
                ReadingsGenerator generator = ReadingsGenerator.builder()
                        .seed(2026)
                        .meters(METERS)
                        .startDay(LocalDate.now(ZoneOffset.UTC).minusDays(DAYS))
                        .days(DAYS)
                        .correctionsFraction(0.02)
                        // what has arrived by now: yesterday's batch lands this morning, corrections days later
                        .knownAt(Instant.now())
                        .build();
                log.info("Loading %s meters x %s days into PostgreSQL", METERS, DAYS);
                long rows = new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(database::connect, generator, 2);
                log.info("Loaded %s rows", rows);
            }
        }

        ArchivalCycle archival = TestingArchival.cycle(warehouse, InstantSource.system());
        while (true) {
            ArchiveOutcome outcome = archival.archiveOnce();
            if (outcome.kind() != ArchiveOutcome.Kind.ARCHIVED) {
                break;
            }
        }
        table.refresh();
        try (Connection connection = database.connect()) {
            // as each cycle of the archiver service does: the partitions of today and tomorrow exist, the table is healthy
            PartitionHeadroom.ensure(connection, TestingMeterstoreTables.hotTier(), WatermarkReader.current(table).watermark(), Instant.now(), new ArchiverConfig().getPartitionHeadroom().toJavaTime());
        }

        String port = requireNonNullElse(System.getenv("TRINO_PORT"), "8080");
        MeterstoreQueryRunner.Builder builder = MeterstoreQueryRunner.builder(warehouse);
        if (distributed) {
            // as a cluster runs: the coordinator plans, two workers read every split from the bucket and PostgreSQL
            builder.withWorkersOnly(2);
        }
        DistributedQueryRunner queryRunner = builder
                .setCoordinatorProperties(Map.of("http-server.http.port", port))
                // so that DELETE (erasure) can be tried: a deployment sets a secret key of its own, in the archiver's properties too
                .withCatalogOverrides(Map.of("meterstore.erasure.hmac-key", DEMO_HMAC_KEY))
                .build();
        // whatever the demo started it stops: the engine, then the catalogue, the S3 server and PostgreSQL
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            queryRunner.close();
            restCatalog.ifPresent(TestingRestCatalog::close);
            s3.ifPresent(TestingS3Server::close);
            try {
                postgres.close();
            }
            catch (Exception e) {
                log.warn(e, "Stopping PostgreSQL failed");
            }
        }));

        String jdbcUrl = "jdbc:trino://localhost:%s/meterstore/metering".formatted(port);
        console.printf("""

                ======== MeterStore demo is serving ========
                Trino:        http://localhost:%s   (JDBC: %s, user: demo, no password)
                PostgreSQL:   %s (user postgres)
                Warehouse:    %s
                %s
                Watermark:    %s  (PostgreSQL holds "from" >= W, Iceberg "from" < W)
                Erasure:      DELETE FROM readings_versions WHERE malo_id = '...' erases for good (demo HMAC key; set your own)

                Try, e.g. with the Trino CLI or any JDBC client:
                  SELECT count(*), sum(value) FROM readings_versions;
                  SELECT count(*), sum(value) FROM readings;      -- winners only, resolved by the connector
                  SELECT date("from" AT TIME ZONE 'Europe/Berlin') AS day, count(*) AS intervals, sum(value) AS kwh
                    FROM readings GROUP BY 1 ORDER BY 1;
                  SELECT * FROM readings WHERE malo_id = '%s' ORDER BY "from" DESC LIMIT 10;
                  SELECT count(*) - (SELECT count(*) FROM readings) AS corrections FROM readings_versions;
                  SELECT summary['meterstore.tiering_watermark'], committed_at FROM iceberg.metering."readings$snapshots" ORDER BY committed_at;
                Stop with Ctrl-C; the data stays in %s.
                """, port, jdbcUrl, database.jdbcUrl(), warehouse.location(), shape(s3, restCatalog, queryRunner), WatermarkReader.current(table).watermark(), ReadingsGenerator.maloId(0), directory);
    }

    private static String shape(Optional<TestingS3Server> s3, Optional<TestingRestCatalog> restCatalog, DistributedQueryRunner queryRunner)
    {
        if (s3.isEmpty() || restCatalog.isEmpty()) {
            return "Catalogue:    Iceberg JDBC catalogue in PostgreSQL; one Trino node";
        }
        return """
                S3 server:    %s  (S3Proxy, path-style; access key %s)
                Catalogue:    Iceberg REST catalogue at %s (Iceberg's reference server over PostgreSQL)
                Cluster:      a coordinator that schedules no splits and %s workers; see SELECT * FROM system.runtime.nodes"""
                .formatted(s3.get().endpoint(), TestingS3Server.ACCESS_KEY, restCatalog.get().uri(), queryRunner.getNodeCount() - 1).strip();
    }
}
