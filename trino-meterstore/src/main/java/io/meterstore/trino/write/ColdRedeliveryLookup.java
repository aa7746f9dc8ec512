package io.meterstore.trino.write;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import com.google.inject.Inject;
import io.airlift.slice.Slice;
import io.airlift.slice.Slices;
import io.meterstore.core.ColdFileRole;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingRules;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.TableColumn;
import io.meterstore.core.TableColumns;
import io.meterstore.core.WatermarkReader.PinnedWatermark;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.meterstore.trino.base.MeterstoreTypes;
import io.meterstore.trino.cold.ColdPageSourceProvider;
import io.meterstore.trino.cold.ColdPageSourceProvider.ReadOptions;
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
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.collect.ImmutableSet.toImmutableSet;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_INVALID_READING;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_UNSUPPORTED_TABLE_LAYOUT;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_WRITE_FAILED;
import static io.meterstore.trino.base.MeterstoreTypes.TIMESTAMP_TZ_MICROS;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * Which cold rows of an INSERT the current snapshot holds already: a scan of the snapshot's files pruned to the
 * malo_ids and the "from" range of a bounded chunk of rows; and, for a resolved month, which live winner each key has
 * and where ({@link #storedWinners}). A stored version with the same payload is a redelivery;
 * one with another payload fails the statement. The answer holds only while no other MeterStore writer appends to the
 * table, which {@link #lock} ensures until the transaction that holds it ends.
 */
public final class ColdRedeliveryLookup
{
    private final ColdSplitPlanner coldSplitPlanner;
    private final ColdPageSourceProvider coldPageSources;

    @Inject
    public ColdRedeliveryLookup(ColdSplitPlanner coldSplitPlanner, ColdPageSourceProvider coldPageSources)
    {
        this.coldSplitPlanner = requireNonNull(coldSplitPlanner, "coldSplitPlanner is null");
        this.coldPageSources = requireNonNull(coldPageSources, "coldPageSources is null");
    }

    // keyValues: the key's other columns (melo_id, identity columns), none for the default key
    private record Key(String maloId, String obisCode, Instant from, List<Optional<String>> keyValues, BigInteger version)
    {
        static Key of(Reading reading, TableColumns columns)
        {
            return new Key(reading.maloId(), reading.obisCode(), reading.from(), columns.keyValues(reading), reading.version());
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
        TableColumns columns = handle.tableColumns();
        Map<Key, Reading> wanted = new LinkedHashMap<>();
        chunk.forEach(reading -> wanted.put(Key.of(reading, columns), reading));
        List<StoredRow> near = new ArrayList<>();
        // a stored span that meets a written one starts at most a day before the chunk, or where the balancing month of
        // its first row starts (a P1M span): those instants, not the month before the chunk
        Instant first = chunk.stream().map(Reading::from).min(Instant::compareTo).orElseThrow();
        // a register reading (no "to") reaches its own "from" only
        Instant upper = chunk.stream().map(reading -> reading.to().orElse(reading.from().plus(1, ChronoUnit.MICROS))).max(Instant::compareTo).orElseThrow();
        List<Range> froms = new ArrayList<>();
        froms.add(fromRange(first.minus(ReadingRules.LONGEST_DAILY_SPAN), upper));
        ReadingRules.monthStartsReaching(first).forEach(start -> froms.add(Range.equal(TIMESTAMP_TZ_MICROS, MeterstoreTypes.toTimestamp(MeterstoreTypes.toEpochMicros(start)))));
        scan(session, table, pinned, chunk, ValueSet.ofRanges(froms), ReadOptions.PLAIN, (stored, path, position) -> {
            Reading reading = wanted.remove(Key.of(stored, columns));
            if (reading != null) {
                Redeliveries.requireSamePayload(stored, reading, "Iceberg data file '%s' holds it".formatted(path), handle.tableColumns());
            }
            near.add(new StoredRow(stored, path));
        });
        requireCompatible(table, chunk, near, columns);
        return ImmutableList.copyOf(wanted.values());
    }

    private record StoredRow(Reading reading, String path) {}

    /**
     * Fails the statement at the first row of {@code chunk} that breaks a rule of {@link ReadingRules} against a stored
     * version of its channel (malo_id, obis_code and the key's other columns); the chunk's rows against each other were
     * checked before.
     */
    private static void requireCompatible(Table table, List<Reading> chunk, List<StoredRow> stored, TableColumns columns)
    {
        record Candidate(Reading reading, Optional<String> path) {}
        List<Candidate> rows = new ArrayList<>(chunk.size() + stored.size());
        chunk.forEach(reading -> rows.add(new Candidate(reading, Optional.empty())));
        stored.forEach(row -> rows.add(new Candidate(row.reading(), Optional.of(row.path()))));
        Comparator<Candidate> order = Comparator.comparing((Candidate candidate) -> candidate.reading().maloId())
                .thenComparing(candidate -> candidate.reading().obisCode());
        for (int index = 0; index < columns.keyColumns().size(); index++) {
            int column = index;
            // by channel first: a tenant's versions side by side, whatever the other tenants' "from"
            order = order.thenComparing(candidate -> columns.keyValues(candidate.reading()).get(column).orElse(""));
        }
        rows.sort(order
                .thenComparing(candidate -> candidate.reading().from())
                .thenComparing(candidate -> candidate.reading().version())
                .thenComparing(candidate -> candidate.path().isEmpty()));
        for (int index = 1; index < rows.size(); index++) {
            Candidate earlier = rows.get(index - 1);
            Candidate later = rows.get(index);
            if (earlier.path().isPresent() && later.path().isPresent()) {
                // two stored rows: not this statement's to answer for
                continue;
            }
            Optional<ReadingRules.ViolationException> violation = ReadingRules.violation(earlier.reading(), later.reading(), columns);
            if (violation.isPresent()) {
                String where = earlier.path().or(later::path).map(path -> "the other stored in Iceberg data file '%s' of '%s'".formatted(path, table.name())).orElseThrow();
                throw new TrinoException(METERSTORE_INVALID_READING, "%s (%s); nothing of this statement was written".formatted(violation.get().getMessage(), where), violation.get());
            }
        }
    }

    /**
     * A merge key within its version scope: the versions that compete for one winner. {@code keyValues} are the key's
     * other columns (melo_id in a table keyed by it, the identity columns), none for the default key.
     */
    record ScopedKey(String maloId, String obisCode, Instant from, List<Optional<String>> keyValues, String versionScope)
    {
        ScopedKey
        {
            requireNonNull(maloId, "maloId is null");
            requireNonNull(obisCode, "obisCode is null");
            requireNonNull(from, "from is null");
            keyValues = List.copyOf(requireNonNull(keyValues, "keyValues is null"));
            requireNonNull(versionScope, "versionScope is null");
        }

        static ScopedKey of(Reading reading, TableColumns columns)
        {
            return new ScopedKey(reading.maloId(), reading.obisCode(), reading.from(), columns.keyValues(reading), reading.versionScope());
        }
    }

    /** A live winner of a resolved month, and where it lives: its winners file and its row position there. */
    record StoredWinner(Reading reading, String dataFile, long position)
    {
        StoredWinner
        {
            requireNonNull(reading, "reading is null");
            requireNonNull(dataFile, "dataFile is null");
            checkArgument(position >= 0, "position is negative");
        }
    }

    /**
     * The live winner, in the pinned snapshot's winners files, of every key of {@code rows} (a bounded batch of one
     * resolved month), with its file and row position: position deletes applied, row groups pruned by the malo_ids and
     * "from" range involved. A key with a live row in two winners files is a month another tool changed.
     */
    Map<ScopedKey, StoredWinner> storedWinners(ConnectorSession session, Table table, PinnedWatermark pinned, List<Reading> rows)
    {
        if (rows.isEmpty()) {
            return ImmutableMap.of();
        }
        TableColumns columns = TableColumns.of(table);
        Set<ScopedKey> wanted = rows.stream().map(reading -> ScopedKey.of(reading, columns)).collect(toImmutableSet());
        Map<ScopedKey, StoredWinner> stored = new HashMap<>();
        Instant minFrom = rows.stream().map(Reading::from).min(Instant::compareTo).orElseThrow();
        Instant maxFrom = rows.stream().map(Reading::from).max(Instant::compareTo).orElseThrow();
        scan(session, table, pinned, rows, ValueSet.ofRanges(fromRange(minFrom, maxFrom.plusNanos(1000))), ReadOptions.ROW_POSITIONS, (reading, path, position) -> {
            if (!ColdFileRole.of(path).equals(Optional.of(ColdFileRole.WINNERS))) {
                return;
            }
            ScopedKey key = ScopedKey.of(reading, columns);
            if (!wanted.contains(key)) {
                return;
            }
            StoredWinner previous = stored.putIfAbsent(key, new StoredWinner(reading, path, position.orElseThrow()));
            if (previous != null) {
                throw new TrinoException(METERSTORE_UNSUPPORTED_TABLE_LAYOUT,
                        "Reading %s has a live row in two winners files of table '%s' ('%s' and '%s'), which the resolved layout rules out: the month was changed by another tool; rewrite it (rewrite_data_files) and run the statement again"
                                .formatted(RowDescription.describe(reading, columns), table.name(), previous.dataFile(), path));
            }
        });
        return stored;
    }

    private interface StoredRowConsumer
    {
        void accept(Reading stored, String path, OptionalLong position);
    }

    /**
     * The versions the pinned snapshot holds whose span reaches above its W: "from" below W and "to" after it (a P1D row
     * of a Berlin day, which starts at 22:00 or 23:00 UTC, under partitions of UTC days; a P1M row). The hot rows of an
     * INSERT may meet them, and the hot tier's trigger does not see them. Only files and row groups whose "to" reaches
     * above W are read, so a table of fixed steps archived on their grid reads none.
     */
    List<Reading> spansReachingAbove(ConnectorSession session, Table table, PinnedWatermark pinned)
    {
        Instant watermark = pinned.watermark().instant();
        List<Range> froms = new ArrayList<>();
        froms.add(fromRange(watermark.minus(ReadingRules.LONGEST_DAILY_SPAN), watermark));
        ReadingRules.monthStartsReaching(watermark.minusNanos(1000)).forEach(start -> froms.add(Range.equal(TIMESTAMP_TZ_MICROS, MeterstoreTypes.toTimestamp(MeterstoreTypes.toEpochMicros(start)))));
        TupleDomain<MeterstoreColumnHandle> constraint = TupleDomain.withColumnDomains(Map.of(
                MeterstoreTypes.columnHandle(ReadingsColumn.FROM), Domain.create(ValueSet.ofRanges(froms), false),
                MeterstoreTypes.columnHandle(ReadingsColumn.TO), Domain.create(ValueSet.ofRanges(Range.greaterThan(TIMESTAMP_TZ_MICROS,
                        MeterstoreTypes.toTimestamp(MeterstoreTypes.toEpochMicros(watermark)))), false)));
        List<Reading> reaching = new ArrayList<>();
        scan(session, table, pinned, constraint, ReadOptions.PLAIN, (stored, _, _) -> {
            if (stored.from().isBefore(watermark) && stored.to().filter(to -> to.isAfter(watermark)).isPresent()) {
                reaching.add(stored);
            }
        });
        return List.copyOf(reaching);
    }

    private static Range fromRange(Instant lower, Instant upper)
    {
        return Range.range(TIMESTAMP_TZ_MICROS, MeterstoreTypes.toTimestamp(MeterstoreTypes.toEpochMicros(lower)), true, MeterstoreTypes.toTimestamp(MeterstoreTypes.toEpochMicros(upper)), false);
    }

    /**
     * Every stored row of the pinned snapshot of the malo_ids of {@code rows} whose "from" lies in {@code froms}: files
     * and row groups pruned by both.
     */
    private void scan(ConnectorSession session, Table table, PinnedWatermark pinned, List<Reading> rows, ValueSet froms, ReadOptions readOptions, StoredRowConsumer consumer)
    {
        Set<Slice> maloIds = rows.stream().map(reading -> Slices.utf8Slice(reading.maloId())).collect(toImmutableSet());
        scan(session, table, pinned, TupleDomain.withColumnDomains(Map.of(
                MeterstoreTypes.columnHandle(ReadingsColumn.MALO_ID), Domain.multipleValues(VARCHAR, List.copyOf(maloIds)),
                MeterstoreTypes.columnHandle(ReadingsColumn.FROM), Domain.create(froms, false))), readOptions, consumer);
    }

    /** Every stored row of the pinned snapshot in {@code constraint}'s files and row groups, every column of it, its attribute columns too. */
    private void scan(ConnectorSession session, Table table, PinnedWatermark pinned, TupleDomain<MeterstoreColumnHandle> constraint, ReadOptions readOptions, StoredRowConsumer consumer)
    {
        TableColumns tableColumns = TableColumns.of(table);
        List<MeterstoreColumnHandle> columns = MeterstoreTypes.columnHandles(tableColumns);
        List<TableColumn> stored = tableColumns.all();
        for (ColdSplit split : coldSplitPlanner.plan(table, pinned.snapshotId(), pinned.watermark(), constraint).splits()) {
            try (ConnectorPageSource source = coldPageSources.createPageSource(session, split, columns, constraint, readOptions)) {
                while (!source.isFinished()) {
                    SourcePage page = source.getNextSourcePage();
                    if (page == null) {
                        continue;
                    }
                    ReadingsPages.PageBlocks blocks = ReadingsPages.blocks(tableColumns, stored, page::getBlock);
                    // the row positions, when asked for, follow the table's columns
                    Optional<Block> positions = readOptions.rowPositions() ? Optional.of(page.getBlock(columns.size())) : Optional.empty();
                    for (int position = 0; position < page.getPositionCount(); position++) {
                        int row = position;
                        consumer.accept(
                                ReadingsPages.read(blocks, position, Instant.EPOCH),
                                split.path(),
                                positions.map(block -> OptionalLong.of(BIGINT.getLong(block, row))).orElse(OptionalLong.empty()));
                    }
                }
            }
            catch (IOException e) {
                throw new TrinoException(METERSTORE_WRITE_FAILED, "Reading Iceberg data file '%s' of '%s' failed: %s".formatted(split.path(), table.name(), e.getMessage()), e);
            }
        }
    }
}
