package io.meterstore.trino.hot;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import io.airlift.slice.Slices;
import io.meterstore.core.HotTier;
import io.meterstore.core.HotTierSupersession;
import io.meterstore.core.PgBinaryCopy;
import io.meterstore.core.PgBinaryCopyReader;
import io.meterstore.core.Sql;
import io.meterstore.core.Tier;
import io.meterstore.parquet.ReadingsParquetSchema;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.meterstore.trino.base.MeterstoreMetrics;
import io.meterstore.trino.base.MeterstoreTypes;
import io.meterstore.trino.base.PostgresConnectionPool;
import io.meterstore.trino.versions.VersionResolution;
import io.trino.spi.Page;
import io.trino.spi.PageBuilder;
import io.trino.spi.TrinoException;
import io.trino.spi.block.BlockBuilder;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.SourcePage;
import io.trino.spi.metrics.Metrics;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.TupleDomain;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.SignStyle;
import java.time.temporal.ChronoField;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_HOT_READ_FAILED;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_PARTITION_MISSING;
import static io.trino.spi.type.DateType.DATE;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;
import static java.util.stream.Collectors.joining;

/**
 * Streams a split's hot partitions as binary COPY (never a buffered result set) and decodes the bytes straight into
 * blocks: one statement, each partition read by name (a UNION ALL of them for a split of several). The statement
 * carries "from" >= W for the W the query planned with, the query's "from" range and equality on the identifier
 * columns, every value bound once.
 */
