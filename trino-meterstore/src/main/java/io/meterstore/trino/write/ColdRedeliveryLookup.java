package io.meterstore.trino.write;

import com.google.common.collect.ImmutableList;
import com.google.inject.Inject;
import io.airlift.slice.Slice;
import io.airlift.slice.Slices;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.WatermarkReader.PinnedWatermark;
import io.meterstore.trino.MeterstoreColumnHandle;
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
import org.apache.iceberg.Table;

import java.io.IOException;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static com.google.common.collect.ImmutableSet.toImmutableSet;
import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_WRITE_FAILED;
import static io.meterstore.trino.MeterstoreTypes.TIMESTAMP_TZ_MICROS;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * Which cold rows of an INSERT the current snapshot holds already: a scan of the snapshot's files pruned to the
 * malo_ids and the "from" range of a bounded chunk of rows. A stored version with the same payload is a redelivery;
 * one with another payload fails the statement. The answer holds only while no other MeterStore writer appends to the
 * table, which {@link #lock} ensures until the transaction that holds it ends.
 */
public final class ColdRedeliveryLookup
{
    private static final String COLD_WRITE_LOCK_PREFIX = "meterstore.cold-write:";
    private static final List<MeterstoreColumnHandle> ALL_COLUMNS = MeterstoreTypes.columnHandles();
    private static final List<ReadingsColumn> ALL_READINGS_COLUMNS = List.of(ReadingsColumn.values());

    private final ColdSplitPlanner coldSplitPlanner;
    private final ColdPageSourceProvider coldPageSources;

    @Inject
    public ColdRedeliveryLookup(ColdSplitPlanner coldSplitPlanner, ColdPageSourceProvider coldPageSources)
    {
        this.coldSplitPlanner = requireNonNull(coldSplitPlanner, "coldSplitPlanner is null");
        this.coldPageSources = requireNonNull(coldPageSources, "coldPageSources is null");
    }

    private record Key(String maloId, String obisCode, Instant from, BigInteger version)
    {
        static Key of(Reading reading)
        {
            return new Key(reading.maloId(), reading.obisCode(), reading.from(), reading.version());
        }
    }

    /** Serializes MeterStore's cold writers of a table, so that no two statements both find a key absent and both append it. */
    static void lock(Connection connection, MeterstoreInsertTableHandle handle)
            throws SQLException
    {
        try (Statement statement = connection.createStatement()) {
            statement.execute("SET LOCAL lock_timeout = '%dms'".formatted(ArchivalFence.ARCHIVAL_WAIT.toMillis()));
        }
        try (PreparedStatement lock = connection.prepareStatement("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))")) {
            lock.setString(1, COLD_WRITE_LOCK_PREFIX + handle.schemaTableName().getSchemaName() + "." + handle.storageTable());
            lock.execute();
        }
    }

    /**
     * The readings of {@code chunk} (distinct keys, in sort order) whose version the pinned snapshot does not hold yet,
     * in their order; a stored version with another payload is a conflict.
     */
    List<Reading> withoutStored(ConnectorSession session, MeterstoreInsertTableHandle handle, Table table, PinnedWatermark pinned, List<Reading> chunk)
    {
        if (chunk.isEmpty()) {
            return ImmutableList.of();
        }
        Map<Key, Reading> wanted = new LinkedHashMap<>();
        chunk.forEach(reading -> wanted.put(Key.of(reading), reading));
        Set<Slice> maloIds = chunk.stream().map(reading -> Slices.utf8Slice(reading.maloId())).collect(toImmutableSet());
        Instant minFrom = chunk.stream().map(Reading::from).min(Instant::compareTo).orElseThrow();
        Instant maxFrom = chunk.stream().map(Reading::from).max(Instant::compareTo).orElseThrow();
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
                            Redeliveries.requireSamePayload(stored, reading, "Iceberg data file '%s' holds it".formatted(split.path()));
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
}
