package io.meterstore.testing;

import io.meterstore.core.HotPartition;
import io.meterstore.core.HotTier;
import io.meterstore.core.HotTierRules;
import io.meterstore.core.MeteringCalendar;
import io.meterstore.core.MeterstoreException;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.Reading;
import io.meterstore.core.Sparte;
import io.meterstore.core.StoredRuleViolations;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;

import static io.meterstore.core.MeterstoreException.Reason.PARTITION_MISSING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS;
import static org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD;

@TestInstance(PER_CLASS)
final class TestHotTier
{
    private static final Instant AUGUST_20 = Instant.parse("2026-08-20T00:00:00Z");
    private static final Instant AUGUST_21 = Instant.parse("2026-08-21T00:00:00Z");
    private static final Instant AUGUST_22 = Instant.parse("2026-08-22T00:00:00Z");
    private static final String OPERATOR = "9900000000003";

    private TestingDatabase database;

    @BeforeAll
    void createDatabase()
    {
        database = TestingPostgresServer.shared().createDatabase("test_hot_tier");
    }

    @AfterAll
    void dropDatabase()
    {
        database.close();
    }

    @Test
    void testCreateParentIsIdempotent()
            throws SQLException
    {
        HotTier hotTier = hotTier("create_parent");
        try (Connection connection = database.connect()) {
            assertThat(hotTier.parentExists(connection)).isFalse();
            hotTier.createParent(connection);
            hotTier.createParent(connection);
            assertThat(hotTier.parentExists(connection)).isTrue();
            assertThat(scalar(connection, "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'create_parent'")).isEqualTo(4L); // the parent, the archival windows (ArchivalWindows) and their primary keys
            assertThat(scalar(connection, "SELECT pg_get_partkeydef('create_parent.readings'::regclass)")).isEqualTo("RANGE (\"from\")");
            assertThat(scalar(connection, """
                    SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'create_parent.readings'::regclass AND contype = 'p'"""))
                    .isEqualTo("PRIMARY KEY (malo_id, obis_code, \"from\", version)");
            assertThat(scalar(connection, "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'create_parent' AND table_name = 'readings'")).isEqualTo(18L); // the 17 of ReadingsSchema and superseded_at
            assertThat(hotTier.partitions(connection)).isEmpty();
        }
    }

    @Test
    void testEnsurePartition()
            throws SQLException
    {
        HotTier hotTier = hotTier("ensure_partition");
        try (Connection connection = database.connect()) {
            hotTier.createParent(connection);
            // any instant of the day names the day's partition
            assertThat(hotTier.ensurePartition(connection, Instant.parse("2026-08-20T13:37:00Z"))).isTrue();
            assertThat(hotTier.relationExists(connection, "readings_2026_08_20_0000")).isTrue();
            assertThat(scalar(connection, "SELECT relispartition FROM pg_class WHERE oid = 'ensure_partition.readings_2026_08_20_0000'::regclass")).isEqualTo(true);
            assertThat(scalar(connection, "SELECT pg_get_expr(relpartbound, oid) FROM pg_class WHERE oid = 'ensure_partition.readings_2026_08_20_0000'::regclass"))
                    .isEqualTo("FOR VALUES FROM ('2026-08-20 00:00:00+00') TO ('2026-08-21 00:00:00+00')");
            // the temporary CHECK that let ATTACH skip its scan is gone again; the primary key came with the attach, the
            // rules' CHECK constraints with the parent
            assertThat(scalar(connection, "SELECT string_agg(conname, ',' ORDER BY conname) FROM pg_constraint WHERE conrelid = 'ensure_partition.readings_2026_08_20_0000'::regclass"))
                    .isEqualTo("interval_forward,malo_id_shape,melo_id_shape,obis_code_canonical,quality_known,readings_2026_08_20_0000_pkey,sparte_known,unit_known,version_fits,version_scope_canonical");

            assertThat(hotTier.ensurePartition(connection, AUGUST_20)).isFalse();
            assertThat(hotTier.ensurePartition(connection, Instant.parse("2026-08-20T23:59:59.999999Z"))).isFalse();
            assertThat(hotTier.partitions(connection)).containsExactly(new HotPartition("readings_2026_08_20_0000", AUGUST_20, AUGUST_21, true));
            // the connection is left as it was found
            assertThat(connection.getAutoCommit()).isTrue();

            // rows of the day land in it through the parent
            insert(connection, hotTier, Instant.parse("2026-08-20T23:45:00Z"));
            assertThat(scalar(connection, "SELECT count(*) FROM ensure_partition.readings_2026_08_20_0000")).isEqualTo(1L);
            // and a row of a day without a partition is refused, not lost
            assertThatThrownBy(() -> insert(connection, hotTier, AUGUST_21))
                    .isInstanceOf(SQLException.class)
                    .hasMessageContaining("no partition of relation \"readings\" found for row");
        }
    }

