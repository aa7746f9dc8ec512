package io.meterstore.benchmark;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import io.airlift.log.Level;
import io.airlift.log.Logger;
import io.airlift.log.Logging;
import io.airlift.units.DataSize;
import io.meterstore.benchmark.BenchmarkReport.Environment;
import io.meterstore.core.TiersConfig;
import io.meterstore.testing.TestingDatabase;
import io.meterstore.testing.TestingWarehouse;
import io.meterstore.trino.MeterstorePlugin;
import io.trino.execution.QueryInfo;
import io.trino.execution.QueryManager;
import io.trino.operator.OperatorStats;
import io.trino.plugin.iceberg.IcebergPlugin;
import io.trino.spi.QueryId;
import io.trino.spi.metrics.Metrics;
import io.trino.testing.DistributedQueryRunner;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;

import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

import static io.trino.testing.TestingSession.testSessionBuilder;

/**
 * The benchmark of issues 4, 5 and 12: makes (or reuses) the dataset, starts one Trino engine with MeterStore and Trino's
 * own Iceberg connector over the same catalogue and files, runs each benchmark against its peer and writes
 * {@code docs/benchmarks.md} and {@code docs/benchmarks.svg}. Run by {@code bin/benchmark}; see BenchmarkSettings.
 */
public final class MeterstoreBenchmark
{
    private static final Logger log = Logger.get(MeterstoreBenchmark.class);
    private static final DataSize QUERY_MEMORY = DataSize.ofBytes((long) (Runtime.getRuntime().maxMemory() * 0.65)).succinct();

    // what object storage cost the cold reads, for Q1 and Q2
    private static final String S3_READS = "On the S3 server (2026-12-02, idle, 300 x 20) EXPLAIN ANALYZE of Q2 showed MeterStore's scan 1.64 s in reads for 1.67 MB, "
            + "a request for each footer, bloom filter and column chunk, where Trino's Iceberg connector reads a file of at most 3 MB whole in one request (Q1 1.30, Q2 1.56). "
            + "MeterStore now reads such a file the same way: Q1 1.19 and Q2 1.07 in the run after, against 0.93 and 0.85 on the local warehouse that day. "
            + "The rest was the Iceberg connector's coordinator file cache (`iceberg.metadata-cache.enabled`, on by default): where the coordinator runs splits, as on this single node, it keeps every file it reads of at most 8 MB in memory, so from the second query on its scans read no object; "
            + "JFR over 40 warm rounds of Q1 each counted 339 samples in S3 GETs under MeterStore's scan against 46 under the peer's. MeterStore's coordinator now keeps them the same way (`meterstore.coordinator-file-cache.enabled`): Q1 0.86 and Q2 0.71 in a run of the two, 0.88 and 0.74 in the full run after. "
            + "On a cluster whose workers run the splits neither side caches data files.";

    // where the archiver's time goes, for A1 and A1c
    private static final String ARCHIVAL_PROFILE = "Profiled on 2026-12-02 (JFR, A1 alone, idle: 13.3 s fresh, 7.9 s warm, so the full run's 18.7 s that morning was the machine's, not the second file's): the Parquet writer took 46 % of the archiver's CPU, decoding the COPY stream 13 %, a second min/max pass over every value for the Iceberg metrics 13 % and BigInteger's decoding of the version numeric 5 %. "
            + "The metrics now come from the footer the Parquet writer wrote (as Trino's Iceberg connector takes them) and a version through a long: in four A1 runs alternating the two commits (ABBA, six rounds a side) the fresh JVM's median went from 12.2 s to 10.7 s (0.87) and the warm one's from 7.3 s to 6.2 s (0.86). "
            + "A1c's floor, the COPY alone, varied from 2.5 s to 4.0 s between rounds of those runs, so A1c read 2.87 in one and 4.21 in the next.";

    // why archival still reads a window in key order although the hot tier marks its superseded rows, for A1
    private static final String ARCHIVAL_MARKS = "The hot tier's marks (`superseded_at`, issue 32) do not make archival cheaper, so it still reads each window in primary-key order (measured 2026-12-07 on one UTC day of 10,000 meters, 979,165 rows, 19,165 marked, the read stage alone, both sides in each round, load average 10 to 13; docs/architecture.md, Archival): "
            + "two unordered COPYs (`superseded_at IS NULL`, `IS NOT NULL`) took 0.67 and 0.68 of the ordered COPY in PostgreSQL, but decoded, held and sorted by key in the archiver 1.45 and 1.50 times the ordered read with its resolution (medians of two runs of five rounds), "
            + "holding the whole day (476 MiB of pages, 510 B/row: about 4.6 GiB for a 100,000-meter day, more than this archiver's 256 MiB for A1's day), where the ordered read holds one page; "
            + "taking the winners from the marks in the ordered read would spare the comparison of adjacent rows, under 1 % of the read (0.02 to 0.08 s of 6.2 to 11.8 s).";

