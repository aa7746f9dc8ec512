package io.meterstore.archiver.cycle;

import com.google.common.collect.Sets;
import io.meterstore.archiver.cycle.ArchiveOutcome.Kind;
import io.meterstore.archiver.cycle.Failpoints.Failpoint;
import io.meterstore.archiver.cycle.TieringAudit.ArchivedRange;
import io.meterstore.core.HotPartition;
import io.meterstore.core.Reading;
import io.meterstore.core.TieringWatermark;
import io.meterstore.testing.Readings;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.ReadingsOracle;
import org.apache.iceberg.DataFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A crash at each step of archival: an archiver process is stopped at a failpoint and killed with SIGKILL, then
 * ordinary archiving resumes. Whatever the step, the tiers agree with the oracle right after the kill and after
 * recovery, W only moved forward, every window was committed once, and the files the killed run wrote but did not commit
 * stay unreferenced.
 */
final class TestArchivalCrashRecovery
{
    private static final Duration DAY = Duration.ofDays(1);
    private static final Duration SETTLEMENT_LAG = Duration.ofDays(7);
    private static final Duration READER_GRACE = Duration.ofHours(1);
    private static final ArchivalSettings SETTINGS = new ArchivalSettings(SETTLEMENT_LAG, READER_GRACE, ArchivalSettings.DEFAULT_CHUNK_ROWS);
    private static final Duration TIMEOUT = Duration.ofSeconds(90);
    // three Berlin days: UTC partitions 03-03 (its last hour only) to 03-06
    private static final LocalDate FIRST_DAY = LocalDate.of(2024, 3, 4);
    // a full UTC day of 45 meters (4,320 rows and corrections) is more than one page of 4,096 rows: mid-stream is mid-file
    private static final int METERS = 45;

    @TempDir
    Path directory;

    @Test
    void testCrashAfterDetach()
            throws Exception
    {
        crashAndRecover(Failpoint.AFTER_DETACH);
    }

    @Test
    void testCrashMidStream()
            throws Exception
    {
        crashAndRecover(Failpoint.MID_STREAM);
    }

    @Test
    void testCrashAfterWrite()
            throws Exception
    {
        crashAndRecover(Failpoint.AFTER_WRITE);
    }

    @Test
    void testCrashAfterCommit()
            throws Exception
    {
        crashAndRecover(Failpoint.AFTER_COMMIT);
    }

    @Test
    void testCrashBeforeDrop()
            throws Exception
    {
        crashAndRecover(Failpoint.BEFORE_DROP);
    }

