package io.meterstore.archiver.cycle;

import io.meterstore.archiver.cycle.ArchiveOutcome.Kind;
import io.meterstore.core.HotPartition;
import io.meterstore.core.InvariantCheck;
import io.meterstore.core.InvariantReport;
import io.meterstore.core.LocalFileIo;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingRules;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.ReadingsSchema;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.Readings;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import org.apache.iceberg.DataFile;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;

import static io.meterstore.core.Sql.quoteIdentifier;
import static java.util.stream.Collectors.joining;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A row written around the write path (plain JDBC, straight into a hot partition) that the write path's validation
 * refuses: the archiver refuses its window, naming the row, and changes nothing; once the row is repaired, the next
 * cycle archives the window.
 */
final class TestArchivalRefusal
{
    private static final Duration DAY = Duration.ofDays(1);
    private static final Duration SETTLEMENT_LAG = Duration.ofDays(7);
    private static final Instant FIRST_DAY = Instant.parse("2024-03-04T00:00:00Z");
    private static final Instant REFUSED_DAY = FIRST_DAY.plus(DAY);
    private static final String REFUSED_PARTITION = "readings_2024_03_05_0000";

    @Test
    void testRefusesReadingTheWritePathRefuses()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("refuses_invalid_reading")) {
            List<Reading> readings = load(tables);
            Reading valid = readings.stream().filter(reading -> reading.from().equals(REFUSED_DAY.plus(Duration.ofHours(10)))).findFirst().orElseThrow();
            // the same interval under a MaLo-ID whose check digit is wrong: no database constraint can check it
            String maloId = wrongCheckDigit(valid.maloId());
            Reading invalid = new Reading(maloId, valid.meloId(), valid.obisCode(), valid.sparte(), valid.from(), valid.to(), valid.value(), valid.unit(),
                    valid.quality(), valid.resolution(), valid.sourceKind(), valid.sourceDetail(), valid.provenance(), valid.version(), valid.versionScope(),
                    valid.recordedAt(), valid.balancingDay());
            writeAroundTheWritePath(tables, invalid);

            assertRefusedThenArchived(tables, invalid,
                    "which the write path refuses: Invalid MaLo-ID '%s': ".formatted(maloId),
                    "DELETE FROM %s WHERE malo_id = '%s'".formatted(partition(tables), maloId),
                    readings);
        }
    }

    @Test
    void testRefusesReadingBreakingReadingRules()
            throws Exception
    {
        try (TestingArchiverTable tables = TestingArchiverTable.create("refuses_reading_rules")) {
            List<Reading> readings = load(tables);
            Reading quarterHour = readings.stream().filter(reading -> reading.from().equals(REFUSED_DAY.plus(Duration.ofHours(10)))).findFirst().orElseThrow();
            assertThat(quarterHour.resolution()).isEqualTo("PT15M");
            // a correction on another grid: the hour over four stored quarter-hours, each valid alone, would count them twice
            BigInteger version = quarterHour.version().add(BigInteger.ONE);
            Reading hour = new Reading(quarterHour.maloId(), quarterHour.meloId(), quarterHour.obisCode(), quarterHour.sparte(), quarterHour.from(),
                    quarterHour.from().plus(Duration.ofHours(1)), quarterHour.value(), quarterHour.unit(), quarterHour.quality(), "PT1H", quarterHour.sourceKind(),
                    quarterHour.sourceDetail(), quarterHour.provenance(), version, quarterHour.versionScope(), quarterHour.recordedAt(), quarterHour.balancingDay());
            hour.validate();
            writeAroundTheWritePath(tables, hour);

            assertRefusedThenArchived(tables, hour,
                    "(rule %s)".formatted(ReadingRules.ONE_GRID_PER_READING),
                    "DELETE FROM %s WHERE malo_id = '%s' AND obis_code = '%s' AND version = %s".formatted(partition(tables), hour.maloId(), hour.obisCode(), version),
                    readings);
        }
    }

    /**
     * The first day archives; the second, holding {@code refused}, is refused, naming the row and {@code broken}, with
     * nothing changed in either tier; after {@code repair} the next cycle archives the window, and Iceberg holds the
     * {@code readings} loaded.
     */
    private static void assertRefusedThenArchived(TestingArchiverTable tables, Reading refused, String broken, String repair, List<Reading> readings)
            throws Exception
    {
        ArchivalCycle cycle = tables.cycle();
        tables.clock().set(REFUSED_DAY.plus(SETTLEMENT_LAG));
        assertThat(cycle.archiveOnce().kind()).isEqualTo(Kind.ARCHIVED);
        long snapshotId = tables.table().currentSnapshot().snapshotId();
        List<Reading> before = partitionRows(tables);

        tables.clock().advance(DAY);
        String key = "(malo_id '%s', obis_code '%s', \"from\" %s, version %s)"
                .formatted(refused.maloId(), refused.obisCode(), TieringWatermark.formatInstant(refused.from()), refused.version());
        String message = "Window [2024-03-05T00:00:00Z, 2024-03-06T00:00:00Z) of table 'metering.readings' is not archived: partition '%s' holds the reading %s"
                .formatted(REFUSED_PARTITION, key);
        String remedy = "Repair or delete that row in PostgreSQL partition %s; the next cycle archives the window".formatted(partition(tables));
        for (int attempt = 0; attempt < 2; attempt++) {
            assertThatThrownBy(cycle::archiveOnce)
                    .isInstanceOfSatisfying(ArchivalException.class, e -> assertThat(e.reason()).isEqualTo(ArchivalException.Reason.READING_REFUSED))
                    .hasMessageStartingWith(message)
                    .hasMessageContaining(broken)
                    .hasMessageEndingWith(remedy);
            // W where it was, no snapshot, no file left behind, the partition attached with the same rows
            assertThat(WatermarkReader.current(tables.table()).watermark()).isEqualTo(TieringWatermark.of(REFUSED_DAY));
            assertThat(tables.table().currentSnapshot().snapshotId()).isEqualTo(snapshotId);
            assertThat(tables.table().snapshots()).hasSize(1);
            assertThat(dataDirectory(tables)).containsExactlyInAnyOrderElementsOf(tables.dataFiles().stream().map(file -> LocalFileIo.path(file.location())).toList());
            HotPartition partition = tables.partitions().stream().filter(candidate -> candidate.name().equals(REFUSED_PARTITION)).findFirst().orElseThrow();
            assertThat(partition.attached()).isTrue();
            assertThat(partitionRows(tables)).isEqualTo(before);
            // the refusal is durable: the invariant check, which status and "readings$invariant" run, reports it
            try (Connection connection = tables.connect()) {
                InvariantReport report = InvariantCheck.check(tables.table(), tables.hotTier(), connection);
                assertThat(report.violations()).singleElement(InstanceOfAssertFactories.STRING)
                        .startsWith(message)
                        .contains(broken)
                        .endsWith("%s (refused by the archival cycle at %s)".formatted(remedy, TieringWatermark.formatInstant(tables.clock().instant())));
            }
        }

        try (Connection connection = tables.connect();
                Statement statement = connection.createStatement()) {
            assertThat(statement.executeUpdate(repair)).isEqualTo(1);
        }
        ArchiveOutcome outcome = cycle.archiveOnce();
        assertThat(outcome.kind()).isEqualTo(Kind.ARCHIVED);
        assertThat(outcome.window().orElseThrow().start()).isEqualTo(REFUSED_DAY);
        assertThat(outcome.watermark()).isEqualTo(TieringWatermark.of(REFUSED_DAY.plus(DAY)));
        assertThat(outcome.rows()).isEqualTo(before.size() - 1).isEqualTo(readings.stream().filter(reading -> !reading.from().isBefore(REFUSED_DAY)).count());
        assertThat(tables.dataFiles().stream().mapToLong(DataFile::recordCount).sum()).isEqualTo(readings.size());
        try (Connection connection = tables.connect()) {
            assertThat(InvariantCheck.check(tables.table(), tables.hotTier(), connection).violations()).isEmpty();
        }
    }

    /** Two closed UTC days of two meters' quarter-hours, in their own partitions. */
    private static List<Reading> load(TestingArchiverTable tables)
            throws SQLException
    {
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(11)
                .meters(2)
                .startDay(LocalDate.ofInstant(FIRST_DAY, ZoneOffset.UTC))
                .days(3)
                .correctionsFraction(0)
                .build();
        List<Reading> readings = generator.stream()
                .filter(reading -> !reading.from().isBefore(FIRST_DAY) && reading.from().isBefore(REFUSED_DAY.plus(DAY)))
                .toList();
        try (Connection connection = tables.connect()) {
            new ReadingsLoader(tables.hotTier()).load(connection, readings);
        }
        assertThat(tables.partitions()).extracting(HotPartition::name).containsExactly("readings_2024_03_04_0000", REFUSED_PARTITION);
        return readings;
    }

    /** An INSERT straight into the partition by its name, with the session's triggers off: what no MeterStore writer does. */
    private static void writeAroundTheWritePath(TestingArchiverTable tables, Reading reading)
            throws SQLException
    {
        String parameters = Collections.nCopies(ReadingsSchema.COLUMNS.size(), "?").stream().collect(joining(", "));
        try (Connection connection = tables.connect()) {
            try (Statement statement = connection.createStatement()) {
                statement.execute("SET session_replication_role = replica");
            }
            try (PreparedStatement insert = connection.prepareStatement("INSERT INTO %s (%s) VALUES (%s)".formatted(partition(tables), ReadingsSchema.postgresColumnList(), parameters))) {
                for (ReadingsColumn column : ReadingsSchema.COLUMNS) {
                    insert.setObject(column.ordinal() + 1, value(reading, column));
                }
                assertThat(insert.executeUpdate()).isEqualTo(1);
            }
        }
    }

    private static Object value(Reading reading, ReadingsColumn column)
    {
        return switch (column) {
            case MALO_ID -> reading.maloId();
            case MELO_ID -> reading.meloId().orElse(null);
            case OBIS_CODE -> reading.obisCode();
            case SPARTE -> reading.sparte().name();
            case FROM -> OffsetDateTime.ofInstant(reading.from(), ZoneOffset.UTC);
            case TO -> OffsetDateTime.ofInstant(reading.end(), ZoneOffset.UTC);
            case VALUE -> reading.value();
            case UNIT -> reading.unit().name();
            case QUALITY -> reading.quality().name();
            case RESOLUTION -> reading.resolution();
            case SOURCE_KIND -> reading.sourceKind();
            case SOURCE_DETAIL -> reading.sourceDetail().orElse(null);
            case PROVENANCE -> reading.provenance().orElse(null);
            case VERSION -> reading.version();
            case VERSION_SCOPE -> reading.versionScope();
            case RECORDED_AT -> OffsetDateTime.ofInstant(reading.recordedAt(), ZoneOffset.UTC);
            case BALANCING_DAY -> reading.balancingDay();
        };
    }

    /** The MaLo-ID with its check digit changed: eleven digits still, the first not zero. */
    private static String wrongCheckDigit(String maloId)
    {
        char check = maloId.charAt(maloId.length() - 1);
        return maloId.substring(0, maloId.length() - 1) + (char) ('0' + (check - '0' + 1) % 10);
    }

    private static String partition(TestingArchiverTable tables)
    {
        return tables.hotTier().qualifiedPartition(REFUSED_PARTITION);
    }

    private static List<Reading> partitionRows(TestingArchiverTable tables)
            throws SQLException
    {
        try (Connection connection = tables.connect()) {
            return Readings.query(connection, "SELECT %s FROM %s ORDER BY %s".formatted(Readings.selectList(), partition(tables),
                    ReadingsColumn.SORT_KEY.stream().map(column -> quoteIdentifier(column.columnName())).collect(joining(", "))));
        }
    }

    /** Every file under the table's data directory: files the current snapshot references, and any left behind. */
    private static List<Path> dataDirectory(TestingArchiverTable tables)
            throws IOException
    {
        Path data = LocalFileIo.path(tables.table().location()).resolve("data");
        if (!Files.exists(data)) {
            return List.of();
        }
        try (Stream<Path> files = Files.walk(data)) {
            return files.filter(Files::isRegularFile).filter(file -> !file.getFileName().toString().startsWith(".")).toList();
        }
    }
}