    @Test
    void testEnsurePartitionOfDetachedName()
            throws SQLException
    {
        HotTier hotTier = hotTier("ensure_detached");
        try (Connection connection = database.connect()) {
            hotTier.createParent(connection);
            hotTier.ensurePartition(connection, AUGUST_20);
            hotTier.detach(connection, "readings_2026_08_20_0000");
            // a detached partition still owns its name and its bound: it is not recreated next to itself
            assertThat(hotTier.ensurePartition(connection, AUGUST_20)).isFalse();
            assertThat(hotTier.partitions(connection)).containsExactly(new HotPartition("readings_2026_08_20_0000", AUGUST_20, AUGUST_21, false));
        }
    }

    @Test
    void testPartitions()
            throws SQLException
    {
        HotTier hotTier = hotTier("list_partitions");
        try (Connection connection = database.connect()) {
            hotTier.createParent(connection);
            // created out of order
            hotTier.ensurePartition(connection, AUGUST_22);
            hotTier.ensurePartition(connection, AUGUST_20);
            hotTier.ensurePartition(connection, AUGUST_21);
            hotTier.detach(connection, "readings_2026_08_21_0000");
            // relations that only look like partitions are not partitions
            try (Statement statement = connection.createStatement()) {
                statement.execute("CREATE TABLE list_partitions.readings_archive (id int)");
                statement.execute("CREATE TABLE list_partitions.readingsx2026_08_23_0000 (id int)");
                statement.execute("CREATE TABLE list_partitions.readings_2026_08_23_0000_old (id int)");
                statement.execute("CREATE VIEW list_partitions.readings_2026_08_24_0000 AS SELECT 1 AS id");
            }

            assertThat(hotTier.partitions(connection)).containsExactly(
                    new HotPartition("readings_2026_08_20_0000", AUGUST_20, AUGUST_21, true),
                    new HotPartition("readings_2026_08_21_0000", AUGUST_21, AUGUST_22, false),
                    new HotPartition("readings_2026_08_22_0000", AUGUST_22, AUGUST_22.plus(Duration.ofDays(1)), true));

            // a gap: each partition ends at its catalogue bound, not at the next partition's start
            hotTier.ensurePartition(connection, Instant.parse("2026-08-25T06:00:00Z"));
            List<HotPartition> partitions = hotTier.partitions(connection);
            assertThat(partitions).hasSize(4);
            assertThat(partitions.get(2)).isEqualTo(new HotPartition("readings_2026_08_22_0000", AUGUST_22, Instant.parse("2026-08-23T00:00:00Z"), true));
            assertThat(partitions.get(3)).isEqualTo(new HotPartition("readings_2026_08_25_0000", Instant.parse("2026-08-25T00:00:00Z"), Instant.parse("2026-08-26T00:00:00Z"), true));
        }
    }

