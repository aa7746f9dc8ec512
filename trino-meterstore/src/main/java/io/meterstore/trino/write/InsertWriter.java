package io.meterstore.trino.write;

import com.google.common.annotations.VisibleForTesting;
import com.google.common.collect.ImmutableList;
import com.google.inject.Inject;
import io.airlift.log.Logger;
import io.airlift.slice.Slice;
import io.airlift.slice.Slices;
import io.meterstore.core.CorrectionCommitter;
import io.meterstore.core.CorrectionCommitter.RejectedCorrectionException;
import io.meterstore.core.HotTier;
import io.meterstore.core.MeterstoreException;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.Sparte;
import io.meterstore.core.Sparte.MeasurementUnit;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.core.WatermarkReader.PinnedWatermark;
import io.meterstore.trino.MeterstoreColumnHandle;
import io.meterstore.trino.MeterstoreErrorCode;
import io.meterstore.trino.MeterstoreTables;
import io.meterstore.trino.MeterstoreTypes;
import io.meterstore.trino.cold.ColdPageSourceProvider;
import io.meterstore.trino.cold.ColdSplit;
import io.meterstore.trino.cold.ColdSplitPlanner;
import io.trino.spi.TrinoException;
import io.trino.spi.block.Block;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.SourcePage;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.Range;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.predicate.ValueSet;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.util.SnapshotUtil;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;

import static com.google.common.collect.ImmutableSet.toImmutableSet;
import static io.meterstore.core.Sql.quoteIdentifier;
import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_CONFLICTING_REDELIVERY;
import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_WRITE_FAILED;
import static io.meterstore.trino.MeterstoreTypes.TIMESTAMP_TZ_MICROS;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * Writes the validated rows of one INSERT, once, on the coordinator (finishInsert): every row whose "from" is at or
 * above the current watermark W into its PostgreSQL partition by name, every row below W appended to Iceberg in a
 * commit that republishes W unchanged. A version already stored with the same payload is skipped; one stored with a
 * different payload fails the statement before anything is committed.
 * <p>
 * Everything happens inside one PostgreSQL transaction that first takes the archiver's lease lock in shared mode (the
 * archival fence): while it is open no archival cycle runs, so W cannot move, no partition is detached, and no cycle
 * plans a window over a partition this statement creates. W is read under the fence, which is why a row planned hot
 * whose day was archived since goes to Iceberg, and never to a detached or re-created partition. Commit order: Iceberg
 * first, then PostgreSQL. A failure before the Iceberg commit changes nothing; one between the two leaves the cold
 * rows committed and the hot rows rolled back, and running the statement again skips the former and writes the latter.
 */
public final class InsertWriter
{
    private static final Logger log = Logger.get(InsertWriter.class);
    // an archival cycle holds its lease for the whole cycle; an INSERT waits this long for one to finish
    private static final Duration ARCHIVAL_WAIT = Duration.ofMinutes(10);
    private static final String COLD_WRITE_LOCK_PREFIX = "meterstore.cold-write:";
    private static final List<MeterstoreColumnHandle> ALL_COLUMNS = MeterstoreTypes.columnHandles();
    private static final List<ReadingsColumn> ALL_READINGS_COLUMNS = List.of(ReadingsColumn.values());

    private static final Comparator<Reading> SORT_ORDER = Comparator.comparing(Reading::maloId)
            .thenComparing(Reading::obisCode)
            .thenComparing(Reading::from)
            .thenComparing(Reading::version);

    private static volatile Runnable beforeWrite = () -> {};

    private final MeterstoreTables tables;
    private final ColdSplitPlanner coldSplitPlanner;
    private final ColdPageSourceProvider coldPageSources;
    private final ColdCorrectionWriter coldCorrections;

    @Inject
    public InsertWriter(MeterstoreTables tables, ColdSplitPlanner coldSplitPlanner, ColdPageSourceProvider coldPageSources)
    {
        this.tables = requireNonNull(tables, "tables is null");
        this.coldSplitPlanner = requireNonNull(coldSplitPlanner, "coldSplitPlanner is null");
        this.coldPageSources = requireNonNull(coldPageSources, "coldPageSources is null");
        this.coldCorrections = new ColdCorrectionWriter(coldSplitPlanner, coldPageSources, new CorrectionCommitter());
    }

    /** Runs {@code hook} in every INSERT after its rows are collected and before it takes the archival fence. */
    @VisibleForTesting
    public static void setBeforeWriteHook(Runnable hook)
    {
        beforeWrite = requireNonNull(hook, "hook is null");
    }

