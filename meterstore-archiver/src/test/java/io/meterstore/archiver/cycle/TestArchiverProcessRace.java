package io.meterstore.archiver.cycle;

import io.meterstore.archiver.cycle.ArchiveOutcome.Kind;
import io.meterstore.archiver.cycle.Failpoints.Failpoint;
import io.meterstore.archiver.cycle.TestingArchiverProcess.PrintedOutcome;
import io.meterstore.archiver.cycle.TieringAudit.ArchivedRange;
import io.meterstore.core.HotPartition;
import io.meterstore.core.TieringWatermark;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.ReadingsOracle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Archiver processes racing for one table. The lease lets exactly one run a cycle at a time: every window is archived
 * by exactly one cycle of one process, a loser waits its turn or reports LEASE_CONTENDED and changes nothing, and a lease holder that
 * dies mid-cycle hands the table over as soon as PostgreSQL has ended its session.
 */
final class TestArchiverProcessRace
{
    private static final Duration DAY = Duration.ofDays(1);
    private static final Duration SETTLEMENT_LAG = Duration.ofDays(7);
    private static final Duration TIMEOUT = Duration.ofSeconds(120);
    private static final Pattern ARCHIVED_WINDOW = Pattern.compile(": archived \\[(\\S+), (\\S+)\\): ");

    @TempDir
    Path directory;

    @Test
    void testTwoProcessesArchiveEachWindowOnce()
            throws Exception
    {
        // 22 small Berlin days in winter: 23 UTC partitions, then the empty stretch up to the horizon
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(22)
                .meters(3)
                .startDay(LocalDate.of(2024, 1, 8))
                .days(22)
                .correctionsFraction(0.05)
                .build();
        ReadingsOracle oracle = ReadingsOracle.of(generator);
        try (TestingArchiverTable tables = TestingArchiverTable.create("race_two")) {
            try (Connection connection = tables.connect()) {
                new ReadingsLoader(tables.hotTier()).load(connection, generator);
            }
            assertThat(tables.partitions()).hasSize(23);
            // far in the future: every partition is closed and, with no grace, dropped right after its commit
            Instant clock = Instant.parse("2030-01-01T00:00:00Z");
            List<PrintedOutcome> outcomes = new ArrayList<>();
            try (TestingArchiverProcess first = TestingArchiverProcess.start("first", tables, directory, clock, Duration.ZERO, true, Optional.empty(), true);
                    TestingArchiverProcess second = TestingArchiverProcess.start("second", tables, directory, clock, Duration.ZERO, true, Optional.empty(), true)) {
                first.awaitLine("READY", TIMEOUT);
                second.awaitLine("READY", TIMEOUT);
                // both start their first cycle at the same moment and loop without a pause but after a lost lease
                first.go();
                second.go();
                assertThat(first.awaitExit(TIMEOUT)).as("exit code of the first archiver%n%s", first.output()).isZero();
                assertThat(second.awaitExit(TIMEOUT)).as("exit code of the second archiver%n%s", second.output()).isZero();
                for (TestingArchiverProcess process : List.of(first, second)) {
                    assertThat(process.lines()).noneMatch(line -> line.startsWith("FAILED"));
                    assertThat(process.outcomes().getLast().kind()).isEqualTo(Kind.IDLE);
                    outcomes.addAll(process.outcomes());
                }
            }

            // the lease serialises them: the loser waits for it (or, past its lock timeout, changes nothing) and takes its
            // turn after the winner's cycle; no cycle ever lost a commit race
            assertThat(outcomes).extracting(PrintedOutcome::kind).doesNotContain(Kind.SUPERSEDED, Kind.DEFERRED);
            List<ArchivedRange> archivedByProcesses = outcomes.stream()
                    .filter(outcome -> outcome.kind() == Kind.ARCHIVED)
                    .map(TestArchiverProcessRace::window)
                    .sorted(Comparator.comparing(ArchivedRange::from))
                    .toList();
            // each window in exactly one snapshot and in exactly one process's outcome, contiguous from the epoch
            List<ArchivedRange> committed = TieringAudit.assertWatermarkHistory(tables);
            assertThat(committed).hasSizeGreaterThanOrEqualTo(20);
            assertThat(committed.stream().distinct().count()).isEqualTo(committed.size());
            assertThat(archivedByProcesses).isEqualTo(committed);
            assertThat(tables.table().snapshots()).hasSize(committed.size());
            assertThat(committed.getFirst().from()).isEqualTo(Instant.EPOCH);

            TieringWatermark watermark = TieringAudit.assertConsistent(tables, oracle);
            assertThat(watermark).isEqualTo(TieringWatermark.of(tables.hotTier().naming().alignDown(clock.minus(SETTLEMENT_LAG))));
            assertThat(committed.getLast().to()).isEqualTo(watermark.instant());
            assertThat(tables.partitions()).isEmpty();
        }
    }

