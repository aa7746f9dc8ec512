package io.meterstore.trino.cold;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import io.meterstore.core.TableColumn;
import io.meterstore.storage.ColdStorage;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.trino.filesystem.Location;
import io.trino.filesystem.TrinoFileSystemFactory;
import io.trino.filesystem.TrinoInputFile;
import io.trino.filesystem.cache.TrinoFileSystemCache;
import io.trino.parquet.Column;
import io.trino.parquet.Field;
import io.trino.parquet.ParquetCorruptionException;
import io.trino.memory.context.AggregatedMemoryContext;
import io.trino.parquet.ParquetDataSource;
import io.trino.parquet.ParquetDataSourceId;
import io.trino.parquet.ParquetReaderOptions;
import io.trino.parquet.metadata.FileMetadata;
import io.trino.parquet.metadata.ParquetMetadata;
import io.trino.parquet.predicate.TupleDomainParquetPredicate;
import io.trino.parquet.reader.MetadataReader;
import io.trino.parquet.reader.ParquetReader;
import io.trino.parquet.reader.RowGroupInfo;
import io.trino.spi.Page;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.EmptyPageSource;
import io.trino.spi.connector.FixedPageSource;
import io.trino.spi.connector.MemoryContext;
import io.trino.spi.connector.MemoryUsageReportingPageSource;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.Range;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.predicate.ValueSet;
import io.trino.spi.type.LongTimestampWithTimeZone;
import org.apache.iceberg.deletes.PositionDeleteIndex;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.io.MessageColumnIO;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.Type;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static com.google.common.collect.ImmutableList.toImmutableList;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_COLD_READ_FAILED;
import static io.meterstore.trino.base.MeterstoreTypes.toEpochMicros;
import static io.meterstore.trino.cold.IcebergExpressions.DOMAIN_COMPACTION_THRESHOLD;
import static io.trino.memory.context.AggregatedMemoryContext.newSimpleAggregatedMemoryContext;
import static io.trino.parquet.ParquetTypeUtils.constructField;
import static io.trino.parquet.ParquetTypeUtils.getColumnIO;
import static io.trino.parquet.ParquetTypeUtils.getDescriptors;
import static io.trino.parquet.predicate.PredicateUtils.buildPredicate;
import static io.trino.parquet.predicate.PredicateUtils.getFilteredRowGroups;
import static io.trino.spi.block.PageBuilderStatus.DEFAULT_MAX_PAGE_SIZE_IN_BYTES;
import static io.trino.spi.type.TimestampType.TIMESTAMP_MICROS;
import static java.lang.Math.min;
import static java.lang.Math.toIntExact;
import static java.util.Locale.ENGLISH;
import static java.util.Objects.requireNonNull;
import static org.joda.time.DateTimeZone.UTC;

/**
 * Opens a {@link ColdSplit} with Trino's own Parquet reader: columns found by Iceberg field id, row groups pruned by
 * their statistics, dictionaries and bloom filters against the pushed predicate, and the rows the split's position
 * delete files remove left out. Rows are not filtered by the predicate here; Trino applies it to every row it receives.
 */
public final class ColdPageSourceProvider
{
    /**
     * How a split is read beyond its columns and predicate.
     *
     * @param rowPositions append each row's position in its file as a last bigint channel
     * @param resolving the rows are read to resolve versions; the split's row groups count as resolved in its metrics
     */
    public record ReadOptions(boolean rowPositions, boolean resolving)
    {
        public static final ReadOptions PLAIN = new ReadOptions(false, false);
        public static final ReadOptions RESOLVING = new ReadOptions(false, true);
        public static final ReadOptions ROW_POSITIONS = new ReadOptions(true, false);
    }

    // pages without columns carry only a position count; bound them as Trino's Iceberg connector does
    private static final int MAX_POSITIONS_PER_COUNT_PAGE = DEFAULT_MAX_PAGE_SIZE_IN_BYTES / Long.BYTES;

    private final TrinoFileSystemFactory fileSystemFactory;
    private final ParquetReaderOptions options;
    private final Optional<TrinoFileSystemCache> cache;

