package io.meterstore.benchmark;

import io.meterstore.benchmark.SoakGrowth.MonthFiles;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.YearMonth;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static java.nio.charset.StandardCharsets.UTF_8;

/**
 * The section of docs/soak.md that {@code bin/soak} writes, between its two markers: what the run did and how the
 * store grew. A run replaces the section of the run before it; the rest of the page is left as it is.
 */
final class SoakReport
{
    static final String START = "<!-- soak report: written by bin/soak -->";
    static final String END = "<!-- end of soak report -->";
    private static final Pattern SECTION = Pattern.compile(Pattern.quote(START) + ".*?" + Pattern.quote(END), Pattern.DOTALL);
    private static final int SAMPLE_DAYS = 7;

    private SoakReport() {}

    /** Replaces the report's section of {@code page} with this run's, or appends it. */
    static void write(Path page, String section)
            throws IOException
    {
        String existing = Files.exists(page) ? Files.readString(page, UTF_8) : "";
        Matcher matcher = SECTION.matcher(existing);
        String updated = matcher.find()
                ? existing.substring(0, matcher.start()) + section.strip() + existing.substring(matcher.end())
                : existing.stripTrailing() + "\n\n" + section.strip() + "\n";
        Files.writeString(page, updated, UTF_8);
    }

    static String section(SoakRun.Settings settings, SoakRun.Result result, Duration elapsed, Instant finished, double loadAverage)
    {
        StringBuilder out = new StringBuilder();
        out.append(START).append("\n\n## The last run of bin/soak\n\n");
        out.append("%s simulated days of %,d meters (%s meters a statement over %s connections at once, corrections %s of a day's rows, an erasure every %s days, %s, snapshots kept %s days, seed %s), run %s UTC in %s s (load average %.1f at its end).\n\n"
                .formatted(settings.days(), settings.meters(), settings.metersPerStatement(), settings.deliveryConnections(), settings.correctionRate(), settings.erasureEvery(),
                        settings.retentionDays().isPresent() ? "readings kept %s days".formatted(settings.retentionDays().getAsInt()) : "no retention", settings.snapshotRetentionDays(), settings.seed(),
                        finished.truncatedTo(ChronoUnit.MINUTES).toString().replace('T', ' ').replace("Z", ""), elapsed.toSeconds(), loadAverage));
        out.append("| What | Count |\n|---|---:|\n");
        out.append("| rows sent | %,d |\n".formatted(result.rowsSent()));
        out.append("| rows recorded by the oracle (sent less the same-payload redeliveries) | %,d |\n".formatted(result.rowsRecorded()));
        result.refused().entrySet().stream().sorted(Map.Entry.comparingByKey())
                .forEach(entry -> out.append("| refused statements: %s | %,d |\n".formatted(entry.getKey(), entry.getValue())));
        out.append("| rows of the statements refused for reaching months the retention removed | %,d |\n".formatted(result.rowsRefusedPastRetention()));
        out.append("| erasures (DELETE) | %,d |\n".formatted(result.erasures()));
        out.append("| erasures lifted, their days delivered again | %,d |\n".formatted(result.lifts()));
        out.append("| archival commits | %,d |\n".formatted(result.archivalCommits()));
        out.append("| maintenance runs (expire, compact) | %,d |\n".formatted(result.maintenanceRuns()));
        out.append("| snapshots expired (past the snapshot retention on the soak's clock) | %,d |\n".formatted(result.snapshotsExpired()));
        out.append("| orphan files removed (older than the safety age on the soak's clock) | %,d |\n".formatted(result.orphansRemoved()));
        out.append("| erasures made physical (past the reader grace on the soak's clock) | %,d |\n".formatted(result.erasuresCompleted()));
        out.append("| retention sweeps that removed months | %,d |\n".formatted(result.sweeps().size()));
        result.faults().entrySet().stream().sorted(Map.Entry.comparingByKey())
                .forEach(entry -> out.append("| faults injected and survived: %s | %,d |\n".formatted(entry.getKey(), entry.getValue())));
        result.outageFailures().entrySet().stream().sorted(Map.Entry.comparingByKey())
                .forEach(entry -> out.append("| failed during a storage outage, naming the storage: %s | %,d |\n".formatted(entry.getKey(), entry.getValue())));
        out.append("| oracle checks passed | %,d |\n".formatted(result.checks()));
        out.append("| dashboard queries beside the deliveries, every answer the oracle's | %,d |\n".formatted(result.dashboardQueries()));
        int sample = sampleDays(result.dayTimes().size());
        out.append(timeRows("time per simulated day", result.dayTimes(), sample));
        out.append(timeRows("the store's part of it (writes and the archiver; not the oracle's questions nor the resolving of its record)", result.storeTimes(), sample));
        out.append('\n');

        if (!result.sweeps().isEmpty()) {
            out.append("The retention's sweeps (expire on the evening after the day; rows as its audit rows count them, each the oracle's own count):\n\n");
            out.append("| Evening of day | Cut | Months removed | Data files | Delete files | Cold rows | Hot rows |\n|---|---|---|---:|---:|---:|---:|\n");
            for (SoakRun.Sweep sweep : result.sweeps()) {
                out.append("| %s | %s | %s | %,d | %,d | %,d | %,d |\n".formatted(sweep.day(), sweep.cut(),
                        sweep.months().stream().map(YearMonth::toString).collect(Collectors.joining(", ")), sweep.dataFiles(), sweep.deleteFiles(), sweep.coldRows(), sweep.hotRows()));
            }
            out.append('\n');
        }
        out.append("How the store grew (after the first day, every 30th and the last; PostgreSQL: every relation of the table's schema, "
                + "heap: the driver's JVM, engine included, after a GC):\n\n");
        out.append("| After day | Data files | Delete files | Most files in a settled month | Metadata files | Snapshots | Manifests | Hot partitions | PostgreSQL tables | PostgreSQL indexes | Dead tuples | Heap after GC |\n");
        out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (SoakGrowth growth : result.growth()) {
            out.append("| %s | %,d | %,d | %s | %s | %,d | %,d | %,d | %s | %s | %,d | %s |\n".formatted(
                    growth.day(), growth.dataFiles(), growth.deleteFiles(), mostFilesInSettledMonth(growth).map(String::valueOf).orElse("none settled"),
                    growth.metadataFiles().map("%,d"::formatted).orElse("n/a"), growth.snapshots(), growth.manifests(),
                    growth.hotPartitions(), megabytes(growth.hotTableBytes()), megabytes(growth.hotIndexBytes()), growth.hotDeadTuples(), megabytes(growth.heapAfterGcBytes())));
        }
        if (!result.growth().isEmpty()) {
            SoakGrowth last = result.growth().getLast();
            out.append("\nIceberg's files per month of data at the end (the current snapshot's; settled: the workload's corrections of the month stopped at least the compaction delay and a week of maintenance ago):\n\n");
            out.append("| Month | Data files | Delete files | Settled |\n|---|---:|---:|---|\n");
            for (Map.Entry<YearMonth, MonthFiles> month : last.filesPerMonth().entrySet()) {
                out.append("| %s | %,d | %,d | %s |\n".formatted(month.getKey(), month.getValue().dataFiles(), month.getValue().deleteFiles(),
                        SoakRun.correctionsSettled(month.getKey(), last.day()) ? "yes" : "no"));
            }
        }
        out.append('\n').append(END).append('\n');
        return out.toString();
    }