    /** What a statement did: rows new in each tier, and redelivered rows already stored with the same payload. */
    public record Written(long hotRows, long coldRows, long unchanged) {}

    private record Key(String maloId, String obisCode, Instant from, BigInteger version)
    {
        static Key of(Reading reading)
        {
            return new Key(reading.maloId(), reading.obisCode(), reading.from(), reading.version());
        }
    }

    public Written write(ConnectorSession session, MeterstoreInsertTableHandle handle, Collection<Slice> fragments)
    {
        Map<Key, Reading> readings = new LinkedHashMap<>();
        long unchanged = 0;
        for (Slice fragment : fragments) {
            for (Reading reading : ReadingsCodec.decode(fragment)) {
                Reading previous = readings.putIfAbsent(Key.of(reading), reading);
                if (previous != null) {
                    requireSamePayload(previous, reading, "the statement itself carries it twice");
                    unchanged++;
                }
            }
        }
        if (readings.isEmpty()) {
            return new Written(0, 0, unchanged);
        }
        beforeWrite.run();
        Table table = tables.loadIcebergTable(handle.storageTable());
        HotTier hotTier = new HotTier(tables.schema(), new PartitionNaming(handle.storageTable(), archivalStep(table)), Duration.ofSeconds(5));
        try (Connection connection = tables.connectPostgres()) {
            connection.setAutoCommit(false);
            try {
                Written written = write(session, handle, connection, hotTier, table, List.copyOf(readings.values()));
                connection.commit();
                return new Written(written.hotRows(), written.coldRows(), written.unchanged() + unchanged);
            }
            catch (SQLException | RuntimeException e) {
                rollbackQuietly(connection, e);
                throw e;
            }
        }
        catch (HotTier.LockTimeoutException e) {
            throw new TrinoException(METERSTORE_WRITE_FAILED, "INSERT into '%s' could not take a lock in time: %s; nothing of this statement was committed to PostgreSQL, run it again"
                    .formatted(handle.schemaTableName(), e.getMessage()), e);
        }
        catch (SQLException e) {
            throw new TrinoException(METERSTORE_WRITE_FAILED, "INSERT into '%s' failed in PostgreSQL: %s; nothing of this statement was committed to PostgreSQL, run it again"
                    .formatted(handle.schemaTableName(), e.getMessage()), e);
        }
        catch (MeterstoreException e) {
            throw MeterstoreErrorCode.toTrinoException(e);
        }
    }

    private Written write(ConnectorSession session, MeterstoreInsertTableHandle handle, Connection connection, HotTier hotTier, Table table, List<Reading> readings)
            throws SQLException
    {
        hotTier.fenceArchival(connection, ARCHIVAL_WAIT);
        // under the fence no archival cycle runs: this W holds until the transaction ends, whatever beginInsert saw
        table.refresh();
        PinnedWatermark pinned = WatermarkReader.current(table);
        TieringWatermark watermark = pinned.watermark();
        List<Reading> hot = readings.stream().filter(reading -> watermark.isHot(reading.from())).sorted(SORT_ORDER).toList();
        List<Reading> cold = readings.stream().filter(reading -> !watermark.isHot(reading.from())).sorted(SORT_ORDER).toList();

        // every check before any write: a conflicting redelivery in either tier fails the statement with nothing written
        List<Reading> newCold = List.of();
        if (!cold.isEmpty()) {
            lockColdWrites(connection, handle);
            newCold = withoutStoredCold(session, handle, table, pinned, cold);
        }
        long newHot = insertHot(connection, hotTier, watermark, hot, handle);

        if (!newCold.isEmpty()) {
            commitCold(handle, session, table, pinned, newCold);
        }
        // a crash here leaves the cold rows committed and the hot rows rolled back: running the statement again completes it
        InsertFailpoints.betweenTiers();
        long unchanged = (hot.size() - newHot) + (cold.size() - newCold.size());
        log.debug("INSERT into '%s' at watermark %s: %s rows to PostgreSQL, %s to Iceberg, %s already stored", handle.schemaTableName(), watermark, newHot, newCold.size(), unchanged);
        return new Written(newHot, newCold.size(), unchanged);
    }

    // --- hot tier

    private long insertHot(Connection connection, HotTier hotTier, TieringWatermark watermark, List<Reading> hot, MeterstoreInsertTableHandle handle)
            throws SQLException
    {
        Map<Instant, List<Reading>> byPartition = new TreeMap<>();
        for (Reading reading : hot) {
            byPartition.computeIfAbsent(hotTier.naming().alignDown(reading.from()), start -> new ArrayList<>()).add(reading);
        }
        long inserted = 0;
        for (Map.Entry<Instant, List<Reading>> entry : byPartition.entrySet()) {
            // by name, attached or detached: a detached partition at or above W is an interrupted archival's, archived whole by its next cycle
            hotTier.ensurePartitionInTransaction(connection, entry.getKey(), watermark);
            String partition = hotTier.qualifiedPartition(hotTier.naming().partitionName(entry.getKey()));
            inserted += insertPartition(connection, partition, entry.getValue(), handle);
        }
        return inserted;
    }