    public ColdPageSourceProvider(TrinoFileSystemFactory fileSystemFactory, ParquetReaderOptions options)
    {
        this(fileSystemFactory, options, Optional.empty());
    }

    /** @param cache the memory {@code fileSystemFactory} keeps files in, if it keeps them (the coordinator's) */
    public ColdPageSourceProvider(TrinoFileSystemFactory fileSystemFactory, ParquetReaderOptions options, Optional<TrinoFileSystemCache> cache)
    {
        this.fileSystemFactory = requireNonNull(fileSystemFactory, "fileSystemFactory is null");
        this.cache = requireNonNull(cache, "cache is null");
        // the archiver writes bloom filters on the point-lookup columns (malo_id, obis_code); always consult them
        this.options = ParquetReaderOptions.builder(requireNonNull(options, "options is null"))
                .withBloomFilter(true)
                .build();
    }

    /** As {@link #createPageSource(ConnectorSession, ColdSplit, List, TupleDomain)}, reporting memory to {@code memoryContext}. */
    public ConnectorPageSource createPageSource(
            ConnectorSession session,
            ColdSplit split,
            List<MeterstoreColumnHandle> columns,
            TupleDomain<MeterstoreColumnHandle> predicate,
            MemoryContext memoryContext)
    {
        return new MemoryUsageReportingPageSource(createPageSource(session, split, columns, predicate), memoryContext);
    }

    public ConnectorPageSource createPageSource(
            ConnectorSession session,
            ColdSplit split,
            List<MeterstoreColumnHandle> columns,
            TupleDomain<MeterstoreColumnHandle> predicate)
    {
        return createPageSource(session, split, columns, predicate, ReadOptions.PLAIN);
    }

    /**
     * @param columns the columns of the pages, in this order; empty for a page of positions only ({@code count(*)})
     * @param predicate the pushed predicate, used to skip row groups that cannot hold a matching row
     */
    public ConnectorPageSource createPageSource(
            ConnectorSession session,
            ColdSplit split,
            List<MeterstoreColumnHandle> columns,
            TupleDomain<MeterstoreColumnHandle> predicate,
            ReadOptions readOptions)
    {
        requireNonNull(session, "session is null");
        requireNonNull(split, "split is null");
        requireNonNull(columns, "columns is null");
        requireNonNull(predicate, "predicate is null");
        requireNonNull(readOptions, "readOptions is null");
        if (predicate.isNone()) {
            return new EmptyPageSource();
        }
        if (columns.isEmpty() && predicate.isAll() && split.rowsFromManifest() && !readOptions.rowPositions()) {
            // the manifest's record count answers count(*) without opening the file
            return countOnlyPageSource(split.fileRecordCount());
        }

        Optional<PositionDeleteIndex> deletes = split.deletes().isEmpty()
                ? Optional.empty()
                : Optional.of(PositionDeletes.load(fileSystemFactory.create(session), options, split.path(), split.deletes()));
        // the reader's buffers and a small file read whole count in one memory context, the page source's
        AggregatedMemoryContext memoryContext = newSimpleAggregatedMemoryContext();
        ParquetDataSource dataSource = openDataSource(session, split, memoryContext);
        try {
            return createPageSource(dataSource, memoryContext, split, columns, predicate, deletes, readOptions);
        }
        catch (IOException | RuntimeException e) {
            try {
                dataSource.close();
            }
            catch (IOException closeException) {
                e.addSuppressed(closeException);
            }
            throw openFailure(session, split, e);
        }
    }

    private ParquetDataSource openDataSource(ConnectorSession session, ColdSplit split, AggregatedMemoryContext memoryContext)
    {
        TrinoInputFile inputFile = fileSystemFactory.create(session).newInputFile(Location.of(split.path()), split.fileSize());
        try {
            return ColdParquetDataSource.forScan(inputFile, split.fileSize(), options, memoryContext);
        }
        catch (IOException | RuntimeException e) {
            throw openFailure(session, split, e);
        }
    }