    /** The most data and delete files of a month whose corrections had settled on the growth's day ({@link SoakRun#correctionsSettled}); empty when none had. */
    static Optional<Integer> mostFilesInSettledMonth(SoakGrowth growth)
    {
        return growth.filesPerMonth().entrySet().stream()
                .filter(month -> SoakRun.correctionsSettled(month.getKey(), growth.day()))
                .map(month -> month.getValue().dataFiles() + month.getValue().deleteFiles())
                .max(Integer::compare);
    }

    /**
     * How many days the first and last medians take: a month of a run of four months or more (a year's first week has
     * no corrections far back and no maintenance yet), otherwise a week or the whole run.
     */
    static int sampleDays(int days)
    {
        return days >= 120 ? 30 : Math.min(SAMPLE_DAYS, days);
    }

    private static String timeRows(String what, List<Duration> days, int sample)
    {
        double first = median(days.subList(0, sample));
        double last = median(days.subList(days.size() - sample, days.size()));
        return "| %s, median of the first %s days | %.2f s |\n| %s, median of the last %s days | %.2f s (%.2f x the first) |\n"
                .formatted(what, sample, first, what, sample, last, last / first);
    }

    private static String megabytes(long bytes)
    {
        return "%.1f MB".formatted(bytes / 1e6);
    }

    static double median(List<Duration> durations)
    {
        return Medians.median(durations.stream().map(duration -> duration.toNanos() / 1e9).toList());
    }
}
