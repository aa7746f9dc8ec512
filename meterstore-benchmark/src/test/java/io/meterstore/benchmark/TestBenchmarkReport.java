package io.meterstore.benchmark;

import io.meterstore.benchmark.BenchmarkReport.Environment;
import io.meterstore.benchmark.BenchmarkReport.Run;
import io.meterstore.benchmark.BenchmarkResult.Comparison;
import io.meterstore.benchmark.BenchmarkResult.Target;
import io.meterstore.benchmark.BenchmarkResult.Unit;
import io.meterstore.benchmark.BenchmarkResult.Verdict;
import io.meterstore.benchmark.QueryBenchmark.Answer;
import io.meterstore.benchmark.TimedQuery.Execution;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

/** The arithmetic and the rendering of the report; the benchmark itself is run by bin/benchmark, never by the build. */
final class TestBenchmarkReport
{
    private static final Environment ENVIRONMENT = new Environment("2026-12-01 08:00 UTC", 2, "23.5 GiB", "OpenJDK 25", "Linux", "17.11");

    @Test
    void testMedian()
    {
        assertThat(Medians.median(List.of(5L, 1L, 3L))).isEqualTo(3.0);
        assertThat(Medians.median(List.of(4L, 1L, 3L, 10L))).isEqualTo(3.5);
        assertThat(Medians.median(List.of(7L))).isEqualTo(7.0);
    }

    @Test
    void testVerdicts()
    {
        assertThat(result("Q1", 1.0, 2.0, Comparison.SAME_RESULT).verdict()).isEqualTo(Verdict.MET);
        assertThat(result("Q1", 2.0, 2.0, Comparison.SAME_RESULT).verdict()).isEqualTo(Verdict.MET);
        assertThat(result("Q1", 2.1, 2.0, Comparison.SAME_RESULT).verdict()).isEqualTo(Verdict.MISSED);
        // a faster wrong answer is no win
        assertThat(result("Q1", 1.0, 2.0, Comparison.MISMATCH).verdict()).isEqualTo(Verdict.MISMATCH);
        assertThat(BenchmarkResult.failed("Q3", "hot", "m", "p", Unit.SECONDS, Target.atMost(1), new IllegalStateException("Query exceeded per-node memory limit\nmore")).verdict())
                .isEqualTo(Verdict.FAILED);
    }

    @Test
    void testRowWithoutPeerIsReportedNotFailed()
    {
        Target target = Target.reported("reported: no peer");
        BenchmarkResult erased = BenchmarkResult.reported("E1", "erase one meter", "DELETE through Trino", Unit.SECONDS, 12.5, target, Comparison.SAME_RESULT, List.of("what it removed"));
        BenchmarkResult wrong = BenchmarkResult.reported("E1", "erase one meter", "DELETE through Trino", Unit.SECONDS, 12.5, target, Comparison.MISMATCH, List.of());
        assertThat(erased.verdict()).isEqualTo(Verdict.REPORTED);
        // a wrong outcome is never reported as a figure
        assertThat(wrong.verdict()).isEqualTo(Verdict.MISMATCH);
        assertThat(BenchmarkResult.failed("E1", "erase one meter", "DELETE through Trino", "none", Unit.SECONDS, target, new IllegalStateException("refused")).verdict()).isEqualTo(Verdict.FAILED);

        BenchmarkReport report = new BenchmarkReport(new Run(300, 20), ENVIRONMENT, List.of("dataset"), List.of(result("Q1", 1.0, 4.0, Comparison.SAME_RESULT), erased), Map.of());
        assertThat(report.section())
                .contains("| E1 | erase one meter | DELETE through Trino | none | 12.5 s | - | - | reported: no peer | reported |")
                .doesNotContain("### Targets missed")
                .contains("what it removed");
        assertThat(report.svg()).contains("12.5 s, no peer").doesNotContain("failed");
        // the target of a row without a peer does not stretch the axis
        assertThat(report.axisMaximum()).isEqualTo(2.0);
    }

