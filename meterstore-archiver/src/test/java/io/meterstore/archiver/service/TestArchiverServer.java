package io.meterstore.archiver.service;

import com.google.common.collect.ImmutableMap;
import com.google.inject.Injector;
import io.airlift.bootstrap.LifeCycleManager;
import io.airlift.http.client.HttpClient;
import io.airlift.http.client.StringResponseHandler.StringResponse;
import io.airlift.http.client.jetty.JettyHttpClient;
import io.airlift.http.server.HttpServerInfo;
import io.airlift.json.JsonCodec;
import io.airlift.units.Duration;
import io.meterstore.archiver.ArchiverMain;
import io.meterstore.archiver.ArchiverModule;
import io.meterstore.archiver.cycle.TestingArchiverTable;
import io.meterstore.archiver.maintenance.MaintenanceCommand;
import io.meterstore.archiver.service.TableInfo.ColdTierInfo;
import io.meterstore.archiver.service.TableInfo.MaintenanceInfo;
import io.meterstore.core.HotTier;
import io.meterstore.core.InvariantLog;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.ReadingsTableCreation;
import io.meterstore.core.TableShape;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.net.URI;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.time.LocalDate;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static io.airlift.http.client.Request.Builder.prepareGet;
import static io.airlift.http.client.Request.Builder.preparePut;
import static io.airlift.http.client.StaticBodyGenerator.createStaticBodyGenerator;
import static io.airlift.http.client.StringResponseHandler.createStringResponseHandler;
import static io.airlift.json.JsonCodec.jsonCodec;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/** The service in-process, as {@code run} starts it: real PostgreSQL, a real warehouse, HTTP on a random port. */
final class TestArchiverServer
{
    private static final JsonCodec<ArchiverInfo> INFO_CODEC = jsonCodec(ArchiverInfo.class);
    private static final String TABLE_METRIC = "io_meterstore_archiver_service_type_TableArchiverStats_name_readings_";
    private static final String TOTAL_METRIC = "io_meterstore_archiver_service_name_ArchiverStats_";

