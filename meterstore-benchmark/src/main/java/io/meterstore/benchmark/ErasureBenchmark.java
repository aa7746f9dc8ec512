package io.meterstore.benchmark;

import com.google.common.collect.ImmutableSet;
import io.airlift.log.Logger;
import io.meterstore.benchmark.BenchmarkResult.Comparison;
import io.meterstore.benchmark.BenchmarkResult.Target;
import io.meterstore.benchmark.BenchmarkResult.Unit;
import io.meterstore.core.ErasureLog;
import io.meterstore.core.ErasureLog.Erasure;
import io.meterstore.core.ErasureLog.Trigger;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.SnapshotSummary;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

import static com.google.common.base.Preconditions.checkState;
import static java.util.Objects.requireNonNull;

/**
 * E1 (issue 16): one meter erased from the kept dataset by {@code DELETE FROM readings_versions WHERE malo_id = ?}
 * through Trino's JDBC driver, timed once; the rows it removed per tier (its audit row, against the meter's rows before),
 * what the cold tier rewrote (the Iceberg commit the audit row names), and the checks that make the time worth
 * reporting: the meter is gone from both tables and from each tier, and a second meter's totals are unchanged.
 * <p>
 * No peer: Trino's Iceberg connector deleting from the same table would commit to MeterStore's table. An erasure
 * changes the kept dataset for good, so the meter is one no other row reads, and it is recorded in the dataset's
 * marker before the DELETE runs ({@link BenchmarkDataset#recordErasure}); the next run erases another.
 */