    @Test
    void testErasedMeterIsOneNoOtherRowReads()
    {
        List<String> maloIds = IntStream.range(0, 300).mapToObj(index -> "M%03d".formatted(index)).toList();
        assertThat(ErasureBenchmark.pick(maloIds, List.of())).isEqualTo(new ErasureBenchmark.Meters("M299", "M298"));
        // every third meter of 300 is in Q6's list of 100, and D1 reads every 37th or so: those are skipped
        List<String> taken = Stream.of(List.of(QueryBenchmark.oneMeter(maloIds)), QueryBenchmark.hundredMeters(maloIds), DashboardBenchmark.meters(maloIds))
                .flatMap(List::stream)
                .toList();
        assertThat(taken).contains("M297", "M100");
        assertThat(ErasureBenchmark.pick(maloIds, List.of("M299", "M298"))).isEqualTo(new ErasureBenchmark.Meters("M296", "M295"));
        ErasureBenchmark.Meters next = ErasureBenchmark.pick(maloIds, List.of("M299", "M298", "M296"));
        assertThat(next.erased()).isEqualTo("M295");
        assertThat(taken).doesNotContain(next.erased(), next.control());
    }

    @Test
    void testAnswersAddUpAcrossTiers()
    {
        Execution meterstore = new Execution(1, List.of(List.of("2026-03-01", "10", "1.5"), List.of("2026-04-01", "4", "2")));
        Execution cold = new Execution(1, List.of(List.of("2026-03-01", "7", "1.000000")));
        Execution hot = new Execution(1, List.of(List.of("2026-03-01", "3", "0.5"), List.of("2026-04-01", "4", "2.000000")));
        assertThat(QueryBenchmark.compare(Answer.SAME_AGGREGATES, meterstore, List.of(cold, hot))).isEqualTo(Comparison.SAME_RESULT);
        assertThat(QueryBenchmark.compare(Answer.SAME_AGGREGATES, meterstore, List.of(cold))).isEqualTo(Comparison.MISMATCH);

        Execution all = new Execution(1, List.of(List.of("a"), List.of("b"), List.of("c")));
        assertThat(QueryBenchmark.compare(Answer.COLD_PREFIX, all, List.of(new Execution(1, List.of(List.of("a"), List.of("b")))))).isEqualTo(Comparison.SAME_RESULT);
        assertThat(QueryBenchmark.compare(Answer.COLD_PREFIX, all, List.of(new Execution(1, List.of(List.of("b")))))).isEqualTo(Comparison.MISMATCH);
        assertThat(QueryBenchmark.compare(Answer.SAME_ROWS, all, List.of(all))).isEqualTo(Comparison.SAME_RESULT);
        assertThat(TimedQuery.normalize(new java.math.BigDecimal("12.340000"))).isEqualTo("12.34");
        assertThat(TimedQuery.normalize(new java.math.BigDecimal("0.000000"))).isEqualTo("0");
    }

    @Test
    void testMarkdownAndChart()
    {
        BenchmarkReport report = new BenchmarkReport(
                new Run(300, 20),
                new Environment("2026-11-30 08:00 UTC", 2, "23.5 GiB", "OpenJDK 25", "Linux", "17.11"),
                List.of("300 meters x 20 days"),
                List.of(
                        result("Q1", 1.0, 4.0, Comparison.SAME_RESULT),
                        result("Q3", 9.0, 1.0, Comparison.SAME_RESULT),
                        new BenchmarkResult("S1", "bytes per row", "archiver", "CTAS", Unit.BYTES_PER_ROW, 3.2, 3.19, Target.atMost(1.0), Comparison.SAME_RESULT, Optional.empty(), List.of())),
                Map.of("Q3", "the hot scan is single-threaded."));
        String markdown = report.markdown();
        assertThat(markdown)
                .contains("| 2026-11-30 08:00 UTC | 2 | 23.5 GiB | OpenJDK 25 | Linux | 17.11 |")
                .contains("| Q1 | title | m | p | 1.000 s | 4.000 s | 0.25 | <= 1.00 | met |")
                .contains("| Q3 | title | m | p | 9.000 s | 1.000 s | 9.00 | <= 1.00 | **missed** |")
                // sizes show the third decimal, so a small miss is not rounded away
                .contains("| S1 | bytes per row | archiver | CTAS | 3.200 B/row | 3.190 B/row | 1.003 | <= 1.00 | **missed** |")
                .contains("## 300 meters x 20 days")
                .contains("![MeterStore / peer per benchmark, with its target](benchmarks-300x20.svg)")
                .contains("- **Q3** (**missed**): the hot scan is single-threaded.")
                .contains("- **S1** (**missed**): not analysed yet.")
                .doesNotContain("- **Q1**");
        String svg = report.svg();
        // one bar per result; Q3's 9.0 is beyond the axis, which ends at 6
        assertThat(report.axisMaximum()).isEqualTo(6.0);
        assertThat(svg).startsWith("<svg ").endsWith("</svg>\n").contains(">Q1 title<").contains("&gt; 9.00");
        assertThat(svg.split("<rect ", -1)).hasSize(1 + 1 + 3);
    }