    /** Why a target may be missed and what would close it, as far as it is known; the report shows it beside a miss. */
    static final Map<String, String> NOTES = ImmutableMap.<String, String>builder()
            .put("Q1", "Both sides read the same files with the same Parquet reader; MeterStore enforces `\"from\" < W` itself (every cold row lies below W, so it neither decodes \"from\" nor filters), the Iceberg connector filters every row. "
                    + "Compare the per-round times below with the gap: on this machine they spread by more than it. " + S3_READS)
            .put("Q2", "Both sides read the same files (each archived day's winners and superseded versions) with the same Parquet reader and the same row-group statistics: at 300 x 20 EXPLAIN ANALYZE showed each side reading 292,261 rows for the meter's 980, since every row group of a day holds every meter at this size and neither statistics nor bloom filters can skip one. "
                    + "So the ratio is 1.0 by construction and a target of 1.00 is decided by the rounds' spread (compare the rounds below): the local runs of this size measured 0.85 (2026-12-02), 0.93 and 1.02 (both 2026-12-03). "
                    + "Reading less than the peer would need pages small enough for the page index to skip the other meters' rows (the files are sorted by malo_id), which costs bytes per row (S1); not tried. " + S3_READS)
            .put("Q3", "The aggregation is pushed down whole: one PostgreSQL statement over the partitions by name (a UNION ALL, each branch reading only the aggregation's columns), which PostgreSQL plans as the peer's (Parallel Append of Parallel Seq Scans under a Partial HashAggregate, 2 workers). "
                    + "So MeterStore's Q3 is the peer's statement plus what a Trino query costs around it, and both parts were measured on a warm engine (a probe: eight warm-up rounds, then Trino's query and the same UNION ALL sent to PostgreSQL directly, alternately, five times). The statement, timed inside the page source, took 3.33-4.11 s (median 3.63), sent directly 2.58-4.06 s (median 3.52): the same work within the spread. Around it each Trino query spent 0.22-0.28 s more: the engine floor above, three stages to schedule, and MeterStore's own planning, 50-65 ms per query by JFR method timing (the Iceberg table and its watermark 12 ms, listing the partitions over a new PostgreSQL connection 26 ms, the page source's connection 14 ms). "
                    + "Rewriting the statement does not reduce PostgreSQL's work: psql timed the branches' \"from\" filters doubled, single and removed, and 1, 2 or 3 workers, all within the round-to-round spread. "
                    + "So the target cannot be met by construction: MeterStore's least time is the peer's plus that fixed cost (at least 1.05 at 10,000 meters); it would need MeterStore to do less work than PostgreSQL, e.g. aggregates kept per partition, which the corrections arriving all day would invalidate. "
                    + "At 300 x 20 the fixed cost is most of the query, and the issue's bound there (PostgreSQL's time plus twice the engine floor) is missed by it: measured on a warm engine on 2026-12-03 (probes of 20 to 30 rounds), PostgreSQL's own statement took 63-72 ms, the UNION ALL sent directly 68-77 ms (as a prepared statement with a generic plan too), the same statement inside the page source 83-122 ms (the 15-50 ms between those not located), and the whole query 170 ms by Trino's own count (analysis 6 ms, planning 15 ms), against 32 ms for `SELECT 1` and 77 ms for a pushed-down count(*) over the same partitions. "
                    + "Q3 at 10,000 x 60 went from 1.09 (2026-11-30 14:19, 4.169 s against 3.840 s) to 1.30 (2026-12-02 18:31, 3.761 s against 2.889 s). Between the two the statement the page source sends did not change but in how its conditions are rendered (4710e2d: the same `\"from\" >= ?`), "
                    + "its connection comes from a pool (481b1f2, 2026-12-01) where each split opened its own, and the dataset was made again for the resolved cold layout (126d57e, 2026-12-01). "
                    + "A pooled connection runs the same text again, so the PostgreSQL driver makes it a named server statement at its fifth execution and PostgreSQL may plan it generically after five more; on the 300 x 20 dataset (2026-12-06, EXPLAIN ANALYZE of the UNION ALL prepared with plan_cache_mode forced either way) the generic plan has the custom one's shape (estimates of a third of the rows per branch), so that path does not change PostgreSQL's work; a run's Q3 executes it 8 times. "
                    + "The same code measured 1.04 (03:30, 6.730 s against 6.496 s) and 1.13 (05:17, 4.788 s against 4.233 s) earlier that day: the gap, 0.23 to 0.87 s, moved from run to run, and the 1.30 is the run whose peer was the fastest of all four (2.889 s; its rounds 2.43-3.31 s against MeterStore's 3.31-4.91 s). "
                    + "So nothing measured moved the statement: the ratio follows how fast PostgreSQL ran the peer in that run. "
                    + "One difference in PostgreSQL's plan shows at 300 x 20 only: the peer's Parallel Append splits each partition among the workers (Parallel Seq Scan), the UNION ALL's hands each partition whole to one process (a partition there holds about 1,000 pages, just below min_parallel_table_scan_size's 8 MB; why PostgreSQL splits such a partition under the parent and not under the UNION ALL was not looked into); at 10,000 meters both use Parallel Seq Scans, as the first paragraph says.")
            .put("Q5", "The peer aggregates the 10 hot days inside PostgreSQL; MeterStore streams those 9.7 M rows (two columns) out of PostgreSQL as binary COPY into Trino's partial aggregation, while the cold part reads Parquet, all on the same 2 cores. "
                    + "The hot stream is the query's length: in a probe (split start and end logged), the 10 hot splits, scheduled first, ran from 0 to 5.95 s, four COPY streams at a time (PostgreSQL about 1.2 cores, the JVM decoding and aggregating about 0.75, sampled from /proc), and the 50 cold splits, 49 M rows, from 4.6 to 6.9 s. "
                    + "Trino's SPI pushes an aggregation only whole (applyAggregation replaces it for the entire table scan), so a partial aggregation per hot partition under a scan that also reads Iceberg cannot be expressed. "
                    + "What would close a gap: planning the two tiers as two table scans pinned to the same snapshot and W, so that the engine pushes the hot scan's aggregation into PostgreSQL while the cold scan reads Parquet.")
            .put("Q6", "The 100-meter VALUES list is folded into an IN list, which reaches the PostgreSQL statement (`malo_id = ANY(...)`) and the Parquet row-group filters (statistics, bloom filters) of both tiers. "
                    + "The remaining gap is of the size of the round-to-round spread (see the rounds below) and was not profiled further in this run.")
            .put("R1", "R1 spans both tiers, and its two parts behave differently; R1c and R1h time them apart. "
                    + "The cold part (R1c): the archiver writes each day's winners apart from the versions they supersede, so `readings` reads a resolved month's winners files alone, with only the query's two columns, as `readings_versions` reads every file; it reads fewer rows than its peer. "
                    + "The hot part (R1h): the hot tier records supersession when it happens (issue 32: every row's `superseded_at`, kept by the partitions' statement triggers), so `readings` reads a marked partition's winners unordered, `superseded_at IS NULL`, with only the query's columns, as `readings_versions` reads every version; only a partition not yet marked (a table created before the marks and not upgraded) is still read in primary-key order and resolved as it streams (metric hot_partitions_resolved). "
                    + "Until 2026-12-06 every hot partition was read that way: on one 979,073-row partition of the 10,000-meter dataset (psql, COPY to /dev/null, median of five) the peer's two columns unordered took 0.54 s, the same two in primary-key order 1.24 s, with the four key columns 1.47 s, which made R1h 2.10 and R1 1.68 at 10,000 x 60 (2026-12-02). "
                    + "R1 as the table shows it is Trino's plan: its whole-range aggregation spans both tiers, so it is not pushed into PostgreSQL and both sides stream the hot rows (two columns) into the engine.")
            .put("R1h", "The hot part of R1 with aggregation pushdown off for both sides, so that each streams the rows it reads into the engine: `readings` reads each marked partition's winners unordered with a `superseded_at IS NULL` condition (the query's two columns; the marks column is read to test it, not returned), `readings_versions` every version of the same partitions. "
                    + "So `readings` reads 2 % fewer rows and tests one column more per row; no partition is resolved in key order (see R1 for what that cost until 2026-12-06). With pushdown on, as a user runs it, the same query is one PostgreSQL statement on either table (H1).")
            .put("R1L", "As R1: the late corrections keep the cold months resolved (their superseded winners are position-deleted in the same commit, so the cold part reads winners files minus small delete files), and the hot part reads each partition's winners by their marks, unordered.")
            .put("R2", "The ROW_NUMBER peer holds every key of its range in memory before it aggregates (TopNRanking); over the whole 58 M rows it exceeds 5 GB and fails, so this pair reads the last 20 days. `readings` streams each split once in key order and holds only the key it is resolving.")
            .put("C1", "The peer is the report as the issue describes it in plain SQL: per reading and day the winners of `readings` grouped, a calendar of the month from `sequence` crossed with the readings, LEFT JOIN, GROUP BY. "
                    + "The readings listed in the calendar come from the same grouped read, and Trino evaluates a WITH query once per reference, so the peer reads `readings` twice (EXPLAIN ANALYZE shows two source fragments over the same rows). "
                    + "meter_completeness counts where the rows lie: each hot partition in PostgreSQL (one statement returns counts per reading, grid and day: of a marked partition it counts the winners by their marks, `superseded_at IS NULL`, unordered; only a partition not yet marked is still resolved in one window over the primary key's order), each cold split from its winners files' key columns as they stream past; only the counts reach the connector's roll-up, and no row reaches the engine. "
                    + "The peer reads `readings` too, so the marks made it cheaper as well: its hot winners stream unordered. "
                    + "Before the marks (2026-12-02, 10,000 x 60, idle) the month's 19 cold days took 3.0-3.3 s of the report and its 10 hot days 20.8-21.4 s, resolving their versions in key order: in psql on one hot partition the grouped counts took 0.7-1.1 s without resolving versions and 2.2-2.9 s with it, so C1 measured 0.58 (28.5 s against 39.1 s) against the 0.5 target; "
                    + "at 300 x 20 it measured 0.65 (2026-12-02) and 0.42 on the day the hot tier was first counted in PostgreSQL (2026-12-01, loaded). A marked partition's count is that grouped count without resolution, with the marks' condition.")
            .put("H1", "The query a dashboard runs on recent days, on `readings` as a user runs it (aggregation pushdown on): the sum by day over the hot range is one PostgreSQL statement over the partitions by name (HotAggregationPageSource, a UNION ALL of branches that read only the aggregation's columns of each marked partition's winners, `superseded_at IS NULL`, unordered). "
                    + "The peer is what a user of a plain PostgreSQL table holding every version writes to get the same winners: DISTINCT ON the merge key and version scope (ResolutionRule's partition; the dataset delivers each key under one scope, but the rule is the scope's), ordered by version and recorded_at descending, then the sum. "
                    + "PostgreSQL sorts every hot row (or walks the primary key) for the DISTINCT ON, where MeterStore's statement scans and hashes; so the ratio is the sort's cost against a scan's, plus Trino's fixed cost per query (the engine floor above), which at small sizes is most of MeterStore's time.")
            .put("H2", "`FOR TIMESTAMP AS OF t` on the hot tier reads no version in key order: a marked partition's row won as known at t iff it was recorded by t and not superseded by t (`recorded_at <= t AND (superseded_at IS NULL OR superseded_at > t)`), pushed into PostgreSQL as H1's statement is with that condition instead. "
                    + "t is three days before the dataset's last recorded_at, so the days delivered since are missing and the corrections recorded since are not yet applied: the answer differs from the peer's (every version now) by nature, and MeterStore's is compared with the same instant resolved in PostgreSQL by DISTINCT ON over the rows recorded by t (the check below, untimed), as the report never times a mismatch as a win. "
                    + "So the ratio is the AS OF condition's cost against `readings_versions`' plain branch.")
            .put("J1", "Both sides plan their splits by the meter list: the planner infers the IN list from the joined VALUES rows, so the scan's predicate holds it as it holds the literal list (the hot statement's `malo_id = ANY(...)`, Parquet statistics and bloom filters). "
                    + "The join's scan no longer waits for the join's dynamic filter, which could narrow nothing more (`dynamic_filter_wait_timeout_millis` 0); until 2026-12-06 it waited up to `meterstore.dynamic-filtering.wait-timeout` (1 s) for it, and J1 measured 1.55 and 1.58 at 300 x 20. What remains between the two sides is the join itself: the build side's stage and the hash join above the scan, which the literal list does not have.")
            .put("W3", "The marks' statement triggers (HotTierSupersession, AFTER INSERT with a transition table, on the parent and every partition) recompute the marks of the keys a statement touches: for a day's ingest into a range that holds none of its keys yet (the common case) one count over the transition table and the range decides there is nothing to mark. "
                    + "The side without them has the three triggers disabled on the parent and on the round's partition, created before the round (a partition the INSERT creates itself gets the triggers); the rules' triggers and CHECKs stay on for both sides, as W2 keeps the marks on for both of its own.")
            .put("W3c", "A correction batch is the marks' expensive case: the trigger probes the corrected keys' stored versions, finds each key's winner by ResolutionRule and updates the superseded row's mark in the same statement; the side without them stores the new versions and leaves every older one unmarked, so `readings` on that partition would return both (the rounds' partitions are dropped after W3).")
            .put("D1", "No errors and no wrong answers: each answer equals the one computed before the clients started, while corrections and an archival cycle ran. "
                    + "Light queries do not queue behind heavy ones for PostgreSQL connections: a connection a split gives back goes to the waiting query holding the fewest, so a light query has the next turn however many splits a month's aggregation queued; a read of a few meters (one meter's last 7 days, and over a year) reads its hot partitions in one statement, so it takes one turn, not one per partition; planning and metadata take reserved connections (`meterstore.postgresql.reserved-connections`); and a pushed-down aggregation's statement runs on the connector's threads, not the node's driver threads. The connection wait in the table below shows what is left: the wait for the next connection a heavy split gives back. "
                    + "What a light query still waits for at 8 clients is the two cores, which eight clients share (Trino runs each query's splits in parallel, PostgreSQL's scans of the hot part take the second core): the queueing paragraph under D1 below gives the throughput figures of this run, and the per-kind ratios show what the heavy queries pay. "
                    + "Each query then waits for the queries ahead of it, and its latency grows with the number of clients (Little's law), up to eight times one client's on cores one client already keeps busy. "
                    + "D1g runs the same mix with the heavy queries in a resource group of their own, one at a time, as docs/operations.md gives a deployment (Sizing for dashboards).")
            .put("D1g", "D1's mix and clients on the same engine, with the resource groups docs/operations.md gives a deployment whose dashboards share it with heavy reports: the heavy kinds run one at a time and queue in their own group, the light ones run at once. "
                    + "What is left for a light query at 8 clients is the share of the cores it gets beside the one heavy query running, the other light ones and the corrections: the queueing paragraph under D1g below gives this run's throughput.")
            .put("W1", "The cycle runs in the benchmark's JVM beside the engine, on the same two cores: an INSERT of today's rows takes no lock the cycle holds (the boundary lock is the cycle's only while it publishes its window, and an INSERT of rows at or above the window's end takes it shared), so what the statements beside the cycle wait for is the CPU and the disk the cycle's ordered read of the day and its Parquet writing take. "
                    + "W1n runs the cycle as docs/operations.md gives a deployment whose archiver shares cores with the engine and PostgreSQL: in a JVM of its own at nice 19.")
            .put("W1n", "W1 with the cycle run as a deployment that shares its cores with the engine and PostgreSQL would run the archiver (docs/operations.md, Sharing cores with the archiver): in a JVM of its own at nice 19, so that the INSERTs' work in the engine goes first. "
                    + "PostgreSQL's backend that reads the day for the cycle keeps its own priority, as a deployment's does: what the statements beside the cycle still share is that read.")
            .put("W2", "The rules' statement trigger runs one window pass over the new rows and the stored versions of their channels (a sort of the statement's rows) and the CHECK constraints evaluate nine conditions per row; measured in psql on 96,000 new rows (2026-12-06, idle), the trigger added about 380 ms to an INSERT of about 620 ms, after it was made cheaper (an anti-join instead of joining every candidate back to the transition table, the range read from the first new \"from\", the channels counted by a hash aggregate; it added about 650 ms before). "
                    + "Through Trino the INSERT without the rules takes about 2.1 s, and the trigger and the checks add about 0.75 s. Exclusion constraints (btree_gist) cost ten times an INSERT and see one partition only. What would close it: checking against the stored rows in the statement's own staging pass (which already sorts the rows), with the trigger left to other writers.")
            .put("A1", "Medians of three rounds each side, and the INSERT's rounds spread widely (see below). The four full runs of 2026-11-30 measured A1 at 0.65, 0.61, 0.68 and 0.71 against the 0.67 target: at the target's edge, within that spread. "
                    + "The two sides do not start alike: Trino's INSERT runs on the engine that has just run every pair, warm; the archiver runs each round in a fresh JVM, as `archive once` does, so its time includes warming up the decoding and Parquet paths, which the service's scheduler, reusing one JVM across cycles, pays once: A1w measures that case, the second cycle in the archiver's JVM. "
                    + "The archiver takes about 2.5 times the read floor (A1c): the ordered read walks the primary key while one thread decodes the rows and encodes Parquet (ZSTD, bloom filters, statistics) in a JVM capped at 256 MiB, then commits. "
                    + "Not tried: decoding on one thread while another encodes; on 2 cores PostgreSQL's ordered read already takes part of the second core. "
                    + "The idle run of 2026-12-02 at 10,000 meters, the first since the archiver writes a day's winners apart from the versions they supersede, measured 0.89 in a fresh JVM (18.7 s; its peak heap 216 MiB of 256 MiB) and 0.62 warm (A1w, 13.1 s), where the fresh JVM took 10.9 s on 2026-11-30: the second file and the archiver's heap near its cap are where to look first; not profiled in that run. " + ARCHIVAL_PROFILE + " " + ARCHIVAL_MARKS)
            .put("A1c", "The fresh JVM's archival against the ordered read alone. " + ARCHIVAL_PROFILE)
            .put("S1", "The winners are written apart from the versions they supersede (issue 12), and the two kinds of file compress differently. In the 10,000-meter run of 2026-12-02 a day's winners file held about 1,055,000 rows (98 %) in 3,153,507 bytes (about 2.99 B/row, against the peer's 2.91 over all its rows), and its superseded file the other 2 % (about 21,500 rows) in 364,331 bytes, 17 B/row: "
                    + "in the peer's single sorted file a superseded version lies next to the version that replaced it and costs almost nothing (its key and most of its values repeat the row beside it), while apart, two or so rows per meter spread over the day, every column is stored again. "
                    + "That adds about 0.34 B/row to the day (3.27 against the winners' 2.99), the whole of the miss. What would close it: storing the superseded versions against their winners (e.g. only the columns that differ), which a plain Parquet reader could no longer read as the table's rows; month compaction puts a month's superseded versions in one file but does not make them denser. "
                    + "Trino's Parquet writer has no setting that closes it: the two days' files rewritten with the options it offers (2026-12-03), the best (one row group and one page per column chunk, 16 MB pages, no delta-length strings) made the winners files 3 % smaller, S1 1.072, at the cost of one split per file and no row-group or page pruning, and left the superseded files as they were (within 0.5 KB: their dictionaries repeat the winners file's, and the writer has no switch to turn dictionaries off); the same rows in one sorted file a day, as the peer writes them, measured 1.031 with those options. So the miss is what keeping the winners apart costs, and that is what lets `readings` read them without resolving versions.")
            .buildOrThrow();