    @Test
    void testArchivesAndServesInfoAndMetrics()
            throws Exception
    {
        try (TestingArchiverTable table = TestingArchiverTable.create("server_metrics");
                HttpClient client = new JettyHttpClient()) {
            long rows = loadTwoDays(table);
            // the second Berlin day ends 2024-03-06T23:00Z, in the partition of 2024-03-06: closed once a week has passed
            table.clock().set(Instant.parse("2024-03-14T06:00:00Z"));
            CompletableFuture<Void> shutdown = new CompletableFuture<>();
            // one run of the schedule: the next (after the interval) would count the partitions created ahead of now
            // as attached before the metrics are read, on a loaded machine
            Injector injector = start(table, shutdown, ImmutableMap.of("meterstore.schedule-interval", "1h"));
            try {
                URI server = injector.getInstance(HttpServerInfo.class).getHttpUri();
                TableArchiverStats stats = injector.getInstance(ArchiverStats.class).table("readings");
                // the backlog of three windows goes at once, then the table is idle and its maintenance runs
                await(() -> stats.getCounters().getCyclesIdle().getTotalCount() > 0 && !Double.isNaN(stats.getSecondsSinceCompact()));

                ArchiverInfo info = INFO_CODEC.fromJson(get(client, server.resolve("/v1/info")).getBody());
                assertThat(info.version()).isEqualTo("unknown");
                assertThat(info.environment()).isEqualTo("test");
                assertThat(info.state()).isEqualTo(ArchiverState.ACTIVE);
                assertThat(info.tables()).hasSize(1);
                TableInfo readings = info.tables().getFirst();
                assertThat(readings.name()).isEqualTo("metering.readings");
                assertThat(readings.watermark()).contains(Instant.parse("2024-03-07T00:00:00Z"));
                assertThat(readings.watermarkLag()).contains(Duration.valueOf("7.25d"));
                assertThat(readings.lastResult()).contains(CycleResult.IDLE);
                assertThat(readings.lastCycle()).contains("metering.readings: idle, nothing closed to archive, watermark 2024-03-07T00:00:00Z");
                assertThat(readings.invariantViolations()).isEmpty();
                // the three archival commits' manifests became one for March; nothing is old enough to expire. A window
                // whose rows carry corrections is a winners and a superseded file: five files for the three windows
                assertThat(readings.coldTier()).contains(new ColdTierInfo(4, 1, 5, 5, Map.of("2024-03", 5), Map.of(), 0));
                assertThat(readings.maintenance()).extracting(MaintenanceInfo::command, MaintenanceInfo::lastFinished)
                        .containsExactly(tuple("expire", Optional.of(table.clock().instant())), tuple("compact", Optional.of(table.clock().instant())));
                assertThat(MaintenanceCommand.COMPACT.lastRun(table.table())).contains(table.clock().instant());

                StringResponse state = get(client, server.resolve("/v1/info/state"));
                assertThat(state.getStatusCode()).isEqualTo(200);
                assertThat(state.getBody()).isEqualTo("\"ACTIVE\"");

                StringResponse metrics = get(client, server.resolve("/metrics"));
                assertThat(metrics.getStatusCode()).isEqualTo(200);
                assertThat(metrics.getHeader("Content-Type")).startsWith("application/openmetrics-text");
                assertThat(metrics.getBody().lines())
                        .contains(
                                TABLE_METRIC + "ArchivedRows " + rows,
                                TABLE_METRIC + "CyclesArchived 3",
                                TABLE_METRIC + "CyclesFailed 0",
                                TABLE_METRIC + "CyclesLeaseContended 0",
                                // 7 days and 6 hours
                                TABLE_METRIC + "WatermarkLagSeconds 626400.0",
                                TABLE_METRIC + "InvariantViolations 0.0",
                                TABLE_METRIC + "AttachedPartitions 0.0",
                                TABLE_METRIC + "PartitionsAwaitingDrop 3.0",
                                TABLE_METRIC + "Snapshots 4.0",
                                TABLE_METRIC + "Manifests 1.0",
                                TABLE_METRIC + "DataFiles 5.0",
                                TABLE_METRIC + "MaxDataFilesPerMonth 5.0",
                                // March holds W: no month to compact yet
                                TABLE_METRIC + "CompactedMonths 0",
                                TABLE_METRIC + "UnresolvedMonths 0.0",
                                TABLE_METRIC + "RewrittenManifests 3",
                                TABLE_METRIC + "ExpiredSnapshots 0",
                                TABLE_METRIC + "SecondsSinceExpire 0.0",
                                TABLE_METRIC + "MaintenanceFailures 0",
                                TOTAL_METRIC + "MaxSecondsSinceMaintenance 0.0",
                                TOTAL_METRIC + "ArchivedRows " + rows,
                                TOTAL_METRIC + "RewrittenManifests 3",
                                TOTAL_METRIC + "CompactedMonths 0",
                                TOTAL_METRIC + "MaxWatermarkLagSeconds 626400.0",
                                TOTAL_METRIC + "InvariantViolations 0.0")
                        .anyMatch(line -> line.startsWith(TABLE_METRIC + "CycleTime_AllTime_count "));

                StringResponse put = putState(client, server, "SHUTTING_DOWN");
                assertThat(put.getStatusCode()).isEqualTo(200);
                shutdown.get(30, TimeUnit.SECONDS);
                ArchiverScheduler scheduler = injector.getInstance(ArchiverScheduler.class);
                assertThat(scheduler.isTerminated()).isTrue();
                ShutdownHandler handler = injector.getInstance(ShutdownHandler.class);
                assertThat(handler.state()).isEqualTo(ArchiverState.SHUTTING_DOWN);
                // idempotent: a second request neither fails nor runs the shutdown again
                handler.requestShutdown();
                assertThat(handler.isShutdownRequested()).isTrue();
            }
            finally {
                injector.getInstance(LifeCycleManager.class).stop();
            }
        }
    }

