package io.meterstore.benchmark;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import io.meterstore.benchmark.BenchmarkResult.Verdict;

import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * Renders a run's results as its section of {@code docs/benchmarks.md} (the machine, the date, the dataset, a table of
 * medians and ratios, what each row ran), beside the sections of the other dataset sizes, and as its chart (the ratios
 * against their targets), written by hand: a chart is a few rectangles and lines, not a dependency.
 */
public record BenchmarkReport(Run run, Environment environment, List<String> dataset, List<BenchmarkResult> results, Map<String, String> notes, Map<String, Figures> localFigures)
{
    private static final String RUN_START = "<!-- run %s -->";
    private static final String RUN_END = "<!-- end of run %s -->";
    private static final Pattern RUN = Pattern.compile("<!-- run (\\d+x\\d+(?:-[A-Za-z0-9]+)*) -->");
    private static final Pattern SECTION = Pattern.compile("<!-- run (\\d+x\\d+(?:-[A-Za-z0-9]+)*) -->.*?<!-- end of run \\1 -->", Pattern.DOTALL);
    private static final Pattern RESULT_ROW = Pattern.compile("^\\| (\\w+) \\|.*$", Pattern.MULTILINE);
    private static final Pattern LEGACY_SIZE = Pattern.compile("^- ([\\d,]+) meters x (\\d+) days", Pattern.MULTILINE);
    private static final String S3_KEY = "s3";

    /**
     * The dataset size a run measured, where its cold tier lived, and the rows it ran when it ran only some
     * ({@code benchmark.queries}): its section's key and heading, and its chart's file. A run on S3 has a section of its
     * own beside the local one; a run of some rows gets a section of its own beside its size's, so that it never wipes
     * the figures of the rows it did not run.
     */
    public record Run(int meters, int days, BenchmarkStorage storage, List<String> only)
    {
        public Run
        {
            requireNonNull(storage, "storage is null");
            only = ImmutableList.copyOf(requireNonNull(only, "only is null"));
            checkArgument(only.stream().allMatch(id -> id.matches("[A-Z][A-Za-z0-9]*")), "row ids are a capital and letters and digits: %s", only);
        }

        /** A run of every row. */
        public Run(int meters, int days, BenchmarkStorage storage)
        {
            this(meters, days, storage, ImmutableList.of());
        }

        /** A run of every row on the local warehouse. */
        public Run(int meters, int days)
        {
            this(meters, days, BenchmarkStorage.LOCAL);
        }

        public String key()
        {
            String size = meters + "x" + days + (storage == BenchmarkStorage.S3 ? "-" + S3_KEY : "");
            return size + only.stream().map(id -> "-" + id).reduce("", String::concat);
        }

        public String title()
        {
            String size = String.format(Locale.ROOT, "%,d meters x %d days", meters, days) + (storage == BenchmarkStorage.S3 ? ", cold tier on S3" : "");
            return only.isEmpty() ? size : "%s: %s alone".formatted(size, String.join(", ", only));
        }

        /** The default size keeps the chart's old name; others get one of their own beside it. */
        public String chart()
        {
            return meters == 10_000 && days == 60 && storage == BenchmarkStorage.LOCAL && only.isEmpty() ? "benchmarks.svg" : "benchmarks-%s.svg".formatted(key());
        }

        static long size(String key)
        {
            String[] parts = key.split("-")[0].split("x");
            return Long.parseLong(parts[0]) * Long.parseLong(parts[1]);
        }

        /** The key of the run of every row of a section's dataset size and storage. */
        static String fullKey(String key)
        {
            String[] parts = key.split("-");
            return parts.length > 1 && parts[1].equals(S3_KEY) ? parts[0] + "-" + S3_KEY : parts[0];
        }
    }

    /** A row's two medians as another section of the document recorded them, in the row's unit; NaN where it failed. */
    public record Figures(double meterstore, double peer) {}

    public record Environment(String date, int cores, String memory, String jvm, String os, String postgres)
    {
        public Environment
        {
            requireNonNull(date, "date is null");
            requireNonNull(memory, "memory is null");
            requireNonNull(jvm, "jvm is null");
            requireNonNull(os, "os is null");
            requireNonNull(postgres, "postgres is null");
        }
    }

    public BenchmarkReport
    {
        requireNonNull(run, "run is null");
        requireNonNull(environment, "environment is null");
        dataset = ImmutableList.copyOf(dataset);
        results = ImmutableList.copyOf(results);
        notes = ImmutableMap.copyOf(notes);
        localFigures = ImmutableMap.copyOf(localFigures);
    }

