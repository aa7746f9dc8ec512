package io.meterstore.benchmark;

import com.google.common.io.MoreFiles;
import com.google.common.io.RecursiveDeleteOption;
import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.Reading;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.LocalDate;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The short soak of issue 34 (40 simulated days of 50 meters) with its oracle checking every day, and two faults put in
 * on purpose that the oracle must catch: a late correction the write path loses, and a hot partition the scan misses.
 */
final class TestSoakRun
{
    @Test
    void testSoakPassesEveryOracleCheck()
            throws Exception
    {
        // two delivery statements a day (10 meters each), sent at once over two connections, so the run stays short; one restart of the Trino engine, one SIGKILL of
        // the archiver mid-cycle and one restart of PostgreSQL, on seeded days; PostgreSQL is a server of the test's own.
        // No storage outage: its failed archival cycle alone takes about 90 s (Iceberg retries a metadata read 20 times).
        // The days end on the 4th of a month, so the run begins on the 24th to 27th of the month two before, whose last days
        // the retention of 17 days removes at the weekly expire of day 28 (and no other month, at no other evening), after
        // the first erasure's lift (day 26) and before the second erasure (day 31), whatever the date of the run
        LocalDate lastDay = SoakRun.defaultLastDay().getDayOfMonth() >= 4 ? SoakRun.defaultLastDay().withDayOfMonth(4) : SoakRun.defaultLastDay().minusMonths(1).withDayOfMonth(4);
        SoakRun.Settings settings = new SoakRun.Settings(40, 20, 10, 2, 0.03, 10, 1, 1, 1, 0, OptionalInt.of(17), 10, 34, lastDay);
        Path directory = Files.createTempDirectory("meterstore-soak-");
        SoakRun.Result result;
        try (TestingPostgresServer server = TestingPostgresServer.restartable(Files.createDirectory(directory.resolve("pgdata")))) {
            TestingWarehouse warehouse = new TestingWarehouse(server.createDatabase("soak"), Files.createDirectory(directory.resolve("warehouse")), TestingWarehouse.CATALOG_NAME);
            result = new SoakRun(warehouse, settings, SoakRun.Tampering.NONE).run();
        }
        finally {
            MoreFiles.deleteRecursively(directory, RecursiveDeleteOption.ALLOW_INSECURE);
        }

        assertThat(result.days()).isEqualTo(40);
        // two questions a day, every fifth day three AS OF instants and meter_completeness, and after each of the five
        // expires the retention's rows (the sweep's audit rows against the oracle's own rule), all passed
        assertThat(result.checks()).isEqualTo(40 * 2 + 8 * 4 + 5);
        // the dashboards queried beside every day's deliveries after the first, and each answer was the oracle's
        assertThat(result.dashboardQueries()).isGreaterThanOrEqualTo(39);
        // every day's rows, and the corrections (3 % of a day's rows, from the second day on)
        assertThat(result.rowsRecorded()).isGreaterThanOrEqualTo(40L * 20 * 92 + 39L * 58);
        // refused statements, on their schedules: every third day, every fourth day (two kinds), after each erasure (days 21 and 31)
        assertThat(result.refused()).containsEntry("conflicting_redelivery", 13)
                .containsEntry("one_operator_per_reading", 10)
                .containsEntry("one_grid_per_reading", 10);
        assertThat(result.refused().get("erased")).isGreaterThanOrEqualTo(2);
        assertThat(result.erasures()).isEqualTo(2);
        // the first erasure lifted five days later (day 26) and its two days delivered again, which the oracle holds again
        assertThat(result.lifts()).isEqualTo(1);
        // the first commit moves W from the epoch to the first closed day; then a day a day, one more every evening,
        // the killed archiver's too if it died after its commit
        assertThat(result.archivalCommits()).isEqualTo(40);
        assertThat(result.maintenanceRuns()).isEqualTo(5);
        // one sweep, of the first month, on the evening after day 28: every version of its days (lifted and delivered
        // again, corrected, erased) as the oracle counts them, and the first hour of the next month's first Berlin day
        LocalDate firstDay = lastDay.minusDays(39);
        assertThat(result.sweeps()).hasSize(1);
        SoakRun.Sweep sweep = result.sweeps().getFirst();
        assertThat(sweep.day()).isEqualTo(firstDay.plusDays(27));
        assertThat(sweep.months()).containsExactly(YearMonth.from(firstDay));
        assertThat(sweep.cut()).isEqualTo(MeteringCalendar.startOfLocalDay(MeteringCalendar.localDay(sweep.day().plusDays(1).atTime(22, 0).toInstant(ZoneOffset.UTC)).minusDays(17)));
        // archived long before, its partitions dropped: nothing of it was hot
        assertThat(sweep.hotRows()).isZero();
        assertThat(sweep.coldRows()).isGreaterThanOrEqualTo(20L * 92 * (firstDay.lengthOfMonth() - firstDay.getDayOfMonth() + 1));
        assertThat(sweep.dataFiles()).isPositive();
        // the next morning a batch of the swept month delivered again, and the late corrections that reached it: refused
        // as erased, whole statements, nothing written (the oracle recorded none of them and still agreed)
        assertThat(result.refused()).containsEntry("retention_redelivery", 1);
        assertThat(result.refused().get("retention_correction")).isPositive();
        assertThat(result.rowsRefusedPastRetention()).isGreaterThanOrEqualTo(92L + result.refused().get("retention_correction"));
        // each fault once, on its seeded day (the archiver's at the seed's failpoint), and every check after them passed
        assertThat(result.faults()).isEqualTo(Map.of("engine_restart", 1, "archiver_sigkill_mid-stream", 1, "postgres_restart", 1));
        // maintenance read the wall-clock stamps of snapshots and files on the soak's clock, so their ages were simulated
        // days: snapshots past the retention of 10 days expired (fewer are left than the archival commits alone made),
        // the killed archiver's files were removed as orphans, and both erasures and the retention's became physical
        String maintained = "expired %s, orphans %s, erasures physical %s, snapshots %s".formatted(result.snapshotsExpired(), result.orphansRemoved(), result.erasuresCompleted(),
                result.growth().stream().map(growth -> growth.day() + ": " + growth.snapshots()).toList());
        assertThat(result.snapshotsExpired()).as(maintained).isPositive();
        assertThat(result.growth().getLast().snapshots()).as(maintained).isLessThan(result.archivalCommits());
        assertThat(result.orphansRemoved()).as(maintained).isPositive();
        assertThat(result.erasuresCompleted()).as(maintained).isEqualTo(result.erasures() + result.sweeps().size());
        // the report's growth: the metadata files listed through the table's storage, every day's time with the store's part of it
        assertThat(result.growth().getLast().metadataFiles()).hasValueSatisfying(files -> assertThat(files).isGreaterThan(result.archivalCommits()));
        assertThat(result.storeTimes()).hasSize(40);
        for (int day = 0; day < 40; day++) {
            assertThat(result.storeTimes().get(day)).isPositive().isLessThanOrEqualTo(result.dayTimes().get(day));
        }
    }

