package io.meterstore.trino;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import io.meterstore.archiver.cli.ArchiverCli;
import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchivalSettings;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.archiver.maintenance.CompactionSettings;
import io.meterstore.archiver.maintenance.MaintenanceOutcome;
import io.meterstore.archiver.maintenance.MaintenanceSettings;
import io.meterstore.archiver.maintenance.MonthCompaction.Compacted;
import io.meterstore.archiver.maintenance.RetentionPeriod;
import io.meterstore.archiver.maintenance.TableMaintenance;
import io.meterstore.core.ColdPartitions;
import io.meterstore.core.HotTier;
import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingRules;
import io.meterstore.core.SnapshotRetention;
import io.meterstore.core.TableShape;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.Sparte;
import io.meterstore.core.Sparte.MeasurementUnit;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsInserts;
import io.meterstore.testing.ReadingsOracle;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.meterstore.trino.base.MeterstoreErrorCode;
import io.meterstore.trino.base.MeterstoreMetrics;
import io.trino.testing.DistributedQueryRunner;
import io.trino.testing.QueryRunner.MaterializedResultWithPlan;
import org.apache.iceberg.DeleteFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
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
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS;

/**
 * The merge key following the table's shape, through the Trino JDBC driver: a table with a {@code tenant} identity
 * column (and an attribute column checked as EIC:Y, {@code grid_area}) keeps two tenants' readings of one (malo_id,
 * obis_code, "from") apart, both counted, a correction within one tenant superseding only that tenant's, through INSERT,
 * archival, a late correction below W, compaction and a DELETE erasure, in {@code T}, {@code T_versions} and AS OF; a
 * MeLo-keyed interval table, and a point table (keyed by melo_id by default, also through archival, a late correction,
 * compaction and erasure), keep two metering locations under one market location apart. A row without its tenant, or
 * without its melo_id in a MeLo-keyed table, is refused with nothing written. Each answer is compared with the versions
 * written, resolved per key as the shape declares it by {@link ReadingsOracle}; after each step below W, DuckDB (reading
 * the files) and Trino's Iceberg connector read the same cold rows as {@code T_versions}, every column. The archiver's
 * retention sweep over a table with a tenant and an attribute column and over a point table removes exactly the month
 * past the retention from both tiers, every column of the rows it keeps (both tenants', both MeLos', the attribute's
 * NULL, "to" NULL, a hot day) read back as before, one audit row each in {@code "T$erasures"}, and a second sweep
 * changes nothing. {@code meter_completeness} counts per reading of the key: a row per MeLo of a point table (cold
 * January, hot April) and of an interval table, and per tenant, the key's column after malo_id. The rules between
 * versions judge each tenant's and each MeLo's versions apart, and a refusal names the whole reading (tenant 'a',
 * melo_id '...'); pairs of rows stored before the rules are listed by {@code bin/archiver create} per tenant and
 * reported by {@code "T$invariant"} until their own rows are repaired.
 */