    @Test
    void testPartitionsCarryTheirCatalogueBounds()
            throws SQLException
    {
        // archived by the hour, but a day partition was created first (by hand, or by an INSERT before any step was recorded)
        HotTier hotTier = new HotTier("catalogue_bounds", new PartitionNaming("readings", Duration.ofHours(1)), Duration.ofSeconds(5));
        try (Connection connection = database.connect()) {
            hotTier.createParent(connection);
            try (Statement statement = connection.createStatement()) {
                statement.execute("CREATE TABLE catalogue_bounds.readings_2026_08_20_0000 PARTITION OF catalogue_bounds.readings FOR VALUES FROM ('2026-08-20 00:00:00+00') TO ('2026-08-21 00:00:00+00')");
                // the session's time zone shapes the bound's text, never the instants read back
                statement.execute("SET TimeZone = 'Pacific/Chatham'");
            }
            assertThat(hotTier.partitions(connection)).containsExactly(new HotPartition("readings_2026_08_20_0000", AUGUST_20, AUGUST_21, true));

            // any instant of the day is the day partition's: no hour partition is created inside it
            assertThat(hotTier.ensurePartition(connection, Instant.parse("2026-08-20T13:37:00Z"))).isFalse();
            // the next hour partition is one step
            assertThat(hotTier.ensurePartition(connection, Instant.parse("2026-08-21T00:30:00Z"))).isTrue();

            // detached, it keeps its bound as a CHECK constraint, and the listing reads it from there
            hotTier.detach(connection, "readings_2026_08_20_0000");
            assertThat(hotTier.partitions(connection)).containsExactly(
                    new HotPartition("readings_2026_08_20_0000", AUGUST_20, AUGUST_21, false),
                    new HotPartition("readings_2026_08_21_0000", AUGUST_21, Instant.parse("2026-08-21T01:00:00Z"), true));
            try (Statement statement = connection.createStatement()) {
                statement.execute("SET TimeZone = 'UTC'");
            }
            assertThat(scalar(connection, "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'catalogue_bounds.readings_2026_08_20_0000'::regclass AND conname = 'meterstore_partition_bound'"))
                    .isEqualTo("CHECK (((\"from\" >= '2026-08-20 00:00:00+00'::timestamp with time zone) AND (\"from\" < '2026-08-21 00:00:00+00'::timestamp with time zone))) NOT VALID");
            // the constraint guards the detached partition too
            assertThatThrownBy(() -> {
                try (Statement statement = connection.createStatement()) {
                    statement.execute("INSERT INTO catalogue_bounds.readings_2026_08_20_0000 (malo_id, obis_code, sparte, \"from\", \"to\", value, unit, quality, resolution, source_kind, version, version_scope, recorded_at, balancing_day) " +
                            "VALUES ('41373559241', '1-1:1.29.0', 'STROM', '2026-08-21 00:00:00+00', '2026-08-21 00:15:00+00', 1, 'KWH', 'MEASURED', 'PT15M', 'MSCONS', 1, '9900000000003:2026-08', now(), '2026-08-21')");
                }
            }).hasMessageContaining("meterstore_partition_bound");

            // a partition detached before bounds were kept (no constraint) ends at the next partition's start or after one step
            try (Statement statement = connection.createStatement()) {
                statement.execute("ALTER TABLE catalogue_bounds.readings_2026_08_20_0000 DROP CONSTRAINT meterstore_partition_bound");
            }
            assertThat(hotTier.partitions(connection).getFirst()).isEqualTo(new HotPartition("readings_2026_08_20_0000", AUGUST_20, Instant.parse("2026-08-20T01:00:00Z"), false, false));
        }
    }

    @Test
    void testPartitionBoundsWithoutAnEndAreRefused()
            throws SQLException
    {
        HotTier hotTier = hotTier("unbounded");
        try (Connection connection = database.connect()) {
            hotTier.createParent(connection);
            try (Statement statement = connection.createStatement()) {
                statement.execute("CREATE TABLE unbounded.readings_2026_08_20_0000 PARTITION OF unbounded.readings FOR VALUES FROM ('2026-08-20 00:00:00+00') TO (MAXVALUE)");
            }
            assertThatThrownBy(() -> hotTier.partitions(connection))
                    .isInstanceOfSatisfying(MeterstoreException.class, e -> assertThat(e.reason()).isEqualTo(MeterstoreException.Reason.PARTITION_BOUNDS_UNSUPPORTED))
                    .hasMessageContaining("Partition 'readings_2026_08_20_0000' of table '\"unbounded\".\"readings\"' is attached as 'FOR VALUES FROM ('2026-08-20 00:00:00+00') TO (MAXVALUE)'");
        }
    }