    private long insertPartition(Connection connection, String partition, List<Reading> readings, MeterstoreInsertTableHandle handle)
            throws SQLException
    {
        String columns = String.join(", ", ALL_READINGS_COLUMNS.stream().map(column -> quoteIdentifier(column.columnName())).toList());
        String parameters = String.join(", ", ALL_READINGS_COLUMNS.stream().map(column -> "?").toList());
        int[] counts;
        try (PreparedStatement statement = connection.prepareStatement("INSERT INTO %s (%s) VALUES (%s) ON CONFLICT (malo_id, obis_code, \"from\", version) DO NOTHING"
                .formatted(partition, columns, parameters))) {
            for (Reading reading : readings) {
                bind(statement, reading);
                statement.addBatch();
            }
            counts = statement.executeBatch();
        }
        long inserted = 0;
        List<Reading> skipped = new ArrayList<>();
        for (int index = 0; index < counts.length; index++) {
            if (counts[index] == 0) {
                skipped.add(readings.get(index));
            }
            else {
                inserted++;
            }
        }
        if (!skipped.isEmpty()) {
            try (PreparedStatement statement = connection.prepareStatement("SELECT %s FROM %s WHERE malo_id = ? AND obis_code = ? AND \"from\" = ? AND version = ?".formatted(columns, partition))) {
                for (Reading reading : skipped) {
                    statement.setString(1, reading.maloId());
                    statement.setString(2, reading.obisCode());
                    statement.setObject(3, OffsetDateTime.ofInstant(reading.from(), ZoneOffset.UTC));
                    statement.setBigDecimal(4, new BigDecimal(reading.version()));
                    try (ResultSet result = statement.executeQuery()) {
                        if (!result.next()) {
                            throw new TrinoException(METERSTORE_WRITE_FAILED, "Row %s of the INSERT into '%s' conflicted in partition %s, but no stored row has its key; run the statement again"
                                    .formatted(RowDescription.describe(reading), handle.schemaTableName(), partition));
                        }
                        requireSamePayload(HotRows.reading(result), reading, "PostgreSQL partition %s holds it".formatted(partition));
                    }
                }
            }
        }
        return inserted;
    }

    private static void bind(PreparedStatement statement, Reading reading)
            throws SQLException
    {
        int index = 1;
        statement.setString(index++, reading.maloId());
        statement.setString(index++, reading.meloId().orElse(null));
        statement.setString(index++, reading.obisCode());
        statement.setString(index++, reading.sparte().name());
        statement.setObject(index++, OffsetDateTime.ofInstant(reading.from(), ZoneOffset.UTC));
        statement.setObject(index++, OffsetDateTime.ofInstant(reading.to(), ZoneOffset.UTC));
        statement.setBigDecimal(index++, reading.value());
        statement.setString(index++, reading.unit().name());
        statement.setString(index++, reading.quality().name());
        statement.setString(index++, reading.resolution());
        statement.setString(index++, reading.sourceKind());
        statement.setString(index++, reading.sourceDetail().orElse(null));
        statement.setString(index++, reading.provenance().orElse(null));
        statement.setBigDecimal(index++, new BigDecimal(reading.version()));
        statement.setString(index++, reading.versionScope());
        statement.setObject(index++, OffsetDateTime.ofInstant(reading.recordedAt(), ZoneOffset.UTC));
        statement.setObject(index, reading.balancingDay());
    }

    // --- cold tier

    /** Serializes MeterStore's cold writers of a table, so that no two statements both find a key absent and both append it. */
    private static void lockColdWrites(Connection connection, MeterstoreInsertTableHandle handle)
            throws SQLException
    {
        try (Statement statement = connection.createStatement()) {
            statement.execute("SET LOCAL lock_timeout = '%dms'".formatted(ARCHIVAL_WAIT.toMillis()));
        }
        try (PreparedStatement lock = connection.prepareStatement("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))")) {
            lock.setString(1, COLD_WRITE_LOCK_PREFIX + handle.schemaTableName().getSchemaName() + "." + handle.storageTable());
            lock.execute();
        }
    }

