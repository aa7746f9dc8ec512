package io.meterstore.trino;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.Streams;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.maintenance.ColdTierLayout;
import io.meterstore.archiver.maintenance.ColdTierLayout.MonthFiles;
import io.meterstore.archiver.maintenance.CompactionSettings;
import io.meterstore.archiver.maintenance.MaintenanceOutcome;
import io.meterstore.archiver.maintenance.MaintenanceSettings;
import io.meterstore.archiver.maintenance.MonthCompaction;
import io.meterstore.archiver.maintenance.MonthCompaction.Compacted;
import io.meterstore.archiver.maintenance.TableMaintenance;
import io.meterstore.core.ColdFileCheck;
import io.meterstore.core.ColdFileRole;
import io.meterstore.core.LocalFileIo;
import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.SnapshotRetention;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.parquet.ReadingsParquetSchema;
import io.meterstore.testing.Readings;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.ReadingsOracle;
import io.meterstore.testing.ReadingsOracle.MeterDay;
import io.meterstore.testing.ReadingsOracle.Totals;
import io.meterstore.testing.ReadingsOracle.View;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.meterstore.trino.base.MeterstoreMetrics;
import io.trino.parquet.AbstractParquetDataSource;
import io.trino.parquet.Column;
import io.trino.parquet.ParquetDataSourceId;
import io.trino.parquet.ParquetReaderOptions;
import io.trino.parquet.ParquetTypeUtils;
import io.trino.parquet.metadata.BlockMetadata;
import io.trino.parquet.metadata.ParquetMetadata;
import io.trino.parquet.reader.MetadataReader;
import io.trino.parquet.reader.ParquetReader;
import io.trino.parquet.reader.RowGroupInfo;
import io.trino.spi.connector.SourcePage;
import io.trino.spi.type.LongTimestampWithTimeZone;
import io.trino.testing.AbstractTestQueryFramework;
import io.trino.testing.MaterializedResult;
import io.trino.testing.MaterializedRow;
import io.trino.testing.QueryRunner;
import io.trino.testing.QueryRunner.MaterializedResultWithPlan;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.DataTask;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.ManifestFile;
import org.apache.iceberg.MetadataTableType;
import org.apache.iceberg.MetadataTableUtils;
import org.apache.iceberg.RewriteFiles;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.io.MessageColumnIO;
import org.apache.parquet.schema.MessageType;
import org.joda.time.DateTimeZone;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.LocalDate;
import java.time.YearMonth;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Predicate;

