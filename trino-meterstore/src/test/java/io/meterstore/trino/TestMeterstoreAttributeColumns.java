package io.meterstore.trino;

import com.google.common.collect.ImmutableMap;
import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchivalSettings;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.maintenance.CompactionSettings;
import io.meterstore.archiver.maintenance.MaintenanceOutcome;
import io.meterstore.archiver.maintenance.MaintenanceSettings;
import io.meterstore.archiver.maintenance.MonthCompaction.Compacted;
import io.meterstore.archiver.maintenance.TableMaintenance;
import io.meterstore.core.ColdFileRole;
import io.meterstore.core.HotTier;
import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.SnapshotRetention;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsInserts;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.meterstore.trino.base.MeterstoreErrorCode;
import io.trino.testing.DistributedQueryRunner;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.LocalDate;
import java.time.YearMonth;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;
import static io.trino.spi.StandardErrorCode.INVALID_TABLE_PROPERTY;
import static io.trino.spi.StandardErrorCode.NOT_SUPPORTED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS;

/**
 * Attribute columns end to end, through the Trino JDBC driver: a table created with two varchar columns after the
 * readings columns stores them in both tiers; rows INSERTed with values and a correction (a higher version) carrying
 * others show the winner's values in the hot tier, then, after archival, in the cold tier, every version's in
 * {@code T_versions} and the old values AS OF an instant before the correction; a late correction below W carries its
 * values (and the winner it supersedes keeps its own); month compaction keeps them; a DELETE erasure removes the erased
 * meter's and rewrites the files without losing the other meter's. Trino's Iceberg connector reads the same values from
 * the files, and so does DuckDB. Declarations that disagree, or columns that cannot be attribute columns, are refused
 * with nothing created.
 */
