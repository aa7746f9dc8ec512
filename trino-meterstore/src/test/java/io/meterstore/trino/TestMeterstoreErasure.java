package io.meterstore.trino;

import com.google.common.collect.ImmutableList;
import io.meterstore.core.ColdFileRole;
import io.meterstore.core.HotTier;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.TableColumns;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.parquet.LiveRowsMerge;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.ReadingsOracle;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.meterstore.trino.base.MeterstoreTypes;
import io.trino.Session;
import io.trino.spi.block.Block;
import io.trino.spi.security.Identity;
import io.trino.spi.type.LongTimestampWithTimeZone;
import io.trino.testing.AbstractTestQueryFramework;
import io.trino.testing.DistributedQueryRunner;
import io.trino.testing.MaterializedRow;
import io.trino.testing.QueryRunner;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Table;
import org.apache.iceberg.io.CloseableIterable;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static io.meterstore.trino.TestingInserts.correction;
import static io.meterstore.trino.TestingInserts.insert;
import static io.meterstore.trino.TestingInserts.timestamp;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_DELETE_NOT_SUPPORTED;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_ERASED;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_ERASURE_KEY_MISSING;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_WRITE_FAILED;
import static io.trino.spi.StandardErrorCode.NOT_SUPPORTED;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Erasure by DELETE through Trino: both tiers, exactly the readings the WHERE clause names, every version, the resolved
 * cold layout kept (position deletes of a rewritten winners file applied and dropped with it), audited, idempotent,
 * completed by a rerun after a failure between the tiers; predicates MeterStore cannot honour exactly are refused.
 */