    private ConnectorPageSource createPageSource(
            ParquetDataSource dataSource,
            AggregatedMemoryContext memoryContext,
            ColdSplit split,
            List<MeterstoreColumnHandle> columns,
            TupleDomain<MeterstoreColumnHandle> predicate,
            Optional<PositionDeleteIndex> deletes,
            ReadOptions readOptions)
            throws IOException
    {
        // a row's file position is the batch's first row plus its index only while no page index drops rows inside a row group
        ParquetReaderOptions readerOptions = deletes.isPresent() || readOptions.rowPositions()
                ? ParquetReaderOptions.builder(this.options).withUseColumnIndex(false).build()
                : this.options;
        ParquetDataSourceId dataSourceId = dataSource.getId();
        ParquetMetadata parquetMetadata = MetadataReader.readFooter(dataSource, readerOptions, Optional.empty(), Optional.empty());
        FileMetadata fileMetadata = parquetMetadata.getFileMetaData();
        MessageType fileSchema = fileMetadata.getSchema();
        Map<TableColumn, Type> fileColumns = fileColumns(fileSchema, columns, predicate);

        // the predicate's columns take part in pruning even when the query does not read them
        Set<TableColumn> prunedOrRead = new LinkedHashSet<>();
        columns.forEach(column -> prunedOrRead.add(column.column()));
        predicate.getDomains().orElseThrow().keySet().forEach(column -> prunedOrRead.add(column.column()));
        MessageType requestedSchema = new MessageType(
                fileSchema.getName(),
                prunedOrRead.stream()
                        .filter(fileColumns::containsKey)
                        .map(fileColumns::get)
                        .collect(toImmutableList()));
        Map<List<String>, ColumnDescriptor> descriptorsByPath = getDescriptors(fileSchema, requestedSchema);
        TupleDomain<ColumnDescriptor> parquetTupleDomain = readerOptions.isIgnoreStatistics()
                ? TupleDomain.all()
                : parquetTupleDomain(predicate, fileColumns, descriptorsByPath);
        TupleDomainParquetPredicate parquetPredicate = buildPredicate(requestedSchema, parquetTupleDomain, descriptorsByPath, UTC);
        // only the row groups that start inside the split's range: every row group of a file is read by exactly one split
        List<RowGroupInfo> rowGroups = getFilteredRowGroups(
                split.start(),
                split.length(),
                dataSource,
                parquetMetadata,
                ImmutableList.of(parquetTupleDomain),
                ImmutableList.of(parquetPredicate),
                descriptorsByPath,
                UTC,
                DOMAIN_COMPACTION_THRESHOLD,
                readerOptions);

        MessageColumnIO messageColumnIO = getColumnIO(fileSchema, requestedSchema);
        ImmutableList.Builder<Column> readerColumns = ImmutableList.builder();
        Map<TableColumn, Integer> readerChannels = new HashMap<>();
        List<Integer> channels = new ArrayList<>();
        for (MeterstoreColumnHandle column : columns) {
            Type parquetType = fileColumns.get(column.column());
            if (parquetType == null) {
                // a column the file was written without reads as null, as Iceberg schema evolution defines
                channels.add(ColdPageSource.NULL_CHANNEL);
                continue;
            }
            Integer channel = readerChannels.get(column.column());
            if (channel == null) {
                Field field = constructField(column.type(), messageColumnIO.getChild(parquetType.getName()))
                        .orElseThrow(() -> new ParquetCorruptionException(dataSourceId, "Column '%s' cannot be read as %s", column.name(), column.type()));
                channel = readerChannels.size();
                readerChannels.put(column.column(), channel);
                readerColumns.add(new Column(parquetType.getName(), field));
            }
            channels.add(channel);
        }

        ParquetReader parquetReader = new ParquetReader(
                Optional.ofNullable(fileMetadata.getCreatedBy()),
                readerColumns.build(),
                false,
                rowGroups,
                dataSource,
                UTC,
                memoryContext,
                readerOptions,
                exception -> ColdPageSource.translate(dataSourceId, exception),
                Optional.of(parquetPredicate),
                Optional.empty(),
                Optional.empty());
        long rowGroupsInSplit = parquetMetadata.getBlocks(split.start(), split.length()).size();
        return new ColdPageSource(parquetReader, columns.stream().map(MeterstoreColumnHandle::type).toList(), channels, rowGroupsInSplit, rowGroups.size(), deletes, readOptions.rowPositions(), readOptions.resolving());
    }