    private MeterstoreBenchmark() {}

    public static void main(String[] args)
            throws Exception
    {
        Locale.setDefault(Locale.ROOT);
        // airlift's logging takes over System.out; the report goes to the real console
        PrintStream console = System.out;
        Logging logging = Logging.initialize();
        logging.setLevel("io.trino", Level.WARN);
        logging.setLevel("org.apache.iceberg", Level.WARN);
        logging.setLevel("io.meterstore.archiver", Level.WARN);

        switch (BenchmarkSettings.property("benchmark.dataset", "standard")) {
            case "standard" -> {}
            case "years" -> System.exit(YearsBenchmark.run(YearsSettings.fromSystemProperties(), console));
            case "points" -> System.exit(PointsBenchmark.run(PointsSettings.fromSystemProperties(), console));
            case String other -> throw new IllegalArgumentException("System property 'benchmark.dataset' must be standard, years or points, not '%s'".formatted(other));
        }
        BenchmarkSettings settings = BenchmarkSettings.fromSystemProperties();
        Files.createDirectories(settings.directory());
        log.info("Settings: %s", settings);
        int exit = 0;
        try (BenchmarkDataset dataset = BenchmarkDataset.open(settings)) {
            log.info("Dataset %s: %s rows, %s cold, watermark %s", dataset.reused() ? "reused" : "made", dataset.rows(), dataset.coldRows(), dataset.watermark());
            if (settings.probe().isPresent()) {
                probe(settings, dataset, console);
            }
            else {
                benchmark(settings, dataset, console);
            }
        }
        catch (Exception e) {
            log.error(e, "Benchmark failed");
            exit = 1;
        }
        // the engine's and the embedded server's threads would keep the JVM alive
        System.exit(exit);
    }