    @Test
    void testOracleCatchesALostLateCorrection()
            throws Exception
    {
        SoakRun.Settings settings = new SoakRun.Settings(12, 10, 10, 1, 0.03, 10, 0, 0, 0, 0, OptionalInt.empty(), 30, 35, SoakRun.defaultLastDay());
        AtomicReference<Reading> lost = new AtomicReference<>();
        SoakRun.Tampering dropOne = new SoakRun.Tampering()
        {
            @Override
            public List<Reading> sent(SoakRun.Kind kind, LocalDate day, List<Reading> rows)
            {
                if (kind != SoakRun.Kind.CORRECTION || lost.get() != null || rows.size() < 2) {
                    return rows;
                }
                lost.set(rows.getFirst());
                return new ArrayList<>(rows.subList(1, rows.size()));
            }
        };
        SoakRun run = new SoakRun(warehouse("soak_lost_correction"), settings, dropOne);

        assertThatThrownBy(run::run)
                .isInstanceOf(SoakRun.DivergenceException.class)
                .satisfies(e -> System.out.println("Oracle: " + e.getMessage()))
                .hasMessageContaining("readings: meter " + lost.get().maloId() + ", day " + MeteringCalendar.localDay(lost.get().from()));
    }

    @Test
    void testOracleCatchesAHotPartitionTheScanMisses()
            throws Exception
    {
        // two days: the fault is in the second's check, and every day more is time the suite spends
        SoakRun.Settings settings = new SoakRun.Settings(2, 10, 10, 1, 0.03, 10, 0, 0, 0, 0, OptionalInt.empty(), 30, 36, SoakRun.defaultLastDay());
        // the last simulated day is two days before today (SoakRun): hide the second's partition
        LocalDate hidden = LocalDate.now(ZoneOffset.UTC).minusDays(2);
        SoakRun.Tampering hidePartition = new SoakRun.Tampering()
        {
            @Override
            public void beforeCheck(LocalDate day, TestingWarehouse warehouse)
                    throws SQLException
            {
                if (!day.equals(hidden)) {
                    return;
                }
                // the partition of the day's first UTC hours renamed out of the naming's pattern: the hot scan, which
                // enumerates partitions by name, no longer finds it, though PostgreSQL still holds its rows
                PartitionNaming naming = BenchmarkDataset.HOT_TIER.naming();
                String partition = naming.partitionName(naming.alignDown(MeteringCalendar.startOfLocalDay(day).plusSeconds(7_200)));
                try (Connection connection = warehouse.database().connect(); Statement statement = connection.createStatement()) {
                    statement.execute("ALTER TABLE %s.%s RENAME TO soak_hidden_partition".formatted(BenchmarkDataset.SCHEMA, partition));
                }
            }
        };
        SoakRun run = new SoakRun(warehouse("soak_hidden_partition"), settings, hidePartition);

        assertThatThrownBy(run::run)
                .isInstanceOf(SoakRun.DivergenceException.class)
                .satisfies(e -> System.out.println("Oracle: " + e.getMessage()))
                // the first meter's day: the UTC partition holds all of it but the first local hour
                .hasMessageContaining("after simulated day %s (%s passed before it): readings: meter %s, day %s: expected %s rows"
                        .formatted(hidden, 2, ReadingsGenerator.maloId(0), hidden, MeteringCalendar.expectedIntervals(hidden, Duration.ofMinutes(15))));
    }

    private static TestingWarehouse warehouse(String name)
    {
        return TestingWarehouse.create(TestingPostgresServer.shared().createDatabase(name));
    }
}