    @Test
    void testPartitionsOfAnotherTableInTheSchema()
            throws SQLException
    {
        HotTier readings = hotTier("two_tables");
        HotTier gas = new HotTier("two_tables", new PartitionNaming("readings_gas", PartitionNaming.DEFAULT_STEP), Duration.ofSeconds(5));
        try (Connection connection = database.connect()) {
            readings.createParent(connection);
            gas.createParent(connection);
            readings.ensurePartition(connection, AUGUST_20);
            gas.ensurePartition(connection, AUGUST_21);
            assertThat(readings.partitions(connection)).extracting(HotPartition::name).containsExactly("readings_2026_08_20_0000");
            assertThat(gas.partitions(connection)).extracting(HotPartition::name).containsExactly("readings_gas_2026_08_21_0000");
        }
    }

    @Test
    void testDetach()
            throws SQLException
    {
        HotTier hotTier = hotTier("detach");
        try (Connection connection = database.connect()) {
            hotTier.createParent(connection);
            hotTier.ensurePartition(connection, AUGUST_20);
            hotTier.ensurePartition(connection, AUGUST_21);
            insert(connection, hotTier, Instant.parse("2026-08-20T10:00:00Z"));
            insert(connection, hotTier, Instant.parse("2026-08-20T10:15:00Z"));
            insert(connection, hotTier, Instant.parse("2026-08-21T10:00:00Z"));
            assertThat(scalar(connection, "SELECT count(*) FROM detach.readings")).isEqualTo(3L);

            hotTier.detach(connection, "readings_2026_08_20_0000");
            // gone from the parent, still readable by name
            assertThat(scalar(connection, "SELECT count(*) FROM detach.readings")).isEqualTo(1L);
            assertThat(scalar(connection, "SELECT count(*) FROM detach.readings_2026_08_20_0000")).isEqualTo(2L);
            assertThat(hotTier.partitions(connection)).extracting(HotPartition::attached).containsExactly(false, true);
            // detaching again changes nothing
            hotTier.detach(connection, "readings_2026_08_20_0000");
            assertThat(scalar(connection, "SELECT count(*) FROM detach.readings_2026_08_20_0000")).isEqualTo(2L);
            // the parent no longer routes the day anywhere
            assertThatThrownBy(() -> insert(connection, hotTier, Instant.parse("2026-08-20T11:00:00Z")))
                    .hasMessageContaining("no partition of relation \"readings\" found for row");

            assertThatThrownBy(() -> hotTier.detach(connection, "readings_2026_09_01_0000"))
                    .isInstanceOfSatisfying(MeterstoreException.class, e -> assertThat(e.reason()).isEqualTo(PARTITION_MISSING))
                    .hasMessage("Partition 'readings_2026_09_01_0000' of table '\"detach\".\"readings\"' does not exist");
        }
    }