    /** Statements of one's own against this dataset and engine: no benchmark, no report. */
    private static void probe(BenchmarkSettings settings, BenchmarkDataset dataset, PrintStream console)
            throws Exception
    {
        try (DistributedQueryRunner queryRunner = queryRunner(dataset.warehouse())) {
            ProbeQueries.run(settings.probe().orElseThrow(), queryRunner, dataset.database(), settings.rounds(), console);
        }
    }

    private static void benchmark(BenchmarkSettings settings, BenchmarkDataset dataset, PrintStream console)
            throws Exception
    {
        boolean archival = settings.runs("A1") || settings.runs("S1");
        if (archival) {
            ArchivalBenchmark.prepare(settings, dataset.warehouse());
        }
        List<BenchmarkResult> results = new ArrayList<>();
        Optional<EngineFloor> floor = Optional.empty();
        Optional<LateCorrectionStream.Applied> stream = Optional.empty();
        try (DistributedQueryRunner queryRunner = queryRunner(dataset.warehouse());
                Connection trino = trinoConnection(queryRunner);
                Connection trinoUnpushed = trinoConnection(queryRunner);
                Connection postgres = dataset.database().connect()) {
            try (Statement statement = trinoUnpushed.createStatement()) {
                statement.execute("SET SESSION meterstore.aggregation_pushdown_enabled = false");
            }
            QueryBenchmark queries = new QueryBenchmark(settings.warmUps(), settings.rounds());
            Instant asOf = QueryBenchmark.asOf(postgres);
            List<QueryBenchmark.Pair> pairs = ImmutableList.<QueryBenchmark.Pair>builder()
                    .addAll(QueryBenchmark.pairs(trino, trinoUnpushed, postgres, dataset.watermark().instant(), asOf, dataset.generator().maloIds()))
                    .addAll(DashboardBenchmark.singleClientPairs(trino, DashboardBenchmark.lastDay(settings), dataset.generator().maloIds()))
                    .build();
            for (QueryBenchmark.Pair pair : pairs) {
                if (settings.runs(pair.id())) {
                    results.add(queries.run(pair));
                }
            }
            if (!results.isEmpty()) {
                // after the pairs, on a warm engine, as they were timed
                floor = Optional.of(EngineFloor.measure(trino, postgres));
            }
            if (settings.runs("R1L") || settings.runs("R3L")) {
                Table table = dataset.warehouse().catalog().loadTable(TableIdentifier.of(BenchmarkDataset.SCHEMA, BenchmarkDataset.TABLE));
                LateCorrectionStream.Applied applied = LateCorrectionStream.apply(trino, table, settings, dataset.watermark());
                stream = Optional.of(applied);
                try {
                    for (QueryBenchmark.Pair pair : QueryBenchmark.afterLateCorrections(trino, dataset.generator().maloIds())) {
                        if (settings.runs(pair.id())) {
                            results.add(queries.run(pair));
                        }
                    }
                }
                finally {
                    // the kept dataset stays the one its marker describes
                    LateCorrectionStream.rollBack(table, applied);
                }
            }
            if (archival) {
                ArchivalBenchmark benchmark = new ArchivalBenchmark(settings, dataset.warehouse(), trino);
                if (settings.runs("A1")) {
                    results.addAll(benchmark.run());
                }
                if (settings.runs("S1")) {
                    results.add(benchmark.storage(benchmark.postgresBytes(), dataset.coldRows()));
                }
            }
            if (settings.runs("D1")) {
                // it archives and corrects, and puts the dataset back when it ends
                results.add(new DashboardBenchmark(settings, dataset, () -> trinoConnectionUnchecked(queryRunner), queryId -> connectorMetrics(queryRunner, queryId), trino, false).run());
            }
            if (settings.runs("D1g")) {
                // after D1, which runs without them; only D1g's clients tag queries, so no other row's query is limited
                DashboardResourceGroups.install(queryRunner);
                results.add(new DashboardBenchmark(settings, dataset, () -> trinoConnectionUnchecked(queryRunner), queryId -> connectorMetrics(queryRunner, queryId), trino, true).run());
            }
            if (settings.runs(IngestBesideArchivalBenchmark.ID)) {
                // it archives a day and puts the dataset back when it ends, as D1 does
                results.add(new IngestBesideArchivalBenchmark(settings, dataset, () -> trinoConnectionUnchecked(queryRunner), trino, false).run());
            }
            if (settings.runs(IngestBesideArchivalBenchmark.NICE_ID)) {
                results.add(new IngestBesideArchivalBenchmark(settings, dataset, () -> trinoConnectionUnchecked(queryRunner), trino, true).run());
            }
            if (settings.runs(IngestBenchmark.ID)) {
                // it drops the partitions it created and restores the rules when it ends
                results.add(new IngestBenchmark(dataset, trino, settings.rounds()).run());
            }
            if (settings.runs(SupersessionIngestBenchmark.ID)) {
                // as W2: it drops the partitions it created and turns the marks' triggers on again when it ends
                results.addAll(new SupersessionIngestBenchmark(dataset, trino, settings.rounds()).run());
            }
            if (settings.runs(ErasureBenchmark.ID)) {
                // last: an erasure changes the kept dataset for good, so every other row of this run measured it whole
                results.add(new ErasureBenchmark(settings, dataset, () -> trinoConnectionUnchecked(queryRunner), trino).run());
            }
        }
        // a run of some rows writes a section of its own: the figures of the rows it did not run stay
        List<String> only = settings.benchmarks().containsAll(BenchmarkSettings.ALL) ? List.of() : BenchmarkSettings.ALL.stream().filter(settings::runs).toList();
        BenchmarkReport.Run run = new BenchmarkReport.Run(settings.meters(), settings.days(), settings.storage(), only);
        Files.createDirectories(settings.output());
        Path markdown = settings.output().resolve("benchmarks.md");
        // the other dataset sizes' sections stay: docs/benchmarks.md shows every size that was run
        String existing = Files.exists(markdown) ? Files.readString(markdown) : "";
        // a run on S3 shows its figures beside the local warehouse's of the same size, as that section last recorded them
        Map<String, BenchmarkReport.Figures> local = run.storage() == BenchmarkStorage.LOCAL
                ? Map.of()
                : BenchmarkReport.figures(existing, new BenchmarkReport.Run(settings.meters(), settings.days(), BenchmarkStorage.LOCAL));
        BenchmarkReport report = new BenchmarkReport(run, environment(dataset.database()), describe(settings, dataset, floor, stream), results, NOTES, local);
        Files.writeString(markdown, BenchmarkReport.document(existing, report.section()));
        Files.writeString(settings.output().resolve(run.chart()), report.svg());
        console.println();
        for (BenchmarkResult result : results) {
            console.printf("%-4s %-46s %12s %12s  ratio %6s  target %-26s %s%n",
                    result.id(), result.title(), BenchmarkReport.figure(result.meterstore(), result.unit()), BenchmarkReport.figure(result.peer(), result.unit()),
                    Double.isFinite(result.ratio()) ? BenchmarkReport.ratio(result.ratio()) : "-", result.target().text(), result.verdict() + result.error().map(error -> ": " + error).orElse(""));
        }
        console.printf("%nWrote the %s section of %s and %s beside it%n", run.title(), markdown, run.chart());
    }