    @Test
    void testFailedRowShowsItsErrorAndNotItsNote()
    {
        BenchmarkResult failed = BenchmarkResult.failed("D1", "dashboards", "8 clients", "1 client", Unit.SECONDS, Target.atMost(3.0),
                new IllegalStateException("Query exceeded per-node memory limit of 5GB\nmore"));
        BenchmarkResult missed = result("Q3", 9.0, 1.0, Comparison.SAME_RESULT);
        BenchmarkReport report = new BenchmarkReport(new Run(300, 20), ENVIRONMENT, List.of("dataset"), List.of(failed, missed),
                Map.of("D1", "No errors and no wrong answers.", "Q3", "the hot scan is single-threaded."));
        // the note analyses a measured miss: under a failure it would claim what the run never showed
        assertThat(report.section())
                .contains("- **D1** (**failed**): failed: `Query exceeded per-node memory limit of 5GB`.\n")
                .doesNotContain("No errors and no wrong answers")
                .contains("- **Q3** (**missed**): the hot scan is single-threaded.\n");
    }

    @Test
    void testYearsReportExplainsItsMissesUnderItsOwnHeading()
    {
        assertThat(BenchmarkReport.missed("## Targets missed", List.of(result("Y1", 0.3, 1.0, Comparison.SAME_RESULT), result("Y2s", 1.06, 1.0, Comparison.NOT_COMPARABLE)), YearsBenchmark.NOTES))
                .startsWith("## Targets missed\n\n- **Y2s** (**missed**): Both sides do the same work")
                .doesNotContain("**Y1**");
        assertThat(BenchmarkReport.missed("## Targets missed", List.of(result("Y2s", 0.98, 1.0, Comparison.NOT_COMPARABLE)), YearsBenchmark.NOTES)).isEmpty();
    }

    @Test
    void testEachDatasetSizeKeepsItsSection()
    {
        // a file written before runs were kept by size: its dataset line names the size
        String legacy = """
                # Benchmarks

                Intro.

                ## Machine

                | machine of the big run |

                ## Dataset

                - 10,000 meters x 60 days from 2026-03-01 (Berlin days), seed 2026: 58,710,852 rows

                ## Results

                | Q1 | big |

                ## What each row ran

                ### Q1: cold range

                Both returned the same rows.

                ## How to run

                    bin/benchmark
                """;
        String small = report(new Run(300, 20), "small, first").section();
        String document = BenchmarkReport.document(legacy, small);
        assertThat(document)
                .contains("## 10,000 meters x 60 days")
                .contains("### Machine\n\n| machine of the big run |")
                .contains("#### Q1: cold range")
                .contains("## 300 meters x 20 days")
                .contains("- small, first");
        // the bigger run first, and How to run once, at the end
        assertThat(document.indexOf("## 10,000 meters")).isLessThan(document.indexOf("## 300 meters"));
        assertThat(document.split("## How to run", -1)).hasSize(2);
        assertThat(document.strip()).endsWith("bin/benchmark -Dbenchmark.dataset=points -Dbenchmark.points.meters=300 -Dbenchmark.points.days=60");

        // a run replaces the section of its size and keeps the others
        String again = BenchmarkReport.document(document, report(new Run(300, 20), "small, second").section());
        assertThat(again)
                .contains("| machine of the big run |")
                .contains("- small, second")
                .doesNotContain("- small, first");
        assertThat(again.split("## 300 meters x 20 days", -1)).hasSize(2);
        String big = BenchmarkReport.document(again, report(new Run(10_000, 60), "big, rerun").section());
        assertThat(big)
                .doesNotContain("| machine of the big run |")
                .contains("- big, rerun")
                .contains("](benchmarks.svg)")
                .contains("- small, second");
    }

