package io.meterstore.benchmark;

import io.airlift.log.Logger;
import io.meterstore.core.CorrectionCommitter;
import io.meterstore.core.TieringWatermark;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;

import static com.google.common.base.Preconditions.checkState;
import static java.util.Objects.requireNonNull;

/**
 * The late corrections of R1L and R3L, as production sees them after archival: for each of the last
 * {@link BenchmarkSettings#STREAM_DAYS} archived days, one INSERT through Trino of new versions of 2 % of the intervals
 * of a day 5 to 40 days before it (never before the dataset's first day). Each new version is the current winner's
 * version plus one, recorded when the statement runs. Afterwards the Iceberg table is rolled back to the snapshot
 * before the stream, so the kept dataset stays the one its marker describes; only cold days are corrected, so
 * PostgreSQL is untouched.
 */
final class LateCorrectionStream
{
    private static final Logger log = Logger.get(LateCorrectionStream.class);
    private static final DateTimeFormatter LITERAL = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneOffset.UTC);
    private static final String INSERT = """
            INSERT INTO meterstore.metering.readings_versions
            SELECT malo_id, melo_id, obis_code, sparte, "from", "to", CAST(value + DECIMAL '0.001' AS decimal(18, 6)), unit, 'CORRECTED', resolution, 'MANUAL_ENTRY',
                   '{"stream":"R1L","statement":%1$s}', provenance, CAST(version + 1 AS decimal(20, 0)), version_scope, NULL, balancing_day
            FROM meterstore.metering.readings
            WHERE "from" >= TIMESTAMP '%2$s UTC' AND "from" < TIMESTAMP '%3$s UTC'
              AND mod(from_big_endian_64(xxhash64(to_utf8(malo_id || obis_code || CAST(to_unixtime("from") AS varchar) || '%1$s'))), 50) = 0""";

    /** What the stream did: the statements, their rows and times, and the snapshot to roll back to. */
    record Applied(long snapshotBefore, List<LocalDate> correctedDays, List<Long> rows, List<Long> nanos)
    {
        long totalRows()
        {
            return rows.stream().mapToLong(Long::longValue).sum();
        }

        String describe()
        {
            return "%s INSERT statements through Trino (one per archived day, each correcting 2%% of the intervals of a day 5 to 40 days before it: %s), %,d new versions in all; statement times median %s, total %s."
                    .formatted(rows.size(), correctedDays, totalRows(),
                            BenchmarkReport.figure(Medians.seconds(Math.round(Medians.median(nanos))), BenchmarkResult.Unit.SECONDS),
                            BenchmarkReport.figure(Medians.seconds(nanos.stream().mapToLong(Long::longValue).sum()), BenchmarkResult.Unit.SECONDS));
        }
    }

    private LateCorrectionStream() {}

    static Applied apply(Connection trino, Table table, BenchmarkSettings settings, TieringWatermark watermark)
            throws SQLException
    {
        requireNonNull(trino, "trino is null");
        table.refresh();
        long snapshotBefore = table.currentSnapshot().snapshotId();
        LocalDate first = BenchmarkSettings.START_DAY;
        LocalDate end = LocalDate.ofInstant(watermark.instant(), ZoneOffset.UTC);
        int days = Math.min(BenchmarkSettings.STREAM_DAYS, (int) (end.toEpochDay() - first.toEpochDay()));
        // the same days on every run, so runs compare
        Random random = new Random(BenchmarkSettings.SEED);
        List<LocalDate> corrected = new ArrayList<>();
        List<Long> rows = new ArrayList<>();
        List<Long> nanos = new ArrayList<>();
        for (int statement = 0; statement < days; statement++) {
            LocalDate today = end.minusDays(days - statement);
            LocalDate day = today.minusDays(5 + random.nextInt(36));
            if (day.isBefore(first)) {
                day = first;
            }
            Instant from = day.atStartOfDay().toInstant(ZoneOffset.UTC);
            String sql = INSERT.formatted(statement, LITERAL.format(from), LITERAL.format(from.plus(Duration.ofDays(1))));
            long start = System.nanoTime();
            long inserted;
            try (Statement insert = trino.createStatement()) {
                inserted = insert.executeLargeUpdate(sql);
            }
            nanos.add(System.nanoTime() - start);
            rows.add(inserted);
            corrected.add(day);
            log.info("Late corrections %s of %s: %s new versions of %s in %.1f s", statement + 1, days, inserted, day, (nanos.getLast()) / 1e9);
        }
        return new Applied(snapshotBefore, corrected, rows, nanos);
    }

    /** Makes the snapshot before the stream current again: the stream's commits stay in the history, no longer read. */
    static void rollBack(Table table, Applied applied)
    {
        table.refresh();
        table.manageSnapshots().rollbackTo(applied.snapshotBefore()).commit();
        log.info("Rolled back the late-correction stream to snapshot %s", applied.snapshotBefore());
    }

    /**
     * Rolls back a stream a run left behind (killed before its own roll-back): the current snapshot of a kept dataset
     * is its last archival commit, which records the archived range, or E1's last erasure after it. An erasure is never
     * rolled back: that would bring the erased meter's cold rows back while its audit row says they are gone.
     */
    static void rollBackLeftOver(Table table)
    {
        table.refresh();
        Snapshot current = table.currentSnapshot();
        Optional<Snapshot> archival = Optional.ofNullable(current);
        while (archival.isPresent() && !keeps(archival.get())) {
            Long parent = archival.get().parentId();
            archival = Optional.ofNullable(parent).map(table::snapshot);
        }
        if (current == null || archival.isEmpty() || archival.get().snapshotId() == current.snapshotId()) {
            return;
        }
        checkState(archival.isPresent(), "No archival commit in the history of the kept dataset");
        log.info("The kept dataset carries late corrections of an interrupted run: rolling back to snapshot %s", archival.get().snapshotId());
        table.manageSnapshots().rollbackTo(archival.get().snapshotId()).commit();
    }

    /** Whether a commit is part of the kept dataset: an archival commit, or an erasure (E1's, which is for good). */
    private static boolean keeps(Snapshot snapshot)
    {
        return snapshot.summary().containsKey(TieringWatermark.ARCHIVED_RANGE_KEY) || snapshot.summary().containsKey(CorrectionCommitter.ERASURE_KEY);
    }
}