    private TrinoException openFailure(ConnectorSession session, ColdSplit split, Exception failure)
    {
        TrinoException described = describe(session, split, failure);
        // a copy kept in memory may be what failed (a file cut short when it was first read): the next read goes to the
        // storage, so that a file restored from a backup answers at once
        forget(split);
        return described;
    }

    private TrinoException describe(ConnectorSession session, ColdSplit split, Exception failure)
    {
        if (failure instanceof TrinoException trinoException) {
            return trinoException;
        }
        if (failure instanceof FileNotFoundException) {
            return new TrinoException(METERSTORE_COLD_READ_FAILED,
                    ("Data file '%s' of the pinned snapshot does not exist: it was removed after the query planned (snapshot expiry or orphan-file cleanup), or by hand; "
                            + "run the query again, and if it fails again restore the file from a backup (the archiver's 'status' lists every missing data file)").formatted(split.path()),
                    failure);
        }
        // a file cut short or overwritten fails as one that is not Parquet: its length against the snapshot's says which
        Optional<String> damage = lengthMismatch(session, split);
        if (damage.isPresent()) {
            return new TrinoException(METERSTORE_COLD_READ_FAILED, "Data file '%s' %s: restore it from a backup (the archiver's 'status' lists every damaged data file); %s"
                    .formatted(split.path(), damage.get(), failure.getMessage()), failure);
        }
        if (failure instanceof ParquetCorruptionException) {
            return new TrinoException(METERSTORE_COLD_READ_FAILED, "Data file '%s' is not valid Parquet: %s".formatted(split.path(), failure.getMessage()), failure);
        }
        // the storage itself failed (unreachable, refused the credentials): never a short answer, and the settings to check
        return new TrinoException(METERSTORE_COLD_READ_FAILED,
                "Failed to open data file '%s' at offset %s, length %s: %s; check that the storage is reachable (%s) and run the query again"
                        .formatted(split.path(), split.start(), split.length(), failure.getMessage(), ColdStorage.settingsToCheck(split.path())),
                failure);
    }

    private void forget(ColdSplit split)
    {
        if (cache.isPresent()) {
            try {
                cache.get().expire(Location.of(split.path()));
            }
            catch (IOException | RuntimeException ignored) {
                // the failure being reported says more than this one
            }
        }
    }

    private Optional<String> lengthMismatch(ConnectorSession session, ColdSplit split)
    {
        try {
            long length = fileSystemFactory.create(session).newInputFile(Location.of(split.path())).length();
            if (length != split.fileSize()) {
                return Optional.of("is %s bytes long, but the snapshot records %s bytes: it was truncated or overwritten".formatted(length, split.fileSize()));
            }
        }
        catch (IOException | RuntimeException ignored) {
            // the failure being reported says more than this one
        }
        return Optional.empty();
    }

    /**
     * The file's top-level columns of those read or pruned by, found by Iceberg field id; a file written without field
     * ids is matched by name.
     */
    private static Map<TableColumn, Type> fileColumns(MessageType fileSchema, List<MeterstoreColumnHandle> columns, TupleDomain<MeterstoreColumnHandle> predicate)
    {
        Map<Integer, Type> byId = new HashMap<>();
        Map<String, Type> byName = new HashMap<>();
        for (Type field : fileSchema.getFields()) {
            if (field.getId() != null) {
                byId.putIfAbsent(field.getId().intValue(), field);
            }
            byName.putIfAbsent(field.getName().toLowerCase(ENGLISH), field);
        }
        Set<TableColumn> wanted = new LinkedHashSet<>();
        columns.forEach(column -> wanted.add(column.column()));
        predicate.getDomains().orElseThrow().keySet().forEach(column -> wanted.add(column.column()));
        ImmutableMap.Builder<TableColumn, Type> found = ImmutableMap.builder();
        for (TableColumn column : wanted) {
            Type field = byId.isEmpty() ? byName.get(column.name()) : byId.get(column.fieldId());
            if (field != null && field.isPrimitive()) {
                found.put(column, field);
            }
        }
        return found.buildOrThrow();
    }