    /** The rows whose version the pinned snapshot does not hold yet; a stored version with another payload is a conflict. */
    private List<Reading> withoutStoredCold(ConnectorSession session, MeterstoreInsertTableHandle handle, Table table, PinnedWatermark pinned, List<Reading> cold)
    {
        Map<Key, Reading> wanted = new LinkedHashMap<>();
        cold.forEach(reading -> wanted.put(Key.of(reading), reading));
        Set<Slice> maloIds = cold.stream().map(reading -> Slices.utf8Slice(reading.maloId())).collect(toImmutableSet());
        Instant minFrom = cold.stream().map(Reading::from).min(Instant::compareTo).orElseThrow();
        Instant maxFrom = cold.stream().map(Reading::from).max(Instant::compareTo).orElseThrow();
        TupleDomain<MeterstoreColumnHandle> constraint = TupleDomain.withColumnDomains(Map.of(
                MeterstoreTypes.columnHandle(ReadingsColumn.MALO_ID), Domain.multipleValues(VARCHAR, List.copyOf(maloIds)),
                MeterstoreTypes.columnHandle(ReadingsColumn.FROM), Domain.create(ValueSet.ofRanges(Range.range(TIMESTAMP_TZ_MICROS,
                        MeterstoreTypes.toTimestamp(MeterstoreTypes.toEpochMicros(minFrom)), true,
                        MeterstoreTypes.toTimestamp(MeterstoreTypes.toEpochMicros(maxFrom)), true)), false)));
        for (ColdSplit split : coldSplitPlanner.plan(table, pinned.snapshotId(), pinned.watermark(), constraint).splits()) {
            try (ConnectorPageSource source = coldPageSources.createPageSource(session, split, ALL_COLUMNS, constraint)) {
                while (!source.isFinished()) {
                    SourcePage page = source.getNextSourcePage();
                    if (page == null) {
                        continue;
                    }
                    Map<ReadingsColumn, Block> blocks = ReadingsPages.blocks(ALL_READINGS_COLUMNS, page::getBlock);
                    for (int position = 0; position < page.getPositionCount(); position++) {
                        Reading stored = ReadingsPages.read(blocks, position, Instant.EPOCH);
                        Reading reading = wanted.remove(Key.of(stored));
                        if (reading != null) {
                            requireSamePayload(stored, reading, "Iceberg data file '%s' holds it".formatted(split.path()));
                        }
                    }
                }
            }
            catch (IOException e) {
                throw new TrinoException(METERSTORE_WRITE_FAILED, "Reading Iceberg data file '%s' of '%s' failed: %s".formatted(split.path(), handle.schemaTableName(), e.getMessage()), e);
            }
        }
        return ImmutableList.copyOf(wanted.values());
    }

    private void commitCold(MeterstoreInsertTableHandle handle, ConnectorSession session, Table table, PinnedWatermark pinned, List<Reading> cold)
    {
        try {
            coldCorrections.write(session, table, pinned, cold, "insert-%s-%s".formatted(session.getQueryId(), UUID.randomUUID()));
        }
        catch (CommitStateUnknownException e) {
            // the files may be part of a snapshot now: kept; running the statement again finds out and skips what landed
            throw new TrinoException(METERSTORE_WRITE_FAILED, "The Iceberg commit of the INSERT into '%s' has an unknown outcome: %s; run the statement again, it skips every row that landed"
                    .formatted(handle.schemaTableName(), e.getMessage()), e);
        }
        catch (RejectedCorrectionException e) {
            throw new TrinoException(METERSTORE_WRITE_FAILED, e.getMessage() + "; nothing of this statement was committed", e);
        }
        catch (IOException | RuntimeException e) {
            if (e instanceof TrinoException trinoException) {
                throw trinoException;
            }
            throw new TrinoException(METERSTORE_WRITE_FAILED, "Writing the Iceberg rows of the INSERT into '%s' failed: %s; nothing of this statement was committed, run it again"
                    .formatted(handle.schemaTableName(), e.getMessage()), e);
        }
    }

    // --- shared

    private static void requireSamePayload(Reading stored, Reading reading, String where)
    {
        if (stored.samePayload(reading)) {
            return;
        }
        throw new TrinoException(METERSTORE_CONFLICTING_REDELIVERY, "Version %s of reading %s was already written with different values (%s) and %s: a changed value needs a new version; nothing of this statement was written"
                .formatted(reading.version(), RowDescription.describe(reading), String.join(", ", differences(stored, reading)), where));
    }