    private static DistributedQueryRunner queryRunner(TestingWarehouse warehouse)
            throws Exception
    {
        return queryRunner(warehouse, true);
    }

    /** One engine with MeterStore and Trino's Iceberg connector over {@code warehouse}; A1's catalog too if {@code archival}. */
    static DistributedQueryRunner queryRunner(TestingWarehouse warehouse, boolean archival)
            throws Exception
    {
        return queryRunner(warehouse, archival, "readings");
    }

    /** As above, MeterStore serving {@code tables} (comma-separated) of the benchmark's schema. */
    static DistributedQueryRunner queryRunner(TestingWarehouse warehouse, boolean archival, String tables)
            throws Exception
    {
        return queryRunner(warehouse, archival, tables, ImmutableMap.of(), ImmutableMap.of());
    }

    /**
     * As above, with the engine's {@code engineProperties} beside the benchmarks' own, and {@code storageOverrides} replacing the
     * warehouse's {@code fs.*} and {@code s3.*} properties of the same names in every catalog.
     */
    static DistributedQueryRunner queryRunner(TestingWarehouse warehouse, boolean archival, String tables, Map<String, String> engineProperties, Map<String, String> storageOverrides)
            throws Exception
    {
        DistributedQueryRunner queryRunner = DistributedQueryRunner.builder(testSessionBuilder().setCatalog("meterstore").setSchema(BenchmarkDataset.SCHEMA).build())
                .setWorkerCount(0)
                .setExtraProperties(engineProperties)
                // the ROW_NUMBER peers (R2, Y2) hold every key of the rows they resolve at once; Trino's default share of the
                // heap (30 %) is too small for them: a query may use 65 % (5.2 GB of -Dbenchmark.heap=8g), beside Trino's 30 % headroom
                .addExtraProperty("query.max-memory-per-node", QUERY_MEMORY.toString())
                .addExtraProperty("query.max-memory", QUERY_MEMORY.toString())
                .build();
        try {
            queryRunner.installPlugin(new MeterstorePlugin());
            queryRunner.createCatalog("meterstore", "meterstore", meterstoreCatalog(warehouse, BenchmarkDataset.SCHEMA, tables, storageOverrides));
            if (archival) {
                queryRunner.createCatalog(ArchivalBenchmark.CATALOG, "meterstore", meterstoreCatalog(warehouse, ArchivalBenchmark.SCHEMA, "readings", storageOverrides));
            }
            queryRunner.installPlugin(new IcebergPlugin());
            queryRunner.createCatalog("iceberg", "iceberg", ImmutableMap.<String, String>builder()
                    .put("iceberg.catalog.type", "jdbc")
                    .put("iceberg.jdbc-catalog.driver-class", "org.postgresql.Driver")
                    .put("iceberg.jdbc-catalog.connection-url", warehouse.database().jdbcUrl())
                    .put("iceberg.jdbc-catalog.connection-user", warehouse.database().user())
                    .put("iceberg.jdbc-catalog.catalog-name", warehouse.catalogName())
                    .put("iceberg.jdbc-catalog.default-warehouse-dir", warehouse.location())
                    .put("iceberg.compression-codec", "ZSTD")
                    .put("fs.local.enabled", "true")
                    // the archiver writes absolute file:/// locations; Trino's local file system resolves them against this root
                    .put("local.location", "/")
                    .putAll(warehouse.storageProperties())
                    .putAll(storageOverrides)
                    .buildKeepingLast());
            return queryRunner;
        }
        catch (Throwable e) {
            queryRunner.close();
            throw e;
        }
    }