final class ErasureBenchmark
{
    static final String ID = "E1";
    /** What the benchmark engine's audit trail records malo_ids under; a benchmark's key, not a secret. */
    static final String HMAC_KEY = "meterstore-benchmark-erasure-key-not-a-secret";
    private static final Logger log = Logger.get(ErasureBenchmark.class);
    private static final String TITLE = "erase one meter (DELETE ... WHERE malo_id = ?)";
    private static final String LABEL = "DELETE through Trino";
    private static final Target TARGET = Target.reported("reported: no peer");
    private static final String DELETE = "DELETE FROM meterstore.metering.readings_versions WHERE malo_id = ?";
    private static final DateTimeFormatter LITERAL = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneOffset.UTC);

    private final BenchmarkSettings settings;
    private final BenchmarkDataset dataset;
    private final Supplier<Connection> trinoConnections;
    private final Connection trino;

    /**
     * @param trinoConnections opens the JDBC connection of today's ingestion, measured beside the DELETE
     * @param trino a connection of the benchmark's own, for the DELETE and the checks
     */
    ErasureBenchmark(BenchmarkSettings settings, BenchmarkDataset dataset, Supplier<Connection> trinoConnections, Connection trino)
    {
        this.settings = requireNonNull(settings, "settings is null");
        this.dataset = requireNonNull(dataset, "dataset is null");
        this.trinoConnections = requireNonNull(trinoConnections, "trinoConnections is null");
        this.trino = requireNonNull(trino, "trino is null");
    }

    /** The meter E1 erases and the one whose totals must stay; neither read by another row, neither erased before. */
    record Meters(String erased, String control)
    {
        Meters
        {
            requireNonNull(erased, "erased is null");
            requireNonNull(control, "control is null");
        }
    }

    /**
     * The last two meters of the id range that no other row reads alone or in a list (Q2, Q4, R1L, R3, R3L, Q6, D1) and
     * that no earlier run erased. D1's correction writer picks any meter, but copies its rows from {@code readings}: an
     * erased meter gives it nothing to write.
     */
    static Meters pick(List<String> maloIds, Collection<String> erased)
    {
        Set<String> taken = ImmutableSet.<String>builder()
                .add(QueryBenchmark.oneMeter(maloIds))
                .addAll(QueryBenchmark.hundredMeters(maloIds))
                .addAll(DashboardBenchmark.meters(maloIds))
                .addAll(erased)
                .build();
        List<String> free = maloIds.reversed().stream().filter(id -> !taken.contains(id)).limit(2).toList();
        checkState(free.size() == 2, "E1 has erased every meter no other row reads (%s erased): delete the dataset's directory to make it again", erased.size());
        return new Meters(free.get(0), free.get(1));
    }

    private record Totals(long rows, long coldRows, String sum)
    {
        String describe()
        {
            return "%,d rows (%,d below W), sum %s".formatted(rows, coldRows, sum);
        }
    }

    BenchmarkResult run()
    {
        try {
            return erase();
        }
        catch (Exception e) {
            log.error(e, "E1 failed");
            return BenchmarkResult.failed(ID, TITLE, LABEL, "none", Unit.SECONDS, TARGET, e);
        }
    }

    private BenchmarkResult erase()
            throws Exception
    {
        Table table = dataset.warehouse().catalog().loadTable(TableIdentifier.of(BenchmarkDataset.SCHEMA, BenchmarkDataset.TABLE));
        TieringWatermark watermark = WatermarkReader.current(table).watermark();
        Meters meters = pick(dataset.generator().maloIds(), dataset.erasedMeters());
        log.info("E1: erasing meter %s (control %s)", meters.erased(), meters.control());

        Totals erasedVersions = versions(meters.erased(), watermark);
        Totals erasedReadings = readings(meters.erased(), watermark);
        long erasedIceberg = count("SELECT count(*) FROM iceberg.metering.readings WHERE malo_id = '%s'".formatted(meters.erased()));
        Totals controlVersions = versions(meters.control(), watermark);
        Totals controlReadings = readings(meters.control(), watermark);
        checkState(erasedVersions.rows() > 0, "Meter %s has no rows in the dataset", meters.erased());
        long erasuresBefore = erasures().size();
        long snapshotBefore = table.currentSnapshot().snapshotId();

        dataset.recordErasure(meters.erased());
        // today's ingestion beside it, as W1 measures it beside an archival cycle; the stream's rows are dropped afterwards
        IngestionStream stream = new IngestionStream(settings, dataset, trinoConnections, Set.of(meters.erased(), meters.control()));
        IngestionStream.Beside<Long> ingestion;
        try {
            ingestion = stream.beside(() -> {
                try (PreparedStatement delete = trino.prepareStatement(DELETE)) {
                    delete.setString(1, meters.erased());
                    return delete.executeLargeUpdate();
                }
            });
        }
        finally {
            stream.dropCreated();
        }
        long nanos = ingestion.eventNanos();
        long deleted = ingestion.event();
        log.info("E1: DELETE removed %s rows in %.1f s", deleted, nanos / 1e9);

        List<Erasure> after = erasures();
        checkState(after.size() == erasuresBefore + 1, "The DELETE recorded %s audit rows, not one", after.size() - erasuresBefore);
        Erasure erasure = after.stream().max(Comparator.comparingLong(Erasure::erasureId)).orElseThrow();
        table.refresh();
        Optional<Snapshot> commit = erasure.recorded().snapshotId().map(table::snapshot);

        List<String> failures = new ArrayList<>();
        check(failures, deleted == erasedVersions.rows(), "the DELETE's update count %s equals the meter's %s rows in readings_versions before it", deleted, erasedVersions.rows());
        check(failures, erasure.recorded().trigger() == Trigger.REQUEST && erasure.recorded().rowsRemovedCold() == erasedVersions.coldRows(),
                "the audit row's cold rows %s equal the meter's %s rows below W", erasure.recorded().rowsRemovedCold(), erasedVersions.coldRows());
        check(failures, erasure.recorded().rowsRemovedHot() == erasedVersions.rows() - erasedVersions.coldRows(),
                "the audit row's hot rows %s equal the meter's %s rows at or above W", erasure.recorded().rowsRemovedHot(), erasedVersions.rows() - erasedVersions.coldRows());
        check(failures, commit.isPresent() == (erasedVersions.coldRows() > 0) && commit.map(snapshot -> snapshot.parentId() != null && snapshot.parentId() == snapshotBefore).orElse(true),
                "the audit row names the one Iceberg commit the DELETE added (%s, on %s)", erasure.recorded().snapshotId().map(String::valueOf).orElse("none"), snapshotBefore);
        Totals goneVersions = versions(meters.erased(), watermark);
        Totals goneReadings = readings(meters.erased(), watermark);
        long goneIceberg = count("SELECT count(*) FROM iceberg.metering.readings WHERE malo_id = '%s'".formatted(meters.erased()));
        long gonePostgres = postgresCount(meters.erased());
        check(failures, goneVersions.rows() == 0 && goneReadings.rows() == 0, "the meter is gone from readings_versions (%s rows left) and readings (%s)", goneVersions.rows(), goneReadings.rows());
        check(failures, goneIceberg == 0 && gonePostgres == 0, "the meter is gone from each tier: Trino's Iceberg connector over the current snapshot (%s rows left), PostgreSQL's partitions (%s)", goneIceberg, gonePostgres);
        Totals controlVersionsAfter = versions(meters.control(), watermark);
        Totals controlReadingsAfter = readings(meters.control(), watermark);
        check(failures, controlVersionsAfter.equals(controlVersions) && controlReadingsAfter.equals(controlReadings),
                "meter %s's totals are unchanged: readings_versions %s, then %s; readings %s, then %s",
                meters.control(), controlVersions.describe(), controlVersionsAfter.describe(), controlReadings.describe(), controlReadingsAfter.describe());

        List<String> details = new ArrayList<>();
        details.add("""
                Meter %s erased from the kept dataset (erased by E1 runs so far, oldest first, as the dataset's marker records them: %s), timed once through Trino's JDBC driver, as a prepared statement:

                ```sql
                %s
                ```

                Before it the meter had %s in `readings_versions` (W %s) and %s in `readings`; %,d rows in Trino's Iceberg connector's view of the current snapshot."""
                .formatted(meters.erased(), String.join(", ", dataset.erasedMeters()), DELETE, erasedVersions.describe(), TieringWatermark.formatInstant(watermark.instant()),
                        erasedReadings.describe(), erasedIceberg));
        details.add("Rows removed (audit row #%s of `\"readings$erasures\"`): %,d from PostgreSQL, %,d from Iceberg; the DELETE reported %,d."
                .formatted(erasure.erasureId(), erasure.recorded().rowsRemovedHot(), erasure.recorded().rowsRemovedCold(), deleted));
        details.add(commit.map(ErasureBenchmark::rewritten).orElse("The cold tier held no row of the meter: nothing rewritten."));
        details.add(ingestion.describe("the DELETE") + ingestion.error().map(error -> " **" + error + "**").orElse(" No INSERT failed."));
        details.add("Checks, all after the DELETE: %s."
                .formatted(failures.isEmpty() ? "the update count and the audit row's rows per tier equal the meter's rows before it; the meter is gone from `readings_versions`, `readings`, Trino's Iceberg connector over the current snapshot and PostgreSQL's partitions; control meter %s's count and sum in both tables are unchanged (%s)"
                        .formatted(meters.control(), controlVersions.describe()) : "**failed**: " + String.join("; ", failures)));
        details.add("No peer, so no ratio: Trino's Iceberg connector would erase by `DELETE FROM iceberg.metering.readings WHERE malo_id = ?`, a commit to MeterStore's own table (without W in its summary, the hot tier or an audit row), so it is not run on the live table; a copy of the table for it would have to be made per run. "
                + "The erasure is not made physical here (the archiver's `expire` does that after the reader grace): the files it replaced stay in the warehouse, referenced by the snapshots before it, so each E1 run leaves one more copy of every file it rewrote.");
        return BenchmarkResult.reported(ID, TITLE, LABEL, Unit.SECONDS, Medians.seconds(nanos), TARGET, failures.isEmpty() ? Comparison.SAME_RESULT : Comparison.MISMATCH, details);
    }

    /** What the erasure's commit replaced and wrote, as its summary records it. */
    private static String rewritten(Snapshot commit)
    {
        Map<String, String> summary = commit.summary();
        long totalBefore = number(summary, SnapshotSummary.TOTAL_DATA_FILES_PROP) - number(summary, SnapshotSummary.ADDED_FILES_PROP) + number(summary, SnapshotSummary.DELETED_FILES_PROP);
        return "Cold tier: Iceberg commit %s (`%s`) replaced %,d of the table's %,d data files and %,d delete files (%,d bytes, every one read whole) by %,d rewritten data files (%,d bytes, %,d rows; %,d rows went in, %,d were erased)."
                .formatted(commit.snapshotId(), commit.operation(), number(summary, SnapshotSummary.DELETED_FILES_PROP), totalBefore, number(summary, SnapshotSummary.REMOVED_DELETE_FILES_PROP),
                        number(summary, SnapshotSummary.REMOVED_FILE_SIZE_PROP), number(summary, SnapshotSummary.ADDED_FILES_PROP), number(summary, SnapshotSummary.ADDED_FILE_SIZE_PROP),
                        number(summary, SnapshotSummary.ADDED_RECORDS_PROP), number(summary, SnapshotSummary.DELETED_RECORDS_PROP),
                        number(summary, SnapshotSummary.DELETED_RECORDS_PROP) - number(summary, SnapshotSummary.ADDED_RECORDS_PROP));
    }

    private static long number(Map<String, String> summary, String key)
    {
        return Long.parseLong(summary.getOrDefault(key, "0"));
    }

    private Totals versions(String maloId, TieringWatermark watermark)
            throws SQLException
    {
        return totals("readings_versions", maloId, watermark);
    }

    private Totals readings(String maloId, TieringWatermark watermark)
            throws SQLException
    {
        return totals("readings", maloId, watermark);
    }

    private Totals totals(String table, String maloId, TieringWatermark watermark)
            throws SQLException
    {
        List<String> row = single("SELECT count(*), count_if(\"from\" < TIMESTAMP '%s UTC'), sum(value) FROM meterstore.metering.%s WHERE malo_id = '%s'"
                .formatted(LITERAL.format(watermark.instant()), table, maloId));
        return new Totals(Long.parseLong(row.get(0)), Long.parseLong(row.get(1)), row.get(2));
    }

    private long count(String sql)
            throws SQLException
    {
        return Long.parseLong(single(sql).getFirst());
    }

    private List<String> single(String sql)
            throws SQLException
    {
        List<List<String>> rows = new TimedQuery("meterstore", trino, sql).execute().rows();
        checkState(rows.size() == 1, "Expected one row from %s, got %s", sql, rows.size());
        return rows.getFirst();
    }

    private long postgresCount(String maloId)
            throws SQLException
    {
        try (Connection connection = dataset.database().connect();
                PreparedStatement statement = connection.prepareStatement("SELECT count(*) FROM %s.%s WHERE malo_id = ?".formatted(BenchmarkDataset.SCHEMA, BenchmarkDataset.TABLE))) {
            statement.setString(1, maloId);
            try (ResultSet result = statement.executeQuery()) {
                checkState(result.next());
                return result.getLong(1);
            }
        }
    }

    private List<Erasure> erasures()
            throws SQLException
    {
        try (Connection connection = dataset.database().connect()) {
            if (!ErasureLog.exists(connection, BenchmarkDataset.SCHEMA)) {
                return List.of();
            }
            return ErasureLog.erasures(connection, BenchmarkDataset.SCHEMA, BenchmarkDataset.TABLE);
        }
    }

    private static void check(List<String> failures, boolean held, String what, Object... arguments)
    {
        if (!held) {
            failures.add(what.formatted(arguments));
        }
    }
}
