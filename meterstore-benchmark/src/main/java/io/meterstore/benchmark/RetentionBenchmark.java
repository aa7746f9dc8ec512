package io.meterstore.benchmark;

import com.google.common.collect.ImmutableList;
import io.airlift.log.Logger;
import io.meterstore.archiver.maintenance.ColdTierLayout;
import io.meterstore.archiver.maintenance.CompactionSettings;
import io.meterstore.archiver.maintenance.MaintenanceOutcome;
import io.meterstore.archiver.maintenance.MaintenanceSettings;
import io.meterstore.archiver.maintenance.RetentionPeriod;
import io.meterstore.archiver.maintenance.RetentionSweep;
import io.meterstore.archiver.maintenance.TableMaintenance;
import io.meterstore.benchmark.BenchmarkResult.Comparison;
import io.meterstore.benchmark.BenchmarkResult.Target;
import io.meterstore.benchmark.BenchmarkResult.Unit;
import io.meterstore.core.ErasureLog;
import io.meterstore.core.ErasureLog.Erasure;
import io.meterstore.core.ErasureLog.Trigger;
import io.meterstore.core.HotPartition;
import io.meterstore.core.PartitionMonths;
import io.meterstore.core.SnapshotRetention;
import io.meterstore.core.TieringWatermark;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.util.SnapshotUtil;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.LocalDate;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

import static com.google.common.base.Preconditions.checkState;
import static io.meterstore.core.PartitionMonths.end;
import static io.meterstore.core.PartitionMonths.start;
import static java.util.Objects.requireNonNull;

/**
 * Y5 (issue 16): the archiver's {@code expire} with {@code meterstore.retention=1y} over the years dataset, timed once,
 * and the proof that it removed exactly the months past the retention: {@code readings_versions} counted and summed per
 * UTC month of "from" (the month Iceberg partitions by and the retention removes whole) through Trino before and after,
 * the hot partitions listed, the audit rows and the retention's commits read back.
 * <p>
 * "Now" is fixed: the day after the dataset's last day, but no earlier than 2 January of its start year plus two, so a
 * retention of one settlement year cuts at the first Berlin New Year inside the dataset (2025-01-01, 2024-12-31T23:00Z,
 * for the dataset of 2024-06 to 2026-05): the months before it go, December 2024 (which ends an hour after the cut)
 * and every later month stay. A sweep changes the kept dataset for good (its audit rows refuse the months ever after),
 * so the dataset's marker is changed before it runs and the next run makes the dataset again.
 */
final class RetentionBenchmark
{
    static final String ID = "Y5";
    static final RetentionPeriod RETENTION = new RetentionPeriod(1);
    private static final Logger log = Logger.get(RetentionBenchmark.class);
    private static final String TITLE = "retention sweep (`expire` with meterstore.retention=1y)";
    private static final Target TARGET = Target.reported("exactly the months past the retention gone, every other month unchanged");
    private static final String MONTHS = """
            SELECT date_format("from" AT TIME ZONE 'UTC', '%Y-%m'), count(*), sum(value)
            FROM meterstore.metering.readings_versions GROUP BY 1 ORDER BY 1""";

    private final YearsDataset dataset;
    private final Connection trino;

    RetentionBenchmark(YearsDataset dataset, Connection trino)
    {
        this.dataset = requireNonNull(dataset, "dataset is null");
        this.trino = requireNonNull(trino, "trino is null");
    }

    /** The sweep's "now": the morning after the dataset's last day, or the first day one settlement year cuts inside it. */
    static Instant now(YearsSettings settings)
    {
        Instant afterLastDay = YearsSettings.START_DAY.plusDays(settings.days()).atStartOfDay(ZoneOffset.UTC).toInstant();
        Instant cutsInside = LocalDate.of(YearsSettings.START_DAY.getYear() + 1 + RETENTION.settlementYears(), 1, 2).atStartOfDay(ZoneOffset.UTC).toInstant();
        return afterLastDay.isAfter(cutsInside) ? afterLastDay : cutsInside;
    }

    /** A month's rows in readings_versions: count and sum, as Trino returns them. */
    private record Month(long rows, String sum) {}