    /** As MeterstoreQueryRunner (trino-meterstore's tests) configures it, one catalog per schema. */
    private static Map<String, String> meterstoreCatalog(TestingWarehouse warehouse, String schema, String tables, Map<String, String> storageOverrides)
    {
        return ImmutableMap.<String, String>builder()
                .put("meterstore.postgresql.url", warehouse.database().jdbcUrl())
                .put("meterstore.postgresql.user", warehouse.database().user())
                .put("meterstore.schema", schema)
                .put("meterstore.tables", tables)
                .put("meterstore.iceberg.catalog-name", warehouse.catalogName())
                .put("meterstore.iceberg.warehouse", warehouse.location())
                // E1's DELETE records the erased meter under it
                .put(TiersConfig.ERASURE_HMAC_KEY_PROPERTY, ErasureBenchmark.HMAC_KEY)
                .putAll(warehouse.storageProperties())
                .putAll(storageOverrides)
                .buildKeepingLast();
    }

    /**
     * The connector's metrics of a query, merged over its operators, once its final statistics are in: a client has its
     * last row a moment before the coordinator has the tasks' last report.
     */
    private static Metrics connectorMetrics(DistributedQueryRunner queryRunner, String queryId)
    {
        QueryManager queries = queryRunner.getCoordinator().getQueryManager();
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        QueryInfo info = queries.getFullQueryInfo(new QueryId(queryId));
        while (!info.isFinalQueryInfo() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(10);
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            info = queries.getFullQueryInfo(new QueryId(queryId));
        }
        return info.getQueryStats().getOperatorSummaries().stream()
                .map(OperatorStats::getConnectorMetrics)
                .reduce(Metrics.EMPTY, Metrics::mergeWith);
    }