    @Test
    void testShutdownLetsTheCycleInFlightFinishItsStep()
            throws Exception
    {
        try (TestingArchiverTable table = TestingArchiverTable.create("server_shutdown");
                HttpClient client = new JettyHttpClient()) {
            loadTwoDays(table);
            // the days up to 2024-03-06 are closed, the partition of 2024-03-06 is not
            table.clock().set(Instant.parse("2024-03-13T00:00:00Z"));
            CompletableFuture<Void> shutdown = new CompletableFuture<>();
            Injector injector = start(table, shutdown, ImmutableMap.of("meterstore.postgresql.lock-timeout", "1m"));
            try {
                URI server = injector.getInstance(HttpServerInfo.class).getHttpUri();
                TableArchiverStats stats = injector.getInstance(ArchiverStats.class).table("readings");
                await(() -> stats.getCounters().getCyclesIdle().getTotalCount() > 0);
                assertThat(stats.getCounters().getCyclesArchived().getTotalCount()).isEqualTo(2);

                try (Connection locker = table.connect()) {
                    // a long query on the parent: the next DETACH waits for it
                    locker.setAutoCommit(false);
                    try (Statement statement = locker.createStatement()) {
                        statement.execute("LOCK TABLE " + table.hotTier().qualifiedParent() + " IN ACCESS SHARE MODE");
                    }
                    table.clock().set(Instant.parse("2024-03-14T06:00:00Z"));
                    await(() -> archiverWaitsForLock(table));

                    assertThat(putState(client, server, "SHUTTING_DOWN").getStatusCode()).isEqualTo(200);
                    // the cycle in flight holds the shutdown: the service still answers, and says it is shutting down
                    assertThat(get(client, server.resolve("/v1/info/state")).getBody()).isEqualTo("\"SHUTTING_DOWN\"");
                    assertThat(putState(client, server, "SHUTTING_DOWN").getStatusCode()).isEqualTo(200);
                    StringResponse reactivate = putState(client, server, "ACTIVE");
                    assertThat(reactivate.getStatusCode()).isEqualTo(400);
                    assertThat(reactivate.getBody()).isEqualTo("Cannot change the state from SHUTTING_DOWN to ACTIVE: a shutdown cannot be cancelled");
                    assertThat(shutdown).isNotDone();
                    assertThat(injector.getInstance(ArchiverScheduler.class).isTerminated()).isFalse();
                    locker.rollback();
                }

                shutdown.get(30, TimeUnit.SECONDS);
                assertThat(injector.getInstance(ArchiverScheduler.class).isTerminated()).isTrue();
                // the cycle in flight finished its step: the window is committed, not abandoned half-way
                assertThat(stats.getCounters().getCyclesArchived().getTotalCount()).isEqualTo(3);
                assertThat(stats.getCounters().getCyclesDeferred().getTotalCount()).isZero();
                assertThat(WatermarkReader.current(table.table()).watermark()).isEqualTo(TieringWatermark.of(Instant.parse("2024-03-07T00:00:00Z")));
            }
            finally {
                injector.getInstance(LifeCycleManager.class).stop();
            }
        }
    }

    @Test
    void testRestartedServiceShowsTheColdTierBeforeItsMaintenanceIsDue()
            throws Exception
    {
        try (TestingArchiverTable table = TestingArchiverTable.create("server_restart")) {
            loadTwoDays(table);
            table.clock().set(Instant.parse("2024-03-14T06:00:00Z"));
            ImmutableMap<String, String> hourly = ImmutableMap.of("meterstore.schedule-interval", "1h");
            Injector first = start(table, new CompletableFuture<>(), hourly);
            try {
                TableArchiverStats stats = first.getInstance(ArchiverStats.class).table("readings");
                await(() -> stats.getCounters().getCyclesIdle().getTotalCount() > 0 && !Double.isNaN(stats.getSecondsSinceCompact()));
            }
            finally {
                first.getInstance(LifeCycleManager.class).stop();
            }

            // restarted within the maintenance interval: nothing is due, and the gauges still say what the cold tier holds
            Injector second = start(table, new CompletableFuture<>(), hourly);
            try {
                TableArchiverStats stats = second.getInstance(ArchiverStats.class).table("readings");
                await(() -> stats.getCounters().getCyclesIdle().getTotalCount() > 0);
                assertThat(second.getInstance(ArchiverScheduler.class).drain()).isTrue();
                assertThat(stats.getCounters().getExpiredSnapshots().getTotalCount()).isZero();
                assertThat(stats.getSnapshots()).isEqualTo(4.0);
                assertThat(stats.getDataFiles()).isEqualTo(5.0);
                assertThat(stats.getManifests()).isEqualTo(1.0);
            }
            finally {
                second.getInstance(LifeCycleManager.class).stop();
            }
        }
    }