import static com.google.common.collect.MoreCollectors.onlyElement;
import static io.meterstore.testing.ReadingsOracle.all;
import static io.meterstore.testing.ReadingsOracle.fromBefore;
import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;
import static io.trino.memory.context.AggregatedMemoryContext.newSimpleAggregatedMemoryContext;
import static io.trino.parquet.metadata.PrunedBlockMetadata.createPrunedColumnsMetadata;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Month compaction end to end: after archival and a stream of late corrections (position deletes into a resolved month,
 * plain files into a month archived before the resolved layout), the archiver compacts both months into one winners
 * and one superseded file each; further corrections keep them exact and are compacted again only past the threshold;
 * expiry then deletes the replaced files. A correction INSERT racing a compaction of its month (committed between the
 * compaction's base and its commit) ends with every row exactly once. After every step both tables, AS OF and per meter
 * and day equal the oracle, and Trino's Iceberg connector and a plain Parquet read of the files agree with
 * {@code readings_versions}.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
final class TestMeterstoreCompaction
        extends AbstractTestQueryFramework
{
    // the last Berlin days of March and of April: the idle stretch between is one archival window, so few commits
    // move W to 2026-05-02, below which both months lie whole
    private static final LocalDate MARCH_START = LocalDate.of(2026, 3, 28);
    private static final LocalDate APRIL_START = LocalDate.of(2026, 4, 26);
    private static final Instant ARCHIVED_TO = Instant.parse("2026-05-02T00:00:00Z");
    private static final YearMonth MARCH = YearMonth.of(2026, 3);
    private static final YearMonth APRIL = YearMonth.of(2026, 4);
    private static final Instant FIRST_STREAM = Instant.parse("2026-05-10T08:00:00Z");
    private static final Instant SECOND_STREAM = Instant.parse("2026-05-11T08:00:00Z");
    private static final Instant RACE_STREAM = Instant.parse("2026-05-12T08:00:00Z");
    // past April's end plus the default compaction delay
    private static final Instant COMPACTION_TIME = Instant.parse("2026-06-01T00:00:00Z");
    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

    private TestingWarehouse warehouse;
    private Table table;
    private final List<Reading> delivered = new ArrayList<>();
    private final List<String> replacedByCompaction = new ArrayList<>();

    @Override
    protected QueryRunner createQueryRunner()
            throws Exception
    {
        warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("compaction"));
        table = TestingMeterstoreTables.createTables(warehouse);
        for (ReadingsGenerator generator : List.of(generator(MARCH_START, 4), generator(APRIL_START, 7))) {
            generator.forEach(delivered::add);
            try (Connection connection = warehouse.database().connect()) {
                new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, generator);
            }
        }
        while (watermark().instant().isBefore(ARCHIVED_TO)) {
            TestingArchival.archiveWindows(warehouse, 1);
        }
        // March as a table archived before the resolved layout has it: the same rows in files without a role
        rewriteAsPlainFiles(MARCH);
        return MeterstoreQueryRunner.builder(warehouse).build();
    }

    private static ReadingsGenerator generator(LocalDate start, int days)
    {
        return ReadingsGenerator.builder()
                .seed(1313)
                .meters(4)
                .startDay(start)
                .days(days)
                .correctionsFraction(0.06)
                .build();
    }

    @Test
    @Order(1)
    void testCompactionAfterLateCorrectionsResolvesBothMonths()
            throws Exception
    {
        assertThat(watermark().instant()).isEqualTo(ARCHIVED_TO);
        ReadingsOracle before = oracle();
        List<Reading> first = new ArrayList<>();
        first.addAll(corrections(before, utcDay("2026-03-29"), 5, 1_000, FIRST_STREAM));
        first.addAll(corrections(before, utcDay("2026-04-27"), 4, 1_000, FIRST_STREAM));
        first.addAll(corrections(before, utcDay("2026-04-28"), 7, -1, FIRST_STREAM));
        insert(first);
        assertThat(deleteFiles(APRIL)).isNotEmpty();
        assertMatchesOracle(List.of(FIRST_STREAM.minusSeconds(1)));
        TieringWatermark watermark = watermark();
        List<String> replaced = ImmutableList.<String>builder().addAll(locations(dataFiles(MARCH))).addAll(locations(dataFiles(APRIL))).build();

        MaintenanceOutcome outcome = maintenance(CompactionSettings.DEFAULTS, COMPACTION_TIME).compact();

        List<Compacted> compacted = outcome.compaction().orElseThrow().compacted();
        assertThat(compacted).extracting(Compacted::month).containsExactly(MARCH, APRIL);
        Compacted march = compacted.getFirst();
        Compacted april = compacted.getLast();
        assertThat(march.wasResolved()).isFalse();
        assertThat(april.wasResolved()).isTrue();
        assertThat(april.replacedDeleteFiles()).isPositive();
        assertThat(compacted).allSatisfy(month -> {
            assertThat(month.winnersFiles()).isEqualTo(1);
            assertThat(month.supersededFiles()).isEqualTo(1);
            assertThat(month.watermark()).isEqualTo(watermark);
        });
        for (YearMonth month : List.of(MARCH, APRIL)) {
            assertThat(dataFiles(month)).extracting(file -> ColdFileRole.of(file.location()).orElseThrow()).containsExactlyInAnyOrder(ColdFileRole.WINNERS, ColdFileRole.SUPERSEDED);
            assertThat(deleteFiles(month)).isEmpty();
        }
        assertThat(watermark()).isEqualTo(watermark);
        // the month archived before the layout is read from its winners alone now, as April is
        Map<String, Long> marchRead = metrics("SELECT count(*), sum(value) FROM readings WHERE " + month(MARCH));
        assertThat(marchRead.get(MeterstoreMetrics.COLD_MONTHS_RESOLVED)).isEqualTo(1);
        assertThat(marchRead.get(MeterstoreMetrics.COLD_MONTHS_RESOLVING)).isZero();
        assertMatchesOracle(List.of(FIRST_STREAM.minusSeconds(1)));
        // no engine needed: the files alone hold every version below W exactly once
        assertThat(plainParquetTotals()).isEqualTo(oracle().totalsByMeterDay(View.VERSIONS, fromBefore(watermark.instant())));
        // the replaced files stay for expiry
        assertThat(replaced).allSatisfy(location -> assertThat(Files.exists(LocalFileIo.path(location))).isTrue());
        replacedByCompaction.addAll(replaced);
    }

    @Test
    @Order(2)
    void testCorrectionsAfterCompactionAreCompactedAgainPastTheThreshold()
            throws Exception
    {
        ReadingsOracle before = oracle();
        // new versions of compacted winners: position deletes against the compacted winners file, in two commits
        insert(corrections(before, utcDay("2026-04-27"), 3, 2_000, SECOND_STREAM));
        insert(corrections(before, utcDay("2026-04-29"), 5, 1_000, SECOND_STREAM));
        assertThat(deleteFiles(APRIL)).hasSizeGreaterThan(1);
        assertThat(deleteManifests()).hasSize(2);
        assertMatchesOracle(List.of(FIRST_STREAM.minusSeconds(1), SECOND_STREAM.minusSeconds(1)));

        // below the default threshold of files from corrections: left as it is, only the corrections' manifests merged:
        // April's delete files planned from one manifest, each still added by its commit, its sequence number kept (a lower
        // one would stop hiding the superseded winners, which the oracle below would see)
        List<String> corrected = locations(dataFiles(APRIL));
        Map<String, List<Long>> deletesBefore = deleteEntries();
        MaintenanceOutcome unchanged = maintenance(CompactionSettings.DEFAULTS, COMPACTION_TIME).compact();
        assertThat(unchanged.compaction().orElseThrow().compacted()).isEmpty();
        assertThat(unchanged.rewritten().orElseThrow().replacedManifests()).isGreaterThanOrEqualTo(2);
        assertThat(locations(dataFiles(APRIL))).containsExactlyInAnyOrderElementsOf(corrected);
        assertThat(deleteManifests()).hasSize(1);
        assertMatchesOracle(List.of(FIRST_STREAM.minusSeconds(1), SECOND_STREAM.minusSeconds(1)));
        assertThat(deleteEntries()).isEqualTo(deletesBefore);

        // past a threshold of two: April alone is compacted again
        CompactionSettings eager = new CompactionSettings(CompactionSettings.DEFAULT_DELAY, CompactionSettings.DEFAULT_TARGET_FILE_SIZE_BYTES, 2);
        Compacted april = maintenance(eager, COMPACTION_TIME).compact().compaction().orElseThrow().compacted().stream().collect(onlyElement());
        assertThat(april.month()).isEqualTo(APRIL);
        assertThat(april.replacedDeleteFiles()).isPositive();
        assertThat(dataFiles(APRIL)).hasSize(2);
        assertThat(deleteFiles(APRIL)).isEmpty();
        assertMatchesOracle(List.of(FIRST_STREAM.minusSeconds(1), SECOND_STREAM.minusSeconds(1)));
    }

    @Test
    @Order(3)
    void testExpiryDeletesTheReplacedFilesAndKeepsTheAnswers()
            throws Exception
    {
        // the last window archived two hours later, and the partitions archived before dropped: their archival commits need not stay
        ArchiveOutcome archived = TestingArchival.cycle(warehouse, InstantSource.fixed(TestingArchival.LATER.plus(Duration.ofHours(2)))).archiveOnce();
        assertThat(archived.kind()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);
        assertThat(archived.droppedPartitions()).isNotEmpty();
        Set<String> live = Set.copyOf(locations(allDataFiles()));
        MaintenanceSettings settings = new MaintenanceSettings(new SnapshotRetention(Duration.ZERO, 1), Duration.ofDays(3), Duration.ofHours(1));
        table.refresh();
        Instant later = Instant.ofEpochMilli(table.currentSnapshot().timestampMillis()).plus(Duration.ofHours(2));
        MaintenanceOutcome expired = new TableMaintenance(warehouse.catalog(), TableIdentifier.of(SCHEMA, TestingMeterstoreTables.TABLE), TestingMeterstoreTables.hotTier(),
                () -> warehouse.database().connect(), settings, InstantSource.fixed(later)).expire();
        assertThat(expired.expired().orElseThrow().deletedFiles()).as(expired.describe()).isPositive();
        table.refresh();
        assertThat(ColdFileCheck.damagedFiles(table)).isEmpty();
        assertThat(Set.copyOf(locations(allDataFiles()))).isEqualTo(live);
        assertThat(replacedByCompaction).noneSatisfy(location -> assertThat(Files.exists(LocalFileIo.path(location))).isTrue());
        assertMatchesOracle(List.of(FIRST_STREAM.minusSeconds(1), SECOND_STREAM.minusSeconds(1)));
    }

    @Test
    @Order(4)
    void testCorrectionCommittedWhileItsMonthIsCompacted()
            throws Exception
    {
        // April needs compacting again (threshold one); while it is written, a correction supersedes winners of its
        // compacted file: the compaction's commit conflicts, and its second attempt reads the correction
        CompactionSettings everyFile = new CompactionSettings(CompactionSettings.DEFAULT_DELAY, CompactionSettings.DEFAULT_TARGET_FILE_SIZE_BYTES, 1);
        insert(corrections(oracle(), utcDay("2026-04-27"), 6, 1_000, RACE_STREAM));
        List<Reading> racing = corrections(oracle(), utcDay("2026-04-28"), 5, 1_000, RACE_STREAM.plusSeconds(1));
        Compacted conflicting = raceCompaction(everyFile, racing);
        assertThat(conflicting.attempts()).isEqualTo(2);
        assertThat(deleteFiles(APRIL)).isEmpty();
        assertMatchesOracle(List.of(SECOND_STREAM.minusSeconds(1), RACE_STREAM));

        // older versions delivered late add superseded rows and delete nothing: the compaction commits beside them
        insert(corrections(oracle(), utcDay("2026-04-29"), 6, 1_000, RACE_STREAM.plusSeconds(2)));
        List<Reading> losing = corrections(oracle(), utcDay("2026-04-30"), 5, -1, RACE_STREAM.plusSeconds(3));
        Compacted beside = raceCompaction(everyFile, losing);
        assertThat(beside.attempts()).isEqualTo(1);
        assertThat(dataFiles(APRIL)).hasSize(3);
        assertMatchesOracle(List.of(RACE_STREAM.plusSeconds(2)));
    }

    @Test
    @Order(5)
    void testMonthWhoseCorrectionsStoppedIsCompactedOnceMore()
            throws Exception
    {
        // April gained one file from a correction since its last compaction, far below the threshold of files
        table.refresh();
        MonthFiles april = ColdTierLayout.of(table).months().get(APRIL);
        assertThat(april.filesSinceCompaction()).isEqualTo(1);
        Instant corrected = Streams.stream(table.snapshots())
                .filter(snapshot -> snapshot.sequenceNumber() == april.newestFileSequence())
                .map(snapshot -> Instant.ofEpochMilli(snapshot.timestampMillis()))
                .collect(onlyElement());
        // within the compaction delay of that correction more may come: April is left as it is
        Instant settled = corrected.plus(CompactionSettings.DEFAULT_DELAY);
        assertThat(maintenance(CompactionSettings.DEFAULTS, settled.minusSeconds(1)).compact().compaction().orElseThrow().compacted()).isEmpty();
        assertThat(dataFiles(APRIL)).hasSize(3);

        // the delay after it the month's corrections have stopped: rewritten once more, one winners and one superseded file
        Compacted once = maintenance(CompactionSettings.DEFAULTS, settled).compact().compaction().orElseThrow().compacted().stream().collect(onlyElement());
        assertThat(once.month()).isEqualTo(APRIL);
        assertThat(once.replacedDataFiles()).isEqualTo(3);
        assertThat(dataFiles(APRIL)).extracting(file -> ColdFileRole.of(file.location()).orElseThrow()).containsExactlyInAnyOrder(ColdFileRole.WINNERS, ColdFileRole.SUPERSEDED);
        assertMatchesOracle(List.of(RACE_STREAM.plusSeconds(2)));
        // and it stays so: nothing gained since
        assertThat(maintenance(CompactionSettings.DEFAULTS, settled.plus(Duration.ofDays(60))).compact().compaction().orElseThrow().compacted()).isEmpty();
    }

    private Compacted raceCompaction(CompactionSettings settings, List<Reading> racing)
            throws Exception
    {
        List<Boolean> raced = new ArrayList<>();
        TableMaintenance maintenance = new TableMaintenance(warehouse.catalog(), TableIdentifier.of(SCHEMA, TestingMeterstoreTables.TABLE), TestingMeterstoreTables.hotTier(),
                () -> warehouse.database().connect(), new MaintenanceSettings(SnapshotRetention.DEFAULT, Duration.ofDays(3), Duration.ofHours(1), settings),
                InstantSource.fixed(COMPACTION_TIME),
                () -> {
                    if (raced.isEmpty()) {
                        raced.add(true);
                        try {
                            insert(racing);
                        }
                        catch (SQLException e) {
                            throw new RuntimeException(e);
                        }
                    }
                });
        Compacted compacted = maintenance.compact().compaction().orElseThrow().compacted().stream().collect(onlyElement());
        assertThat(raced).containsExactly(true);
        assertThat(compacted.month()).isEqualTo(APRIL);
        return compacted;
    }

    private void assertMatchesOracle(List<Instant> knownAt)
    {
        ReadingsOracle oracle = oracle();
        Instant watermark = watermark().instant();
        for (View view : View.values()) {
            String relation = view == View.VERSIONS ? "readings_versions" : "readings";
            assertThat(totalsByMeterDay(relation)).as(relation + " per meter and day").isEqualTo(oracle.totalsByMeterDay(view, all()));
        }
        for (Instant instant : knownAt) {
            ReadingsOracle known = oracle.asKnownAt(instant);
            String asOf = " FOR TIMESTAMP AS OF " + literal(instant);
            assertThat(totalsByMeterDay("readings_versions" + asOf)).as("readings_versions as of %s", instant).isEqualTo(known.totalsByMeterDay(View.VERSIONS, all()));
            assertThat(totalsByMeterDay("readings" + asOf)).as("readings as of %s", instant).isEqualTo(known.totalsByMeterDay(View.RESOLVED, all()));
        }
        // the winners as the ROW_NUMBER definition has them, every column
        String rowNumber = """
                SELECT malo_id, melo_id, obis_code, sparte, "from", "to", value, unit, quality, resolution, source_kind, source_detail,
                       provenance, version, version_scope, recorded_at, balancing_day
                FROM (SELECT *, row_number() OVER (PARTITION BY malo_id, obis_code, "from", version_scope ORDER BY version DESC, recorded_at DESC) AS rank
                      FROM readings_versions)
                WHERE rank = 1""";
        assertQueryReturnsEmptyResult("SELECT * FROM readings EXCEPT " + rowNumber);
        assertQueryReturnsEmptyResult(rowNumber + " EXCEPT SELECT * FROM readings");
        // Trino's Iceberg connector reads exactly the cold rows of readings_versions, each once
        String cold = "SELECT * FROM meterstore.metering.readings_versions WHERE \"from\" < " + literal(watermark);
        assertQueryReturnsEmptyResult("SELECT * FROM iceberg.metering.readings EXCEPT " + cold);
        assertQueryReturnsEmptyResult(cold + " EXCEPT SELECT * FROM iceberg.metering.readings");
        assertThat(computeActual("SELECT count(*) FROM iceberg.metering.readings").getOnlyValue()).isEqualTo(oracle.count(View.VERSIONS, fromBefore(watermark)));
    }

    /** Every cold row by meter and Berlin day, read from the data files with a plain Parquet reader, none of them deleted. */
    private SortedMap<MeterDay, Totals> plainParquetTotals()
            throws IOException
    {
        assertThat(allDeleteFiles()).isEmpty();
        SortedMap<MeterDay, Totals> totals = new TreeMap<>();
        for (DataFile file : allDataFiles()) {
            readPlain(LocalFileIo.path(file.location()), (maloId, from, value) -> totals.merge(
                    new MeterDay(maloId, from.atZone(BERLIN).toLocalDate()),
                    new Totals(1, value),
                    (left, right) -> new Totals(left.count() + right.count(), left.sum().add(right.sum()))));
        }
        return totals;
    }

    /**
     * New versions of every {@code every}-th winner matching {@code filter}: {@code versionStep} above the winner's
     * version, or, when negative, below it (an older version delivered late, which loses), recorded at {@code recordedAt}.
     */
    private static List<Reading> corrections(ReadingsOracle oracle, Predicate<Reading> filter, int every, long versionStep, Instant recordedAt)
    {
        List<Reading> winners = oracle.resolved(filter).stream().sorted(Readings.SORT_ORDER).toList();
        List<Reading> corrections = new ArrayList<>();
        for (int index = 0; index < winners.size(); index += every) {
            Reading winner = winners.get(index);
            corrections.add(new Reading(winner.maloId(), winner.meloId(), winner.obisCode(), winner.sparte(), winner.from(), winner.to(),
                    winner.value().add(new BigDecimal("0.125")), winner.unit(), Quality.CORRECTED, winner.resolution(), "MANUAL_ENTRY",
                    winner.sourceDetail(), winner.provenance(), winner.version().add(BigInteger.valueOf(versionStep)), winner.versionScope(), recordedAt, winner.balancingDay()));
        }
        return corrections;
    }

    /** Late corrections through the Trino JDBC driver, as production delivers them. */
    private void insert(List<Reading> readings)
            throws SQLException
    {
        try (Connection connection = DriverManager.getConnection("jdbc:trino://%s/meterstore/metering".formatted(getDistributedQueryRunner().getCoordinator().getAddress()), "stream", null);
                Statement statement = connection.createStatement()) {
            assertThat(statement.executeUpdate(TestingInserts.insertAsRecorded(readings))).isEqualTo(readings.size());
        }
        delivered.addAll(readings);
    }

    private TableMaintenance maintenance(CompactionSettings compaction, Instant now)
    {
        return new TableMaintenance(warehouse.catalog(), TableIdentifier.of(SCHEMA, TestingMeterstoreTables.TABLE), TestingMeterstoreTables.hotTier(),
                () -> warehouse.database().connect(), new MaintenanceSettings(SnapshotRetention.DEFAULT, Duration.ofDays(3), Duration.ofHours(1), compaction), InstantSource.fixed(now));
    }

    private Map<String, Long> metrics(String sql)
    {
        MaterializedResultWithPlan result = getDistributedQueryRunner().executeWithPlan(getSession(), sql);
        return TestingPlans.connectorCounts(getDistributedQueryRunner(), result);
    }

    private ReadingsOracle oracle()
    {
        return ReadingsOracle.of(delivered);
    }

    private TieringWatermark watermark()
    {
        table.refresh();
        return WatermarkReader.current(table).watermark();
    }

    private SortedMap<MeterDay, Totals> totalsByMeterDay(String relation)
    {
        MaterializedResult result = computeActual("""
                SELECT malo_id, CAST(date("from" AT TIME ZONE 'Europe/Berlin') AS varchar), count(*), sum(value)
                FROM %s GROUP BY 1, 2""".formatted(relation));
        SortedMap<MeterDay, Totals> totals = new TreeMap<>();
        for (MaterializedRow row : result.getMaterializedRows()) {
            totals.put(new MeterDay((String) row.getField(0), LocalDate.parse((String) row.getField(1))), new Totals((long) row.getField(2), ((BigDecimal) row.getField(3)).setScale(6)));
        }
        return totals;
    }

    private static String month(YearMonth month)
    {
        return "\"from\" >= %s AND \"from\" < %s".formatted(
                literal(month.atDay(1).atStartOfDay().toInstant(ZoneOffset.UTC)),
                literal(month.plusMonths(1).atDay(1).atStartOfDay().toInstant(ZoneOffset.UTC)));
    }

    private static String literal(Instant instant)
    {
        return TestingInserts.timestamp(instant);
    }

    private static Predicate<Reading> utcDay(String day)
    {
        Instant start = LocalDate.parse(day).atStartOfDay().toInstant(ZoneOffset.UTC);
        return reading -> !reading.from().isBefore(start) && reading.from().isBefore(start.plus(Duration.ofDays(1)));
    }

    private List<FileScanTask> tasks()
    {
        table.refresh();
        List<FileScanTask> tasks = new ArrayList<>();
        try (CloseableIterable<FileScanTask> planned = table.newScan().planFiles()) {
            planned.forEach(tasks::add);
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return tasks;
    }

    private List<DataFile> allDataFiles()
    {
        return tasks().stream().map(FileScanTask::file).toList();
    }

    private List<DeleteFile> allDeleteFiles()
    {
        return tasks().stream().flatMap(task -> task.deletes().stream()).toList();
    }

    private List<ManifestFile> deleteManifests()
    {
        table.refresh();
        return table.currentSnapshot().deleteManifests(table.io());
    }

    /** Each live delete file with the snapshot that added it and its data and file sequence numbers, from Iceberg's entries table. */
    private Map<String, List<Long>> deleteEntries()
    {
        table.refresh();
        Map<String, List<Long>> entries = new TreeMap<>();
        try (CloseableIterable<FileScanTask> tasks = MetadataTableUtils.createMetadataTableInstance(table, MetadataTableType.ENTRIES).newScan().planFiles()) {
            for (FileScanTask task : tasks) {
                try (CloseableIterable<StructLike> rows = ((DataTask) task).rows()) {
                    // status, snapshot_id, sequence_number, file_sequence_number, data_file (content, file_path, ...)
                    for (StructLike row : rows) {
                        StructLike file = row.get(4, StructLike.class);
                        if (row.get(0, Integer.class) != 2 && file.get(0, Integer.class) != 0) {
                            entries.put(file.get(1, CharSequence.class).toString(), List.of(row.get(1, Long.class), row.get(2, Long.class), row.get(3, Long.class)));
                        }
                    }
                }
            }
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return entries;
    }

    private List<DataFile> dataFiles(YearMonth month)
    {
        return tasks().stream().map(FileScanTask::file).filter(file -> ColdTierLayout.month(file).equals(month)).toList();
    }

    private List<DeleteFile> deleteFiles(YearMonth month)
    {
        return tasks().stream().filter(task -> ColdTierLayout.month(task.file()).equals(month)).flatMap(task -> task.deletes().stream()).distinct().toList();
    }

    private static List<String> locations(List<DataFile> files)
    {
        return files.stream().map(DataFile::location).toList();
    }

    /** Replaces every file of {@code month} by a copy under a plain name, as a table archived before the resolved layout holds it. */
    private void rewriteAsPlainFiles(YearMonth month)
            throws IOException
    {
        RewriteFiles rewrite = table.newRewrite();
        for (DataFile original : dataFiles(month)) {
            Path source = LocalFileIo.path(original.location());
            Path target = source.resolveSibling(source.getFileName().toString().replaceAll("\\.(winners|superseded)\\.parquet$", "-$1-plain.parquet"));
            Files.copy(source, target);
            rewrite.deleteFile(original);
            rewrite.addFile(DataFiles.builder(table.spec()).copy(original).withPath(target.toUri().toString()).build());
        }
        rewrite.set(TieringWatermark.WATERMARK_KEY, watermark().toProperty())
                .set(TieringWatermark.ROW_COUNT_KEY, "0")
                .commit();
        assertThat(dataFiles(month)).allSatisfy(file -> assertThat(ColdFileRole.of(file.location())).isEmpty());
    }

    private interface PlainRow
    {
        void accept(String maloId, Instant from, BigDecimal value);
    }

    /** malo_id, "from" and value of every row of a Parquet file, read with Trino's Parquet reader and nothing of Iceberg. */
    private static void readPlain(Path path, PlainRow consumer)
            throws IOException
    {
        try (RandomAccessFile file = new RandomAccessFile(path.toFile(), "r");
                AbstractParquetDataSource source = new AbstractParquetDataSource(new ParquetDataSourceId(path.toString()), file.length(), ParquetReaderOptions.defaultOptions())
                {
                    @Override
                    protected void readInternal(long position, byte[] buffer, int bufferOffset, int bufferLength)
                            throws IOException
                    {
                        file.seek(position);
                        file.readFully(buffer, bufferOffset, bufferLength);
                    }
                }) {
            ParquetMetadata metadata = MetadataReader.readFooter(source, Optional.empty());
            MessageType schema = metadata.getFileMetaData().getSchema();
            MessageColumnIO columnIO = ParquetTypeUtils.getColumnIO(schema, schema);
            List<Column> columns = new ArrayList<>();
            for (ReadingsColumn column : List.of(ReadingsColumn.MALO_ID, ReadingsColumn.FROM, ReadingsColumn.VALUE)) {
                columns.add(new Column(column.columnName(), ParquetTypeUtils.constructField(ReadingsParquetSchema.trinoType(column.kind()), ParquetTypeUtils.lookupColumnByName(columnIO, column.columnName())).orElseThrow()));
            }
            Map<List<String>, ColumnDescriptor> descriptors = ParquetTypeUtils.getDescriptors(schema, schema);
            List<RowGroupInfo> rowGroups = new ArrayList<>();
            long rowOffset = 0;
            for (BlockMetadata block : metadata.getBlocks()) {
                rowGroups.add(new RowGroupInfo(createPrunedColumnsMetadata(block, source.getId(), descriptors), rowOffset, Optional.empty()));
                rowOffset += block.rowCount();
            }
            try (ParquetReader reader = new ParquetReader(Optional.ofNullable(metadata.getFileMetaData().getCreatedBy()), columns, false, rowGroups, source, DateTimeZone.UTC,
                    newSimpleAggregatedMemoryContext(), ParquetReaderOptions.defaultOptions(), RuntimeException::new, Optional.empty(), Optional.empty(), Optional.empty())) {
                for (SourcePage page = reader.nextPage(); page != null; page = reader.nextPage()) {
                    for (int position = 0; position < page.getPositionCount(); position++) {
                        LongTimestampWithTimeZone from = (LongTimestampWithTimeZone) ReadingsParquetSchema.TIMESTAMP_TZ_MICROS.getObject(page.getBlock(1), position);
                        consumer.accept(
                                VARCHAR.getSlice(page.getBlock(0), position).toStringUtf8(),
                                Instant.ofEpochMilli(from.getEpochMillis()).plusNanos(from.getPicosOfMilli() / 1_000),
                                BigDecimal.valueOf(ReadingsParquetSchema.QUANTITY.getLong(page.getBlock(2), position), ReadingsParquetSchema.QUANTITY.getScale()));
                    }
                }
            }
        }
    }
}