    public BenchmarkReport(Run run, Environment environment, List<String> dataset, List<BenchmarkResult> results, Map<String, String> notes)
    {
        this(run, environment, dataset, results, notes, ImmutableMap.of());
    }

    /**
     * The medians in seconds that {@code run}'s section of an {@code existing} document records, by row id: what a run on
     * S3 is shown beside. Rows in other units, and sizes never run, give nothing.
     */
    public static Map<String, Figures> figures(String existing, Run run)
    {
        String section = sections(existing).get(run.key());
        if (section == null) {
            return ImmutableMap.of();
        }
        ImmutableMap.Builder<String, Figures> figures = ImmutableMap.builder();
        String table = section.substring(section.indexOf("### Results"));
        int next = table.indexOf("\n### ");
        Matcher row = RESULT_ROW.matcher(next < 0 ? table : table.substring(0, next));
        while (row.find()) {
            // | id | title | MeterStore | peer | MeterStore median | peer median | ratio | target | verdict |
            String[] cells = row.group(0).split("\\|");
            if (cells.length >= 7 && (cells[5].strip().endsWith(" s") || cells[5].strip().equals("-"))) {
                figures.put(row.group(1), new Figures(seconds(cells[5]), seconds(cells[6])));
            }
        }
        return figures.buildKeepingLast();
    }

    private static double seconds(String cell)
    {
        String text = cell.strip();
        return text.endsWith(" s") ? Double.parseDouble(text.substring(0, text.length() - 2)) : Double.NaN;
    }

    /**
     * The whole {@code docs/benchmarks.md} with only this run in it; {@link #document} keeps the runs of other dataset
     * sizes beside it.
     */
    public String markdown()
    {
        return document("", section());
    }

    /** This run as one section of {@code docs/benchmarks.md}, headed by its dataset size and marked as that size's. */
    public String section()
    {
        return section(run.title());
    }