    @Test
    void testNoMaintenanceBesideAFailingCycle()
            throws Exception
    {
        try (TestingArchiverTable table = TestingArchiverTable.create("server_outage")) {
            int closedPort;
            try (ServerSocket socket = new ServerSocket(0)) {
                closedPort = socket.getLocalPort();
            }
            CompletableFuture<Void> shutdown = new CompletableFuture<>();
            // PostgreSQL unreachable: every cycle fails, and maintenance, which needs it too, does not run beside it
            Injector injector = start(table, shutdown, ImmutableMap.of(
                    "meterstore.postgresql.url", "jdbc:postgresql://127.0.0.1:%s/%s".formatted(closedPort, table.database().name()),
                    "meterstore.schedule-interval", "1h"));
            try {
                TableArchiverStats stats = injector.getInstance(ArchiverStats.class).table("readings");
                await(() -> stats.getCounters().getCyclesFailed().getTotalCount() > 0);
                // the run in flight finishes what it does after the failed cycle
                assertThat(injector.getInstance(ArchiverScheduler.class).drain()).isTrue();
                assertThat(stats.getCounters().getCyclesFailed().getTotalCount()).isEqualTo(1);
                assertThat(stats.getCounters().getMaintenanceFailures().getTotalCount()).isZero();
                assertThat(stats.info().maintenance()).allSatisfy(maintenance -> assertThat(maintenance.lastFinished()).isEmpty());
            }
            finally {
                injector.getInstance(LifeCycleManager.class).stop();
            }
        }
    }

    @Test
    void testRefusedWindowIsRecordedForTheConnector()
            throws Exception
    {
        try (TestingArchiverTable table = TestingArchiverTable.create("server_refused")) {
            loadTwoDays(table);
            String maloId;
            try (Connection connection = table.connect();
                    Statement statement = connection.createStatement();
                    // written around MeterStore: a MaLo-ID of the second day with its check digit changed
                    ResultSet result = statement.executeQuery("""
                            UPDATE metering.readings_2024_03_05_0000 SET malo_id = left(malo_id, 10) || ((right(malo_id, 1)::int + 1) % 10)::text
                            WHERE (malo_id, obis_code, "from", version) = (SELECT malo_id, obis_code, "from", version FROM metering.readings_2024_03_05_0000 ORDER BY 1, 2, 3, 4 LIMIT 1)
                            RETURNING malo_id""")) {
                assertThat(result.next()).isTrue();
                maloId = result.getString(1);
            }
            table.clock().set(Instant.parse("2024-03-14T06:00:00Z"));
            Injector injector = start(table, new CompletableFuture<>(), ImmutableMap.of("meterstore.schedule-interval", "1h"));
            try {
                TableArchiverStats stats = injector.getInstance(ArchiverStats.class).table("readings");
                // the first window archives; the second is refused, and the check after the cycle records the refusal
                await(() -> !stats.info().invariantViolations().isEmpty());
                assertThat(injector.getInstance(ArchiverScheduler.class).drain()).isTrue();
                String refusal = "Window [2024-03-05T00:00:00Z, 2024-03-06T00:00:00Z) of table 'metering.readings' is not archived: partition 'readings_2024_03_05_0000' holds the reading (malo_id '%s', "
                        .formatted(maloId);
                assertThat(stats.getCounters().getCyclesFailed().getTotalCount()).isEqualTo(1);
                assertThat(stats.info().lastCycle()).hasValueSatisfying(line -> assertThat(line).startsWith("metering.readings: failed: " + refusal));
                assertThat(WatermarkReader.current(table.table()).watermark()).isEqualTo(TieringWatermark.of(Instant.parse("2024-03-05T00:00:00Z")));
                // what "readings$invariant" shows as the archiver's last check
                try (Connection connection = table.connect()) {
                    assertThat(InvariantLog.last(connection, table.hotTier()).orElseThrow().violations()).singleElement(InstanceOfAssertFactories.STRING)
                            .startsWith(refusal)
                            .contains("which the write path refuses: Invalid MaLo-ID '%s'".formatted(maloId))
                            .endsWith("(refused by the archival cycle at 2024-03-14T06:00:00Z)");
                }
            }
            finally {
                injector.getInstance(LifeCycleManager.class).stop();
            }
        }
    }