public final class HotPageSource
        implements ConnectorPageSource
{
    private static final int MAX_PAGE_ROWS = 8_192;
    // the year without the '+' that Instant.toString() puts before one after 9999, which PostgreSQL rejects: an
    // inclusive upper bound of 9999-12-31 23:59:59.999999 is bound as the exclusive 10000-01-01
    private static final DateTimeFormatter TIMESTAMP = new DateTimeFormatterBuilder()
            .appendValue(ChronoField.YEAR, 4, 10, SignStyle.NORMAL)
            .appendPattern("-MM-dd'T'HH:mm:ss.SSSSSS'Z'")
            .toFormatter(Locale.ROOT)
            .withZone(ZoneOffset.UTC);

    private final HotSplit split;
    private final List<MeterstoreColumnHandle> columns;
    private final TupleDomain<MeterstoreColumnHandle> predicate;
    private final VersionResolution resolution;
    // the merge key's columns after malo_id, obis_code and "from" (melo_id in a table keyed by it, the identity columns)
    private final List<String> keyColumns;
    private final PostgresConnectionPool pool;
    private final Connection connection;
    private final PgBinaryCopy copy;
    private final PgBinaryCopyReader rows;
    private final PageBuilder pageBuilder;
    private long completedPositions;
    private long readTimeNanos;
    private boolean finished;

    /**
     * @param connection a connection of {@code pool}, given back when the page source closes
     * @param predicate the split's pushed constraint, possibly narrowed by a dynamic filter
     * @param resolution a resolving read gets its rows sorted by merge key and version; AS OF drops later versions here
     */
    public HotPageSource(PostgresConnectionPool pool, Connection connection, HotSplit split, List<MeterstoreColumnHandle> columns, TupleDomain<MeterstoreColumnHandle> predicate, VersionResolution resolution)
    {
        this(pool, connection, split, columns, predicate, resolution, List.of());
    }

    /** As the constructor above, for a table whose merge key has {@code keyColumns} besides malo_id, obis_code and "from". */
    public HotPageSource(PostgresConnectionPool pool, Connection connection, HotSplit split, List<MeterstoreColumnHandle> columns, TupleDomain<MeterstoreColumnHandle> predicate, VersionResolution resolution,
            List<String> keyColumns)
    {
        this.keyColumns = ImmutableList.copyOf(requireNonNull(keyColumns, "keyColumns is null"));
        this.resolution = requireNonNull(resolution, "resolution is null");
        this.pool = requireNonNull(pool, "pool is null");
        this.connection = requireNonNull(connection, "connection is null");
        this.split = requireNonNull(split, "split is null");
        this.predicate = requireNonNull(predicate, "predicate is null");
        this.columns = ImmutableList.copyOf(requireNonNull(columns, "columns is null"));
        this.pageBuilder = new PageBuilder(this.columns.stream().map(MeterstoreColumnHandle::type).toList());
        long start = System.nanoTime();
        try {
            // the parameters live only as long as this transaction; the partition is read, never written, in the
            // query's snapshot, which every other hot split of the query reads too
            split.snapshot().begin(connection);
            List<String> parameters = new ArrayList<>();
            String sql = sql(parameters);
            // a resolving read needs primary-key order: the index gives it while streaming, a sort only at the end
            copy = resolvesInKeyOrder() ? PgBinaryCopy.startInIndexOrder(connection, sql, parameters) : PgBinaryCopy.start(connection, sql, parameters);
            rows = copy.rows();
        }
        catch (SQLException e) {
            closeQuietly();
            throw translate(e);
        }
        catch (RuntimeException e) {
            closeQuietly();
            throw e;
        }
        readTimeNanos += System.nanoTime() - start;
    }

    private String sql(List<String> parameters)
            throws SQLException
    {
        String selected = columns.isEmpty() ? "NULL" : String.join(", ", columns.stream().map(column -> Sql.quoteIdentifier(column.name())).toList());
        // every partition's rows meet the same conditions, bound once
        String conditions = conditions(parameters);
        StringBuilder sql = new StringBuilder();
        if (split.partitions().size() == 1) {
            sql.append("SELECT ").append(selected).append(" FROM ").append(Sql.qualified(split.schema(), split.partitions().getFirst())).append(conditions);
        }
        else if (resolvesInKeyOrder()) {
            // the order below is over all the partitions' rows, with columns the query may not read
            sql.append("SELECT ").append(selected).append(" FROM (")
                    .append(split.partitions().stream().map(partition -> "SELECT * FROM " + Sql.qualified(split.schema(), partition) + conditions).collect(joining(" UNION ALL ")))
                    .append(") AS partitions");
        }
        else {
            sql.append(split.partitions().stream().map(partition -> "SELECT " + selected + " FROM " + Sql.qualified(split.schema(), partition) + conditions).collect(joining(" UNION ALL ")));
        }
        if (resolvesInKeyOrder()) {
            // the primary key's order: the versions of a key arrive together, so the page source resolves in one pass
            sql.append(" ORDER BY malo_id, obis_code, \"from\"");
            keyColumns.forEach(column -> sql.append(", ").append(Sql.quoteIdentifier(column)));
            sql.append(", version");
        }
        else if (split.limit().isPresent()) {
            // a pushed LIMIT: any rows will do, so PostgreSQL stops early; Trino still applies its own limit
            sql.append(" LIMIT ").append(PgBinaryCopy.parameter(parameters.size() + 1, "int8"));
            parameters.add(Long.toString(split.limit().getAsLong()));
        }
        return sql.toString();
    }

    // " WHERE ...": "from" >= W for the W the query planned with, the query's bounds and equalities, AS OF and the marks
    private String conditions(List<String> parameters)
    {
        StringBuilder sql = new StringBuilder();
        // rows below W belong to Iceberg, even while an archived partition still exists detached for the reader grace
        sql.append(" WHERE ").append(Tier.HOT.sql(PgBinaryCopy.parameter(parameters.size() + 1, "timestamptz")));
        parameters.add(timestamp(split.watermarkEpochMicros()));
        // the query's bounds divide "from" as W does: at or above the lower, below the upper
        if (split.lowerEpochMicros().isPresent()) {
            sql.append(" AND ").append(Tier.HOT.sql(PgBinaryCopy.parameter(parameters.size() + 1, "timestamptz")));
            parameters.add(timestamp(split.lowerEpochMicros().get()));
        }
        if (split.upperEpochMicros().isPresent()) {
            sql.append(" AND ").append(Tier.COLD.sql(PgBinaryCopy.parameter(parameters.size() + 1, "timestamptz")));
            parameters.add(timestamp(split.upperEpochMicros().get()));
        }
        Optional<Map<MeterstoreColumnHandle, Domain>> domains = predicate.getDomains();
        if (domains.isPresent()) {
            for (Map.Entry<MeterstoreColumnHandle, Domain> entry : domains.get().entrySet()) {
                MeterstoreColumnHandle column = entry.getKey();
                Domain domain = entry.getValue();
                // the one rule for what the statement enforces: the metadata drops exactly these from Trino's filter
                if (!HotSqlPredicate.isPushedAsEquality(column, domain)) {
                    continue;
                }
                sql.append(" AND ").append(Sql.quoteIdentifier(column.name())).append(" = ANY(").append(PgBinaryCopy.parameter(parameters.size() + 1, "text[]")).append(")");
                parameters.add(textArray(HotSqlPredicate.texts(domain)));
            }
        }
        if (resolution.knownAtEpochMicros().isPresent()) {
            sql.append(" AND recorded_at <= ").append(PgBinaryCopy.parameter(parameters.size() + 1, "timestamptz"));
            parameters.add(timestamp(resolution.knownAtEpochMicros().get()));
        }
        if (resolution.resolve() && split.marked()) {
            // the winners as known now, or at the AS OF instant: recorded by then and not superseded by then
            sql.append(" AND ").append(winnersByMarks(resolution, PgBinaryCopy.parameter(parameters.size() + 1, "timestamptz")));
            resolution.knownAtEpochMicros().ifPresent(knownAt -> parameters.add(timestamp(knownAt)));
        }
        return sql.toString();
    }

    /** The rows a read of winners keeps from a marked partition, besides recorded_at &lt;= t for AS OF; {@code knownAt} binds t. */
    public static String winnersByMarks(VersionResolution resolution, String knownAt)
    {
        String column = Sql.quoteIdentifier(HotTierSupersession.COLUMN);
        return resolution.knownAtEpochMicros().isPresent()
                ? "(%1$s IS NULL OR %1$s > %2$s)".formatted(column, knownAt)
                : "%s IS NULL".formatted(column);
    }

    // an unmarked partition of a read of winners: its versions in primary-key order, resolved as they stream
    private boolean resolvesInKeyOrder()
    {
        return resolution.resolve() && !split.marked();
    }

    private static String timestamp(long epochMicros)
    {
        // ISO 8601 in UTC, which timestamptz reads whatever the session's DateStyle and time zone
        return TIMESTAMP.format(MeterstoreTypes.fromEpochMicros(epochMicros));
    }

    /** A PostgreSQL array literal: every element double-quoted, with quotes and backslashes escaped. */
    private static String textArray(List<String> values)
    {
        StringBuilder array = new StringBuilder("{");
        for (String value : values) {
            array.append(array.length() > 1 ? "," : "").append('"');
            value.chars().forEach(character -> {
                if (character == '"' || character == '\\') {
                    array.append('\\');
                }
                array.append((char) character);
            });
            array.append('"');
        }
        return array.append('}').toString();
    }

    @Override
    public SourcePage getNextSourcePage()
    {
        if (finished) {
            return null;
        }
        long start = System.nanoTime();
        try {
            int count = 0;
            while (count < MAX_PAGE_ROWS && !pageBuilder.isFull()) {
                if (!rows.nextRow()) {
                    finished = true;
                    break;
                }
                pageBuilder.declarePosition();
                for (int channel = 0; channel < columns.size(); channel++) {
                    appendValue(rows, channel, columns.get(channel), pageBuilder.getBlockBuilder(channel));
                }
                count++;
            }
        }
        catch (SQLException e) {
            throw translate(e);
        }
        catch (Exception e) {
            throw new TrinoException(METERSTORE_HOT_READ_FAILED, "Cannot decode the rows of %s: %s".formatted(split.describePartitions(), e.getMessage()), e);
        }
        finally {
            readTimeNanos += System.nanoTime() - start;
        }
        Page page = pageBuilder.build();
        pageBuilder.reset();
        completedPositions += page.getPositionCount();
        if (page.getPositionCount() > 0) {
            // splits waiting for a connection wait on while this one reads, however long it holds its connection
            pool.progressed();
            HotReadFailpoints.afterPage(split.partitions());
        }
        if (finished) {
            closeQuietly();
        }
        return SourcePage.create(page);
    }

    private static void appendValue(PgBinaryCopyReader row, int field, MeterstoreColumnHandle column, BlockBuilder builder)
    {
        if (row.isNull(field)) {
            builder.appendNull();
            return;
        }
        switch (column.column().kind()) {
            case STRING -> VARCHAR.writeSlice(builder, Slices.wrappedBuffer(row.buffer(), row.offset(field), row.length(field)));
            case TIMESTAMP_TZ -> MeterstoreTypes.TIMESTAMP_TZ_MICROS.writeObject(builder, MeterstoreTypes.toTimestamp(row.timestampMicros(field)));
            case QUANTITY -> MeterstoreTypes.QUANTITY.writeLong(builder, row.numericUnscaled(field, MeterstoreTypes.QUANTITY.getScale()));
            case VERSION -> MeterstoreTypes.VERSION.writeObject(builder, ReadingsParquetSchema.version(row, field));
            case DATE -> DATE.writeLong(builder, row.epochDay(field));
        }
    }

    private TrinoException translate(SQLException e)
    {
        if (HotTier.isUndefinedTable(e)) {
            return partitionMissing(split.partitions().size() == 1 ? "The " + split.describePartitions() : "One of the %s (%s)".formatted(split.describePartitions(), e.getMessage()), e);
        }
        return new TrinoException(METERSTORE_HOT_READ_FAILED, "Cannot read %s: %s".formatted(split.describePartitions(), e.getMessage()), e);
    }

    /** {@code partitions} was planned but dropped before its split ran: the archiver's reader grace is too short. */
    public static TrinoException partitionMissing(String partitions, SQLException e)
    {
        return new TrinoException(METERSTORE_PARTITION_MISSING, ("%s was planned for this query but no longer exists: it was dropped after its archival, because the query ran longer than the archiver's reader grace; "
                + "run the query again, or raise the archiver's 'meterstore.reader-grace' above the longest query").formatted(partitions), e);
    }

    @Override
    public long getCompletedBytes()
    {
        return 0;
    }

    @Override
    public OptionalLong getCompletedPositions()
    {
        return OptionalLong.of(completedPositions);
    }

    @Override
    public Metrics getMetrics()
    {
        return MeterstoreMetrics.counts(ImmutableMap.of(
                MeterstoreMetrics.HOT_PARTITIONS_READ, (long) split.partitions().size(),
                MeterstoreMetrics.HOT_PARTITIONS_RESOLVED, resolvesInKeyOrder() ? (long) split.partitions().size() : 0L,
                MeterstoreMetrics.HOT_ROWS_READ, completedPositions));
    }

    @Override
    public long getReadTimeNanos()
    {
        return readTimeNanos;
    }

    @Override
    public boolean isFinished()
    {
        return finished;
    }

    @Override
    public long getMemoryUsage()
    {
        return pageBuilder.getRetainedSizeInBytes();
    }

    @Override
    public void close()
    {
        finished = true;
        closeQuietly();
    }

    private void closeQuietly()
    {
        if (copy != null && copy.isActive()) {
            // closed before the end (a LIMIT, a failure): closing the connection ends the COPY on the server too,
            // where giving it back would hand the next borrower a connection in the middle of a COPY
            pool.discard(connection);
            return;
        }
        try {
            connection.rollback();
        }
        catch (SQLException | RuntimeException ignored) {
            // the connection is closed next; nothing was written
        }
        closeConnection();
    }

    private void closeConnection()
    {
        try {
            connection.close();
        }
        catch (SQLException ignored) {
            // nothing to release beyond the connection itself
        }
    }
}