    private void crashAndRecover(Failpoint failpoint)
            throws Exception
    {
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(100 + failpoint.ordinal())
                .meters(METERS)
                .startDay(FIRST_DAY)
                .days(3)
                .correctionsFraction(0.05)
                .build();
        ReadingsOracle oracle = ReadingsOracle.of(generator);
        try (TestingArchiverTable tables = TestingArchiverTable.create("crash_" + failpoint.pointName())) {
            try (Connection connection = tables.connect()) {
                new ReadingsLoader(tables.hotTier()).load(connection, generator);
            }
            List<HotPartition> loaded = tables.partitions();
            assertThat(loaded).hasSize(4);
            Instant firstEnd = loaded.get(0).start().plus(DAY);
            Instant crashedEnd = loaded.get(1).start().plus(DAY);
            Instant lastEnd = loaded.getLast().start().plus(DAY);
            TestingClock clock = tables.clock();
            ArchivalCycle cycle = tables.cycle(SETTINGS);

            // the first day goes cold before the crash, so the killed run also finds a partition past its grace to drop
            clock.set(firstEnd.plus(SETTLEMENT_LAG));
            assertThat(cycle.archiveOnce().kind()).isEqualTo(Kind.ARCHIVED);
            TieringWatermark before = TieringAudit.assertConsistent(tables, oracle);
            assertThat(before).isEqualTo(TieringWatermark.of(firstEnd));

            // a day later the next day is closed: the killed run archives [firstEnd, crashedEnd), then drops the first partition
            clock.advance(DAY);
            Set<Path> orphans;
            try (TestingArchiverProcess archiver = TestingArchiverProcess.start(failpoint.pointName(), tables, directory, clock.instant(), READER_GRACE, false, Optional.of(failpoint), false)) {
                archiver.awaitLine("FAILPOINT " + failpoint.pointName(), TIMEOUT);

                // stopped mid-cycle, the process still holds the table's lease: another archiver changes nothing
                long snapshot = tables.table().currentSnapshot().snapshotId();
                List<HotPartition> partitions = tables.partitions();
                ArchiveOutcome contended = cycle.archiveOnce();
                assertThat(contended.kind()).isEqualTo(Kind.LEASE_CONTENDED);
                assertThat(tables.table().currentSnapshot().snapshotId()).isEqualTo(snapshot);
                assertThat(tables.partitions()).isEqualTo(partitions);

                archiver.kill();
            }

            // what the killed run left behind is already consistent: the rows are in exactly one tier
            TieringWatermark afterCrash = TieringAudit.assertConsistent(tables, oracle);
            boolean committed = failpoint == Failpoint.AFTER_COMMIT || failpoint == Failpoint.BEFORE_DROP;
            assertThat(afterCrash).isEqualTo(TieringWatermark.of(committed ? crashedEnd : firstEnd));
            // neither partition was dropped: the first is below W, the crashed one detached at or above W (or just committed)
            assertThat(detached(tables)).containsExactly(loaded.get(0).name(), loaded.get(1).name());
            orphans = new HashSet<>(TieringAudit.parquetFilesOnDisk(tables));
            orphans.removeAll(TieringAudit.referencedFiles(tables));
            switch (failpoint) {
                case MID_STREAM -> {
                    // stopped after its first page: the file has no footer, nothing can read it as data
                    assertThat(orphans).as("files the killed run started and never finished").isNotEmpty();
                    for (Path orphan : orphans) {
                        assertThat(hasParquetFooter(orphan)).as("footer of %s", orphan).isFalse();
                    }
                }
                case AFTER_WRITE -> {
                    // complete files holding exactly the window's rows: only the missing commit keeps them from doubling it
                    List<Reading> written = new ArrayList<>();
                    for (Path orphan : orphans) {
                        written.addAll(ParquetReadings.read(orphan.toString()));
                    }
                    assertThat(sorted(written)).isEqualTo(sorted(oracle.versions(ReadingsOracle.fromRange(firstEnd, crashedEnd))));
                }
                case AFTER_DETACH, AFTER_COMMIT, BEFORE_DROP -> assertThat(orphans).isEmpty();
            }

            // recovery is the ordinary path: archive until idle, then once more after the grace to drop what is left
            clock.set(lastEnd.plus(SETTLEMENT_LAG));
            archiveUntilIdle(cycle);
            clock.advance(READER_GRACE);
            ArchiveOutcome last = cycle.archiveOnce();
            assertThat(last.kind()).isEqualTo(Kind.IDLE);

            TieringWatermark recovered = TieringAudit.assertConsistent(tables, oracle);
            assertThat(recovered).isEqualTo(TieringWatermark.of(lastEnd));
            assertThat(List.of(before, afterCrash, recovered)).isSorted();
            // every window committed exactly once, contiguous from the epoch: nothing lost, nothing doubled
            List<ArchivedRange> expected = new ArrayList<>();
            expected.add(new ArchivedRange(Instant.EPOCH, firstEnd));
            for (Instant start = firstEnd; start.isBefore(lastEnd); start = start.plus(DAY)) {
                expected.add(new ArchivedRange(start, start.plus(DAY)));
            }
            assertThat(TieringAudit.assertWatermarkHistory(tables)).isEqualTo(expected);
            assertThat(tables.partitions()).isEmpty();
            assertThat(tables.dataFiles().stream().mapToLong(DataFile::recordCount).sum()).isEqualTo(oracle.size());
            assertThat(Sets.intersection(TieringAudit.referencedFiles(tables), orphans)).as("orphans of the killed run the table references").isEmpty();
        }
    }

    /** Archives until a cycle is idle; waits out the lease of a killed session until PostgreSQL has ended it. */
    static List<ArchiveOutcome> archiveUntilIdle(ArchivalCycle cycle)
            throws Exception
    {
        List<ArchiveOutcome> outcomes = new ArrayList<>();
        Instant deadline = Instant.now().plus(TIMEOUT);
        while (true) {
            ArchiveOutcome outcome = cycle.archiveOnce();
            outcomes.add(outcome);
            assertThat(outcome.kind()).as("outcomes so far %s", outcomes).isNotEqualTo(Kind.SUPERSEDED);
            if (outcome.kind() == Kind.IDLE) {
                return outcomes;
            }
            assertThat(Instant.now()).as("archived until idle in time; outcomes %s", outcomes).isBefore(deadline);
            if (outcome.kind() == Kind.LEASE_CONTENDED) {
                Thread.sleep(20);
            }
        }
    }

    private static boolean hasParquetFooter(Path file)
            throws IOException
    {
        byte[] content = Files.readAllBytes(file);
        return content.length >= 12 && new String(content, content.length - 4, 4, US_ASCII).equals("PAR1");
    }

    private static List<Reading> sorted(List<Reading> readings)
    {
        return readings.stream().sorted(Readings.SORT_ORDER).toList();
    }

    private static List<String> detached(TestingArchiverTable tables)
            throws Exception
    {
        return tables.partitions().stream().filter(partition -> !partition.attached()).map(HotPartition::name).toList();
    }
}