    BenchmarkResult run(YearsSettings settings)
    {
        try {
            return sweep(settings);
        }
        catch (Exception e) {
            log.error(e, "Y5 failed");
            return BenchmarkResult.failed(ID, TITLE, "expire", "none", Unit.SECONDS, TARGET, e);
        }
    }

    private BenchmarkResult sweep(YearsSettings settings)
            throws Exception
    {
        Instant now = now(settings);
        Instant cut = RETENTION.cut(now);
        Table table = dataset.table();
        SortedMap<YearMonth, Month> before = months();
        ColdTierLayout layoutBefore = ColdTierLayout.of(table);
        List<HotPartition> hotBefore = hotPartitions();
        long lastErasureBefore = erasures().stream().mapToLong(Erasure::erasureId).max().orElse(0);
        long snapshotBefore = table.currentSnapshot().snapshotId();
        List<YearMonth> expected = before.keySet().stream().filter(month -> !end(month).isAfter(cut)).toList();
        checkState(!expected.isEmpty() && expected.size() < before.size(), "Y5 needs a dataset with months on both sides of the cut %s (the retention at %s); it has %s to %s: raise benchmark.years.days",
                TieringWatermark.formatInstant(cut), TieringWatermark.formatInstant(now), before.firstKey(), before.lastKey());

        // for good: the next run makes the dataset again, whatever happens from here on
        dataset.markRetentionSwept("%s at %s: months before %s".formatted(RETENTION, TieringWatermark.formatInstant(now), TieringWatermark.formatInstant(cut)));
        MaintenanceSettings maintenanceSettings = new MaintenanceSettings(SnapshotRetention.DEFAULT, MaintenanceSettings.DEFAULT_ORPHAN_SAFETY_AGE, Duration.ofHours(1),
                CompactionSettings.DEFAULTS, Optional.of(RETENTION));
        TableMaintenance maintenance = new TableMaintenance(dataset.warehouse().catalog(), YearsDataset.IDENTIFIER, YearsDataset.hotTier(YearsDataset.TABLE),
                dataset.database()::connect, maintenanceSettings, InstantSource.fixed(now));
        long start = System.nanoTime();
        MaintenanceOutcome outcome = maintenance.expire();
        long nanos = System.nanoTime() - start;
        log.info("Y5: %s (%.1f s)", outcome.describe(), nanos / 1e9);

        SortedMap<YearMonth, Month> after = months();
        List<HotPartition> hotAfter = hotPartitions();
        List<Erasure> audit = erasures().stream().filter(erasure -> erasure.erasureId() > lastErasureBefore).toList();
        table.refresh();
        List<Snapshot> commits = new ArrayList<>();
        for (Snapshot snapshot : SnapshotUtil.ancestorsOf(table.currentSnapshot().snapshotId(), table::snapshot)) {
            if (snapshot.snapshotId() == snapshotBefore) {
                break;
            }
            commits.add(snapshot);
        }
        List<Snapshot> retentionCommits = commits.reversed().stream().filter(snapshot -> snapshot.summary().containsKey(RetentionSweep.MONTH_KEY)).toList();

        List<String> failures = new ArrayList<>();
        List<YearMonth> swept = outcome.swept().map(RetentionSweep.Swept::months).orElse(List.of());
        check(failures, swept.equals(expected), "the sweep removed the months past the retention, %s (it names %s)", expected, swept);
        for (Map.Entry<YearMonth, Month> month : before.entrySet()) {
            Optional<Month> left = Optional.ofNullable(after.get(month.getKey()));
            if (expected.contains(month.getKey())) {
                check(failures, left.isEmpty(), "month %s is gone (%s rows left)", month.getKey(), left.map(Month::rows).orElse(0L));
            }
            else {
                check(failures, left.equals(Optional.of(month.getValue())), "month %s is unchanged: %s rows, sum %s before, %s after", month.getKey(), month.getValue().rows(), month.getValue().sum(), left);
            }
        }
        check(failures, before.keySet().containsAll(after.keySet()), "no month appeared: %s", after.keySet());
        List<String> auditProblems = new ArrayList<>();
        for (YearMonth month : expected) {
            List<Erasure> rows = audit.stream().filter(erasure -> erasure.recorded().scope().from().lower().equals(Optional.of(start(month)))).toList();
            if (rows.size() != 1 || rows.getFirst().recorded().trigger() != Trigger.RETENTION) {
                auditProblems.add("%s has %s audit rows".formatted(month, rows.size()));
                continue;
            }
            // the rows the trail says were removed are the rows queries saw, as a DELETE's audit row counts them
            long recorded = rows.getFirst().recorded().rowsRemovedCold() + rows.getFirst().recorded().rowsRemovedHot();
            if (recorded != before.get(month).rows()) {
                auditProblems.add("%s's row (#%s) records %,d rows removed where `readings_versions` showed %,d".formatted(month, rows.getFirst().erasureId(), recorded, before.get(month).rows()));
            }
        }
        check(failures, audit.size() == expected.size() && auditProblems.isEmpty(), "one audit row per removed month (trigger retention) with the month's rows: %s new rows%s",
                audit.size(), auditProblems.isEmpty() ? "" : "; " + String.join(", ", auditProblems));
        long removedRows = expected.stream().mapToLong(month -> before.get(month).rows()).sum();
        long auditedColdRows = audit.stream().mapToLong(erasure -> erasure.recorded().rowsRemovedCold()).sum();
        // Iceberg counts the records of the removed files, rows hidden by a position delete among them: less those, the rows queries saw
        long deletedRecords = retentionCommits.stream().mapToLong(snapshot -> number(snapshot, SnapshotSummary.DELETED_RECORDS_PROP)).sum();
        long hiddenRecords = retentionCommits.stream().mapToLong(snapshot -> number(snapshot, SnapshotSummary.REMOVED_POS_DELETES_PROP)).sum();
        long expectedFiles = expected.stream().mapToLong(month -> Optional.ofNullable(layoutBefore.months().get(month)).map(ColdTierLayout.MonthFiles::files).orElse(0)).sum();
        long deletedFiles = retentionCommits.stream().mapToLong(snapshot -> number(snapshot, SnapshotSummary.DELETED_FILES_PROP)).sum();
        check(failures, retentionCommits.size() == expected.size() && deletedFiles == expectedFiles && deletedRecords - hiddenRecords == auditedColdRows,
                "one metadata-only commit per removed month, removing its %s data files and, less the records its position deletes hid, the %s rows the audit rows name: %s commits removed %s files and %s records, %s of them hidden",
                expectedFiles, auditedColdRows, retentionCommits.size(), deletedFiles, deletedRecords, hiddenRecords);
        check(failures, commits.stream().allMatch(snapshot -> number(snapshot, SnapshotSummary.ADDED_FILES_PROP) == 0), "the sweep wrote no data file (nothing rewritten)");
        check(failures, hotAfter.stream().noneMatch(partition -> expected.contains(PartitionMonths.of(partition.start()))), "no hot partition of a removed month is left: %s", hotAfter);

        long removedBytes = retentionCommits.stream().mapToLong(snapshot -> number(snapshot, SnapshotSummary.REMOVED_FILE_SIZE_PROP)).sum();
        long deleteFiles = retentionCommits.stream().mapToLong(snapshot -> number(snapshot, SnapshotSummary.REMOVED_DELETE_FILES_PROP)).sum();
        List<String> details = new ArrayList<>();
        details.add("""
                `TableMaintenance.expire()`, as `bin/archiver expire` runs it, with `meterstore.retention=1y` and the archiver's clock fixed at %s: one settlement year counted from the gas year of that instant cuts at %s (the start of the Berlin year), so every UTC month of "from" that ends by then goes (%s to %s, %s) and the %s from %s on stay. \
                Timed once, %s: the sweep (one commit and one audit row per month), then `expire`'s other steps, which at that clock find nothing due: the retention's erasures become physical (their files deleted, the snapshots before them expired) only once the reader grace has passed since their commits, at a later `expire`."""
                .formatted(TieringWatermark.formatInstant(now), TieringWatermark.formatInstant(cut), expected.getFirst(), expected.getLast(), ColdTierLayout.count(expected.size(), "month"),
                        ColdTierLayout.count(before.size() - expected.size(), "month"), before.keySet().stream().filter(month -> !expected.contains(month)).findFirst().orElseThrow(), BenchmarkReport.figure(Medians.seconds(nanos), Unit.SECONDS)));
        details.add("Removed: %,d rows of `readings_versions` (%,d records, %,d of them hidden by position deletes) in %,d data files and %,d delete files (%,d bytes) by %s metadata-only commits (`%s`), nothing rewritten; %s new audit rows in `\"readings$erasures\"` (trigger `retention`) recording %,d rows. Hot partitions: %s before (%s in a removed month), %s after. The archiver's line: `%s`."
                .formatted(removedRows, deletedRecords, hiddenRecords, deletedFiles, deleteFiles, removedBytes, retentionCommits.size(), RetentionSweep.MONTH_KEY, audit.size(),
                        audit.stream().mapToLong(erasure -> erasure.recorded().rowsRemovedCold() + erasure.recorded().rowsRemovedHot()).sum(),
                        hotBefore.size(), hotBefore.stream().filter(partition -> expected.contains(PartitionMonths.of(partition.start()))).count(), hotAfter.size(), outcome.describe()));
        StringBuilder monthTable = new StringBuilder("| month | rows before | sum before | rows after | sum after | |\n|---|--:|--:|--:|--:|---|\n");
        for (Map.Entry<YearMonth, Month> month : before.entrySet()) {
            Optional<Month> left = Optional.ofNullable(after.get(month.getKey()));
            monthTable.append("| %s | %,d | %s | %s | %s | %s |\n".formatted(month.getKey(), month.getValue().rows(), month.getValue().sum(),
                    left.map(value -> "%,d".formatted(value.rows())).orElse("-"), left.map(Month::sum).orElse("-"),
                    expected.contains(month.getKey()) ? "past the retention" : ""));
        }
        details.add("`readings_versions` per UTC month of \"from\", through Trino, before and after:\n\n```sql\n%s\n```\n\n%s".formatted(MONTHS, monthTable.toString().strip()));
        details.add("Checks: %s. The dataset's marker now names the sweep, so the next run makes the dataset again.".formatted(failures.isEmpty()
                ? "the sweep named exactly the months past the retention; each is gone from `readings_versions`; every other month's count and sum are as before; one audit row per removed month recording the rows `readings_versions` showed in it; one commit per month removing the month's data files and, less the records its position deletes hid, the rows the audit rows name, none adding a file; no hot partition of a removed month left"
                : "**failed**: " + String.join("; ", failures)));
        return BenchmarkResult.reported(ID, TITLE, "expire", Unit.SECONDS, Medians.seconds(nanos), TARGET, failures.isEmpty() ? Comparison.SAME_RESULT : Comparison.MISMATCH, details);
    }

