package io.meterstore.archiver.cycle;

import io.meterstore.archiver.cycle.ArchiveOutcome.Kind;
import io.meterstore.archiver.maintenance.MaintenanceCommand;
import io.meterstore.archiver.maintenance.MaintenanceSettings;
import io.meterstore.archiver.maintenance.TableMaintenance;
import io.meterstore.core.HotTier;
import io.meterstore.core.IcebergCatalogs;
import io.meterstore.core.IcebergCatalogs.JdbcCatalogSpec;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.SnapshotRetention;
import io.meterstore.testing.TestingWarehouse;
import org.apache.iceberg.catalog.Catalog;

import java.io.BufferedReader;
import java.io.Closeable;
import java.io.InputStreamReader;
import java.sql.DriverManager;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import static java.nio.charset.StandardCharsets.UTF_8;

/**
 * An archiver as a process of its own, for tests that kill one or race two: runs {@link ArchivalCycle#archiveOnce()}
 * on a fixed clock, once or in a tight loop until a cycle is idle, and prints every outcome as one line
 * {@code OUTCOME <KIND> <description>} to stdout ({@code FAILED <message>} and exit 1 on an exception). With
 * {@code barrier=true} it prints {@code READY} once connected and waits for a line on stdin before the first cycle, so
 * two processes start racing at the same moment.
 * <p>
 * Arguments, as {@code key=value}: {@code url}, {@code user}, {@code warehouse}, {@code clock} (RFC 3339),
 * {@code grace} (ISO-8601 duration), {@code mode} ({@code once} or {@code until-idle}), {@code barrier}. With
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

        Catalog catalog = IcebergCatalogs.jdbc(new JdbcCatalogSpec(TestingWarehouse.CATALOG_NAME, url, user, Optional.empty(), arguments.get("warehouse")));
        HotTier hotTier = new HotTier(TestingArchiverTable.SCHEMA, new PartitionNaming(TestingArchiverTable.TABLE, Duration.ofDays(1)), Duration.ofSeconds(5));
        Optional<MaintenanceCommand> maintenance = Arrays.stream(MaintenanceCommand.values())
                .filter(command -> command.commandName().equals(arguments.get("mode")))
                .findFirst();
        if (maintenance.isPresent()) {
            MaintenanceSettings maintenanceSettings = new MaintenanceSettings(
                    new SnapshotRetention(Duration.parse(arguments.get("retention")), Integer.parseInt(arguments.get("keep"))),
                    Duration.parse(arguments.get("orphan-age")),
                    Duration.parse(arguments.get("grace")));
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
            new BufferedReader(new InputStreamReader(System.in, UTF_8)).readLine();
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