class TestMeterstoreErasure
        extends AbstractTestQueryFramework
{
    static final String HMAC_KEY = "erasure-test-key-0123456789abcdef";
    private static final int ARCHIVED_WINDOWS = 3;
    private static final String READINGS_CANNOT_BE_CHANGED = "Table 'metering.readings' shows only the winning version of each reading and cannot be changed: "
            + "a reading is corrected by INSERT into 'readings_versions' with a higher version, and erased by DELETE from 'readings_versions', which erases every version";

    private TestingWarehouse warehouse;
    private Table table;
    private TieringWatermark watermark;
    private final List<Reading> loaded = new ArrayList<>();

    @Override
    protected QueryRunner createQueryRunner()
            throws Exception
    {
        warehouse = TestingDeployment.SINGLE_NODE.warehouse(TestingPostgresServer.shared().createDatabase("erasure"));
        table = TestingMeterstoreTables.createTables(warehouse);
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(16)
                .meters(6)
                .startDay(LocalDate.of(2026, 3, 1))
                .days(6)
                .correctionsFraction(0.02)
                .build();
        generator.forEach(loaded::add);
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, generator);
        }
        TestingArchival.archiveWindows(warehouse, ARCHIVED_WINDOWS);
        table.refresh();
        watermark = WatermarkReader.current(table).watermark();
        // Trino's file-based access control: a reader may only read, everyone else (the test's "user", an operator) may erase
        Path rules = Files.createTempFile("erasure-access", ".json");
        rules.toFile().deleteOnExit();
        Files.writeString(rules, """
                {
                  "catalogs": [{"allow": "all"}],
                  "tables": [
                    {"user": "reader", "privileges": ["SELECT"]},
                    {"privileges": ["SELECT", "INSERT", "DELETE", "UPDATE", "OWNERSHIP"]}
                  ],
                  "procedures": [
                    {"privileges": ["EXECUTE"]}
                  ]
                }
                """);
        DistributedQueryRunner queryRunner = MeterstoreQueryRunner.builder(warehouse)
                .withCatalogOverrides(Map.of("meterstore.erasure.hmac-key", HMAC_KEY))
                .setSystemAccessControl("file", Map.of("security.config-file", rules.toString()))
                .build();
        queryRunner.createCatalog("no_key", "meterstore", new HashMap<>(MeterstoreQueryRunner.catalogProperties(warehouse)));
        return queryRunner;
    }

    private Instant interval(int days, int quarters)
    {
        return watermark.instant().plus(Duration.ofDays(days)).plus(Duration.ofMinutes(15L * quarters));
    }

    @Test
    void testEraseOneMeterAcrossTheWatermark()
            throws Exception
    {
        String malo = ReadingsGenerator.maloId(1);
        String neighbour = ReadingsGenerator.maloId(0);
        // late corrections of both meters into the same archived day: the stored winners are deleted by position
        // deletes against the day's winners file, which the erasure must rewrite
        Reading erasedCorrection = correction(1, interval(-1, 20), nextVersion(1, interval(-1, 20)), "1.25");
        Reading keptCorrection = correction(0, interval(-1, 20), nextVersion(0, interval(-1, 20)), "2.50");
        assertUpdate(insert(erasedCorrection, keptCorrection), 2);
        long deleteFilesBefore = deleteFiles();
        assertThat(deleteFilesBefore).isPositive();

        Instant lower = interval(-2, 0);
        Instant upper = interval(1, 0);
        String range = "\"from\" >= %s AND \"from\" < %s".formatted(timestamp(lower), timestamp(upper));
        String erased = "malo_id = '%s' AND %s".formatted(malo, range);
        long hotBefore = count("readings_versions WHERE " + erased + " AND \"from\" >= " + timestamp(watermark.instant()));
        long coldBefore = count("readings_versions WHERE " + erased + " AND \"from\" < " + timestamp(watermark.instant()));
        assertThat(hotBefore).isPositive();
        assertThat(coldBefore).isPositive();
        MaterializedRow outsideBefore = outside(erased);
        long icebergBefore = count("iceberg.metering.readings");
        table.refresh();
        long snapshotBefore = table.currentSnapshot().snapshotId();
        long olderSnapshotOthers = count("readings_versions FOR VERSION AS OF %s WHERE NOT (%s)".formatted(snapshotBefore, erased));
        assertThat(count("readings_versions FOR VERSION AS OF %s WHERE %s".formatted(snapshotBefore, erased))).isEqualTo(coldBefore);

        assertUpdate("DELETE FROM readings_versions WHERE " + erased, hotBefore + coldBefore);

        // gone from every view of both tiers, and from the files Trino's Iceberg connector reads
        assertThat(count("readings_versions WHERE " + erased)).isZero();
        assertThat(count("readings WHERE " + erased)).isZero();
        assertThat(count("iceberg.metering.readings WHERE " + erased)).isZero();
        assertThat(count("iceberg.metering.readings")).isEqualTo(icebergBefore - coldBefore);
        // a snapshot from before the erasure still references the erased rows' files until the archiver expires it: time travel hides them
        assertThat(count("readings_versions FOR VERSION AS OF %s WHERE %s".formatted(snapshotBefore, erased))).isZero();
        assertThat(count("readings FOR VERSION AS OF %s WHERE %s".formatted(snapshotBefore, erased))).isZero();
        assertThat(count("readings_versions FOR VERSION AS OF %s WHERE NOT (%s)".formatted(snapshotBefore, erased))).isEqualTo(olderSnapshotOthers);
        assertThat(computeActual("SELECT count(malo_id) FROM readings_versions FOR VERSION AS OF %s WHERE malo_id = '%s'".formatted(snapshotBefore, malo)).getOnlyValue())
                .isEqualTo(count("readings_versions WHERE malo_id = '%s' AND \"from\" < %s".formatted(malo, timestamp(watermark.instant()))));
        assertThat(count("readings FOR TIMESTAMP AS OF %s WHERE %s".formatted(timestamp(Instant.now().minusSeconds(1)), erased))).isZero();
        // everything else exactly as before, and as the oracle says for the meters no other test touches
        assertThat(outside(erased)).isEqualTo(outsideBefore);
        List<Reading> expected = ImmutableList.<Reading>builder().addAll(loaded).add(keptCorrection).build();
        ReadingsOracle oracle = ReadingsOracle.of(expected);
        for (String untouched : List.of(neighbour, ReadingsGenerator.maloId(4))) {
            List<Reading> versions = oracle.versions(ReadingsOracle.maloId(untouched));
            BigDecimal sum = versions.stream().map(Reading::value).reduce(BigDecimal.ZERO, BigDecimal::add);
            MaterializedRow actual = computeActual("SELECT count(*), sum(value) FROM readings_versions WHERE malo_id = '%s'".formatted(untouched)).getMaterializedRows().getFirst();
            assertThat(actual.getField(0)).isEqualTo((long) versions.size());
            assertThat(((BigDecimal) actual.getField(1)).compareTo(sum)).isZero();
        }
        // the neighbour's correction still wins, once, and its superseded winner is still a version
        assertThat(computeActual("SELECT value, version FROM readings WHERE malo_id = '%s' AND \"from\" = %s".formatted(neighbour, timestamp(keptCorrection.from()))).getMaterializedRows())
                .extracting(row -> row.getFields().toString())
                .containsExactly("[2.500000, %s]".formatted(keptCorrection.version()));
        assertThat(count("readings_versions WHERE malo_id = '%s' AND \"from\" = %s".formatted(neighbour, timestamp(keptCorrection.from())))).isEqualTo(2);
        // the rewritten winners file took its position deletes with it, and every live file keeps its role: the months stay resolved
        assertThat(deleteFiles()).isLessThan(deleteFilesBefore);
        try (CloseableIterable<FileScanTask> planned = table.newScan().planFiles()) {
            planned.forEach(task -> {
                assertThat(ColdFileRole.of(task.file().location())).isPresent();
                task.deletes().forEach(delete -> assertThat(ColdFileRole.of(delete.location())).contains(ColdFileRole.POSITION_DELETES));
            });
        }

        // audited: one row, the user, the rows per tier, the snapshot, the scope as an HMAC, never the malo_id
        try (Connection connection = warehouse.database().connect();
                Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SELECT trigger, trino_user, rows_removed_hot, rows_removed_cold, snapshot_id, array_to_string(scope, ','), from_start, from_end FROM metering.meterstore_erasures ORDER BY erasure_id DESC LIMIT 1")) {
            assertThat(result.next()).isTrue();
            assertThat(result.getString(1)).isEqualTo("request");
            assertThat(result.getString(2)).isEqualTo("user");
            assertThat(result.getLong(3)).isEqualTo(hotBefore);
            assertThat(result.getLong(4)).isEqualTo(coldBefore);
            table.refresh();
            assertThat(result.getLong(5)).isEqualTo(table.currentSnapshot().snapshotId());
            assertThat(result.getString(6)).hasSize(64).doesNotContain(malo);
            assertThat(result.getObject(7, java.time.OffsetDateTime.class).toInstant()).isEqualTo(lower);
            assertThat(result.getObject(8, java.time.OffsetDateTime.class).toInstant()).isEqualTo(upper);
        }
        // W is republished unchanged
        assertThat(WatermarkReader.current(table).watermark()).isEqualTo(watermark);

        // idempotent: nothing more to erase
        assertUpdate("DELETE FROM readings_versions WHERE " + erased, 0);
    }

    @Test
    void testErasingACorrectedIntervalRewritesTheFileHoldingItsSupersededWinner()
            throws Exception
    {
        String malo = ReadingsGenerator.maloId(5);
        // a late correction: the archived winner stays in its day's winners file, deleted there by position
        Reading corrected = correction(5, interval(-1, 40), nextVersion(5, interval(-1, 40)), "4.75");
        assertUpdate(insert(corrected), 1);
        String erased = "malo_id = '%s' AND \"from\" = %s".formatted(malo, timestamp(corrected.from()));
        long versions = count("readings_versions WHERE " + erased);
        assertThat(versions).isGreaterThanOrEqualTo(2);

        assertUpdate("DELETE FROM readings_versions WHERE " + erased, versions);

        // no live file holds the interval any more, not even as a row its position deletes hide
        assertThat(liveRowsOnDisk(malo, corrected.from())).isZero();
        assertThat(count("readings_versions WHERE malo_id = '%s'".formatted(malo))).isPositive();
    }

    /** Rows of {@code malo} at {@code from} in the live data files, read whole: position-deleted rows count too. */
    private long liveRowsOnDisk(String malo, Instant from)
            throws IOException
    {
        table.refresh();
        long fromMicros = MeterstoreTypes.toEpochMicros(from);
        AtomicLong rows = new AtomicLong();
        try (CloseableIterable<FileScanTask> planned = table.newScan().planFiles()) {
            for (FileScanTask task : planned) {
                LiveRowsMerge.merge(TableColumns.of(table), table.io(), List.of(new LiveRowsMerge.LiveFile(task.file().location(), task.file().fileSizeInBytes(), new long[0])), 1024, page -> {
                    Block maloIds = page.getBlock(ReadingsColumn.MALO_ID.ordinal());
                    Block froms = page.getBlock(ReadingsColumn.FROM.ordinal());
                    for (int position = 0; position < page.getPositionCount(); position++) {
                        if (VARCHAR.getSlice(maloIds, position).toStringUtf8().equals(malo)
                                && MeterstoreTypes.toEpochMicros((LongTimestampWithTimeZone) MeterstoreTypes.TIMESTAMP_TZ_MICROS.getObject(froms, position)) == fromMicros) {
                            rows.incrementAndGet();
                        }
                    }
                });
            }
        }
        return rows.get();
    }

    @Test
    void testRedeliveryIsRefusedUntilTheErasureIsLifted()
    {
        String malo = ReadingsGenerator.maloId(3);
        String erased = "malo_id = '%s' AND obis_code IN ('%s') AND \"from\" >= %s AND \"from\" <= %s".formatted(malo, ReadingsGenerator.OBIS_CODE, timestamp(interval(-1, 0)), timestamp(interval(1, 0)));
        long rows = count("readings_versions WHERE " + erased);
        assertUpdate("DELETE FROM readings_versions WHERE " + erased, rows);
        long erasureId = (long) computeActual("SELECT max(erasure_id) FROM \"readings$erasures\"").getOnlyValue();
        MaterializedRow audit = computeActual("SELECT trigger, trino_user, cardinality(scope), scope[1] = '%s', obis_codes, from_end, rows_removed_hot + rows_removed_cold, lifted_at FROM \"readings$erasures\" WHERE erasure_id = %s"
                .formatted(malo, erasureId)).getMaterializedRows().getFirst();
        assertThat(audit.getFields().subList(0, 5)).containsExactly("request", "user", 1L, false, List.of(ReadingsGenerator.OBIS_CODE));
        // "from" <= b is recorded as the half-open [.., b + 1us)
        assertThat(((java.time.ZonedDateTime) audit.getField(5)).toInstant()).isEqualTo(interval(1, 0).plusNanos(1000));
        assertThat(audit.getField(6)).isEqualTo(rows);
        assertThat(audit.getField(7)).isNull();

        // a redelivery of erased readings, one of each tier, is refused and changes nothing
        List<Reading> redelivery = loaded.stream()
                .filter(reading -> reading.maloId().equals(malo) && (reading.from().equals(interval(-1, 8)) || reading.from().equals(interval(0, 8))))
                .toList();
        assertThat(redelivery).hasSizeGreaterThanOrEqualTo(2);
        assertThat(query(TestingInserts.insertAsRecorded(redelivery)))
                .failure()
                .hasErrorCode(METERSTORE_ERASED)
                .hasMessageContaining("was erased by erasure %s".formatted(erasureId))
                .hasMessageContaining("lift it with CALL system.lift_erasure('metering', 'readings_versions', %s, '<reason>')".formatted(erasureId));
        assertThat(count("readings_versions WHERE " + erased)).isZero();
        // readings of the same meter outside the erased range are not suppressed
        Reading outsideRange = correction(3, interval(2, 8), nextVersion(3, interval(2, 8)), "3.75");
        assertUpdate(insert(outsideRange), 1);

        // a lift is audited, once; then the same redelivery is written
        assertThat(query("CALL system.lift_erasure('metering', 'readings', %s, '')".formatted(erasureId)))
                .failure().hasMessageContaining("needs a reason");
        assertUpdate("CALL system.lift_erasure('metering', 'readings', %s, 'Erased by mistake: ticket 17')".formatted(erasureId));
        assertThat(computeActual("SELECT lifted_by, lift_reason, lifted_at IS NOT NULL FROM \"readings$erasures\" WHERE erasure_id = %s".formatted(erasureId)).getMaterializedRows().getFirst().getFields())
                .containsExactly("user", "Erased by mistake: ticket 17", true);
        assertThat(query("CALL system.lift_erasure('metering', 'readings', %s, 'again')".formatted(erasureId)))
                .failure().hasMessageContaining("was lifted already");
        assertThat(query("CALL system.lift_erasure('metering', 'readings', 999999, 'none')"))
                .failure().hasMessageContaining("has no erasure 999999");
        assertUpdate(TestingInserts.insertAsRecorded(redelivery), redelivery.size());
        assertThat(count("readings_versions WHERE " + erased)).isEqualTo(redelivery.size());
    }

    @Test
    void testOnlyUsersWithDeleteMayErase()
    {
        String erased = "malo_id = '%s' AND \"from\" < %s".formatted(ReadingsGenerator.maloId(5), timestamp(interval(1, 0)));
        long rows = count("readings_versions WHERE " + erased);
        assertThat(rows).isPositive();
        Session reader = Session.builder(getSession()).setIdentity(Identity.ofUser("reader")).build();
        Session operator = Session.builder(getSession()).setIdentity(Identity.ofUser("operator")).build();
        // a reader reads, and is refused an erasure and a lift
        assertThat(computeActual(reader, "SELECT count(*) FROM readings_versions WHERE " + erased).getOnlyValue()).isEqualTo(rows);
        assertThat(query(reader, "DELETE FROM readings_versions WHERE " + erased))
                .failure()
                .hasMessageContaining("Access Denied: Cannot delete from table meterstore.metering.readings_versions");
        // lift_erasure itself may be called by anyone; lifting needs DELETE on the table, as erasing does
        assertThat(query(reader, "CALL system.lift_erasure('metering', 'readings', 1, 'reader')"))
                .failure()
                .hasMessageContaining("Access Denied: Cannot delete from table meterstore.metering.readings_versions");
        assertThat(count("readings_versions WHERE " + erased)).isEqualTo(rows);
        // an operator erases, and is the user the audit trail names
        assertUpdate(operator, "DELETE FROM readings_versions WHERE " + erased, rows);
        assertThat(count("readings_versions WHERE " + erased)).isZero();
        assertThat(computeActual("SELECT trino_user FROM \"readings$erasures\" ORDER BY erasure_id DESC LIMIT 1").getOnlyValue()).isEqualTo("operator");
    }

    @Test
    void testErasesAPartitionDetachedAtOrAboveTheWatermark()
            throws Exception
    {
        // what an archival cycle interrupted after its detach leaves: a detached partition at or above W, read by name
        HotTier hotTier = TestingMeterstoreTables.hotTier();
        String partition = hotTier.naming().partitionName(hotTier.naming().alignDown(interval(2, 0)));
        try (Connection connection = warehouse.database().connect()) {
            hotTier.detach(connection, partition);
        }
        String day = "\"from\" >= %s AND \"from\" < %s".formatted(timestamp(interval(2, 0)), timestamp(interval(3, 0)));
        String erased = "malo_id = '%s' AND %s".formatted(ReadingsGenerator.maloId(2), day);
        long rows = count("readings_versions WHERE " + erased);
        long others = count("readings_versions WHERE NOT (%s) AND %s".formatted(erased, day));
        assertThat(rows).isPositive();
        assertUpdate("DELETE FROM readings_versions WHERE " + erased, rows);
        assertThat(count("readings_versions WHERE " + erased)).isZero();
        assertThat(count("readings_versions WHERE NOT (%s) AND %s".formatted(erased, day))).isEqualTo(others);
        try (Connection connection = warehouse.database().connect();
                Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SELECT count(*) FROM metering.%s WHERE malo_id = '%s'".formatted(partition, ReadingsGenerator.maloId(2)))) {
            assertThat(result.next()).isTrue();
            assertThat(result.getLong(1)).isZero();
            assertThat(hotTier.partitions(connection)).filteredOn(found -> found.name().equals(partition)).singleElement().satisfies(found -> assertThat(found.attached()).isFalse());
        }
    }

    @Test
    void testFailureBetweenTiersThenRerun()
    {
        String erased = "malo_id = '%s' AND obis_code = '%s' AND \"from\" BETWEEN %s AND %s".formatted(ReadingsGenerator.maloId(2), ReadingsGenerator.OBIS_CODE, timestamp(interval(-1, 0)), timestamp(interval(1, 0)));
        long hot = count("readings_versions WHERE " + erased + " AND \"from\" >= " + timestamp(watermark.instant()));
        long cold = count("readings_versions WHERE " + erased + " AND \"from\" < " + timestamp(watermark.instant()));
        assertThat(hot).isPositive();
        assertThat(cold).isPositive();
        System.setProperty("meterstore.failpoint", "delete-between-tiers");
        try {
            assertThat(query("DELETE FROM readings_versions WHERE " + erased))
                    .failure()
                    .hasErrorCode(METERSTORE_WRITE_FAILED)
                    .hasMessageContaining("delete-between-tiers");
        }
        finally {
            System.clearProperty("meterstore.failpoint");
        }
        // Iceberg first: the cold rows are erased, the hot rows not yet, and nothing is audited
        assertThat(count("readings_versions WHERE " + erased)).isEqualTo(hot);
        long audited = count("\"readings$erasures\"");
        table.refresh();
        long failedRunSnapshot = table.currentSnapshot().snapshotId();
        // the rerun erases the hot rows, and its audit row takes the cold rows and the commit of the failed run
        assertUpdate("DELETE FROM readings_versions WHERE " + erased, hot);
        assertThat(count("readings_versions WHERE " + erased)).isZero();
        assertThat(count("\"readings$erasures\"")).isEqualTo(audited + 1);
        assertThat(computeActual("SELECT rows_removed_hot, rows_removed_cold, snapshot_id FROM \"readings$erasures\" ORDER BY erasure_id DESC LIMIT 1").getMaterializedRows().getFirst().getFields())
                .containsExactly(hot, cold, failedRunSnapshot);
        // and a third run finds everything audited
        assertUpdate("DELETE FROM readings_versions WHERE " + erased, 0);
        assertThat(computeActual("SELECT rows_removed_hot, rows_removed_cold, snapshot_id FROM \"readings$erasures\" ORDER BY erasure_id DESC LIMIT 1").getMaterializedRows().getFirst().getFields())
                .containsExactly(0L, 0L, null);
    }

    @Test
    void testPredicatesMeterstoreCannotHonourAreRefused()
    {
        String malo = ReadingsGenerator.maloId(4);
        long before = count("readings_versions");
        assertRefused("DELETE FROM readings_versions", "it names no malo_id");
        assertRefused("DELETE FROM readings_versions WHERE \"from\" < " + timestamp(watermark.instant()), "it names no malo_id");
        assertRefused("DELETE FROM readings_versions WHERE malo_id = '%s' AND value > 1".formatted(malo), "cannot apply exactly");
        assertRefused("DELETE FROM readings_versions WHERE malo_id = '%s' OR obis_code = '1-1:2.29.0'".formatted(malo), "cannot apply exactly");
        assertRefused("DELETE FROM readings_versions WHERE lower(malo_id) = '%s'".formatted(malo), "cannot apply exactly");
        assertRefused("DELETE FROM readings_versions WHERE malo_id > '%s'".formatted(malo), "cannot apply exactly");
        assertThat(query("DELETE FROM readings WHERE malo_id = '%s'".formatted(malo)))
                .failure()
                .hasErrorCode(METERSTORE_DELETE_NOT_SUPPORTED)
                .hasMessage(READINGS_CANNOT_BE_CHANGED);
        // nor UPDATE or MERGE: each is told both ways, since Trino asks before it says which statement it plans
        assertThat(query("UPDATE readings SET value = 1 WHERE malo_id = '%s'".formatted(malo)))
                .failure()
                .hasErrorCode(METERSTORE_DELETE_NOT_SUPPORTED)
                .hasMessage(READINGS_CANNOT_BE_CHANGED);
        assertThat(query("MERGE INTO readings t USING (VALUES '%s') s(malo) ON t.malo_id = s.malo WHEN MATCHED THEN UPDATE SET value = 1".formatted(malo)))
                .failure()
                .hasErrorCode(METERSTORE_DELETE_NOT_SUPPORTED)
                .hasMessage(READINGS_CANNOT_BE_CHANGED);
        // an UPDATE is not an erasure that went wrong: it is told how a reading is corrected
        assertThat(query("UPDATE readings_versions SET value = 1 WHERE malo_id = '%s'".formatted(malo)))
                .failure()
                .hasErrorCode(NOT_SUPPORTED)
                .hasMessage("UPDATE of 'metering.readings_versions' is not supported: a reading is corrected by INSERTing it again with a higher version, which keeps the old version for FOR ... AS OF and readings_versions");
        assertThat(query("DELETE FROM no_key.metering.readings_versions WHERE malo_id = '%s'".formatted(malo)))
                .failure()
                .hasErrorCode(METERSTORE_ERASURE_KEY_MISSING)
                .hasMessageContaining("set meterstore.erasure.hmac-key");
        assertThat(count("readings_versions")).isEqualTo(before);
        // the key is a secret: the configuration table masks it
        assertThat(computeActual("SELECT value FROM \"readings$config\" WHERE setting = 'meterstore.erasure.hmac-key'").getOnlyValue()).isEqualTo("********");
    }

    private void assertRefused(String sql, String why)
    {
        assertThat(query(sql))
                .failure()
                .hasErrorCode(METERSTORE_DELETE_NOT_SUPPORTED)
                .hasMessageContaining(why)
                .hasMessageContaining("MeterStore erases exactly by malo_id = '...' or malo_id IN (...)");
    }

    /** A version that beats every stored version of meter {@code meter}'s reading at {@code from}. */
    private long nextVersion(int meter, Instant from)
    {
        return loaded.stream()
                .filter(reading -> reading.maloId().equals(ReadingsGenerator.maloId(meter)) && reading.from().equals(from))
                .mapToLong(reading -> reading.version().longValueExact())
                .max()
                .orElseThrow() + 1;
    }

    private long count(String from)
    {
        return (long) computeActual("SELECT count(*) FROM " + from).getOnlyValue();
    }

    /** The delete files of the current snapshot's manifests, as Trino's Iceberg connector lists them: dangling ones too. */
    private long deleteFiles()
    {
        return count("iceberg.metering.\"readings$files\" WHERE content = 1");
    }

    /** A fingerprint of every version outside {@code erased}: count, sum of values and a checksum of every column. */
    private MaterializedRow outside(String erased)
    {
        return computeActual("SELECT count(*), sum(value), checksum(ROW(malo_id, obis_code, \"from\", version, value, recorded_at)) FROM readings_versions WHERE NOT (%s)".formatted(erased))
                .getMaterializedRows().getFirst();
    }
}