@TestInstance(PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
final class TestMeterstoreAttributeColumns
{
    private static final String TABLE = "vertraege";
    private static final String TABLES = TABLE + ",refused";
    private static final String HMAC_KEY = "attribute-columns-test-key-0123456789";
    private static final String READINGS_COLUMNS = """
            malo_id varchar NOT NULL, melo_id varchar, obis_code varchar NOT NULL, sparte varchar NOT NULL,
             "from" timestamp(6) with time zone NOT NULL, "to" timestamp(6) with time zone NOT NULL, value decimal(18,6) NOT NULL,
             unit varchar NOT NULL, quality varchar NOT NULL, resolution varchar NOT NULL, source_kind varchar NOT NULL,
             source_detail varchar, provenance varchar, version decimal(20,0) NOT NULL, version_scope varchar NOT NULL,
             recorded_at timestamp(6) with time zone, balancing_day date""";
    // the originals are learned at T1, the corrections at T2, the late corrections at T3
    private static final Instant T1 = Instant.parse("2026-04-03T06:00:00Z");
    private static final Instant T2 = Instant.parse("2026-04-04T06:00:00Z");
    private static final Instant T3 = Instant.parse("2026-04-20T06:00:00Z");
    // the archived days lie below it, March whole: a month W has passed can be compacted
    private static final Instant ARCHIVED_TO = Instant.parse("2026-04-02T00:00:00Z");
    private static final Instant COMPACTION_TIME = Instant.parse("2026-05-01T00:00:00Z");
    private static final String WINNERS = "SELECT malo_id, to_unixtime(\"from\"), version, value, contract_ref, source_system FROM %s ORDER BY malo_id, \"from\", version";

    private TestingWarehouse warehouse;
    private DistributedQueryRunner queryRunner;
    private TestingClient client;
    private final HotTier hotTier = new HotTier(SCHEMA, new PartitionNaming(TABLE, PartitionNaming.DEFAULT_STEP), Duration.ofSeconds(5));
    // every version written so far, with its attribute values: what the table must show
    private final List<Reading> written = new ArrayList<>();

    /** A row as the queries select it: the key, the version, the value and the two attribute columns. */
    private record Row(String maloId, Instant from, BigInteger version, BigDecimal value, Optional<String> contractRef, Optional<String> sourceSystem)
    {
        static Row of(Reading reading)
        {
            return new Row(reading.maloId(), reading.from(), reading.version(), reading.value().setScale(6), reading.attributes().get(0), reading.attributes().get(1));
        }
    }

    @BeforeAll
    void setUp()
            throws Exception
    {
        warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("attribute_columns"));
        queryRunner = MeterstoreQueryRunner.builder(warehouse)
                .withCatalogOverrides(ImmutableMap.of("meterstore.tables", TABLES, "meterstore.erasure.hmac-key", HMAC_KEY))
                .build();
        client = new TestingClient(queryRunner, warehouse, "attribute_columns");
        // catalogues whose meterstore.tables entry declares the attribute columns: as the table stores them, and in another order
        Map<String, String> agreeing = new HashMap<>(MeterstoreQueryRunner.catalogProperties(warehouse));
        agreeing.put("meterstore.tables", TABLE + "(attribute_columns=contract_ref source_system)");
        queryRunner.createCatalog("agreeing", "meterstore", agreeing);
        Map<String, String> disagreeing = new HashMap<>(MeterstoreQueryRunner.catalogProperties(warehouse));
        disagreeing.put("meterstore.tables", TABLE + "(attribute_columns=source_system contract_ref)");
        queryRunner.createCatalog("disagreeing", "meterstore", disagreeing);
    }

    @AfterAll
    void tearDown()
    {
        if (queryRunner != null) {
            queryRunner.close();
        }
    }

    @Test
    @Order(1)
    void testColumnsThatCannotBeAttributeColumnsCreateNothing()
            throws Exception
    {
        assertRefused("CREATE TABLE refused (%s, contract_ref varchar) WITH (attribute_columns = ARRAY['contract_ref', 'source_system'])".formatted(READINGS_COLUMNS), INVALID_TABLE_PROPERTY.toErrorCode().getCode(),
                "CREATE TABLE 'metering.refused' declares attribute_columns ARRAY['contract_ref','source_system'], but its column list has the columns ARRAY['contract_ref'] after the readings columns: 'source_system' is not a column of the list (add 'source_system varchar' after the readings columns)");
        assertRefused("CREATE TABLE refused (%s, contract_ref varchar, source_system varchar) WITH (attribute_columns = ARRAY['source_system', 'contract_ref'])".formatted(READINGS_COLUMNS), INVALID_TABLE_PROPERTY.toErrorCode().getCode(),
                "its column list has the columns ARRAY['contract_ref','source_system'] after the readings columns: they are in another order");
        assertRefused("CREATE TABLE refused (%s) WITH (attribute_columns = ARRAY['contract_ref'])".formatted(READINGS_COLUMNS), INVALID_TABLE_PROPERTY.toErrorCode().getCode(),
                "its column list has no columns after the readings columns: 'contract_ref' is not a column of the list");
        assertRefused("CREATE TABLE refused (%s, contract_ref varchar, source_system varchar) WITH (attribute_columns = ARRAY[])".formatted(READINGS_COLUMNS), INVALID_TABLE_PROPERTY.toErrorCode().getCode(),
                "column 'contract_ref' is not named in attribute_columns, column 'source_system' is not named in attribute_columns");
        assertRefused("CREATE TABLE refused (%s, contract_ref integer)".formatted(READINGS_COLUMNS), NOT_SUPPORTED.toErrorCode().getCode(),
                "CREATE TABLE 'metering.refused' declares an attribute column MeterStore cannot store: column 'contract_ref' is integer, but a column after the readings columns is an attribute column, which is varchar");
        assertRefused("CREATE TABLE refused (%s, contract_ref varchar(20))".formatted(READINGS_COLUMNS), NOT_SUPPORTED.toErrorCode().getCode(),
                "column 'contract_ref' is varchar(20), but a column after the readings columns is an attribute column, which is varchar (without a length");
        assertRefused("CREATE TABLE refused (%s, contract_ref varchar NOT NULL)".formatted(READINGS_COLUMNS), NOT_SUPPORTED.toErrorCode().getCode(),
                "attribute column 'contract_ref' is declared NOT NULL, but attribute columns are nullable");
        assertRefused("CREATE TABLE refused (%s, superseded_at varchar)".formatted(READINGS_COLUMNS), INVALID_TABLE_PROPERTY.toErrorCode().getCode(),
                "Column 'superseded_at' of identity_columns or attribute_columns is a name PostgreSQL or MeterStore's hot tier keeps for itself");
        // an identity column declared after an attribute column
        assertRefused("CREATE TABLE refused (%s, contract_ref varchar, tenant varchar) WITH (identity_columns = ARRAY['tenant'])".formatted(READINGS_COLUMNS), INVALID_TABLE_PROPERTY.toErrorCode().getCode(),
                "CREATE TABLE 'metering.refused' declares identity_columns [tenant], but its column list has [contract_ref, tenant] after the readings columns: declare each identity column as '<name> varchar' right after the readings columns");
        client.assertNothingCreated("refused");
    }

    @Test
    @Order(2)
    void testCreateTableStoresThemInBothTiers()
            throws Exception
    {
        client.execute("CREATE TABLE %s (%s, contract_ref varchar, source_system varchar) WITH (attribute_columns = ARRAY['contract_ref', 'source_system'])".formatted(TABLE, READINGS_COLUMNS));

        // Iceberg: optional strings with the field ids after the readings columns' 17
        Table table = icebergTable();
        assertThat(table.schema().columns()).hasSize(19);
        assertThat(table.schema().findField(18)).isEqualTo(Types.NestedField.optional(18, "contract_ref", Types.StringType.get()));
        assertThat(table.schema().findField(19)).isEqualTo(Types.NestedField.optional(19, "source_system", Types.StringType.get()));
        assertThat(table.properties()).containsEntry("meterstore.attribute-columns", "contract_ref,source_system");
        // PostgreSQL: nullable text after the readings columns, in the parent the partitions inherit from
        assertThat(client.postgres("""
                SELECT string_agg(column_name || ' ' || data_type || ' ' || is_nullable || ' ' || ordinal_position, ', ' ORDER BY ordinal_position)
                FROM information_schema.columns WHERE table_schema = 'metering' AND table_name = 'vertraege' AND ordinal_position > 17"""))
                .isEqualTo("contract_ref text YES 18, source_system text YES 19, superseded_at timestamp with time zone YES 20");
        assertThat((String) client.postgres("SELECT obj_description('metering.vertraege'::regclass, 'pg_class')")).contains("attribute_columns=contract_ref,source_system");

        // what Trino shows
        for (String name : List.of(TABLE, TABLE + "_versions")) {
            assertThat(column("DESCRIBE " + name, 1)).as(name).endsWith("balancing_day", "contract_ref", "source_system").hasSize(19);
            assertThat(column("SELECT data_type FROM information_schema.columns WHERE table_schema = 'metering' AND table_name = '%s' AND ordinal_position > 17 ORDER BY ordinal_position".formatted(name), 1))
                    .containsExactly("varchar", "varchar");
        }
        try (Connection connection = client.connect(); ResultSet columns = connection.getMetaData().getColumns("meterstore", "metering", TABLE, null)) {
            List<String> names = new ArrayList<>();
            while (columns.next()) {
                names.add(columns.getString("COLUMN_NAME"));
            }
            assertThat(names).hasSize(19).endsWith("contract_ref", "source_system");
        }
        assertThat((String) client.value("SHOW CREATE TABLE " + TABLE)).contains("contract_ref varchar", "source_system varchar", "attribute_columns = ARRAY['contract_ref','source_system']");
        assertThat(client.value("SELECT value FROM \"%s$config\" WHERE setting = 'attribute_columns'".formatted(TABLE))).isEqualTo("contract_ref,source_system");
        // a catalogue declaring them as stored serves the table; one declaring another order is refused naming both
        assertThat(client.value("SELECT count(*) FROM agreeing.metering." + TABLE)).isEqualTo(0L);
        assertRefused("SELECT count(*) FROM disagreeing.metering." + TABLE, MeterstoreErrorCode.METERSTORE_TABLE_SHAPE_MISMATCH.toErrorCode().getCode(),
                "Table 'metering.vertraege' stores attribute_columns 'contract_ref,source_system', but meterstore.tables's entry 'vertraege' of the catalogue declares attribute_columns 'source_system,contract_ref'");
    }

    @Test
    @Order(3)
    void testHotTierCarriesTheWinnersValues()
            throws Exception
    {
        List<Reading> originals = new ArrayList<>();
        // the first two hours of two March days and of an April day, whose partition takes W past March's end
        Map<String, Integer> perMeterDay = new HashMap<>();
        for (ReadingsGenerator generator : List.of(generator(LocalDate.of(2026, 3, 25), 2), generator(LocalDate.of(2026, 4, 2), 1))) {
            generator.forEach(reading -> {
                if (perMeterDay.merge(reading.maloId() + "@" + reading.balancingDay(), 1, Integer::sum) <= 8) {
                    originals.add(version(reading, reading.version(), reading.value(), T1, "V-%s-2026".formatted(meter(reading)), meter(reading) == 0 ? "MSCONS-GW" : null));
                }
            });
        }
        assertThat(originals).hasSize(48);
        insert(originals);
        // a correction of every fourth interval, with another contract and source
        List<Reading> corrections = new ArrayList<>();
        for (int index = 0; index < originals.size(); index += 4) {
            Reading original = originals.get(index);
            corrections.add(version(original, original.version().add(BigInteger.ONE), original.value().add(new BigDecimal("0.125")), T2, "V-%s-2026-K".formatted(meter(original)), "MANUAL"));
        }
        insert(corrections);

        assertMatches("hot");
        // the statement's own rows are compared as its payload: a redelivery with another value of an attribute column
        // is refused, one with the same values skipped
        Reading correction = corrections.getFirst();
        Reading changed = version(correction, correction.version(), correction.value(), T2, "V-other", "MANUAL");
        assertRefused(insertSql(List.of(changed)), MeterstoreErrorCode.METERSTORE_CONFLICTING_REDELIVERY.toErrorCode().getCode(),
                "was already written with different values (contract_ref V-%s-2026-K, now V-other)".formatted(meter(correction)));
        client.execute(insertSql(List.of(correction)));
        assertThat(client.value("SELECT count(*) FROM %s_versions".formatted(TABLE))).isEqualTo((long) written.size());
        assertThat(client.postgres("SELECT count(*) FROM metering.vertraege WHERE contract_ref LIKE '%-K' AND source_system = 'MANUAL'")).isEqualTo((long) corrections.size());

        // a predicate on an attribute column is applied to the winners, as any other column's
        long meterZeroCorrected = corrections.stream().filter(reading -> meter(reading) == 0).count();
        assertThat(client.value("SELECT count(*) FROM %s WHERE contract_ref = 'V-0-2026-K'".formatted(TABLE))).isEqualTo(meterZeroCorrected);
        assertThat(client.value("SELECT count(*) FROM %s WHERE source_system IS NULL".formatted(TABLE))).isEqualTo(originals.stream().filter(reading -> meter(reading) == 1).count() - corrections.stream().filter(reading -> meter(reading) == 1).count());
        // an aggregation of the hot tier, grouped by an attribute column or not reading one, pushed into PostgreSQL
        assertThat(client.value("SELECT count(*) FROM %s WHERE contract_ref LIKE '%%-K' GROUP BY contract_ref HAVING contract_ref = 'V-1-2026-K'".formatted(TABLE)))
                .isEqualTo(corrections.size() - meterZeroCorrected);
        assertThat((BigDecimal) client.value("SELECT sum(value) FROM " + TABLE)).isEqualByComparingTo(winners(Instant.MAX).stream().map(Row::value).reduce(BigDecimal.ZERO, BigDecimal::add));
        // the resolution rule "T$resolution" publishes for other engines selects them too: the winner's values
        String resolution = (String) client.value("SELECT value FROM \"%s$resolution\" WHERE setting = 'resolution_sql'".formatted(TABLE));
        assertThat(resolution).contains("balancing_day, contract_ref, source_system FROM");
        assertThat(rows(WINNERS.formatted("(%s)".formatted(resolution)))).isEqualTo(winners(Instant.MAX));
    }

    @Test
    @Order(4)
    void testArchivalCarriesThemIntoTheColdTier()
            throws Exception
    {
        ArchivalCycle cycle = new ArchivalCycle(warehouse.catalog(), TableIdentifier.of(SCHEMA, TABLE), hotTier, () -> warehouse.database().connect(), ArchivalSettings.DEFAULTS,
                InstantSource.fixed(TestingArchival.LATER));
        while (watermark().isBefore(ARCHIVED_TO)) {
            ArchiveOutcome outcome = cycle.archiveOnce();
            assertThat(outcome.kind()).as(outcome.describe()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);
        }
        assertThat(watermark()).isEqualTo(ARCHIVED_TO);
        assertThat(client.value("SELECT count(*) FROM %s_versions WHERE \"$tier\" = 'hot'".formatted(TABLE))).isEqualTo(0L);

        assertMatches("cold");
        assertMatchesIcebergConnector();
    }

    @Test
    @Order(5)
    void testLateCorrectionBelowTheWatermarkCarriesItsValues()
            throws Exception
    {
        // the winners of every sixth interval, corrected or not, corrected again in the cold tier
        List<Row> winners = winners(Instant.MAX);
        List<Reading> late = new ArrayList<>();
        for (int index = 1; index < winners.size(); index += 6) {
            Row winner = winners.get(index);
            Reading stored = written.stream().filter(reading -> Row.of(reading).equals(winner)).findFirst().orElseThrow();
            late.add(version(stored, stored.version().add(BigInteger.TEN), stored.value().add(new BigDecimal("1.5")), T3, "V-%s-2026-N".formatted(meter(stored)), null));
        }
        insert(late);
        assertThat(client.value("SELECT count(*) FROM %s_versions WHERE \"$tier\" = 'hot'".formatted(TABLE))).isEqualTo(0L);
        assertThat(deleteFiles()).as("the superseded winners are deleted by position from their winners files").isPositive();

        assertMatches("cold");
        assertMatchesIcebergConnector();
    }

    @Test
    @Order(6)
    void testCompactionKeepsThem()
            throws Exception
    {
        List<Row> versions = rows(WINNERS.formatted(TABLE + "_versions"));
        MaintenanceOutcome outcome = new TableMaintenance(warehouse.catalog(), TableIdentifier.of(SCHEMA, TABLE), hotTier, () -> warehouse.database().connect(),
                new MaintenanceSettings(SnapshotRetention.DEFAULT, Duration.ofDays(3), Duration.ofHours(1), CompactionSettings.DEFAULTS), InstantSource.fixed(COMPACTION_TIME))
                .compact();
        List<Compacted> compacted = outcome.compaction().orElseThrow().compacted();
        // March, below W whole, into one winners and one superseded file, the late corrections' deletes applied
        assertThat(compacted).extracting(Compacted::month).containsExactly(YearMonth.of(2026, 3));
        assertThat(compacted.getFirst().replacedDeleteFiles()).isPositive();
        assertThat(compacted.getFirst().winnersFiles()).isEqualTo(1);

        assertThat(rows(WINNERS.formatted(TABLE + "_versions"))).isEqualTo(versions);
        assertMatches("cold");
        assertMatchesIcebergConnector();
    }

    /**
     * DuckDB reads the current snapshot's data files (its own Parquet reader, by column name) and its position delete
     * files, which it applies as Iceberg's readers do (a row goes when a delete file names its file and position): the
     * state after compaction, whose April still has the late correction's delete. Its rows equal {@code T_versions}'
     * cold rows, attribute values included.
     */
    @Test
    @Order(7)
    void testAnotherEngineReadsTheSameValuesFromTheFiles()
            throws Exception
    {
        TestingDuckDb.FileRows files = TestingDuckDb.currentRows(icebergTable());
        assertThat(files.deleteFiles()).as("a state with position deletes, applied here").isPositive();
        List<Row> rows = files.rows().stream()
                .map(row -> new Row(
                        (String) row.get("malo_id"),
                        (Instant) row.get("from"),
                        ((BigDecimal) row.get("version")).toBigIntegerExact(),
                        (BigDecimal) row.get("value"),
                        Optional.ofNullable((String) row.get("contract_ref")),
                        Optional.ofNullable((String) row.get("source_system"))))
                .toList();
        List<Row> cold = rows(WINNERS.formatted(TABLE + "_versions WHERE \"$tier\" = 'cold'"));
        assertThat(cold).hasSize(written.size());
        assertThat(sorted(rows)).isEqualTo(cold);
    }

    @Test
    @Order(8)
    void testErasureRemovesThemAndKeepsTheOtherMetersValues()
            throws Exception
    {
        // a day of meter 1 above W too: the erasure removes its rows from both tiers
        Reading hot = version(written.stream().filter(reading -> meter(reading) == 1).findFirst().orElseThrow(), BigInteger.valueOf(42), new BigDecimal("0.5"), T3, "V-1-2026-H", "MSCONS-GW");
        Reading hotRow = shifted(hot, Duration.ofDays(20));
        insert(List.of(hotRow));
        assertThat(client.value("SELECT count(*) FROM %s_versions WHERE \"$tier\" = 'hot'".formatted(TABLE))).isEqualTo(1L);

        String erased = ReadingsGenerator.maloId(1);
        long rows = written.stream().filter(reading -> reading.maloId().equals(erased)).count();
        assertThat(client.update("DELETE FROM %s_versions WHERE malo_id = '%s'".formatted(TABLE, erased))).isEqualTo(rows);
        written.removeIf(reading -> reading.maloId().equals(erased));

        assertThat(client.value("SELECT count(*) FROM %s_versions WHERE malo_id = '%s'".formatted(TABLE, erased))).isEqualTo(0L);
        assertThat(client.value("SELECT count(*) FROM iceberg.metering.%s WHERE malo_id = '%s'".formatted(TABLE, erased))).isEqualTo(0L);
        assertThat(client.postgres("SELECT count(*) FROM metering.vertraege WHERE contract_ref LIKE 'V-1-%'")).isEqualTo(0L);
        // the rewritten files keep meter 0's rows whole, its attribute values too
        assertThat(written).isNotEmpty();
        assertMatches("cold");
        assertMatchesIcebergConnector();
    }

    // ---- expectations

    /** Asserts both tables, and each AS OF every instant a version was learned at, against what was written. */
    private void assertMatches(String tier)
            throws SQLException
    {
        assertThat(rows(WINNERS.formatted(TABLE + "_versions"))).isEqualTo(sorted(written.stream().map(Row::of).toList()));
        assertThat(rows(WINNERS.formatted(TABLE))).isEqualTo(winners(Instant.MAX));
        for (Instant knownAt : List.of(T1.plusSeconds(60), T2.plusSeconds(60), T3.plusSeconds(60))) {
            String asOf = "%s FOR TIMESTAMP AS OF %s".formatted(TABLE, ReadingsInserts.timestamp(knownAt));
            assertThat(rows(WINNERS.formatted(asOf))).as("AS OF %s", knownAt).isEqualTo(winners(knownAt));
        }
        List<String> tiers = column("SELECT DISTINCT \"$tier\" FROM %s WHERE \"from\" < %s".formatted(TABLE, ReadingsInserts.timestamp(ARCHIVED_TO)), 1);
        assertThat(tiers).containsExactly(tier);
        // the hidden columns beside the attribute columns: the W the query was planned against
        assertThat(column("SELECT DISTINCT to_unixtime(\"$watermark\"), contract_ref IS NULL FROM %s_versions".formatted(TABLE), 1))
                .containsOnly(String.valueOf((double) watermark().getEpochSecond()));
    }

    /** Asserts what Trino's Iceberg connector reads from the files (position deletes applied) against the cold rows. */
    private void assertMatchesIcebergConnector()
            throws SQLException
    {
        List<Row> cold = sorted(written.stream().filter(reading -> reading.from().isBefore(watermark())).map(Row::of).toList());
        assertThat(rows(WINNERS.formatted("iceberg.metering." + TABLE))).isEqualTo(cold);
    }

    /** The winner of every key among the versions learned by {@code knownAt}. */
    private List<Row> winners(Instant knownAt)
    {
        Map<String, Reading> winners = new LinkedHashMap<>();
        for (Reading reading : written) {
            if (reading.recordedAt().isAfter(knownAt)) {
                continue;
            }
            winners.merge(reading.maloId() + "@" + reading.from(), reading, (left, right) -> left.version().compareTo(right.version()) >= 0 ? left : right);
        }
        return sorted(winners.values().stream().map(Row::of).toList());
    }

    private static List<Row> sorted(List<Row> rows)
    {
        return rows.stream().sorted(Comparator.comparing(Row::maloId).thenComparing(Row::from).thenComparing(Row::version)).toList();
    }

    private static ReadingsGenerator generator(LocalDate start, int days)
    {
        return ReadingsGenerator.builder().seed(3131).meters(2).startDay(start).days(days).correctionsFraction(0).build();
    }

    private static int meter(Reading reading)
    {
        return reading.maloId().equals(ReadingsGenerator.maloId(0)) ? 0 : 1;
    }

    /** {@code base} as another version: its value, learned at {@code recordedAt}, with the attribute values given. */
    private static Reading version(Reading base, BigInteger version, BigDecimal value, Instant recordedAt, String contractRef, String sourceSystem)
    {
        return new Reading(base.maloId(), base.meloId(), base.obisCode(), base.sparte(), base.from(), base.to(), value, base.unit(),
                version.equals(base.version()) ? base.quality() : Quality.CORRECTED, base.resolution(), base.sourceKind(), base.sourceDetail(), base.provenance(),
                version, base.versionScope(), recordedAt, base.balancingDay(), List.of(Optional.ofNullable(contractRef), Optional.ofNullable(sourceSystem)));
    }

    private static Reading shifted(Reading reading, Duration by)
    {
        Instant from = reading.from().plus(by);
        return new Reading(reading.maloId(), reading.meloId(), reading.obisCode(), reading.sparte(), from, reading.to().map(to -> to.plus(by)), reading.value(), reading.unit(),
                reading.quality(), reading.resolution(), reading.sourceKind(), reading.sourceDetail(), reading.provenance(), reading.version(),
                Reading.versionScope(ReadingsGenerator.DEFAULT_OPERATOR_ID, reading.sparte(), from), reading.recordedAt(),
                MeteringCalendar.balancingDay(reading.sparte(), from), reading.attributes());
    }

    private void insert(List<Reading> readings)
            throws SQLException
    {
        assertThat(client.update(insertSql(readings))).isEqualTo(readings.size());
        written.addAll(readings);
    }

    private static String insertSql(List<Reading> readings)
    {
        return ReadingsInserts.insertAsRecorded(readings).replaceFirst("INSERT INTO readings_versions", "INSERT INTO %s_versions".formatted(TABLE));
    }

    // ---- the tiers

    private Table icebergTable()
    {
        return warehouse.catalog().loadTable(TableIdentifier.of(SCHEMA, TABLE));
    }

    private Instant watermark()
    {
        return WatermarkReader.current(icebergTable()).watermark().instant();
    }

    private long deleteFiles()
    {
        Table table = icebergTable();
        long deletes = 0;
        try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
            for (FileScanTask task : tasks) {
                deletes += task.deletes().size();
                assertThat(ColdFileRole.of(task.file().location())).isPresent();
            }
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return deletes;
    }

    // ---- SQL through the Trino JDBC driver

    private List<Row> rows(String sql)
            throws SQLException
    {
        List<Row> rows = new ArrayList<>();
        try (Connection connection = client.connect(); Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            while (result.next()) {
                rows.add(new Row(
                        result.getString(1),
                        Instant.ofEpochSecond((long) result.getDouble(2)),
                        result.getBigDecimal(3).toBigIntegerExact(),
                        result.getBigDecimal(4).setScale(6),
                        Optional.ofNullable(result.getString(5)),
                        Optional.ofNullable(result.getString(6))));
            }
        }
        return rows;
    }

    private List<String> column(String sql, int column)
            throws SQLException
    {
        List<String> values = new ArrayList<>();
        try (Connection connection = client.connect(); Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            while (result.next()) {
                values.add(result.getString(column));
            }
        }
        return values;
    }

    private void assertRefused(String sql, int errorCode, String message)
    {
        assertThatThrownBy(() -> client.execute(sql))
                .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).as(e.getMessage()).isEqualTo(errorCode))
                .hasMessageContaining(message);
    }





}