    @Test
    void testS3RunHasItsOwnSectionBesideTheLocalFigures()
    {
        String local = BenchmarkReport.document("", new BenchmarkReport(new Run(300, 20), ENVIRONMENT, List.of("local run"),
                List.of(result("Q1", 1.0, 4.0, Comparison.SAME_RESULT), result("Q3", 2.0, 1.0, Comparison.SAME_RESULT)), Map.of()).section());
        Map<String, BenchmarkReport.Figures> figures = BenchmarkReport.figures(local, new Run(300, 20));
        assertThat(figures).containsOnly(entry("Q1", new BenchmarkReport.Figures(1.0, 4.0)), entry("Q3", new BenchmarkReport.Figures(2.0, 1.0)));

        // a run on S3 writes a section of its own and leaves the local one whole
        Run s3 = new Run(300, 20, BenchmarkStorage.S3);
        String document = BenchmarkReport.document(local, new BenchmarkReport(s3, ENVIRONMENT, List.of("s3 run"),
                List.of(result("Q1", 1.5, 5.0, Comparison.SAME_RESULT)), Map.of(), figures).section());
        assertThat(document)
                .contains("## 300 meters x 20 days\n", "- local run", "| Q3 | title | m | p | 2.000 s | 1.000 s | 2.00 |")
                .contains("## 300 meters x 20 days, cold tier on S3", "- s3 run", "](benchmarks-300x20-s3.svg)")
                .contains("| Q1 | title | 1.000 s | 1.500 s | 1.50 | 4.000 s | 5.000 s | 1.25 |");
        assertThat(document.indexOf("## 300 meters x 20 days\n")).isLessThan(document.indexOf("## 300 meters x 20 days, cold tier on S3"));
        // the S3 section's own figures are never read as the local ones
        assertThat(BenchmarkReport.figures(document, new Run(300, 20))).isEqualTo(figures);
        assertThat(BenchmarkReport.figures(document, s3)).containsOnly(entry("Q1", new BenchmarkReport.Figures(1.5, 5.0)));
        // a run of every row on the local warehouse replaces the local section and keeps the S3 one
        String rerun = BenchmarkReport.document(document, new BenchmarkReport(new Run(300, 20), ENVIRONMENT, List.of("local rerun"),
                List.of(result("Q1", 1.0, 4.0, Comparison.SAME_RESULT)), Map.of()).section());
        assertThat(rerun).contains("- local rerun", "- s3 run").doesNotContain("- local run\n");
    }

    @Test
    void testRunOfSomeRowsKeepsTheOthers()
    {
        String full = BenchmarkReport.document("", report(new Run(300, 20), "small, every row").section());
        // a run of C1 alone: a section of its own after its size's, the full run's figures kept
        String partial = BenchmarkReport.document(full, report(new Run(300, 20, BenchmarkStorage.LOCAL, List.of("C1")), "small, C1 alone").section());
        assertThat(partial)
                .contains("- small, every row")
                .contains("## 300 meters x 20 days: C1 alone")
                .contains("- small, C1 alone")
                .contains("](benchmarks-300x20-C1.svg)");
        assertThat(partial.indexOf("- small, every row")).isLessThan(partial.indexOf("- small, C1 alone"));
        // C1 alone again replaces only its own section
        String again = BenchmarkReport.document(partial, report(new Run(300, 20, BenchmarkStorage.LOCAL, List.of("C1")), "small, C1 again").section());
        assertThat(again).contains("- small, every row").contains("- small, C1 again").doesNotContain("- small, C1 alone");
        // a run of every row at that size ran C1 too: it replaces both
        String rerun = BenchmarkReport.document(again, report(new Run(300, 20), "small, every row again").section());
        assertThat(rerun).contains("- small, every row again").doesNotContain("- small, every row\n").doesNotContain("C1 again").doesNotContain("C1 alone");
    }

    private static BenchmarkReport report(Run run, String datasetLine)
    {
        return new BenchmarkReport(run, ENVIRONMENT, List.of(datasetLine),
                List.of(result("Q1", 1.0, 4.0, Comparison.SAME_RESULT)), Map.of());
    }

    private static BenchmarkResult result(String id, double meterstore, double peer, Comparison comparison)
    {
        return new BenchmarkResult(id, "title", "m", "p", Unit.SECONDS, meterstore, peer, Target.atMost(1.0), comparison, Optional.empty(), List.of());
    }
}