@TestInstance(PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
final class TestMeterstoreMergeKeys
{
    private static final String TENANTS = "mandanten";
    private static final String METERING_POINTS = "messlokationen";
    private static final String REGISTERS = "staende";
    private static final String CONTRACTS = "vertraege";
    private static final String RETAINED_REGISTERS = "zaehlerstaende";
    private static final String SECOND_OPERATOR_ID = "9900000000010";
    private static final String HMAC_KEY = "merge-keys-test-key-0123456789abcdef";
    private static final String READINGS_COLUMNS = """
            malo_id varchar NOT NULL, melo_id varchar, obis_code varchar NOT NULL, sparte varchar NOT NULL,
             "from" timestamp(6) with time zone NOT NULL, "to" timestamp(6) with time zone, value decimal(18,6) NOT NULL,
             unit varchar NOT NULL, quality varchar NOT NULL, resolution varchar NOT NULL, source_kind varchar NOT NULL,
             source_detail varchar, provenance varchar, version decimal(20,0) NOT NULL, version_scope varchar NOT NULL,
             recorded_at timestamp(6) with time zone, balancing_day date""";
    private static final String MELO_A = "DE0001234500000000000000000000001";
    private static final String MELO_B = "DE0001234500000000000000000000002";
    private static final String MELO_C = "DE0001234500000000000000000000003";
    // tenant a's grid area, Amprion's control area, in the checked column (EIC:Y); tenant b's is NULL
    private static final String GRID_AREA = "10YDE-RWENET---I";
    private static final Instant T1 = Instant.parse("2026-04-03T06:00:00Z");
    private static final Instant T2 = Instant.parse("2026-04-04T06:00:00Z");
    private static final Instant T3 = Instant.parse("2026-04-20T06:00:00Z");
    // the hot hour of the MeLo-keyed table's rules and completeness
    private static final Instant METERING_POINTS_HOUR = Instant.parse("2026-04-10T08:00:00Z");
    private static final Instant ARCHIVED_TO = Instant.parse("2026-04-02T00:00:00Z");
    private static final Instant COMPACTION_TIME = Instant.parse("2026-05-01T00:00:00Z");
    // with a retention of 1y in June 2027 the settlement years up to 2025 are past: the UTC months up to November 2025 go,
    // December's holds the first hour of 2026
    private static final Instant RETENTION_TIME = Instant.parse("2027-06-01T00:00:00Z");
    private static final Instant RETENTION_KEEPS_FROM = Instant.parse("2025-12-01T00:00:00Z");
    private static final Instant RETAINED_ARCHIVED_TO = Instant.parse("2026-02-10T00:00:00Z");

    private TestingWarehouse warehouse;
    private DistributedQueryRunner queryRunner;
    private TestingClient client;
    // every version written to each table so far: what it must show
    private final Map<String, List<Reading>> written = new LinkedHashMap<>();

    /** A row as the queries select it: the key (tenant NULL in a table without it), the version and the value. */
    private record Row(String maloId, Optional<String> meloId, Optional<String> tenant, Instant from, BigInteger version, BigDecimal value)
    {
        static Row of(Reading reading)
        {
            return new Row(reading.maloId(), reading.meloId(), reading.attributes().isEmpty() ? Optional.empty() : reading.attributes().getFirst(), reading.from(), reading.version(), reading.value().setScale(6));
        }

        String key()
        {
            return "%s|%s|%s|%s".formatted(maloId, meloId.orElse(""), tenant.orElse(""), from);
        }
    }

    @BeforeAll
    void setUp()
            throws Exception
    {
        warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("merge_keys"));
        queryRunner = MeterstoreQueryRunner.builder(warehouse)
                .withCatalogOverrides(ImmutableMap.of("meterstore.tables", String.join(",", TENANTS, METERING_POINTS, REGISTERS, CONTRACTS, RETAINED_REGISTERS), "meterstore.erasure.hmac-key", HMAC_KEY))
                .build();
        client = new TestingClient(queryRunner, warehouse, "merge_keys");
        for (String table : List.of(TENANTS, METERING_POINTS, REGISTERS, CONTRACTS, RETAINED_REGISTERS)) {
            written.put(table, new ArrayList<>());
        }
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
    void testCreateTableStoresTheKey()
            throws Exception
    {
        client.execute("CREATE TABLE %s (%s, tenant varchar, grid_area varchar) WITH (identity_columns = ARRAY['tenant'], attribute_columns = ARRAY['grid_area'], checked_columns = ARRAY['grid_area:EIC:Y'])"
                .formatted(TENANTS, READINGS_COLUMNS));
        client.execute("CREATE TABLE %s (%s) WITH (reading_id = 'melo_id')".formatted(METERING_POINTS, READINGS_COLUMNS));
        client.execute("CREATE TABLE %s (%s) WITH (time_model = 'point')".formatted(REGISTERS, READINGS_COLUMNS));

        assertThat(client.value("SELECT value FROM \"%s$config\" WHERE setting = 'merge_key'".formatted(TENANTS))).isEqualTo("malo_id, tenant, obis_code, \"from\"");
        assertThat(client.value("SELECT value FROM \"%s$config\" WHERE setting = 'merge_key'".formatted(METERING_POINTS))).isEqualTo("malo_id, melo_id, obis_code, \"from\"");
        // a point table is keyed by melo_id unless it declares otherwise, as in the Rust MeterStore
        assertThat(client.value("SELECT value FROM \"%s$config\" WHERE setting = 'reading_id'".formatted(REGISTERS))).isEqualTo("melo_id");
        assertThat(client.value("SELECT value FROM \"%s$config\" WHERE setting = 'merge_key'".formatted(REGISTERS))).isEqualTo("malo_id, melo_id, obis_code, \"from\"");

        // the hot tier's primary key and NOT NULL columns, the Iceberg table's required fields and sort order
        assertThat(primaryKey(TENANTS)).isEqualTo("PRIMARY KEY (malo_id, obis_code, \"from\", tenant, version)");
        assertThat(primaryKey(METERING_POINTS)).isEqualTo("PRIMARY KEY (malo_id, obis_code, \"from\", melo_id, version)");
        assertThat(primaryKey(REGISTERS)).isEqualTo("PRIMARY KEY (malo_id, obis_code, \"from\", melo_id, version)");
        assertThat(client.postgres("SELECT is_nullable FROM information_schema.columns WHERE table_schema = 'metering' AND table_name = 'mandanten' AND column_name = 'tenant'")).isEqualTo("NO");
        assertThat(client.postgres("SELECT is_nullable FROM information_schema.columns WHERE table_schema = 'metering' AND table_name = 'messlokationen' AND column_name = 'melo_id'")).isEqualTo("NO");
        // the supersession marks of a table keyed by more columns: a trigger function of its own, which compares them
        assertThat(client.postgres("SELECT count(*) FROM pg_trigger t JOIN pg_proc f ON f.oid = t.tgfoid WHERE t.tgrelid = 'metering.mandanten'::regclass AND f.proname = 'mandanten_supersession'"))
                .isEqualTo(3L);
        assertThat(icebergTable(TENANTS).schema().findField("tenant").isRequired()).isTrue();
        assertThat(icebergTable(METERING_POINTS).schema().findField("melo_id").isRequired()).isTrue();
        assertThat(icebergTable(TENANTS).sortOrder().fields()).extracting(field -> icebergTable(TENANTS).schema().findColumnName(field.sourceId()))
                .containsExactly("malo_id", "obis_code", "from", "tenant", "version");
        // partitioned by each identity column, then month("from"), as the Rust MeterStore's tables are
        assertThat(icebergTable(TENANTS).spec().fields()).extracting(field -> icebergTable(TENANTS).schema().findColumnName(field.sourceId()) + ":" + field.transform())
                .containsExactly("tenant:identity", "from:month");
        assertThat(icebergTable(METERING_POINTS).spec().fields()).extracting(field -> field.transform().toString()).containsExactly("month");
    }

    @Test
    @Order(2)
    void testRowsWithoutTheirKeyAreRefused()
            throws Exception
    {
        Reading reading = originals().getFirst();
        // the refusal names the row by the table's whole key, the missing column as NULL
        assertRefused(insertSql(TENANTS, List.of(reading.withAttributes(List.of(Optional.empty(), Optional.of(GRID_AREA))))),
                "Row (malo_id '%s', tenant NULL, obis_code '%s'".formatted(reading.maloId(), reading.obisCode()),
                "has no tenant, but table 'metering.mandanten_versions' keys its readings by malo_id, tenant, obis_code and \"from\": write the reading's tenant");
        assertRefused(insertSql(METERING_POINTS, List.of(withMelo(reading, Optional.empty()))),
                "Row (malo_id '%s', melo_id NULL, obis_code '%s'".formatted(reading.maloId(), reading.obisCode()),
                "has no melo_id, but table 'metering.messlokationen_versions' keys its readings by malo_id, melo_id, obis_code and \"from\": write the reading's melo_id");
        for (String table : List.of(TENANTS, METERING_POINTS)) {
            assertThat(client.value("SELECT count(*) FROM %s_versions".formatted(table))).as(table).isEqualTo(0L);
        }
    }

    @Test
    @Order(3)
    void testTwoTenantsReadingsAreBothKeptAndCounted()
            throws Exception
    {
        // every reading delivered for two tenants, with other values
        List<Reading> originals = new ArrayList<>();
        for (Reading reading : originals()) {
            originals.add(tenant(reading, "a", reading.version(), reading.value(), T1));
            originals.add(tenant(reading, "b", reading.version(), reading.value().add(new BigDecimal("100")), T1));
        }
        insert(TENANTS, originals);
        // a correction of every fourth reading of tenant a: tenant b's of the same key stays as it is
        List<Reading> corrections = new ArrayList<>();
        for (int index = 0; index < originals.size(); index += 8) {
            Reading original = originals.get(index);
            corrections.add(tenant(original, "a", original.version().add(BigInteger.ONE), original.value().add(new BigDecimal("0.125")), T2));
        }
        insert(TENANTS, corrections);

        assertMatches(TENANTS);
        assertThat((BigDecimal) client.value("SELECT sum(value) FROM " + TENANTS)).isEqualByComparingTo(sum(winners(TENANTS, Instant.MAX)));
        // the resolution rule "T$resolution" publishes for other engines partitions by the tenant too
        String resolution = (String) client.value("SELECT value FROM \"%s$resolution\" WHERE setting = 'resolution_sql'".formatted(TENANTS));
        assertThat(resolution).contains("PARTITION BY malo_id, obis_code, \"from\", tenant, version_scope");
        assertThat(rows("SELECT malo_id, melo_id, tenant, to_unixtime(\"from\"), version, value FROM (%s)".formatted(resolution))).isEqualTo(winners(TENANTS, Instant.MAX));
        assertThat(client.value("SELECT count(*) FROM %s WHERE tenant = 'b'".formatted(TENANTS))).isEqualTo((long) originals.size() / 2);
        assertThat(client.postgres("SELECT count(*) FROM metering.mandanten WHERE superseded_at IS NOT NULL")).isEqualTo((long) corrections.size());
        // a redelivery of a tenant's version is skipped, the same version with another value refused
        Reading correction = corrections.getFirst();
        client.execute(insertSql(TENANTS, List.of(correction)));
        assertThatThrownBy(() -> client.execute(insertSql(TENANTS, List.of(tenant(correction, "a", correction.version(), correction.value().add(BigDecimal.ONE), T2)))))
                .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(MeterstoreErrorCode.METERSTORE_CONFLICTING_REDELIVERY.toErrorCode().getCode()))
                // the refusal names the whole reading, its tenant with it
                .hasMessageContaining("Reading (malo_id '%s', tenant 'a', obis_code '%s', \"from\" ".formatted(correction.maloId(), correction.obisCode()));
        assertThat(client.value("SELECT count(*) FROM %s_versions".formatted(TENANTS))).isEqualTo((long) written.get(TENANTS).size());
    }

    @Test
    @Order(4)
    void testTenantsThroughArchivalLateCorrectionCompactionAndErasure()
            throws Exception
    {
        archive(TENANTS, ARCHIVED_TO);
        assertThat(client.value("SELECT count(*) FROM %s_versions WHERE \"from\" < %s AND \"$tier\" = 'hot'".formatted(TENANTS, ReadingsInserts.timestamp(ARCHIVED_TO)))).isEqualTo(0L);
        assertMatches(TENANTS);
        List<Map<String, Object>> cold = assertEnginesAgree(TENANTS).rows();
        assertThat(cold).extracting(row -> row.get("tenant")).containsOnly("a", "b");
        assertEachFileInItsTenantsPartition();
        // a query for one tenant reads that tenant's partitions alone, and its winners
        String tenantSum = "SELECT count(*), sum(value) FROM meterstore.%s.%s WHERE \"from\" < %s".formatted(SCHEMA, TENANTS, ReadingsInserts.timestamp(ARCHIVED_TO));
        MaterializedResultWithPlan all = queryRunner.executeWithPlan(queryRunner.getDefaultSession(), tenantSum);
        MaterializedResultWithPlan tenantA = queryRunner.executeWithPlan(queryRunner.getDefaultSession(), tenantSum + " AND tenant = 'a'");
        List<Row> coldWinnersOfA = winners(TENANTS, Instant.MAX).stream().filter(row -> row.tenant().equals(Optional.of("a")) && row.from().isBefore(ARCHIVED_TO)).toList();
        assertThat(tenantA.result().getMaterializedRows().getFirst().getField(0)).isEqualTo((long) coldWinnersOfA.size());
        assertThat((BigDecimal) tenantA.result().getMaterializedRows().getFirst().getField(1)).isEqualByComparingTo(sum(coldWinnersOfA));
        long allFiles = TestingPlans.connectorCounts(queryRunner, all).get(MeterstoreMetrics.COLD_DATA_FILES);
        assertThat(TestingPlans.connectorCounts(queryRunner, tenantA).get(MeterstoreMetrics.COLD_DATA_FILES)).isPositive().isLessThan(allFiles);
        assertThat(cold).extracting(row -> row.get("grid_area")).containsOnly(GRID_AREA, null);

        // a late correction below W of every third winner of tenant b: tenant a's of the same key stays the winner
        List<Reading> late = new ArrayList<>();
        List<Reading> tenantB = written.get(TENANTS).stream().filter(reading -> reading.attributes().getFirst().equals(Optional.of("b")) && reading.from().isBefore(ARCHIVED_TO)).toList();
        for (int index = 0; index < tenantB.size(); index += 3) {
            Reading stored = tenantB.get(index);
            late.add(tenant(stored, "b", stored.version().add(BigInteger.TEN), stored.value().add(new BigDecimal("1.5")), T3));
        }
        insert(TENANTS, late);
        assertMatches(TENANTS);
        assertThat(assertEnginesAgree(TENANTS).deleteFiles()).as("the superseded winners deleted by position, DuckDB applying the deletes").isPositive();
        assertEachFileInItsTenantsPartition();

        TableMaintenance maintenance = new TableMaintenance(warehouse.catalog(), TableIdentifier.of(SCHEMA, TENANTS), hotTier(TENANTS), () -> warehouse.database().connect(),
                new MaintenanceSettings(SnapshotRetention.DEFAULT, Duration.ofDays(3), Duration.ofHours(1), CompactionSettings.DEFAULTS), InstantSource.fixed(COMPACTION_TIME));
        MaintenanceOutcome outcome = maintenance.compact();
        assertThat(outcome.compaction().orElseThrow().compacted()).extracting(Compacted::month).containsExactly(YearMonth.of(2026, 3));
        assertThat(outcome.rewritten()).as("the manifests laid out one per month, the month the last partition field").isPresent();
        assertMatches(TENANTS);
        assertEnginesAgree(TENANTS);
        assertEachFileInItsTenantsPartition();
        // a month's manifest holds every tenant's files of it: once laid out (the run after, which merges the two
        // manifests the month W runs through kept), it is not rewritten again, as it would be on every run if the
        // layout read the tenant as the month
        maintenance.compact();
        MaintenanceOutcome laidOut = maintenance.compact();
        assertThat(laidOut.compaction().orElseThrow().compacted()).isEmpty();
        assertThat(laidOut.rewritten()).isEmpty();

        String erased = ReadingsGenerator.maloId(1);
        long rows = written.get(TENANTS).stream().filter(reading -> reading.maloId().equals(erased)).count();
        assertThat(client.update("DELETE FROM %s_versions WHERE malo_id = '%s'".formatted(TENANTS, erased))).isEqualTo(rows);
        written.get(TENANTS).removeIf(reading -> reading.maloId().equals(erased));
        assertThat(written.get(TENANTS)).isNotEmpty();
        assertMatches(TENANTS);
        assertEnginesAgree(TENANTS);
        assertEachFileInItsTenantsPartition();
    }

    /**
     * Every data and delete file of the tenants' table lies in the partition of its tenant and month: the rows of a data
     * file hold its partition's tenant, a position delete file names data files of its own partition (Iceberg applies it
     * to none other), and a scan for one tenant plans that tenant's files alone.
     */
    private void assertEachFileInItsTenantsPartition()
            throws Exception
    {
        org.apache.iceberg.Table table = icebergTable(TENANTS);
        // the tenants of each data file's rows, as Trino's Iceberg connector reads them
        Map<String, String> tenantOfFile = new HashMap<>();
        try (Connection connection = client.connect(); Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SELECT \"$path\", min(tenant), count(DISTINCT tenant) FROM iceberg.%s.%s GROUP BY 1".formatted(SCHEMA, TENANTS))) {
            while (result.next()) {
                assertThat(result.getLong(3)).as("tenants of %s", result.getString(1)).isEqualTo(1);
                tenantOfFile.put(result.getString(1), result.getString(2));
            }
        }
        Set<String> partitionTenants = new TreeSet<>();
        try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
            for (FileScanTask task : tasks) {
                String tenant = task.file().partition().get(0, String.class);
                partitionTenants.add(tenant);
                assertThat(tenantOfFile.getOrDefault(task.file().location(), tenant)).as(task.file().location()).isEqualTo(tenant);
                for (DeleteFile delete : task.deletes()) {
                    assertThat(delete.partition().get(0, String.class)).as(delete.location()).isEqualTo(tenant);
                    assertThat(ColdPartitions.month(delete)).as(delete.location()).isEqualTo(ColdPartitions.month(task.file()));
                }
            }
        }
        assertThat(partitionTenants).containsExactly("a", "b");
        try (CloseableIterable<FileScanTask> tasks = table.newScan().filter(Expressions.equal("tenant", "a")).planFiles()) {
            assertThat(ImmutableList.copyOf(tasks)).isNotEmpty().allSatisfy(task -> assertThat(task.file().partition().get(0, String.class)).isEqualTo("a"));
        }
    }

    @Test
    @Order(5)
    void testTwoMeteringLocationsUnderOneMarketLocation()
            throws Exception
    {
        List<Reading> originals = new ArrayList<>();
        for (Reading reading : originals()) {
            if (reading.maloId().equals(ReadingsGenerator.maloId(0))) {
                originals.add(version(withMelo(reading, Optional.of(MELO_A)), reading.version(), reading.value(), T1));
                originals.add(version(withMelo(reading, Optional.of(MELO_B)), reading.version(), reading.value().add(new BigDecimal("7")), T1));
            }
        }
        insert(METERING_POINTS, originals);
        assertMatches(METERING_POINTS);
        assertThat((BigDecimal) client.value("SELECT sum(value) FROM " + METERING_POINTS)).isEqualByComparingTo(sum(winners(METERING_POINTS, Instant.MAX)));

        archive(METERING_POINTS, ARCHIVED_TO);
        // a correction of MeLo A below W: MeLo B's reading of the same interval stays
        List<Reading> corrections = originals.stream()
                .filter(reading -> reading.meloId().equals(Optional.of(MELO_A)) && reading.from().isBefore(ARCHIVED_TO))
                .limit(4)
                .map(reading -> version(reading, reading.version().add(BigInteger.ONE), reading.value().add(BigDecimal.ONE), T2))
                .toList();
        insert(METERING_POINTS, corrections);
        assertMatches(METERING_POINTS);
    }

    @Test
    @Order(6)
    void testPointTableKeysRegistersByMeteringLocation()
            throws Exception
    {
        // a Berlin day's register of two metering locations under one market location
        List<Reading> registers = new ArrayList<>();
        for (int day = 0; day < 3; day++) {
            Instant from = Instant.parse("2026-04-09T22:00:00Z").plus(Duration.ofDays(day));
            registers.add(register(MELO_A, from, new BigDecimal(1000 + day * 10)));
            registers.add(register(MELO_B, from, new BigDecimal(5000 + day * 20)));
        }
        insert(REGISTERS, registers);
        assertMatches(REGISTERS);
        assertThat(client.value("SELECT count(DISTINCT melo_id) FROM " + REGISTERS)).isEqualTo(2L);
    }

    @Test
    @Order(7)
    void testPointTableThroughArchivalLateCorrectionCompactionAndErasure()
            throws Exception
    {
        // rising registers at the Berlin days from 25 March: two metering locations of one market location, and one of another
        List<Reading> registers = new ArrayList<>();
        List<LocalDate> days = List.of(LocalDate.of(2026, 3, 25), LocalDate.of(2026, 3, 26), LocalDate.of(2026, 3, 27), LocalDate.of(2026, 4, 2));
        for (int index = 0; index < days.size(); index++) {
            Instant from = MeteringCalendar.startOfBalancingDay(Sparte.STROM, days.get(index));
            registers.add(register(ReadingsGenerator.maloId(0), MELO_A, from, new BigDecimal(2000 + index * 10)));
            registers.add(register(ReadingsGenerator.maloId(0), MELO_B, from, new BigDecimal(6000 + index * 20)));
            registers.add(register(ReadingsGenerator.maloId(1), MELO_C, from, new BigDecimal(9000 + index * 5)));
        }
        insert(REGISTERS, registers);
        archive(REGISTERS, ARCHIVED_TO);
        assertMatches(REGISTERS);
        List<Map<String, Object>> cold = assertEnginesAgree(REGISTERS).rows();
        assertThat(cold).extracting(row -> row.get("to")).containsOnlyNulls();
        assertThat(cold).extracting(row -> row.get("melo_id")).containsOnly(MELO_A, MELO_B, MELO_C);

        // a late correction below W of MeLo A's reading of 26 March, not MeLo B's, and of MeLo C's of 27 March
        List<Reading> late = registers.stream()
                .filter(reading -> reading.from().isBefore(ARCHIVED_TO) && (reading.meloId().equals(Optional.of(MELO_A)) && reading.balancingDay().getDayOfMonth() == 26
                        || reading.meloId().equals(Optional.of(MELO_C)) && reading.balancingDay().getDayOfMonth() == 27))
                .map(reading -> version(reading, reading.version().add(BigInteger.ONE), reading.value().add(new BigDecimal("0.5")), T3))
                .toList();
        assertThat(late).hasSize(2);
        insert(REGISTERS, late);
        assertMatches(REGISTERS);
        assertThat(assertEnginesAgree(REGISTERS).deleteFiles()).as("the superseded winners deleted by position, DuckDB applying the deletes").isPositive();

        MaintenanceOutcome outcome = new TableMaintenance(warehouse.catalog(), TableIdentifier.of(SCHEMA, REGISTERS), hotTier(REGISTERS), () -> warehouse.database().connect(),
                new MaintenanceSettings(SnapshotRetention.DEFAULT, Duration.ofDays(3), Duration.ofHours(1), CompactionSettings.DEFAULTS), InstantSource.fixed(COMPACTION_TIME))
                .compact();
        assertThat(outcome.compaction().orElseThrow().compacted()).extracting(Compacted::month).contains(YearMonth.of(2026, 3));
        assertMatches(REGISTERS);
        assertEnginesAgree(REGISTERS);

        String erased = ReadingsGenerator.maloId(1);
        long rows = written.get(REGISTERS).stream().filter(reading -> reading.maloId().equals(erased)).count();
        assertThat(client.update("DELETE FROM %s_versions WHERE malo_id = '%s'".formatted(REGISTERS, erased))).isEqualTo(rows);
        written.get(REGISTERS).removeIf(reading -> reading.maloId().equals(erased));
        assertMatches(REGISTERS);
        assertThat(assertEnginesAgree(REGISTERS).rows()).extracting(row -> row.get("melo_id")).containsOnly(MELO_A, MELO_B);
    }

    @Test
    @Order(8)
    void testRetentionSweepKeepsTheShapesOfTheMonthsItKeeps()
            throws Exception
    {
        client.execute("CREATE TABLE %s (%s, tenant varchar, contract_ref varchar) WITH (identity_columns = ARRAY['tenant'], attribute_columns = ARRAY['contract_ref'])"
                .formatted(CONTRACTS, READINGS_COLUMNS));
        client.execute("CREATE TABLE %s (%s) WITH (time_model = 'point')".formatted(RETAINED_REGISTERS, READINGS_COLUMNS));
        // a November past the retention, January and February inside it, archived; an April day left hot
        List<Reading> contracts = new ArrayList<>();
        List<Reading> registers = new ArrayList<>();
        for (LocalDate day : List.of(LocalDate.of(2025, 11, 10), LocalDate.of(2025, 11, 11), LocalDate.of(2026, 1, 15), LocalDate.of(2026, 2, 10), LocalDate.of(2026, 4, 9))) {
            Map<String, Integer> perMeter = new LinkedHashMap<>();
            generator(day, 1).forEach(reading -> {
                if (perMeter.merge(reading.maloId(), 1, Integer::sum) <= 4) {
                    // both tenants' readings of one key; tenant b's without a contract, its attribute NULL
                    contracts.add(tenant(reading, "a", reading.version(), reading.value(), T1).withAttributes(List.of(Optional.of("a"), Optional.of("V-" + day))));
                    contracts.add(tenant(reading, "b", reading.version(), reading.value().add(new BigDecimal("100")), T1).withAttributes(List.of(Optional.of("b"), Optional.empty())));
                }
            });
            Instant midnight = MeteringCalendar.startOfLocalDay(day);
            registers.add(register(MELO_A, midnight, new BigDecimal(1000 + day.getDayOfYear())));
            registers.add(register(MELO_B, midnight, new BigDecimal(5000 + day.getDayOfYear() * 2)));
        }
        insert(CONTRACTS, contracts);
        insert(RETAINED_REGISTERS, registers);
        for (String table : List.of(CONTRACTS, RETAINED_REGISTERS)) {
            archive(table, RETAINED_ARCHIVED_TO);
            assertThat(client.value("SELECT count(*) FROM %s_versions WHERE \"$tier\" = 'hot'".formatted(table))).as(table)
                    .isEqualTo(written.get(table).stream().filter(reading -> !reading.from().isBefore(RETAINED_ARCHIVED_TO)).count());
        }
        // every column of every row in the months the retention keeps, as Trino reads them before the sweep
        Map<String, List<List<String>>> kept = new LinkedHashMap<>();
        for (String table : List.of(CONTRACTS, RETAINED_REGISTERS)) {
            kept.put(table, allColumns("SELECT * FROM %s_versions WHERE \"from\" >= %s".formatted(table, ReadingsInserts.timestamp(RETENTION_KEEPS_FROM))));
            assertThat(kept.get(table)).as(table).hasSizeLessThan(written.get(table).size());
        }

        for (String table : List.of(CONTRACTS, RETAINED_REGISTERS)) {
            long expired = written.get(table).stream().filter(reading -> reading.from().isBefore(RETENTION_KEEPS_FROM)).count();
            MaintenanceOutcome outcome = retention(table).expire();
            assertThat(outcome.swept().orElseThrow().months()).as(table).containsExactly(YearMonth.of(2025, 11));
            assertThat(outcome.swept().orElseThrow().coldRows()).as(table).isEqualTo(expired);
            written.get(table).removeIf(reading -> reading.from().isBefore(RETENTION_KEEPS_FROM));

            // exactly November's files left the table; the rows kept are read back column for column
            assertThat(coldMonths(table)).as(table).containsExactly(YearMonth.of(2026, 1), YearMonth.of(2026, 2));
            assertThat(allColumns("SELECT * FROM %s_versions".formatted(table))).as(table).isEqualTo(kept.get(table));
            assertMatches(table);
            List<List<String>> recorded = allColumns("SELECT trigger, from_start, from_end, rows_removed_hot, rows_removed_cold, snapshot_id FROM \"%s$erasures\"".formatted(table));
            assertThat(recorded).as(table).containsExactly(List.of("retention", "2025-11-01 00:00:00.000000 UTC", "2025-12-01 00:00:00.000000 UTC", "0", String.valueOf(expired),
                    String.valueOf(icebergTable(table).currentSnapshot().snapshotId())));

            // a second sweep finds nothing to remove and records nothing
            long snapshot = icebergTable(table).currentSnapshot().snapshotId();
            assertThat(retention(table).expire().swept().orElseThrow().months()).as(table).isEmpty();
            assertThat(icebergTable(table).currentSnapshot().snapshotId()).as(table).isEqualTo(snapshot);
            assertThat(allColumns("SELECT trigger, from_start, from_end, rows_removed_hot, rows_removed_cold, snapshot_id FROM \"%s$erasures\"".formatted(table))).as(table).isEqualTo(recorded);
            assertThat(allColumns("SELECT * FROM %s_versions".formatted(table))).as(table).isEqualTo(kept.get(table));
        }
        // both tenants' and both metering locations' readings stay in every month kept, the registers' "to" NULL
        assertThat(allColumns("SELECT tenant, count(contract_ref), count(*) FROM %s_versions GROUP BY tenant".formatted(CONTRACTS)))
                .containsExactlyInAnyOrder(List.of("a", "24", "24"), List.of("b", "0", "24"));
        assertThat(allColumns("SELECT melo_id, count(\"to\"), count(*) FROM %s_versions GROUP BY melo_id".formatted(RETAINED_REGISTERS)))
                .containsExactlyInAnyOrder(List.of(MELO_A, "0", "3"), List.of(MELO_B, "0", "3"));
    }

    @Test
    @Order(9)
    void testCompletenessCountsEachReadingOfTheMergeKey()
            throws Exception
    {
        // the report shows the key's further columns after malo_id: a point table's melo_id, a table's tenant
        assertThat(columnNames(completeness(RETAINED_REGISTERS, "settlement_month => '2026-01'")))
                .containsExactly("malo_id", "melo_id", "obis_code", "sparte", "resolution", "expected", "actual", "missing", "surplus", "first_gap", "substituted", "not_billable", "complete", "measurable");
        assertThat(columnNames(completeness(TENANTS, "settlement_month => '2026-03'"))).startsWith("malo_id", "tenant", "obis_code", "sparte");

        // two MeLos under one MaLo, a register a day each: every MeLo its own row, one reading against a reading a day,
        // in January from the cold tier and in April from the hot tier
        assertThat(coldMonths(RETAINED_REGISTERS)).contains(YearMonth.of(2026, 1));
        assertThat(allColumns("SELECT melo_id, \"$tier\" FROM %s WHERE \"from\" >= %s".formatted(RETAINED_REGISTERS, ReadingsInserts.timestamp(Instant.parse("2026-04-01T00:00:00Z")))))
                .containsExactly(List.of(MELO_A, "hot"), List.of(MELO_B, "hot"));
        String report = "SELECT malo_id, melo_id, obis_code, resolution, expected, actual, missing, surplus, CAST(first_gap AS varchar), complete FROM (%s)";
        String maloId = ReadingsGenerator.maloId(0);
        assertThat(allColumns(report.formatted(completeness(RETAINED_REGISTERS, "settlement_month => '2026-01'")))).containsExactly(
                List.of(maloId, MELO_A, "1-0:1.8.0", "P1D", "31", "1", "30", "0", "2026-01-01", "false"),
                List.of(maloId, MELO_B, "1-0:1.8.0", "P1D", "31", "1", "30", "0", "2026-01-01", "false"));
        assertThat(allColumns(report.formatted(completeness(RETAINED_REGISTERS, "settlement_month => '2026-04'")))).containsExactly(
                List.of(maloId, MELO_A, "1-0:1.8.0", "P1D", "30", "1", "29", "0", "2026-04-01", "false"),
                List.of(maloId, MELO_B, "1-0:1.8.0", "P1D", "30", "1", "29", "0", "2026-04-01", "false"));

        // two tenants' readings of one key: each tenant its own row, the 8 quarter-hours of the first two hours of
        // 25 March (cold) and of 2 April, each delivered once per tenant
        String tenants = "SELECT malo_id, tenant, expected, actual, missing, surplus, complete FROM (%s)";
        for (LocalDate day : List.of(LocalDate.of(2026, 3, 25), LocalDate.of(2026, 4, 2))) {
            Instant start = MeteringCalendar.startOfLocalDay(day);
            String range = "range_start => %s, range_end => %s".formatted(ReadingsInserts.timestamp(start), ReadingsInserts.timestamp(start.plus(Duration.ofHours(2))));
            assertThat(allColumns(tenants.formatted(completeness(TENANTS, range)))).as(day.toString()).containsExactly(
                    List.of(maloId, "a", "8", "8", "0", "0", "true"),
                    List.of(maloId, "b", "8", "8", "0", "0", "true"));
        }

        // bin/archiver completeness prints the MeLo of each row between MALO and OBIS
        List<String> lines = archiverCompleteness(RETAINED_REGISTERS, "2026-01");
        assertThat(lines.getFirst().split(" +")).containsExactly("TABLE", "MALO", "MELO_ID", "OBIS", "SPARTE", "RES", "EXPECTED", "ACTUAL", "MISSING", "SURPLUS", "FIRST", "GAP", "NOTE");
        assertThat(lines.subList(1, lines.size() - 1).stream().map(line -> List.of(line.split(" +"))).toList()).containsExactly(
                List.of(RETAINED_REGISTERS, maloId, MELO_A, "1-0:1.8.0", "STROM", "P1D", "31", "1", "30", "0", "2026-01-01"),
                List.of(RETAINED_REGISTERS, maloId, MELO_B, "1-0:1.8.0", "STROM", "P1D", "31", "1", "30", "0", "2026-01-01"));
        assertThat(lines.getLast()).isEqualTo("%s: 2 reading(s) and grid(s) over settlement month 2026-01: 2 incomplete, 0 silent, 60 interval(s) missing".formatted(RETAINED_REGISTERS));
    }

    // ---- expectations

    /** Asserts both tables, and each AS OF every instant a version was learned at, against what was written. */
    private void assertMatches(String table)
            throws SQLException
    {
        String select = "SELECT malo_id, melo_id, %s, to_unixtime(\"from\"), version, value FROM %%s".formatted(table.equals(TENANTS) || table.equals(CONTRACTS) ? "tenant" : "CAST(NULL AS varchar)");
        assertThat(rows(select.formatted(table + "_versions"))).as(table + "_versions").isEqualTo(sorted(written.get(table).stream().map(Row::of).toList()));
        assertThat(rows(select.formatted(table))).as(table).isEqualTo(winners(table, Instant.MAX));
        for (Instant knownAt : List.of(T1.plusSeconds(60), T2.plusSeconds(60))) {
            String asOf = "%s FOR TIMESTAMP AS OF %s".formatted(table, ReadingsInserts.timestamp(knownAt));
            assertThat(rows(select.formatted(asOf))).as("%s AS OF %s", table, knownAt).isEqualTo(winners(table, knownAt));
        }
    }

    /**
     * Asserts that two other engines read {@code T_versions}' cold rows from the current snapshot's files, every column
     * (the identity, attribute and checked columns, melo_id, a NULL "to"): DuckDB, applying the position delete files
     * itself, and Trino's Iceberg connector; as many as the versions written below W. Returns what DuckDB read.
     */
    private TestingDuckDb.FileRows assertEnginesAgree(String table)
            throws Exception
    {
        org.apache.iceberg.Table iceberg = icebergTable(table);
        Instant watermark = WatermarkReader.current(iceberg).watermark().instant();
        List<Map<String, Object>> cold = sortedRows(trinoRows("SELECT * FROM %s_versions WHERE \"$tier\" = 'cold'".formatted(table), iceberg.schema()));
        assertThat(cold).as(table + " cold rows").hasSize((int) written.get(table).stream().filter(reading -> reading.from().isBefore(watermark)).count());
        TestingDuckDb.FileRows files = TestingDuckDb.currentRows(iceberg);
        assertThat(sortedRows(files.rows())).as("DuckDB reading %s's files", table).isEqualTo(cold);
        assertThat(sortedRows(trinoRows("SELECT * FROM iceberg.metering." + table, iceberg.schema()))).as("Trino's Iceberg connector reading " + table).isEqualTo(cold);
        return files;
    }

    private static List<Map<String, Object>> sortedRows(List<Map<String, Object>> rows)
    {
        return rows.stream().sorted(Comparator.comparing(Object::toString)).toList();
    }

    /** The winner of every key (as the table's shape declares it) among the versions learned by {@code knownAt}: the oracle's. */
    private List<Row> winners(String table, Instant knownAt)
    {
        // mandanten and vertraege are keyed by their one identity column, the others by melo_id
        boolean tenantKeyed = table.equals(TENANTS) || table.equals(CONTRACTS);
        ReadingsOracle oracle = ReadingsOracle.of(written.get(table), !tenantKeyed, tenantKeyed ? 1 : 0);
        return sorted(oracle.asKnownAt(knownAt).resolved(_ -> true).stream().map(Row::of).toList());
    }

    private static BigDecimal sum(List<Row> rows)
    {
        return rows.stream().map(Row::value).reduce(BigDecimal.ZERO, BigDecimal::add);
    }

    private static List<Row> sorted(List<Row> rows)
    {
        return rows.stream().sorted(Comparator.comparing(Row::key).thenComparing(Row::version)).toList();
    }

    @Test
    @Order(10)
    void testRulesCompareTheVersionsOfEachTenant()
            throws Exception
    {
        Instant watermark = WatermarkReader.current(icebergTable(TENANTS)).watermark().instant();
        // an hour in the hot tier and one below W, which INSERT writes into Iceberg
        Instant hotHour = Instant.parse("2026-04-10T08:00:00Z");
        Instant coldHour = Instant.parse("2026-03-10T08:00:00Z");
        for (Instant hour : List.of(hotHour, coldHour)) {
            assertThat(hour.isBefore(watermark)).as("%s below W %s", hour, watermark).isEqualTo(hour.equals(coldHour));
            // tenant a's quarter-hours, tenant b's hour over them under another operator, tenant c's first quarter-hour
            // under that operator too: three readings of one (malo_id, obis_code, "from"), each with its own operator and grid
            List<Reading> quarterHours = new ArrayList<>();
            for (int quarter = 0; quarter < 4; quarter++) {
                quarterHours.add(interval("a", hour.plus(Duration.ofMinutes(15L * quarter)), Duration.ofMinutes(15), ReadingsGenerator.DEFAULT_OPERATOR_ID, BigInteger.ONE, "0.25"));
            }
            insert(TENANTS, quarterHours);
            Reading hourOfB = interval("b", hour, Duration.ofHours(1), SECOND_OPERATOR_ID, BigInteger.ONE, "1.5");
            insert(TENANTS, List.of(hourOfB));
            insert(TENANTS, List.of(interval("c", hour, Duration.ofMinutes(15), SECOND_OPERATOR_ID, BigInteger.ONE, "0.75")));

            // within one tenant each rule still refuses, nothing written
            long versions = (long) client.value("SELECT count(*) FROM %s_versions".formatted(TENANTS));
            // each refusal names the whole reading, the tenant between malo_id and obis_code, so that its rows can be found
            String maloId = hourOfB.maloId();
            assertRefused(insertSql(TENANTS, List.of(interval("a", hour, Duration.ofMinutes(15), SECOND_OPERATOR_ID, BigInteger.TWO, "0.5"))), ReadingRules.ONE_OPERATOR_PER_READING,
                    "Reading (malo_id '%s', tenant 'a', obis_code '1-0:1.8.0', \"from\" %s)".formatted(maloId, TieringWatermark.formatInstant(hour)));
            assertRefused(insertSql(TENANTS, List.of(interval("b", hour.plus(Duration.ofMinutes(15)), Duration.ofMinutes(15), SECOND_OPERATOR_ID, BigInteger.ONE, "0.5"))),
                    ReadingRules.SPANS_DO_NOT_OVERLAP, "Version 1 of reading (malo_id '%s', tenant 'b', obis_code '1-0:1.8.0') has two spans".formatted(maloId));
            assertRefused(insertSql(TENANTS, List.of(interval("a", hour, Duration.ofHours(1), ReadingsGenerator.DEFAULT_OPERATOR_ID, BigInteger.TWO, "1.25"))), ReadingRules.ONE_GRID_PER_READING,
                    "Version 2 of reading (malo_id '%s', tenant 'a', obis_code '1-0:1.8.0') spans".formatted(maloId));
            assertThat(client.value("SELECT count(*) FROM %s_versions".formatted(TENANTS))).isEqualTo(versions);
            assertThat((BigDecimal) client.value("SELECT sum(value) FROM %s WHERE malo_id = '%s' AND \"from\" >= %s AND \"from\" < %s".formatted(
                    TENANTS, hourOfB.maloId(), ReadingsInserts.timestamp(hour), ReadingsInserts.timestamp(hour.plus(Duration.ofHours(1))))))
                    .isEqualByComparingTo("3.25");
        }

        // a plain PostgreSQL INSERT into the hot table: tenant d's hour under the other operator is taken, tenant a's is refused
        Instant hour = hotHour;
        Reading hourOfD = interval("d", hour, Duration.ofHours(1), SECOND_OPERATOR_ID, BigInteger.ONE, "2");
        try (Connection connection = warehouse.database().connect(); Statement statement = connection.createStatement()) {
            assertThat(statement.executeUpdate(plainInsert(hourOfD))).isEqualTo(1);
            written.get(TENANTS).add(hourOfD);
            for (Reading refused : List.of(
                    interval("a", hour, Duration.ofMinutes(15), SECOND_OPERATOR_ID, BigInteger.TWO, "0.5"),
                    interval("a", hour, Duration.ofHours(1), ReadingsGenerator.DEFAULT_OPERATOR_ID, BigInteger.TWO, "1.25"))) {
                assertThatThrownBy(() -> statement.executeUpdate(plainInsert(refused)))
                        .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).as(e.getMessage()).isEqualTo("23P01"))
                        .hasMessageContaining("tenant 'a'");
            }
        }
        assertMatches(TENANTS);
    }

    @Test
    @Order(11)
    void testCreateGivesAnExistingTableTheRulesFunctionOfItsKey()
            throws Exception
    {
        // a table created before the rules followed the key: its triggers, the parent's and each partition's, run the
        // schema's function of the default key (which a default table beside it creates), which refuses tenant e's hour
        // under another operator than tenant a's
        HotTier tenants = hotTier(TENANTS);
        Reading hourOfE = interval("e", Instant.parse("2026-04-10T08:00:00Z"), Duration.ofHours(1), SECOND_OPERATOR_ID, BigInteger.ONE, "3");
        try (Connection connection = warehouse.database().connect(); Statement statement = connection.createStatement()) {
            hotTier("plain").createParent(connection);
            List<String> relations = new ArrayList<>(List.of(tenants.qualifiedParent()));
            try (ResultSet result = statement.executeQuery("SELECT format('%I.%I', 'metering', c.relname) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'metering.mandanten'::regclass")) {
                while (result.next()) {
                    relations.add(result.getString(1));
                }
            }
            String argument = tenants.qualifiedParent().replace("'", "''");
            for (String relation : relations) {
                statement.execute("CREATE OR REPLACE TRIGGER meterstore_reading_rules_insert AFTER INSERT ON %s REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION metering.meterstore_reading_rules('%s')"
                        .formatted(relation, argument));
                statement.execute("CREATE OR REPLACE TRIGGER meterstore_reading_rules_update AFTER UPDATE ON %s REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION metering.meterstore_reading_rules('%s')"
                        .formatted(relation, argument));
            }
            assertThat(rulesFunctions()).containsExactly("meterstore_reading_rules");
            assertThatThrownBy(() -> statement.executeUpdate(plainInsert(hourOfE)))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).as(e.getMessage()).isEqualTo("23P01"));

            // create again: the table's own function, and tenant e's hour is another reading
            tenants.createParent(connection, TableShape.ofProperties(icebergTable(TENANTS).properties()).orElseThrow());
            assertThat(rulesFunctions()).containsExactly("meterstore_reading_rules__" + TENANTS);
            assertThat(statement.executeUpdate(plainInsert(hourOfE))).isEqualTo(1);
            written.get(TENANTS).add(hourOfE);
        }
        assertMatches(TENANTS);
    }

    @Test
    @Order(12)
    void testRulesCompareTheVersionsOfEachMeteringLocation()
            throws Exception
    {
        // MeLo A's hour as quarter-hours under one operator, the first half of MeLo B's under another: two readings of
        // one (malo_id, obis_code, "from"), each with its own operator
        List<Reading> meloA = new ArrayList<>();
        for (int quarter = 0; quarter < 4; quarter++) {
            meloA.add(meloInterval(MELO_A, METERING_POINTS_HOUR.plus(Duration.ofMinutes(15L * quarter)), ReadingsGenerator.DEFAULT_OPERATOR_ID, BigInteger.ONE));
        }
        insert(METERING_POINTS, meloA);
        insert(METERING_POINTS, List.of(
                meloInterval(MELO_B, METERING_POINTS_HOUR, SECOND_OPERATOR_ID, BigInteger.ONE),
                meloInterval(MELO_B, METERING_POINTS_HOUR.plus(Duration.ofMinutes(15)), SECOND_OPERATOR_ID, BigInteger.ONE)));

        // a second operator on MeLo A is refused naming the MeLo, nothing written
        long versions = (long) client.value("SELECT count(*) FROM %s_versions".formatted(METERING_POINTS));
        assertRefused(insertSql(METERING_POINTS, List.of(meloInterval(MELO_A, METERING_POINTS_HOUR, SECOND_OPERATOR_ID, BigInteger.TWO))), ReadingRules.ONE_OPERATOR_PER_READING,
                "Reading (malo_id '%s', melo_id '%s', obis_code '1-0:1.8.0', \"from\" %s) belongs to network operator %s".formatted(
                        ReadingsGenerator.maloId(7), MELO_A, TieringWatermark.formatInstant(METERING_POINTS_HOUR), ReadingsGenerator.DEFAULT_OPERATOR_ID));
        assertThat(client.value("SELECT count(*) FROM %s_versions".formatted(METERING_POINTS))).isEqualTo(versions);
        assertThat(allColumns("SELECT melo_id, split_part(version_scope, ':', 1), count(*) FROM %s WHERE malo_id = '%s' GROUP BY 1, 2".formatted(METERING_POINTS, ReadingsGenerator.maloId(7))))
                .containsExactly(List.of(MELO_A, ReadingsGenerator.DEFAULT_OPERATOR_ID, "4"), List.of(MELO_B, SECOND_OPERATOR_ID, "2"));
        assertMatches(METERING_POINTS);
    }

    @Test
    @Order(13)
    void testCompletenessCountsEachMeteringLocationOfAnIntervalTable()
            throws Exception
    {
        // the hour of the test before: MeLo A delivered its four quarter-hours, MeLo B two of them
        String range = "range_start => %s, range_end => %s".formatted(ReadingsInserts.timestamp(METERING_POINTS_HOUR), ReadingsInserts.timestamp(METERING_POINTS_HOUR.plus(Duration.ofHours(1))));
        String report = "SELECT malo_id, melo_id, resolution, expected, actual, missing, surplus, CAST(first_gap AS varchar), complete FROM (%s)";
        String maloId = ReadingsGenerator.maloId(7);
        assertThat(allColumns(report.formatted(completeness(METERING_POINTS, range)))).containsExactly(
                Arrays.asList(maloId, MELO_A, "PT15M", "4", "4", "0", "0", null, "true"),
                Arrays.asList(maloId, MELO_B, "PT15M", "4", "2", "2", "0", "2026-04-10", "false"));
    }

    @Test
    @Order(14)
    void testRowsStoredBeforeTheRulesAreListedPerTenant()
            throws Exception
    {
        // tenants f and g each hold two versions of one quarter-hour under two operators, written while the rules'
        // INSERT triggers were gone (a table from before the rules): the two pairs differ in nothing but the tenant
        Instant quarterHour = Instant.parse("2026-04-11T08:00:00Z");
        HotTier tenants = hotTier(TENANTS);
        try (Connection connection = warehouse.database().connect(); Statement statement = connection.createStatement()) {
            tenants.ensurePartition(connection, quarterHour);
            String partition = tenants.partitions(connection).stream().filter(hot -> hot.contains(quarterHour)).findFirst().orElseThrow().name();
            for (String relation : List.of(tenants.qualifiedParent(), tenants.qualifiedPartition(partition))) {
                statement.execute("DROP TRIGGER meterstore_reading_rules_insert ON " + relation);
            }
            for (String tenant : List.of("f", "g")) {
                statement.executeUpdate(plainInsert(interval(tenant, quarterHour, Duration.ofMinutes(15), ReadingsGenerator.DEFAULT_OPERATOR_ID, BigInteger.ONE, "0.25")));
                statement.executeUpdate(plainInsert(interval(tenant, quarterHour, Duration.ofMinutes(15), SECOND_OPERATOR_ID, BigInteger.TWO, "0.5")));
            }
            // the kept pairs' table as an earlier release created it, keeping a pair of another table
            statement.execute("DROP TABLE IF EXISTS metering.meterstore_rule_violations");
            statement.execute("""
                    CREATE TABLE metering.meterstore_rule_violations (
                        "table" text NOT NULL, rule text NOT NULL, malo_id text NOT NULL, obis_code text NOT NULL,
                        earlier_from timestamptz NOT NULL, earlier_version numeric(20, 0) NOT NULL, later_from timestamptz NOT NULL, later_version numeric(20, 0) NOT NULL,
                        message text NOT NULL,
                        PRIMARY KEY ("table", malo_id, obis_code, earlier_from, earlier_version, later_from, later_version))""");
            statement.execute("INSERT INTO metering.meterstore_rule_violations VALUES ('plain', 'one_operator_per_reading', '41373559241', '1-0:1.8.0', now(), 1, now(), 2, 'kept before')");
        }

        // create again lists both pairs, each naming its tenant, and keeps both; a second create finds the same
        String maloId = ReadingsGenerator.maloId(7);
        String pair = "rule one_operator_per_reading in table \"metering\".\"mandanten\": reading (malo_id '%s', tenant '%%s', obis_code '1-0:1.8.0') version 1 over [2026-04-11T08:00:00Z, 2026-04-11T08:15:00Z)".formatted(maloId);
        for (int run = 0; run < 2; run++) {
            assertThat(archiver("create").stream().filter(line -> line.contains("Rows stored before the rules")).toList()).as("create, run %s", run + 1)
                    .satisfiesExactly(
                            line -> assertThat(line).contains(pair.formatted("f")),
                            line -> assertThat(line).contains(pair.formatted("g")));
        }
        // the earlier release's table got the key's values, in its primary key, and still holds the other table's pair
        assertThat(client.postgres("SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'metering.meterstore_rule_violations'::regclass AND contype = 'p'"))
                .isEqualTo("PRIMARY KEY (\"table\", malo_id, key_values, obis_code, earlier_from, earlier_version, later_from, later_version)");
        assertThat(client.postgres("SELECT string_agg(\"table\" || ' ' || key_values::text, ', ' ORDER BY key_values) FROM metering.meterstore_rule_violations"))
                .isEqualTo("plain {}, mandanten {f}, mandanten {g}");
        assertThat(ruleViolations()).satisfiesExactly(
                violation -> assertThat(violation).contains(pair.formatted("f")),
                violation -> assertThat(violation).contains(pair.formatted("g")));

        // tenant f's pair repaired by deleting its second operator's version: only tenant g's is still reported, though
        // g's two rows have f's malo_id, obis_code, "from" and versions
        try (Connection connection = warehouse.database().connect(); Statement statement = connection.createStatement()) {
            assertThat(statement.executeUpdate("DELETE FROM metering.mandanten WHERE tenant = 'f' AND version = 2")).isEqualTo(1);
            assertThat(ruleViolations()).singleElement(InstanceOfAssertFactories.STRING).contains(pair.formatted("g"));
            assertThat(statement.executeUpdate("DELETE FROM metering.mandanten WHERE tenant = 'g' AND version = 2")).isEqualTo(1);
            assertThat(ruleViolations()).isEmpty();
        }
        written.get(TENANTS).add(interval("f", quarterHour, Duration.ofMinutes(15), ReadingsGenerator.DEFAULT_OPERATOR_ID, BigInteger.ONE, "0.25"));
        written.get(TENANTS).add(interval("g", quarterHour, Duration.ofMinutes(15), ReadingsGenerator.DEFAULT_OPERATOR_ID, BigInteger.ONE, "0.25"));
        assertMatches(TENANTS);
    }

    // the violations "mandanten$invariant" reports of pairs of rows that break a rule
    private List<String> ruleViolations()
            throws SQLException
    {
        return allColumns("SELECT violation FROM \"%s$invariant\" WHERE violation LIKE '%%Rows stored before the rules%%'".formatted(TENANTS)).stream().map(List::getFirst).toList();
    }

    // the functions the rules' triggers of the tenant table and its partitions run
    private List<String> rulesFunctions()
            throws SQLException
    {
        List<String> functions = new ArrayList<>();
        try (Connection connection = warehouse.database().connect(); Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery("""
                SELECT DISTINCT p.proname FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
                WHERE t.tgname LIKE 'meterstore_reading_rules%' AND (t.tgrelid = 'metering.mandanten'::regclass OR t.tgrelid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'metering.mandanten'::regclass))""")) {
            while (result.next()) {
                functions.add(result.getString(1));
            }
        }
        return functions;
    }

    // ---- readings

    /** The first two hours of two meters on two March days and an April day, whose partition takes W past March's end. */
    private static List<Reading> originals()
    {
        List<Reading> originals = new ArrayList<>();
        Map<String, Integer> perMeterDay = new LinkedHashMap<>();
        for (ReadingsGenerator generator : List.of(generator(LocalDate.of(2026, 3, 25), 2), generator(LocalDate.of(2026, 4, 2), 1))) {
            generator.forEach(reading -> {
                if (perMeterDay.merge(reading.maloId() + "@" + reading.balancingDay(), 1, Integer::sum) <= 8) {
                    originals.add(reading);
                }
            });
        }
        return originals;
    }

    private static ReadingsGenerator generator(LocalDate start, int days)
    {
        return ReadingsGenerator.builder().seed(3132).meters(2).startDay(start).days(days).correctionsFraction(0).build();
    }

    private static Reading tenant(Reading base, String tenant, BigInteger version, BigDecimal value, Instant recordedAt)
    {
        return version(base, version, value, recordedAt).withAttributes(List.of(Optional.of(tenant), tenant.equals("a") ? Optional.of(GRID_AREA) : Optional.empty()));
    }

    private static Reading version(Reading base, BigInteger version, BigDecimal value, Instant recordedAt)
    {
        return new Reading(base.maloId(), base.meloId(), base.obisCode(), base.sparte(), base.from(), base.to(), value, base.unit(),
                version.equals(base.version()) ? base.quality() : Quality.CORRECTED, base.resolution(), base.sourceKind(), base.sourceDetail(), base.provenance(),
                version, base.versionScope(), recordedAt, base.balancingDay(), base.attributes());
    }

    /** A reading of the tenant table's own meter, of {@code tenant}, over {@code length} from {@code from}, under {@code operator}'s scope. */
    private static Reading interval(String tenant, Instant from, Duration length, String operator, BigInteger version, String value)
    {
        return new Reading(ReadingsGenerator.maloId(7), Optional.empty(), "1-0:1.8.0", Sparte.STROM, from, Optional.of(from.plus(length)), new BigDecimal(value), MeasurementUnit.KWH,
                version.equals(BigInteger.ONE) ? Quality.MEASURED : Quality.CORRECTED, length.equals(Duration.ofHours(1)) ? "PT1H" : "PT15M", "MSCONS", Optional.empty(), Optional.empty(),
                version, Reading.versionScope(operator, Sparte.STROM, from), T1, MeteringCalendar.balancingDay(Sparte.STROM, from), List.of(Optional.of(tenant), Optional.empty()));
    }

    /** A plain PostgreSQL INSERT of {@code reading} into the tenant table's hot tier, as a tool that is not MeterStore would write it. */
    private static String plainInsert(Reading reading)
    {
        return """
                INSERT INTO metering.%s (malo_id, obis_code, sparte, "from", "to", value, unit, quality, resolution, source_kind, version, version_scope, recorded_at, balancing_day, tenant)
                VALUES ('%s', '%s', '%s', '%s'::timestamptz, '%s'::timestamptz, %s, '%s', '%s', '%s', '%s', %s, '%s', '%s'::timestamptz, DATE '%s', '%s')"""
                .formatted(TENANTS, reading.maloId(), reading.obisCode(), reading.sparte(), reading.from(), reading.end(), reading.value().toPlainString(), reading.unit(),
                        reading.quality(), reading.resolution(), reading.sourceKind(), reading.version(), reading.versionScope(), reading.recordedAt(), reading.balancingDay(),
                        reading.attributes().getFirst().orElseThrow());
    }

    /** A quarter-hour of {@code meloId} under the tenant table's meter's MaLo, from {@code from}, under {@code operator}'s scope. */
    private static Reading meloInterval(String meloId, Instant from, String operator, BigInteger version)
    {
        return new Reading(ReadingsGenerator.maloId(7), Optional.of(meloId), "1-0:1.8.0", Sparte.STROM, from, Optional.of(from.plus(Duration.ofMinutes(15))), new BigDecimal("0.25"),
                MeasurementUnit.KWH, version.equals(BigInteger.ONE) ? Quality.MEASURED : Quality.CORRECTED, "PT15M", "MSCONS", Optional.empty(), Optional.empty(),
                version, Reading.versionScope(operator, Sparte.STROM, from), T1, MeteringCalendar.balancingDay(Sparte.STROM, from), List.of());
    }

    /** The archiver's command line on the tenant table, as {@code bin/archiver <command>} runs it; its output's lines. */
    private List<String> archiver(String command)
            throws IOException
    {
        Path config = Files.createTempFile("archiver", ".properties");
        try {
            Files.writeString(config, """
                    meterstore.postgresql.url=%s
                    meterstore.postgresql.user=%s
                    meterstore.iceberg.warehouse=%s
                    meterstore.tables=%s
                    """.formatted(warehouse.database().jdbcUrl(), warehouse.database().user(), warehouse.location(), TENANTS));
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int exitCode = new ArchiverCli(new PrintStream(out, true, UTF_8), new PrintStream(err, true, UTF_8), InstantSource.system()).run(new String[] {command, "--config", config.toString()});
            assertThat(err.toString(UTF_8)).isEmpty();
            assertThat(exitCode).isEqualTo(ArchiverCli.EXIT_OK);
            return out.toString(UTF_8).lines().toList();
        }
        finally {
            Files.delete(config);
        }
    }

    private static Reading withMelo(Reading base, Optional<String> meloId)
    {
        return new Reading(base.maloId(), meloId, base.obisCode(), base.sparte(), base.from(), base.to(), base.value(), base.unit(), base.quality(), base.resolution(),
                base.sourceKind(), base.sourceDetail(), base.provenance(), base.version(), base.versionScope(), base.recordedAt(), base.balancingDay(), base.attributes());
    }

    private static Reading register(String meloId, Instant from, BigDecimal value)
    {
        return register(ReadingsGenerator.maloId(0), meloId, from, value);
    }

    private static Reading register(String maloId, String meloId, Instant from, BigDecimal value)
    {
        return new Reading(maloId, Optional.of(meloId), "1-0:1.8.0", Sparte.STROM, from, Optional.empty(), value, MeasurementUnit.KWH, Quality.MEASURED, "P1D",
                "MSCONS", Optional.empty(), Optional.empty(), BigInteger.ONE, Reading.versionScope(ReadingsGenerator.DEFAULT_OPERATOR_ID, Sparte.STROM, from), T1,
                MeteringCalendar.balancingDay(Sparte.STROM, from), List.of());
    }

    private void insert(String table, List<Reading> readings)
            throws SQLException
    {
        assertThat(client.update(insertSql(table, readings))).isEqualTo(readings.size());
        written.get(table).addAll(readings);
    }

    private static String insertSql(String table, List<Reading> readings)
    {
        return ReadingsInserts.insertAsRecorded(readings).replaceFirst("INSERT INTO readings_versions", "INSERT INTO %s_versions".formatted(table));
    }

    // ---- the tiers

    private HotTier hotTier(String table)
    {
        return new HotTier(SCHEMA, new PartitionNaming(table, PartitionNaming.DEFAULT_STEP), Duration.ofSeconds(5));
    }

    private void archive(String table, Instant to)
            throws Exception
    {
        ArchivalCycle cycle = new ArchivalCycle(warehouse.catalog(), TableIdentifier.of(SCHEMA, table), hotTier(table), () -> warehouse.database().connect(), ArchivalSettings.DEFAULTS,
                InstantSource.fixed(TestingArchival.LATER));
        while (WatermarkReader.current(icebergTable(table)).watermark().instant().isBefore(to)) {
            ArchiveOutcome outcome = cycle.archiveOnce();
            assertThat(outcome.kind()).as(outcome.describe()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);
        }
    }

    /** The archiver's {@code expire} with a retention of one settlement year, run at {@link #RETENTION_TIME}. */
    private TableMaintenance retention(String table)
    {
        return new TableMaintenance(warehouse.catalog(), TableIdentifier.of(SCHEMA, table), hotTier(table), () -> warehouse.database().connect(),
                new MaintenanceSettings(SnapshotRetention.DEFAULT, Duration.ofDays(3), Duration.ofHours(1), CompactionSettings.DEFAULTS, Optional.of(RetentionPeriod.parse("1y"))),
                InstantSource.fixed(RETENTION_TIME));
    }

    /** The months of the data files in the current snapshot. */
    private Set<YearMonth> coldMonths(String table)
            throws IOException
    {
        Set<YearMonth> months = new TreeSet<>();
        try (CloseableIterable<FileScanTask> tasks = icebergTable(table).newScan().planFiles()) {
            tasks.forEach(task -> months.add(ColdPartitions.month(task.file())));
        }
        return months;
    }

    private org.apache.iceberg.Table icebergTable(String table)
    {
        return warehouse.catalog().loadTable(TableIdentifier.of(SCHEMA, table));
    }

    private Object primaryKey(String table)
            throws SQLException
    {
        return client.postgres("SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'metering.%s'::regclass AND contype = 'p'".formatted(table));
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
                        Optional.ofNullable(result.getString(2)),
                        Optional.ofNullable(result.getString(3)),
                        Instant.ofEpochSecond((long) result.getDouble(4)),
                        result.getBigDecimal(5).toBigIntegerExact(),
                        result.getBigDecimal(6).setScale(6)));
            }
        }
        return sorted(rows);
    }

    /** Every column of every row, as the driver spells each value, in the order the query gives them or else by them. */
    private List<List<String>> allColumns(String sql)
            throws SQLException
    {
        List<List<String>> rows = new ArrayList<>();
        try (Connection connection = client.connect(); Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            int columns = result.getMetaData().getColumnCount();
            while (result.next()) {
                List<String> row = new ArrayList<>();
                for (int column = 1; column <= columns; column++) {
                    row.add(result.getString(column));
                }
                rows.add(row);
            }
        }
        rows.sort(Comparator.comparing(Object::toString));
        return rows;
    }

    private List<Map<String, Object>> trinoRows(String sql, org.apache.iceberg.Schema schema)
            throws SQLException
    {
        try (Connection connection = client.connect(); Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            return TestingDuckDb.rows(result, schema);
        }
    }

    private static String completeness(String table, String arguments)
    {
        return "SELECT * FROM TABLE(meterstore.system.meter_completeness(table_name => '%s', %s))".formatted(table, arguments);
    }

    private List<String> archiverCompleteness(String table, String month)
            throws IOException
    {
        Path config = Files.createTempFile("archiver", ".properties");
        try {
            Files.writeString(config, """
                    meterstore.postgresql.url=%s
                    meterstore.postgresql.user=%s
                    meterstore.iceberg.warehouse=%s
                    """.formatted(warehouse.database().jdbcUrl(), warehouse.database().user(), warehouse.location()));
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int exitCode = new ArchiverCli(new PrintStream(out, true, UTF_8), new PrintStream(err, true, UTF_8), InstantSource.system()).run(new String[] {
                    "completeness", "--config", config.toString(), "--table", table, "--month", month,
                    "--trino", "jdbc:trino://%s/meterstore".formatted(queryRunner.getCoordinator().getAddress())});
            assertThat(err.toString(UTF_8)).isEmpty();
            assertThat(exitCode).isEqualTo(ArchiverCli.EXIT_OK);
            return out.toString(UTF_8).lines().toList();
        }
        finally {
            Files.delete(config);
        }
    }

    private List<String> columnNames(String sql)
            throws SQLException
    {
        List<String> names = new ArrayList<>();
        try (Connection connection = client.connect(); Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            for (int column = 1; column <= result.getMetaData().getColumnCount(); column++) {
                names.add(result.getMetaData().getColumnName(column));
            }
        }
        return names;
    }

    private void assertRefused(String sql, String... messages)
    {
        assertThatThrownBy(() -> client.execute(sql))
                .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).as(e.getMessage()).isEqualTo(MeterstoreErrorCode.METERSTORE_INVALID_READING.toErrorCode().getCode()))
                .satisfies(e -> assertThat(e.getMessage()).contains(messages));
    }
}