    @Test
    void testKilledLeaseHolderIsTakenOver()
            throws Exception
    {
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(23)
                .meters(30)
                .startDay(LocalDate.of(2024, 3, 4))
                .days(2)
                .correctionsFraction(0.05)
                .build();
        ReadingsOracle oracle = ReadingsOracle.of(generator);
        try (TestingArchiverTable tables = TestingArchiverTable.create("race_takeover")) {
            try (Connection connection = tables.connect()) {
                new ReadingsLoader(tables.hotTier()).load(connection, generator);
            }
            List<HotPartition> loaded = tables.partitions();
            Instant firstEnd = loaded.getFirst().start().plus(DAY);
            Instant lastEnd = loaded.getLast().start().plus(DAY);
            Instant clock = lastEnd.plus(SETTLEMENT_LAG);

            Set<Path> orphans;
            List<PrintedOutcome> outcomes;
            try (TestingArchiverProcess holder = TestingArchiverProcess.start("holder", tables, directory, clock, Duration.ofHours(1), false, Optional.of(Failpoint.MID_STREAM), false)) {
                // the holder stops halfway through writing its first window, holding the lease
                holder.awaitLine("FAILPOINT " + Failpoint.MID_STREAM.pointName(), TIMEOUT);
                try (TestingArchiverProcess successor = TestingArchiverProcess.start("successor", tables, directory, clock, Duration.ofHours(1), true, Optional.empty(), false)) {
                    successor.awaitLine(line -> line.startsWith("OUTCOME " + Kind.LEASE_CONTENDED), TIMEOUT);
                    assertThat(tables.table().currentSnapshot()).isNull();

                    holder.kill();
                    assertThat(successor.awaitExit(TIMEOUT)).as("exit code of the successor%n%s", successor.output()).isZero();
                    outcomes = successor.outcomes();
                }
                orphans = new HashSet<>(TieringAudit.parquetFilesOnDisk(tables));
            }

            // contended while the holder lived, then the successor archived the holder's window and the rest
            List<Kind> kinds = outcomes.stream().map(PrintedOutcome::kind).toList();
            int contended = kinds.lastIndexOf(Kind.LEASE_CONTENDED) + 1;
            assertThat(kinds.subList(0, contended)).isNotEmpty().containsOnly(Kind.LEASE_CONTENDED);
            assertThat(kinds.subList(contended, kinds.size())).containsExactlyElementsOf(Stream.concat(loaded.stream().map(partition -> Kind.ARCHIVED), Stream.of(Kind.IDLE)).toList());
            assertThat(window(outcomes.get(contended))).isEqualTo(new ArchivedRange(Instant.EPOCH, firstEnd));

            List<ArchivedRange> committed = TieringAudit.assertWatermarkHistory(tables);
            assertThat(committed).hasSize(loaded.size());
            assertThat(committed.getFirst()).isEqualTo(new ArchivedRange(Instant.EPOCH, firstEnd));
            assertThat(TieringAudit.assertConsistent(tables, oracle)).isEqualTo(TieringWatermark.of(lastEnd));
            // the holder's half-written files are orphans nobody references: its winners file, and its superseded file if a
            // superseded version had come by, both of the one writer of its first window
            orphans.removeAll(TieringAudit.referencedFiles(tables));
            assertThat(orphans).hasSizeBetween(1, 2);
            assertThat(orphans.stream().map(orphan -> orphan.getFileName().toString().replaceAll("-\\d{5}\\.(winners|superseded)\\.parquet$", "")).distinct()).hasSize(1);
        }
    }

    private static ArchivedRange window(PrintedOutcome outcome)
    {
        Matcher matcher = ARCHIVED_WINDOW.matcher(outcome.description());
        assertThat(matcher.find()).as("window in '%s'", outcome.description()).isTrue();
        return new ArchivedRange(Instant.parse(matcher.group(1)), Instant.parse(matcher.group(2)));
    }
}