    @Test
    void testArchivesATableCreatedAfterItStarted()
            throws Exception
    {
        try (TestingArchiverTable table = TestingArchiverTable.create("server_created");
                HttpClient client = new JettyHttpClient()) {
            table.clock().set(Instant.parse("2024-03-14T06:00:00Z"));
            Injector injector = start(table, new CompletableFuture<>(), ImmutableMap.of());
            try {
                ArchiverStats stats = injector.getInstance(ArchiverStats.class);
                // running, with nothing but the configured table to archive
                await(() -> stats.table("readings").getCounters().getCyclesIdle().getTotalCount() > 0);
                // what CREATE TABLE through the connector runs, for a table meterstore.tables does not list, with two days
                // of readings in its hot tier; and an Iceberg table of another engine in the namespace, which is not MeterStore's
                HotTier lastgang = new HotTier(TestingArchiverTable.SCHEMA, new PartitionNaming("lastgang", PartitionNaming.DEFAULT_STEP), java.time.Duration.ofSeconds(5));
                TableIdentifier foreign = TableIdentifier.of(TestingArchiverTable.SCHEMA, "other_engine");
                table.catalog().createTable(foreign, new Schema(Types.NestedField.required(1, "id", Types.LongType.get())));
                // and one whose metadata file is gone (left by another engine, or in storage the archiver cannot read):
                // it keeps nothing created after it from being found
                Table unreadable = table.catalog().createTable(TableIdentifier.of(TestingArchiverTable.SCHEMA, "another_engine"), new Schema(Types.NestedField.required(1, "id", Types.LongType.get())));
                unreadable.io().deleteFile(((HasTableOperations) unreadable).operations().current().metadataFileLocation());
                long rows;
                try (Connection connection = table.connect()) {
                    ReadingsTableCreation.create(connection, lastgang, table.catalog(), TableIdentifier.of(TestingArchiverTable.SCHEMA, "lastgang"), Optional.of(TableShape.DEFAULT), "CREATE TABLE", ReadingsTableCreation.BY_CREATE_TABLE);
                    rows = new ReadingsLoader(lastgang).load(connection, ReadingsGenerator.builder().meters(2).startDay(LocalDate.of(2024, 3, 5)).days(2).build());
                }

                // found within a schedule interval, archived as the configured table is, and counted under its own name
                await(() -> stats.counts("lastgang") && stats.table("lastgang").getCounters().getCyclesIdle().getTotalCount() > 0);
                assertThat(stats.table("lastgang").getCounters().getArchivedRows().getTotalCount()).isEqualTo(rows);
                assertThat(WatermarkReader.current(table.catalog().loadTable(TableIdentifier.of(TestingArchiverTable.SCHEMA, "lastgang"))).watermark())
                        .isEqualTo(TieringWatermark.of(Instant.parse("2024-03-07T00:00:00Z")));
                assertThat(table.catalog().loadTable(foreign).currentSnapshot()).isNull();

                URI server = injector.getInstance(HttpServerInfo.class).getHttpUri();
                ArchiverInfo info = INFO_CODEC.fromJson(get(client, server.resolve("/v1/info")).getBody());
                assertThat(info.tables()).extracting(TableInfo::name).containsExactly("metering.readings", "metering.lastgang");
                assertThat(get(client, server.resolve("/metrics")).getBody().lines())
                        .contains("io_meterstore_archiver_service_type_TableArchiverStats_name_lastgang_ArchivedRows " + rows);

                // dropped as DROP TABLE drops it: no longer archived, listed or counted (its cycles would fail and its
                // watermark lag grow until a restart)
                try (Connection connection = table.connect()) {
                    lastgang.dropTable(connection);
                }
                table.catalog().dropTable(TableIdentifier.of(TestingArchiverTable.SCHEMA, "lastgang"), true);
                await(() -> !stats.counts("lastgang"));
                assertThat(INFO_CODEC.fromJson(get(client, server.resolve("/v1/info")).getBody()).tables()).extracting(TableInfo::name).containsExactly("metering.readings");
                assertThat(get(client, server.resolve("/metrics")).getBody()).doesNotContain("name_lastgang");

                // created again under its name: found and archived again
                try (Connection connection = table.connect()) {
                    ReadingsTableCreation.create(connection, lastgang, table.catalog(), TableIdentifier.of(TestingArchiverTable.SCHEMA, "lastgang"), Optional.of(TableShape.DEFAULT), "CREATE TABLE", ReadingsTableCreation.BY_CREATE_TABLE);
                }
                await(() -> stats.counts("lastgang") && stats.table("lastgang").getCounters().getCyclesIdle().getTotalCount() > 0);
                assertThat(stats.table("lastgang").getCounters().getCyclesFailed().getTotalCount()).isZero();
            }
            finally {
                injector.getInstance(LifeCycleManager.class).stop();
            }
        }
    }