    private SortedMap<YearMonth, Month> months()
            throws SQLException
    {
        SortedMap<YearMonth, Month> months = new TreeMap<>();
        for (List<String> row : new TimedQuery("meterstore", trino, MONTHS).execute().rows()) {
            months.put(YearMonth.parse(row.get(0)), new Month(Long.parseLong(row.get(1)), row.get(2)));
        }
        return months;
    }

    private List<HotPartition> hotPartitions()
            throws SQLException
    {
        try (Connection connection = dataset.database().connect()) {
            return ImmutableList.copyOf(YearsDataset.hotTier(YearsDataset.TABLE).partitions(connection));
        }
    }

    private List<Erasure> erasures()
            throws SQLException
    {
        try (Connection connection = dataset.database().connect()) {
            if (!ErasureLog.exists(connection, YearsDataset.SCHEMA)) {
                return List.of();
            }
            return ErasureLog.erasures(connection, YearsDataset.SCHEMA, YearsDataset.TABLE);
        }
    }

    private static long number(Snapshot snapshot, String key)
    {
        return Long.parseLong(snapshot.summary().getOrDefault(key, "0"));
    }

    private static void check(List<String> failures, boolean held, String what, Object... arguments)
    {
        if (!held) {
            failures.add(what.formatted(arguments));
        }
    }
}