    private static Connection trinoConnectionUnchecked(DistributedQueryRunner queryRunner)
    {
        try {
            return trinoConnection(queryRunner);
        }
        catch (Exception e) {
            throw new IllegalStateException("Cannot connect to the engine: " + e.getMessage(), e);
        }
    }

    static Connection trinoConnection(DistributedQueryRunner queryRunner)
            throws Exception
    {
        Properties properties = new Properties();
        properties.setProperty("user", "benchmark");
        String url = "jdbc:trino://%s:%s/meterstore/%s".formatted(
                queryRunner.getCoordinator().getBaseUrl().getHost(), queryRunner.getCoordinator().getBaseUrl().getPort(), BenchmarkDataset.SCHEMA);
        return DriverManager.getConnection(url, properties);
    }

    static Environment environment(TestingDatabase database)
            throws Exception
    {
        String postgres;
        try (Connection connection = database.connect(); Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SELECT current_setting('server_version'), current_setting('max_parallel_workers_per_gather'), current_setting('shared_buffers')")) {
            result.next();
            postgres = "%s (max_parallel_workers_per_gather %s, shared_buffers %s)".formatted(result.getString(1), result.getString(2), result.getString(3));
        }
        long memory = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getTotalMemorySize();
        return new Environment(
                ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'")),
                Runtime.getRuntime().availableProcessors(),
                "%.1f GiB (engine heap %s MiB)".formatted(memory / (double) (1L << 30), Runtime.getRuntime().maxMemory() >> 20),
                "%s %s".formatted(System.getProperty("java.vm.name"), System.getProperty("java.runtime.version")),
                "%s %s %s".formatted(System.getProperty("os.name"), System.getProperty("os.version"), System.getProperty("os.arch")),
                postgres);
    }