    private static TupleDomain<ColumnDescriptor> parquetTupleDomain(
            TupleDomain<MeterstoreColumnHandle> predicate,
            Map<TableColumn, Type> fileColumns,
            Map<List<String>, ColumnDescriptor> descriptorsByPath)
    {
        ImmutableMap.Builder<ColumnDescriptor, Domain> domains = ImmutableMap.builder();
        predicate.getDomains().orElseThrow().forEach((column, domain) -> {
            Type parquetType = fileColumns.get(column.column());
            if (parquetType == null) {
                return;
            }
            ColumnDescriptor descriptor = descriptorsByPath.get(ImmutableList.of(parquetType.getName()));
            if (descriptor != null) {
                domains.put(descriptor, parquetDomain(column.column(), domain));
            }
        });
        return TupleDomain.withColumnDomains(domains.buildOrThrow());
    }

    /**
     * The domain in the type the Parquet statistics are compared in. Trino's Parquet predicate does not read statistics
     * as timestamp with time zone, but it does read INT64 TIMESTAMP(UTC, MICROS) as timestamp(6): the same epoch
     * microseconds, so a range on "from" can still skip row groups.
     */
    private static Domain parquetDomain(TableColumn column, Domain domain)
    {
        return switch (column.kind()) {
            case STRING, QUANTITY, VERSION, DATE -> domain;
            case TIMESTAMP_TZ -> epochMicrosDomain(domain);
        };
    }

    private static Domain epochMicrosDomain(Domain domain)
    {
        ValueSet values = domain.getValues();
        if (values.isNone()) {
            return domain.isNullAllowed() ? Domain.onlyNull(TIMESTAMP_MICROS) : Domain.none(TIMESTAMP_MICROS);
        }
        if (values.isAll()) {
            return domain.isNullAllowed() ? Domain.all(TIMESTAMP_MICROS) : Domain.notNull(TIMESTAMP_MICROS);
        }
        List<Range> ranges = values.getRanges().getOrderedRanges().stream()
                .map(ColdPageSourceProvider::epochMicrosRange)
                .toList();
        return Domain.create(ValueSet.ofRanges(ranges), domain.isNullAllowed());
    }

    private static Range epochMicrosRange(Range range)
    {
        if (range.isSingleValue()) {
            return Range.equal(TIMESTAMP_MICROS, toEpochMicros((LongTimestampWithTimeZone) range.getSingleValue()));
        }
        if (range.isLowUnbounded()) {
            long high = toEpochMicros((LongTimestampWithTimeZone) range.getHighBoundedValue());
            return range.isHighInclusive() ? Range.lessThanOrEqual(TIMESTAMP_MICROS, high) : Range.lessThan(TIMESTAMP_MICROS, high);
        }
        long low = toEpochMicros((LongTimestampWithTimeZone) range.getLowBoundedValue());
        if (range.isHighUnbounded()) {
            return range.isLowInclusive() ? Range.greaterThanOrEqual(TIMESTAMP_MICROS, low) : Range.greaterThan(TIMESTAMP_MICROS, low);
        }
        long high = toEpochMicros((LongTimestampWithTimeZone) range.getHighBoundedValue());
        return Range.range(TIMESTAMP_MICROS, low, range.isLowInclusive(), high, range.isHighInclusive());
    }

    private static ConnectorPageSource countOnlyPageSource(long rowCount)
    {
        ImmutableList.Builder<Page> pages = ImmutableList.builder();
        for (long remaining = rowCount; remaining > 0; remaining -= MAX_POSITIONS_PER_COUNT_PAGE) {
            pages.add(new Page(toIntExact(min(remaining, MAX_POSITIONS_PER_COUNT_PAGE))));
        }
        return new FixedPageSource(pages.build());
    }
}
