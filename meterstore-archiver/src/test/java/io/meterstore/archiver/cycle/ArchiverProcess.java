package io.meterstore.archiver.cycle;

import io.meterstore.archiver.cycle.ArchiveOutcome.Kind;
import io.meterstore.archiver.maintenance.CompactionSettings;
import io.meterstore.archiver.maintenance.MaintenanceCommand;
import io.meterstore.archiver.maintenance.MaintenanceSettings;
import io.meterstore.archiver.maintenance.RetentionPeriod;
import io.meterstore.archiver.maintenance.TableMaintenance;
import io.meterstore.core.HotTier;
import io.meterstore.core.IcebergCatalogs;
import io.meterstore.core.IcebergCatalogs.JdbcCatalogSpec;
import io.meterstore.core.LocalFileIo;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.SnapshotRetention;
import io.meterstore.testing.TestingWarehouse;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.io.OutputFile;

import java.io.BufferedReader;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.sql.DriverManager;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import static java.nio.charset.StandardCharsets.UTF_8;

/**
 * An archiver as a process of its own, for tests that kill one or race two: runs {@link ArchivalCycle#archiveOnce()}
 * on a fixed clock, once or in a tight loop until a cycle is idle, and prints every outcome as one line
 * {@code OUTCOME <KIND> <description>} to stdout ({@code FAILED <message>} and exit 1 on an exception). With
 * {@code barrier=true} it prints {@code READY} once connected and waits for a line on stdin before the first cycle, so
 * two processes start racing at the same moment. With {@code pause=before-commit} it prints {@code PAUSED before-commit}
 * when its first commit has loaded its base and is about to write the new metadata, and waits for a line on stdin, so
 * that another writer can commit in between.
 * <p>
 * Arguments, as {@code key=value}: {@code url}, {@code user}, {@code warehouse}, {@code clock} (RFC 3339),
 * {@code grace} (ISO-8601 duration), {@code mode} ({@code once} or {@code until-idle}), {@code barrier}, {@code pause}. With
 * {@code mode} {@code expire} or {@code compact} it runs that maintenance command once instead, with {@code retention}
 * and {@code orphan-age} (ISO-8601 durations) and {@code keep} (snapshots), and prints {@code MAINTAINED <description>}.
 */
public final class ArchiverProcess
{
    // a loser of the lease tries again this soon: tight enough that two loops contend all the time
    private static final Duration CONTENDED_PAUSE = Duration.ofMillis(20);
    private static final int MAX_CYCLES = 100_000;

    private ArchiverProcess() {}

    public static void main(String[] args)
            throws Exception
    {
        Map<String, String> arguments = new HashMap<>();
        for (String argument : args) {
            int separator = argument.indexOf('=');
            arguments.put(argument.substring(0, separator), argument.substring(separator + 1));
        }
        String url = arguments.get("url");
        String user = arguments.get("user");
        Instant now = Instant.parse(arguments.get("clock"));
        InstantSource clock = InstantSource.fixed(now);
        ArchivalSettings settings = new ArchivalSettings(ArchivalSettings.DEFAULT_SETTLEMENT_LAG, Duration.parse(arguments.get("grace")), ArchivalSettings.DEFAULT_CHUNK_ROWS);
        boolean untilIdle = arguments.get("mode").equals("until-idle");

        BufferedReader input = new BufferedReader(new InputStreamReader(System.in, UTF_8));
        boolean pauseBeforeCommit = arguments.getOrDefault("pause", "").equals("before-commit");
        AtomicBoolean paused = new AtomicBoolean();
        LocalFileIo fileIo = new LocalFileIo()
        {
            @Override
            public OutputFile newOutputFile(String location)
            {
                // a commit writes its new metadata file after it refreshed its base and before it swaps the pointer
                if (pauseBeforeCommit && location.endsWith(".metadata.json") && paused.compareAndSet(false, true)) {
                    System.out.println("PAUSED before-commit");
                    System.out.flush();
                    try {
                        input.readLine();
                    }
                    catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }
                return super.newOutputFile(location);
            }
        };
        Catalog catalog = IcebergCatalogs.jdbc(new JdbcCatalogSpec(TestingWarehouse.CATALOG_NAME, url, user, Optional.empty(), arguments.get("warehouse")), properties -> fileIo);
        HotTier hotTier = new HotTier(TestingArchiverTable.SCHEMA, new PartitionNaming(TestingArchiverTable.TABLE, Duration.ofDays(1)), Duration.ofSeconds(5));
        Optional<MaintenanceCommand> maintenance = Arrays.stream(MaintenanceCommand.values())
                .filter(command -> command.commandName().equals(arguments.get("mode")))
                .findFirst();
        if (maintenance.isPresent()) {
            MaintenanceSettings maintenanceSettings = new MaintenanceSettings(
                    new SnapshotRetention(Duration.parse(arguments.get("retention")), Integer.parseInt(arguments.get("keep"))),
                    Duration.parse(arguments.get("orphan-age")),
                    Duration.parse(arguments.get("grace")),
                    CompactionSettings.DEFAULTS,
                    Optional.ofNullable(arguments.get("data-retention")).filter(value -> !value.isEmpty()).map(RetentionPeriod::parse));
            TableMaintenance tableMaintenance = new TableMaintenance(catalog, TestingArchiverTable.identifier(), hotTier, () -> DriverManager.getConnection(url, user, null), maintenanceSettings, clock);
            int exitCode = 0;
            try {
                System.out.println("MAINTAINED " + tableMaintenance.run(maintenance.get()).describe());
            }
            catch (Exception e) {
                System.out.println("FAILED " + e);
                e.printStackTrace();
                exitCode = 1;
            }
            finally {
                ((Closeable) catalog).close();
            }
            System.out.flush();
            System.exit(exitCode);
        }
        ArchivalCycle cycle = new ArchivalCycle(catalog, TestingArchiverTable.identifier(), hotTier, () -> DriverManager.getConnection(url, user, null), settings, clock);
        if (Boolean.parseBoolean(arguments.getOrDefault("barrier", "false"))) {
            System.out.println("READY");
            System.out.flush();
            input.readLine();
        }
        int exitCode = 0;
        try {
            for (int cycles = 0; cycles < MAX_CYCLES; cycles++) {
                ArchiveOutcome outcome = cycle.archiveOnce();
                System.out.println("OUTCOME " + outcome.kind() + " " + outcome.describe());
                System.out.flush();
                if (!untilIdle || outcome.kind() == Kind.IDLE) {
                    break;
                }
                if (outcome.kind() == Kind.LEASE_CONTENDED) {
                    Thread.sleep(CONTENDED_PAUSE);
                }
            }
        }
        catch (Exception e) {
            System.out.println("FAILED " + e);
            System.out.flush();
            e.printStackTrace();
            exitCode = 1;
        }
        finally {
            ((Closeable) catalog).close();
        }
        System.exit(exitCode);
    }
}