    private static List<String> describe(BenchmarkSettings settings, BenchmarkDataset dataset, Optional<EngineFloor> floor, Optional<LateCorrectionStream.Applied> stream)
    {
        List<String> lines = new ArrayList<>(List.of(
                "%,d meters x %s days from %s (Berlin days), seed %s: %,d rows with %s%% of intervals corrected by a second version; values at Wh resolution from a per-meter load profile with noise, delivered in daily batches (meterstore-testing ReadingsGenerator)."
                        .formatted(settings.meters(), settings.days(), BenchmarkSettings.START_DAY, BenchmarkSettings.SEED, dataset.rows(), Math.round(BenchmarkSettings.CORRECTIONS_FRACTION * 100)),
                "Cold tier (Iceberg, written by the archiver): %,d rows below the watermark %s; hot tier (PostgreSQL partitions): %,d rows, the last %s days."
                        .formatted(dataset.coldRows(), dataset.watermark().instant(), dataset.rows() - dataset.coldRows(), settings.hotDays()),
                "One Trino %s engine in one JVM (coordinator only) hosts `meterstore` and Trino's `iceberg` connector over the same JDBC catalogue and warehouse; PostgreSQL runs the hot peer's SQL natively through JDBC."
                        .formatted(Optional.ofNullable(DistributedQueryRunner.class.getPackage().getImplementationVersion()).orElse("483")),
                switch (settings.storage()) {
                    case LOCAL -> "The warehouse is a local directory (`file:`).";
                    case S3 -> "The warehouse is bucket `%s` of an S3 server on the loopback (S3Proxy 2.6, a child process, filesystem blob store, path-style, signature V4): both connectors read it and the archiver writes it through S3's HTTP API, `fs.s3.enabled` and `s3.*` as in production."
                            .formatted(dataset.warehouse().location());
                },
                "Times are client side through the JDBC drivers, fetching every row; each pair first runs %s untimed, alternately, to warm the engine up (its first answers are the ones compared), then %s rounds alternating MeterStore and peer (the order swapped each round); the tables show medians."
                        .formatted(settings.warmUps() == 1 ? "once" : settings.warmUps() + " times", settings.rounds())));
        if (!dataset.erasedMeters().isEmpty()) {
            lines.add("E1 runs have erased %s of the dataset's meters for good, one a run, none of them read by another row: %s.".formatted(dataset.erasedMeters().size(), String.join(", ", dataset.erasedMeters())));
        }
        floor.ifPresent(engine -> lines.add(engine.describe()));
        stream.ifPresent(applied -> lines.add("R1L and R3L run after a late-correction stream, applied after every other pair and rolled back after them: " + applied.describe()));
        return lines;
    }
}