    private static Injector start(TestingArchiverTable table, CompletableFuture<Void> shutdown, Map<String, String> extraProperties)
    {
        Map<String, String> properties = ImmutableMap.<String, String>builder()
                .put("node.environment", "test")
                .put("http-server.http.port", "0")
                .put("meterstore.postgresql.url", table.database().jdbcUrl())
                .put("meterstore.postgresql.user", table.database().user())
                .put("meterstore.iceberg.warehouse", table.warehouse().location())
                .put("meterstore.schedule-interval", "1s")
                .putAll(extraProperties)
                .buildKeepingLast();
        return ArchiverMain.bootstrap(Optional.of(properties), new ArchiverModule(table.clock(), () -> shutdown.complete(null)))
                .doNotInitializeLogging()
                .initialize();
    }

    /** Two Berlin days of three meters: the partitions of 2024-03-04, 2024-03-05 and 2024-03-06. */
    private static long loadTwoDays(TestingArchiverTable table)
            throws Exception
    {
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .meters(3)
                .startDay(LocalDate.of(2024, 3, 5))
                .days(2)
                .build();
        try (Connection connection = table.connect()) {
            return new ReadingsLoader(table.hotTier()).load(connection, generator);
        }
    }

    private static boolean archiverWaitsForLock(TestingArchiverTable table)
    {
        try (Connection connection = table.connect();
                Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("""
                        SELECT count(*) FROM pg_stat_activity
                        WHERE datname = current_database() AND application_name = 'meterstore-archiver' AND wait_event_type = 'Lock'""")) {
            result.next();
            return result.getLong(1) > 0;
        }
        catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    private static void await(BooleanSupplier condition)
            throws InterruptedException
    {
        // polls for a state the service reaches on its own; a generous bound only keeps a broken service from hanging the build
        for (int attempt = 0; attempt < 3_000 && !condition.getAsBoolean(); attempt++) {
            Thread.sleep(20);
        }
        assertThat(condition.getAsBoolean()).as("the service reached the awaited state").isTrue();
    }

    private static StringResponse get(HttpClient client, URI uri)
    {
        return client.execute(prepareGet().setUri(uri).build(), createStringResponseHandler());
    }

    private static StringResponse putState(HttpClient client, URI server, String state)
    {
        return client.execute(
                preparePut()
                        .setUri(server.resolve("/v1/info/state"))
                        .setHeader("Content-Type", "application/json")
                        .setBodyGenerator(createStaticBodyGenerator("\"%s\"".formatted(state), UTF_8))
                        .build(),
                createStringResponseHandler());
    }
}