    @Test
    void testDrop()
            throws SQLException
    {
        HotTier hotTier = hotTier("drop_partition");
        try (Connection connection = database.connect()) {
            hotTier.createParent(connection);
            hotTier.ensurePartition(connection, AUGUST_20);
            insert(connection, hotTier, Instant.parse("2026-08-20T10:00:00Z"));

            assertThatThrownBy(() -> hotTier.drop(connection, "readings_2026_08_20_0000"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("Partition 'readings_2026_08_20_0000' is attached; only detached partitions are dropped");
            assertThat(scalar(connection, "SELECT count(*) FROM drop_partition.readings")).isEqualTo(1L);

            hotTier.detach(connection, "readings_2026_08_20_0000");
            hotTier.drop(connection, "readings_2026_08_20_0000");
            assertThat(hotTier.relationExists(connection, "readings_2026_08_20_0000")).isFalse();
            assertThat(hotTier.partitions(connection)).isEmpty();
            assertThat(connection.getAutoCommit()).isTrue();
        }
    }

    @Test
    // without the lock_timeout, ensurePartition would queue behind the holder forever
    @Timeout(value = 60, threadMode = SEPARATE_THREAD)
    void testLockTimeout()
            throws SQLException
    {
        HotTier setup = hotTier("lock_timeout");
        HotTier impatient = new HotTier("lock_timeout", new PartitionNaming("readings", PartitionNaming.DEFAULT_STEP), Duration.ofMillis(200));
        try (Connection holder = database.connect(); Connection connection = database.connect()) {
            setup.createParent(connection);
            // a long query or a migration holds the parent
            holder.setAutoCommit(false);
            try (Statement statement = holder.createStatement()) {
                statement.execute("LOCK TABLE lock_timeout.readings IN ACCESS EXCLUSIVE MODE");
            }

            assertThatThrownBy(() -> impatient.ensurePartition(connection, AUGUST_20))
                    .isInstanceOf(HotTier.LockTimeoutException.class)
                    .hasMessage("Lock timeout on table '\"lock_timeout\".\"readings\"': another session held a conflicting lock for longer than 'meterstore.postgresql.lock-timeout' (200ms); try again later")
                    .satisfies(e -> assertThat(HotTier.isLockTimeout((SQLException) e)).isTrue());
            // and created nothing, not even the standalone table
            assertThat(impatient.relationExists(connection, "readings_2026_08_20_0000")).isFalse();
            assertThat(connection.getAutoCommit()).isTrue();

            holder.rollback();
            assertThat(impatient.ensurePartition(connection, AUGUST_20)).isTrue();
            assertThat(impatient.partitions(connection)).containsExactly(new HotPartition("readings_2026_08_20_0000", AUGUST_20, AUGUST_21, true));
        }
    }

    @Test
    void testCreateAgainGivesAnOlderTableTheRules()
            throws SQLException
    {
        HotTier hotTier = hotTier("older_table");
        try (Connection connection = database.connect(); Statement statement = connection.createStatement()) {
            // a table as MeterStore created it before the rules: no triggers, no CHECK constraints, and rows that break both
            hotTier.createParent(connection);
            hotTier.ensurePartition(connection, AUGUST_20);
            statement.execute("DROP TRIGGER meterstore_reading_rules_insert ON older_table.readings");
            statement.execute("DROP TRIGGER meterstore_reading_rules_insert ON older_table.readings_2026_08_20_0000");
            for (String check : List.of("interval_forward", "malo_id_shape", "melo_id_shape", "obis_code_canonical", "quality_known", "sparte_known", "unit_known", "version_fits", "version_scope_canonical")) {
                statement.execute("ALTER TABLE older_table.readings DROP CONSTRAINT " + check);
            }
            insert(connection, hotTier, AUGUST_20);
            statement.execute("UPDATE older_table.readings SET obis_code = '1-1:1.29.0*255'");
            insert(connection, hotTier, AUGUST_20.plus(Duration.ofMinutes(15)));
            String hour = """
                    INSERT INTO older_table.readings (malo_id, obis_code, sparte, "from", "to", value, unit, quality, resolution, source_kind, version, version_scope, recorded_at, balancing_day)
                    VALUES ('41373559241', '1-1:1.29.0', 'STROM', '2026-08-20 00:15:00+00', '2026-08-20 01:15:00+00', 6, 'KWH', 'MEASURED', 'PT1H', 'MSCONS', 2, '9900000000003:2026-08', now(), '2026-08-20')""";
            statement.execute(hour);
            assertThat(StoredRuleViolations.stillBroken(connection, hotTier)).isEmpty();

            // create again: the rules hold for new rows, the constraint the stored row breaks is named, not validated,
            // and the pair of stored rows that breaks a rule (the hour over the quarter-hour 00:15) is found and kept
            assertThat(hotTier.createParent(connection))
                    .singleElement(InstanceOfAssertFactories.STRING)
                    .startsWith("obis_code_canonical (")
                    .contains("is violated by some row");
            assertThat(StoredRuleViolations.find(connection, hotTier))
                    .singleElement(InstanceOfAssertFactories.STRING)
                    .contains("rule one_grid_per_reading", "malo_id '41373559241'", "version 1 over [2026-08-20T00:15:00Z, 2026-08-20T00:30:00Z)", "version 2 over [2026-08-20T00:15:00Z, 2026-08-20T01:15:00Z)");
            assertThat(StoredRuleViolations.stillBroken(connection, hotTier)).hasSize(1);
            assertThatThrownBy(() -> statement.execute(hour.replace("00:15:00+00', '2026-08-20 01:15", "00:00:00+00', '2026-08-20 01:00").replace("'PT1H', 'MSCONS', 2", "'PT1H', 'MSCONS', 3")))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo(HotTierRules.RULE_VIOLATION))
                    .hasMessageContaining("one_grid_per_reading");
            assertThatThrownBy(() -> statement.execute("UPDATE older_table.readings SET obis_code = '1-1:1.29.0*255' WHERE obis_code = '1-1:1.29.0'"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("23514"))
                    .hasMessageContaining("obis_code_canonical");
            // still writable where no stored row breaks a rule; the rows repaired, create again validates the
            // constraint, and the pair is no longer reported
            insert(connection, hotTier, AUGUST_20.plus(Duration.ofHours(2)));
            statement.execute("UPDATE older_table.readings SET obis_code = '1-1:1.29.0' WHERE obis_code = '1-1:1.29.0*255'");
            statement.execute("DELETE FROM older_table.readings WHERE version = 2");
            assertThat(StoredRuleViolations.stillBroken(connection, hotTier)).isEmpty();
            assertThat(hotTier.createParent(connection)).isEmpty();
            assertThat(StoredRuleViolations.find(connection, hotTier)).isEmpty();
            assertThat(scalar(connection, "SELECT bool_and(convalidated) FROM pg_constraint WHERE conrelid = 'older_table.readings'::regclass AND contype = 'c'")).isEqualTo(true);
            assertThat(scalar(connection, "SELECT count(*) FROM older_table.readings")).isEqualTo(3L);
        }
    }

    /**
     * A day's ingest of a channel is checked in one pass: over the new rows alone when their range holds nothing else, with
     * the stored versions of the range when it does, and against the span before each channel's first new row.
     */
    @Test
    void testDaysIngestMeetsTheRules()
            throws SQLException
    {
        HotTier hotTier = hotTier("day_rules");
        Duration day = Duration.ofDays(1);
        try (Connection connection = database.connect(); Statement statement = connection.createStatement()) {
            hotTier.createParent(connection);
            for (Instant start : List.of(AUGUST_20, AUGUST_21, AUGUST_22)) {
                hotTier.ensurePartition(connection, start);
            }
            // into an empty range: a day of quarter-hours is taken; with an hour over four of them at another version, refused
            assertThat(statement.executeUpdate(insert(hotTier, intervals("41373559241", AUGUST_20, day, 1, OPERATOR, "PT15M")))).isEqualTo(96);
            assertRuleRefused(statement, insert(hotTier, intervals("51238696781", AUGUST_20, day, 1, OPERATOR, "PT15M"), intervals("51238696781", AUGUST_20.plus(Duration.ofHours(10)), Duration.ofHours(1), 2, OPERATOR, "PT1H")),
                    "one_grid_per_reading");
            // a range that holds other rows: the same grid at a higher version is taken, another grid refused
            assertRuleRefused(statement, insert(hotTier, intervals("41373559241", AUGUST_20, day, 2, OPERATOR, "PT1H")), "one_grid_per_reading");
            assertThat(statement.executeUpdate(insert(hotTier, intervals("41373559241", AUGUST_20, day, 2, OPERATOR, "PT15M")))).isEqualTo(96);
            // the span before the day reaches into it: an hour stored from 23:30 the day before
            statement.executeUpdate(insert(hotTier, intervals("51238696781", AUGUST_21.minus(Duration.ofMinutes(30)), Duration.ofHours(1), 1, OPERATOR, "PT1H")));
            assertRuleRefused(statement, insert(hotTier, intervals("51238696781", AUGUST_21, day, 2, OPERATOR, "PT15M")), "one_grid_per_reading");
            // a day of another operator's versions on the stored grid
            assertRuleRefused(statement, insert(hotTier, intervals("41373559241", AUGUST_20, day, 3, "9900000000010", "PT15M")), "one_operator_per_reading");
            assertThat(scalar(connection, "SELECT count(*) FROM day_rules.readings")).isEqualTo(2L * 96 + 1);
            // an UPDATE meets the rules, also from a writer that sets what the supersession marks' own UPDATEs once set
            statement.execute("SELECT set_config('meterstore.marking', 'on', false)");
            assertRuleRefused(statement, "UPDATE day_rules.readings SET \"to\" = \"to\" + interval '45 minutes' WHERE malo_id = '41373559241' AND \"from\" = '2026-08-20 10:00:00+00' AND version = 2",
                    "one_grid_per_reading");
            statement.execute("SELECT set_config('meterstore.marking', '', false)");
        }
    }

    @Test
    void testMonthlySpanIsMetWeeksLater()
            throws SQLException
    {
        HotTier hotTier = hotTier("month_rules");
        try (Connection connection = database.connect(); Statement statement = connection.createStatement()) {
            hotTier.createParent(connection);
            // a P1M row of September from Berlin midnight, and a gas one from 06:00 local time, twenty days before the rows
            // that meet them, across days no partition holds
            for (Instant start : List.of(Instant.parse("2026-08-31T00:00:00Z"), Instant.parse("2026-09-01T00:00:00Z"), Instant.parse("2026-09-20T00:00:00Z"))) {
                hotTier.ensurePartition(connection, start);
            }
            String month = """
                    SELECT '%s', '1-1:1.29.0', '%s', timestamptz '%s', timestamptz '%s', 300, 'KWH', 'MEASURED', 'P1M', 'MSCONS', 1, '%s:2026-09', now(), DATE '2026-09-01'""";
            assertThat(statement.executeUpdate(insert(hotTier, month.formatted("41373559241", "STROM", "2026-08-31T22:00:00Z", "2026-09-30T22:00:00Z", OPERATOR)))).isEqualTo(1);
            assertThat(statement.executeUpdate(insert(hotTier, month.formatted("51238696781", "GAS", "2026-09-01T04:00:00Z", "2026-10-01T04:00:00Z", OPERATOR)))).isEqualTo(1);
            Instant september20 = Instant.parse("2026-09-20T00:00:00Z");
            // a day's ingest into an empty range, and a single correction: each meets the month's span
            assertRuleRefused(statement, insert(hotTier, intervals("41373559241", september20, Duration.ofDays(1), 2, OPERATOR, "PT15M")), "one_grid_per_reading");
            assertRuleRefused(statement, insert(hotTier, intervals("51238696781", september20.plus(Duration.ofHours(10)), Duration.ofMinutes(15), 2, OPERATOR, "PT15M")), "one_grid_per_reading");
            assertThat(scalar(connection, "SELECT count(*) FROM month_rules.readings")).isEqualTo(2L);
        }
    }

    /** One INSERT of the rows the {@code selects} give. */
    private static String insert(HotTier hotTier, String... selects)
    {
        return "INSERT INTO %s (malo_id, obis_code, sparte, \"from\", \"to\", value, unit, quality, resolution, source_kind, version, version_scope, recorded_at, balancing_day) %s"
                .formatted(hotTier.qualifiedParent(), String.join(" UNION ALL ", selects));
    }

    /** The intervals of {@code resolution} of {@code maloId} from {@code start} for {@code length}, at {@code version} under {@code operator}. */
    private static String intervals(String maloId, Instant start, Duration length, int version, String operator, String resolution)
    {
        Duration step = resolution.equals("PT1H") ? Duration.ofHours(1) : Duration.ofMinutes(15);
        return """
                SELECT '%s', '1-1:1.29.0', 'STROM', t, t + interval '%d seconds', 1, 'KWH', 'MEASURED', '%s', 'MSCONS', %d, '%s:2026-08', now(), DATE '2026-08-20'
                FROM generate_series(timestamptz '%s', timestamptz '%s', interval '%d seconds') t"""
                .formatted(maloId, step.toSeconds(), resolution, version, operator, start, start.plus(length).minus(step), step.toSeconds());
    }

    private static void assertRuleRefused(Statement statement, String sql, String rule)
    {
        assertThatThrownBy(() -> statement.executeUpdate(sql))
                .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo(HotTierRules.RULE_VIOLATION))
                .hasMessageContaining(rule);
    }

    @Test
    void testCreateAgainReplacesAChangedCheck()
            throws SQLException
    {
        HotTier hotTier = hotTier("changed_check");
        try (Connection connection = database.connect(); Statement statement = connection.createStatement()) {
            // a table as MeterStore created it when its units were KWH and M3: the parent, an attached and a detached partition
            hotTier.createParent(connection);
            hotTier.ensurePartition(connection, AUGUST_20);
            hotTier.ensurePartition(connection, AUGUST_21);
            insert(connection, hotTier, AUGUST_21);
            hotTier.detach(connection, "readings_2026_08_21_0000");
            statement.execute("ALTER TABLE changed_check.readings DROP CONSTRAINT unit_known");
            for (String partition : List.of("readings_2026_08_20_0000", "readings_2026_08_21_0000")) {
                statement.execute("ALTER TABLE changed_check.%s DROP CONSTRAINT IF EXISTS unit_known".formatted(partition));
            }
            statement.execute("ALTER TABLE changed_check.readings ADD CONSTRAINT unit_known CHECK (unit IN ('KWH', 'M3'))");
            statement.execute("ALTER TABLE changed_check.readings_2026_08_21_0000 ADD CONSTRAINT unit_known CHECK (unit IN ('KWH', 'M3'))");
            assertThatThrownBy(() -> insert(connection, hotTier, AUGUST_20, "MWH"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("23514"))
                    .hasMessageContaining("unit_known");

            // create again: the constraint of that name holds the current units, on the parent and every partition (validated
            // where attached, NOT VALID on the detached one, whose rows are archived or are checked by its next archival)
            assertThat(hotTier.createParent(connection)).isEmpty();
            insert(connection, hotTier, AUGUST_20, "MWH");
            assertThat(scalar(connection, "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'changed_check.readings'::regclass AND conname = 'unit_known'"))
                    .isEqualTo("CHECK ((unit = ANY (ARRAY['KWH'::text, 'MWH'::text, 'KW'::text, 'KVARH'::text, 'KVAR'::text, 'M3'::text])))");
            assertThat(scalar(connection, """
                    SELECT count(DISTINCT replace(pg_get_constraintdef(k.oid), ' NOT VALID', '')) FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE n.nspname = 'changed_check' AND k.conname = 'unit_known'""")).isEqualTo(1L);
            assertThat(scalar(connection, "SELECT bool_and(convalidated) FROM pg_constraint WHERE conrelid = 'changed_check.readings'::regclass AND contype = 'c'")).isEqualTo(true);
            // the detached partition takes the new body too, so an interrupted archival's partition attaches again
            hotTier.reattach(connection, "readings_2026_08_21_0000");
            assertThat(scalar(connection, "SELECT count(*) FROM changed_check.readings")).isEqualTo(2L);
            // and a third create changes nothing
            assertThat(hotTier.createParent(connection)).isEmpty();
            assertThat(scalar(connection, "SELECT count(*) FROM pg_constraint WHERE conrelid = 'changed_check.readings'::regclass AND contype = 'c'")).isEqualTo((long) HotTierRules.CHECKS.size());
        }
    }

    private HotTier hotTier(String schema)
    {
        return new HotTier(schema, new PartitionNaming("readings", PartitionNaming.DEFAULT_STEP), Duration.ofSeconds(5));
    }

    private static void insert(Connection connection, HotTier hotTier, Instant from)
            throws SQLException
    {
        insert(connection, hotTier, from, "KWH");
    }

    private static void insert(Connection connection, HotTier hotTier, Instant from, String unit)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement("""
                INSERT INTO %s (malo_id, obis_code, sparte, "from", "to", value, unit, quality, resolution, source_kind, version, version_scope, recorded_at, balancing_day)
                VALUES ('41373559241', '1-1:1.29.0', 'STROM', ?, ?, 1.5, ?, 'MEASURED', 'PT15M', 'MSCONS', 1, ?, now(), ?)""".formatted(hotTier.qualifiedParent()))) {
            statement.setObject(1, from.atOffset(ZoneOffset.UTC));
            statement.setObject(2, from.plus(Duration.ofMinutes(15)).atOffset(ZoneOffset.UTC));
            statement.setString(3, unit);
            statement.setString(4, Reading.versionScope(ReadingsGenerator.DEFAULT_OPERATOR_ID, Sparte.STROM, from));
            statement.setObject(5, MeteringCalendar.balancingDay(Sparte.STROM, from));
            statement.executeUpdate();
        }
    }

    private static Object scalar(Connection connection, String sql)
            throws SQLException
    {
        try (Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
            assertThat(result.next()).isTrue();
            return result.getObject(1);
        }
    }
}