    private static List<String> differences(Reading stored, Reading reading)
    {
        List<String> differences = new ArrayList<>();
        difference(differences, ReadingsColumn.MELO_ID, stored.meloId(), reading.meloId());
        difference(differences, ReadingsColumn.SPARTE, stored.sparte(), reading.sparte());
        difference(differences, ReadingsColumn.TO, stored.to(), reading.to());
        if (stored.value().compareTo(reading.value()) != 0) {
            differences.add("value %s, now %s".formatted(stored.value().toPlainString(), reading.value().toPlainString()));
        }
        difference(differences, ReadingsColumn.UNIT, stored.unit(), reading.unit());
        difference(differences, ReadingsColumn.QUALITY, stored.quality(), reading.quality());
        difference(differences, ReadingsColumn.RESOLUTION, stored.resolution(), reading.resolution());
        difference(differences, ReadingsColumn.SOURCE_KIND, stored.sourceKind(), reading.sourceKind());
        difference(differences, ReadingsColumn.SOURCE_DETAIL, stored.sourceDetail(), reading.sourceDetail());
        difference(differences, ReadingsColumn.PROVENANCE, stored.provenance(), reading.provenance());
        difference(differences, ReadingsColumn.VERSION_SCOPE, stored.versionScope(), reading.versionScope());
        difference(differences, ReadingsColumn.BALANCING_DAY, stored.balancingDay(), reading.balancingDay());
        return differences;
    }

    private static void difference(List<String> differences, ReadingsColumn column, Object stored, Object reading)
    {
        if (!stored.equals(reading)) {
            differences.add("%s %s, now %s".formatted(column.columnName(), display(stored), display(reading)));
        }
    }

    private static String display(Object value)
    {
        return value instanceof Optional<?> optional ? optional.map(Object::toString).orElse("NULL") : value.toString();
    }

    /** The archival step the table was archived with, which names its partitions; the default for a table never archived. */
    private static Duration archivalStep(Table table)
    {
        if (table.currentSnapshot() == null) {
            return PartitionNaming.DEFAULT_STEP;
        }
        for (Snapshot snapshot : SnapshotUtil.currentAncestors(table)) {
            String step = snapshot.summary() == null ? null : snapshot.summary().get(TieringWatermark.ARCHIVAL_STEP_KEY);
            if (step != null) {
                try {
                    return Duration.ofSeconds(Long.parseLong(step));
                }
                catch (NumberFormatException e) {
                    throw new TrinoException(METERSTORE_WRITE_FAILED, "Snapshot %s of table '%s' records '%s' = '%s', which is not a number of seconds: repair the snapshot summary"
                            .formatted(snapshot.snapshotId(), table.name(), TieringWatermark.ARCHIVAL_STEP_KEY, step));
                }
            }
        }
        return PartitionNaming.DEFAULT_STEP;
    }

    private static void rollbackQuietly(Connection connection, Throwable failure)
    {
        try {
            connection.rollback();
        }
        catch (SQLException e) {
            failure.addSuppressed(e);
        }
    }

    /** Readings from rows of the PostgreSQL readings columns. */
    private static final class HotRows
    {
        private HotRows() {}

        static Reading reading(ResultSet result)
                throws SQLException
        {
            return new Reading(
                    result.getString(ReadingsColumn.MALO_ID.columnName()),
                    Optional.ofNullable(result.getString(ReadingsColumn.MELO_ID.columnName())),
                    result.getString(ReadingsColumn.OBIS_CODE.columnName()),
                    Sparte.parse(result.getString(ReadingsColumn.SPARTE.columnName())),
                    result.getObject(ReadingsColumn.FROM.columnName(), OffsetDateTime.class).toInstant(),
                    result.getObject(ReadingsColumn.TO.columnName(), OffsetDateTime.class).toInstant(),
                    result.getBigDecimal(ReadingsColumn.VALUE.columnName()),
                    MeasurementUnit.parse(result.getString(ReadingsColumn.UNIT.columnName())),
                    Quality.parse(result.getString(ReadingsColumn.QUALITY.columnName())),
                    result.getString(ReadingsColumn.RESOLUTION.columnName()),
                    result.getString(ReadingsColumn.SOURCE_KIND.columnName()),
                    Optional.ofNullable(result.getString(ReadingsColumn.SOURCE_DETAIL.columnName())),
                    Optional.ofNullable(result.getString(ReadingsColumn.PROVENANCE.columnName())),
                    result.getBigDecimal(ReadingsColumn.VERSION.columnName()).toBigIntegerExact(),
                    result.getString(ReadingsColumn.VERSION_SCOPE.columnName()),
                    result.getObject(ReadingsColumn.RECORDED_AT.columnName(), OffsetDateTime.class).toInstant(),
                    result.getObject(ReadingsColumn.BALANCING_DAY.columnName(), LocalDate.class));
        }
    }
}