    /** As {@link #section()}, under {@code heading}: a benchmark of a dataset of its own (P1's point table) names it. */
    public String section(String heading)
    {
        StringBuilder out = new StringBuilder();
        out.append(RUN_START.formatted(run.key())).append('\n');
        out.append("## %s\n\n".formatted(heading));
        out.append("### Machine\n\n");
        out.append("| date | cores | memory | JVM | OS | PostgreSQL |\n|---|---|---|---|---|---|\n");
        out.append("| %s | %s | %s | %s | %s | %s |\n\n".formatted(environment.date(), environment.cores(), environment.memory(), environment.jvm(), environment.os(), environment.postgres()));
        out.append("### Dataset\n\n");
        dataset.forEach(line -> out.append("- ").append(line).append('\n'));
        out.append("\n### Results\n\n");
        out.append("Ratio = MeterStore / peer: below 1 MeterStore is faster (or smaller). ")
                .append("Every pair's answers are compared; a difference is reported as MISMATCH, never timed as a win.\n\n");
        out.append("| | benchmark | MeterStore | peer | MeterStore | peer | ratio | target | |\n");
        out.append("|---|---|---|---|--:|--:|--:|---|---|\n");
        for (BenchmarkResult result : results) {
            out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n".formatted(
                    result.id(),
                    result.title(),
                    result.meterstoreLabel(),
                    result.peerLabel(),
                    figure(result.meterstore(), result.unit()),
                    figure(result.peer(), result.unit()),
                    Double.isFinite(result.ratio()) ? ratio(result.ratio(), result.unit()) : "-",
                    result.target().text(),
                    verdict(result)));
        }
        out.append("\n![MeterStore / peer per benchmark, with its target](%s)\n\n".formatted(run.chart()));
        List<BenchmarkResult> besideLocal = results.stream().filter(result -> localFigures.containsKey(result.id())).toList();
        if (!besideLocal.isEmpty()) {
            out.append("### Beside the local warehouse\n\n");
            out.append("The same rows with the cold tier in a local directory, as the section of this size without S3 records them (its own run, machine and date: compare ratios, not single times). ")
                    .append("S3 / local is what object storage costs each side.\n\n");
            out.append("| | benchmark | MeterStore local | MeterStore S3 | S3 / local | peer local | peer S3 | S3 / local |\n");
            out.append("|---|---|--:|--:|--:|--:|--:|--:|\n");
            for (BenchmarkResult result : besideLocal) {
                Figures local = localFigures.get(result.id());
                out.append("| %s | %s | %s | %s | %s | %s | %s | %s |\n".formatted(
                        result.id(),
                        result.title(),
                        figure(local.meterstore(), result.unit()),
                        figure(result.meterstore(), result.unit()),
                        storageRatio(result.meterstore(), local.meterstore()),
                        figure(local.peer(), result.unit()),
                        figure(result.peer(), result.unit()),
                        storageRatio(result.peer(), local.peer())));
            }
            out.append('\n');
        }

        out.append(missed("### Targets missed", results, notes));

        out.append("### What each row ran\n\n");
        for (BenchmarkResult result : results) {
            out.append("#### %s: %s\n\n".formatted(result.id(), result.title()));
            result.details().forEach(detail -> out.append(detail).append("\n\n"));
        }
        out.append(RUN_END.formatted(run.key())).append('\n');
        return out.toString();
    }

    /**
     * Under {@code heading}, each result that missed its target or failed, with its note (why, and what would close it)
     * or its failure; nothing when every target was met.
     */
    static String missed(String heading, List<BenchmarkResult> results, Map<String, String> notes)
    {
        List<BenchmarkResult> missed = results.stream().filter(result -> result.verdict() != Verdict.MET && result.verdict() != Verdict.REPORTED).toList();
        if (missed.isEmpty()) {
            return "";
        }
        StringBuilder out = new StringBuilder(heading).append("\n\n");
        for (BenchmarkResult result : missed) {
            // a row's note analyses a measured miss; under a failure it would describe figures this run never measured
            out.append("- **%s** (%s): %s\n".formatted(
                    result.id(),
                    verdict(result),
                    result.error()
                            .map(error -> "failed: `" + error.replace('`', '\'') + "`.")
                            .orElseGet(() -> notes.getOrDefault(result.id(), "not analysed yet."))));
        }
        return out.append('\n').toString();
    }

    /**
     * {@code docs/benchmarks.md} from its {@code existing} text and a run's {@code section}: the run replaces the section
     * of its dataset size (a run of some rows, the section of the same rows), every other section is kept, the largest
     * size first; a run of every row also replaces the sections of some rows of its size, which it ran again. A file
     * written before runs were kept by size is taken as the section of the size its dataset line names.
     */
    public static String document(String existing, String section)
    {
        Map<String, String> sections = new LinkedHashMap<>(sections(existing));
        Matcher matcher = RUN.matcher(section);
        checkArgument(matcher.find(), "not a run's section");
        String key = matcher.group(1);
        if (Run.fullKey(key).equals(key)) {
            sections.keySet().removeIf(other -> !other.equals(key) && Run.fullKey(other).equals(key));
        }
        sections.put(key, section.strip() + "\n");
        StringBuilder out = new StringBuilder();
        out.append("""
                # Benchmarks

                MeterStore against the engine a user would otherwise run over the same files and the same database: Trino's
                own Iceberg connector for the cold tier, PostgreSQL itself for the hot tier. Written by `bin/benchmark`
                (see [below](#how-to-run)); do not edit it by hand but for a run's "This run" part, which says what that run showed, and is replaced with it; run it again. Each dataset size below is one run: a run
                replaces the section of its size and keeps the others. A run of some rows (`benchmark.queries`) writes a
                section of its own beside its size's, which the next run of every row at that size replaces.

                """);
        sections.entrySet().stream()
                // the largest first; a size's run of every row, then its S3 run and its runs of some rows
                .sorted(Comparator.comparing((Map.Entry<String, String> entry) -> Run.size(entry.getKey())).reversed()
                        .thenComparing(entry -> entry.getKey().length())
                        .thenComparing(Map.Entry::getKey))
                .forEach(entry -> out.append(entry.getValue()).append('\n'));
        out.append("""
                ## How to run

                    bin/benchmark                                      # 10,000 meters x 60 days
                    bin/benchmark -Dbenchmark.meters=300 -Dbenchmark.days=20 -Dbenchmark.queries=Q1,Q3,A1

                The dataset is kept in `var/benchmark/` and reused while its parameters match. Properties:
                `benchmark.meters`, `benchmark.days`, `benchmark.hot-days` (10), `benchmark.warmups` (3: untimed runs of
                each side of a pair first, so small queries are timed on a warm engine, as a server runs them), `benchmark.rounds` (5),
                `benchmark.queries` (`all` or a list of ids), `benchmark.a1.meters` (11,000: one UTC day of at least 1 M rows),
                `benchmark.a1.rounds` (3), `benchmark.archiver.heap` (256m), `benchmark.d1.seconds` (120: how long D1 runs
                each number of clients), `benchmark.heap` (8g, the engine's JVM, of which a query may use 65 %), `benchmark.dir`, `benchmark.output` (where
                this file and the charts go).

                `-Dbenchmark.storage=s3` puts the cold tier in a bucket of an S3 server on the loopback (S3Proxy, a child
                process; the dataset kept in `var/benchmark-s3/`) and writes a section of its own, "cold tier on S3", beside
                the local one of the same size, with the local figures next to its own:

                    bin/benchmark -Dbenchmark.meters=300 -Dbenchmark.days=20 -Dbenchmark.queries=Q1,Q2,A1 -Dbenchmark.storage=s3

                `-Dbenchmark.probe=FILE` times statements of one's own on the same dataset and engine instead, writing no
                report: one per line, on Trino, or on PostgreSQL natively after `postgresql:`; each runs `benchmark.rounds` times.

                D1t, D1w, D1m and D1y time D1's four query kinds (today's total, one meter's last 7 days, this month's totals per
                day, one meter over a year) with one client as pairs: each on `readings` against the same query on
                `readings_versions` (issue 32). D1 itself runs them as a mix of 1, 4 and 8 clients; D1g runs that mix again with
                the resource groups [operations.md](operations.md#sizing-for-dashboards) gives a deployment (heavy queries one at a
                time, in a group of their own). W1n runs W1's stream beside a cycle in a JVM of its own at nice 19, as
                [operations.md](operations.md#sharing-cores-with-the-archiver) gives a deployment whose archiver shares cores.

                E1 erases a meter for good (`DELETE FROM readings_versions WHERE malo_id = ?`, timed once, no peer): each run
                erases one no other row reads and names it under `erased-meters` in `dataset.properties` beside the dataset,
                which is reused with those meters gone; leave E1 out of `benchmark.queries` to keep every meter.

                `-Dbenchmark.dataset=years` makes (or reuses) the years dataset of 1,000 meters x 730 days in `var/benchmark-years/`
                and writes [benchmarks-years.md](benchmarks-years.md) instead.

                `-Dbenchmark.dataset=points` runs P1 (issue 31) alone: it makes (or reuses, while its parameters match) a point
                table of daily register readings in `var/benchmark-points/`, loaded and archived by the archiver's own code
                with the last 3 days left hot, and writes its section "P1: a point table" here. Properties:
                `benchmark.points.meters` (10,000), `benchmark.points.days` (730: 7.3 M readings from 2024-12-01, 24 whole
                balancing months; the readings may not end in a month's first 3 days, whose first reading would be hot),
                `benchmark.points.dir`, `benchmark.warmups`, `benchmark.rounds`, `benchmark.heap`, `benchmark.output`;
                `-Dbenchmark.probe=FILE` times statements of one's own on it (catalogs `meterstore` and `iceberg`).

                    bin/benchmark -Dbenchmark.dataset=points                                      # 10,000 meters x 730 days
                    bin/benchmark -Dbenchmark.dataset=points -Dbenchmark.points.meters=300 -Dbenchmark.points.days=60
                """);
        return out.toString();
    }

    /** The sections of an existing file by dataset size. */
    private static Map<String, String> sections(String existing)
    {
        Map<String, String> sections = new LinkedHashMap<>();
        Matcher matcher = SECTION.matcher(existing);
        while (matcher.find()) {
            sections.put(matcher.group(1), matcher.group(0).strip() + "\n");
        }
        if (!sections.isEmpty() || !existing.contains("## Machine")) {
            return sections;
        }
        // written before runs were kept by size: everything from the machine to "How to run", one heading level down
        Matcher size = LEGACY_SIZE.matcher(existing);
        if (!size.find()) {
            return sections;
        }
        Run run = new Run(Integer.parseInt(size.group(1).replace(",", "")), Integer.parseInt(size.group(2)));
        int end = existing.indexOf("## How to run");
        String body = existing.substring(existing.indexOf("## Machine"), end < 0 ? existing.length() : end)
                .replaceAll("(?m)^### ", "#### ")
                .replaceAll("(?m)^## ", "### ")
                .strip();
        sections.put(run.key(), "%s\n## %s\n\n%s\n%s\n".formatted(RUN_START.formatted(run.key()), run.title(), body, RUN_END.formatted(run.key())));
        return sections;
    }

    public String svg()
    {
        int rowHeight = 30;
        int top = 40;
        int left = 190;
        int chartWidth = 470;
        int width = left + chartWidth + 90;
        int height = top + rowHeight * results.size() + 40;
        double scale = axisMaximum();
        StringBuilder out = new StringBuilder();
        out.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n".formatted(width, height, width, height));
        out.append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        out.append("<text x=\"%d\" y=\"20\" font-size=\"14\" font-weight=\"bold\">MeterStore / peer (lower is better); black tick: target</text>\n".formatted(left));
        for (double tick = 0; tick <= scale + 1e-9; tick += tickStep(scale)) {
            double x = left + chartWidth * tick / scale;
            out.append("<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n".formatted(x, top - 6, x, top + rowHeight * results.size()));
            out.append("<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">%s</text>\n".formatted(x, top + rowHeight * results.size() + 16, ratio(tick)));
        }
        double one = left + chartWidth / scale;
        out.append("<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#888\" stroke-dasharray=\"4 3\"/>\n".formatted(one, top - 6, one, top + rowHeight * results.size()));
        for (int index = 0; index < results.size(); index++) {
            BenchmarkResult result = results.get(index);
            int y = top + index * rowHeight;
            out.append("<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n".formatted(left - 8, y + 19, escape(result.id() + " " + abbreviate(result.title(), 24))));
            double ratio = result.ratio();
            if (Double.isFinite(ratio)) {
                double length = chartWidth * Math.min(ratio, scale) / scale;
                out.append("<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>\n".formatted(left, y + 6, length, rowHeight - 12, colour(result.verdict())));
                out.append("<text x=\"%.1f\" y=\"%d\">%s%s</text>\n".formatted(left + length + 4, y + 19, ratio > scale ? "&gt; " : "", ratio(ratio)));
            }
            else if (result.verdict() == Verdict.REPORTED) {
                out.append("<text x=\"%d\" y=\"%d\" fill=\"#555\">%s, no peer</text>\n".formatted(left + 4, y + 19, figure(result.meterstore(), result.unit())));
            }
            else {
                out.append("<text x=\"%d\" y=\"%d\" fill=\"#c62828\">%s</text>\n".formatted(left + 4, y + 19, result.verdict() == Verdict.MISMATCH ? "MISMATCH" : "failed"));
            }
            if (result.target().isReported()) {
                continue;
            }
            double target = left + chartWidth * Math.min(result.target().maxRatio(), scale) / scale;
            out.append("<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"black\" stroke-width=\"2\"/>\n".formatted(target, y + 2, target, y + rowHeight - 2));
        }
        out.append("</svg>\n");
        return out.toString();
    }

    /** The axis ends at the next half above every ratio and target, at least 2 and at most 6, so one outlier cannot flatten the rest. */
    double axisMaximum()
    {
        double maximum = 2;
        for (BenchmarkResult result : results) {
            if (!result.target().isReported()) {
                maximum = Math.max(maximum, result.target().maxRatio());
            }
            if (Double.isFinite(result.ratio())) {
                maximum = Math.max(maximum, result.ratio());
            }
        }
        return Math.min(6, Math.ceil(maximum * 2) / 2);
    }

    private static double tickStep(double scale)
    {
        return scale <= 3 ? 0.5 : 1;
    }

    private static String colour(Verdict verdict)
    {
        return switch (verdict) {
            case MET -> "#2e7d32";
            case MISSED -> "#e65100";
            case MISMATCH, FAILED -> "#b71c1c";
            case REPORTED -> "#757575";
        };
    }

    static String verdict(BenchmarkResult result)
    {
        return switch (result.verdict()) {
            case MET -> "met";
            case MISSED -> "**missed**";
            case MISMATCH -> "**MISMATCH**";
            case FAILED -> "**failed**";
            case REPORTED -> "reported";
        };
    }

    static String figure(double value, BenchmarkResult.Unit unit)
    {
        if (!Double.isFinite(value)) {
            return "-";
        }
        return switch (unit) {
            case SECONDS -> value < 10 ? String.format(Locale.ROOT, "%.3f s", value) : String.format(Locale.ROOT, "%.1f s", value);
            case BYTES_PER_ROW -> String.format(Locale.ROOT, "%.3f B/row", value);
        };
    }

    /** Sizes are exact, so their ratio shows the third decimal: 1.004 is a miss that 1.00 would hide. */
    static String ratio(double ratio, BenchmarkResult.Unit unit)
    {
        return switch (unit) {
            case SECONDS -> ratio(ratio);
            case BYTES_PER_ROW -> String.format(Locale.ROOT, "%.3f", ratio);
        };
    }

    private static String storageRatio(double s3, double local)
    {
        double ratio = s3 / local;
        return Double.isFinite(ratio) ? ratio(ratio) : "-";
    }

    static String ratio(double ratio)
    {
        return String.format(Locale.ROOT, "%.2f", ratio);
    }

    private static String abbreviate(String text, int length)
    {
        return text.length() <= length ? text : text.substring(0, length - 1) + "\u2026";
    }

    private static String escape(String text)
    {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
