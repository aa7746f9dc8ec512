package io.meterstore.trino.hot;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import io.airlift.slice.Slice;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.Sql;
import io.meterstore.trino.MeterstoreColumnHandle;
import io.meterstore.trino.MeterstoreMetrics;
import io.meterstore.trino.MeterstoreTypes;
import io.trino.spi.Page;
import io.trino.spi.PageBuilder;
import io.trino.spi.TrinoException;
import io.trino.spi.block.BlockBuilder;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.SourcePage;
import io.trino.spi.metrics.Metrics;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.type.Int128;

import java.math.BigDecimal;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

import static io.airlift.slice.Slices.utf8Slice;
import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_HOT_READ_FAILED;
import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_PARTITION_MISSING;
import static io.trino.spi.type.DateType.DATE;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * Streams one hot partition through a server-side cursor (never a buffered result set) and decodes it into blocks.
 * The statement carries "from" >= W for the W the query planned with, the query's "from" range and equality on the
 * identifier columns, every value bound.
 */
public final class HotPageSource
        implements ConnectorPageSource
{
    // a predicate on more values than this is left to Trino instead of becoming a huge array parameter
    private static final int MAX_PUSHED_VALUES = 10_000;
    private static final int MAX_PAGE_ROWS = 8_192;
    // SQLSTATE undefined_table
    private static final String UNDEFINED_TABLE = "42P01";

    private final HotSplit split;
    private final List<MeterstoreColumnHandle> columns;
    private final TupleDomain<MeterstoreColumnHandle> predicate;
    private final Connection connection;
    private final PreparedStatement statement;
    private final ResultSet resultSet;
    private final PageBuilder pageBuilder;
    private long completedPositions;
    private long readTimeNanos;
    private boolean finished;

    /**
     * @param predicate the split's pushed constraint, possibly narrowed by a dynamic filter
     */
    public HotPageSource(Connection connection, HotSplit split, List<MeterstoreColumnHandle> columns, TupleDomain<MeterstoreColumnHandle> predicate, int fetchRows)
    {
        this.connection = requireNonNull(connection, "connection is null");
        this.split = requireNonNull(split, "split is null");
        this.predicate = requireNonNull(predicate, "predicate is null");
        this.columns = ImmutableList.copyOf(requireNonNull(columns, "columns is null"));
        this.pageBuilder = new PageBuilder(this.columns.stream().map(MeterstoreColumnHandle::type).toList());
        long start = System.nanoTime();
        try {
            // a cursor streams only inside a transaction; the partition is read, never written
            connection.setAutoCommit(false);
            connection.setReadOnly(true);
            List<Object> parameters = new ArrayList<>();
            String sql = sql(parameters);
            statement = connection.prepareStatement(sql, ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY);
            statement.setFetchSize(fetchRows);
            for (int index = 0; index < parameters.size(); index++) {
                statement.setObject(index + 1, parameters.get(index));
            }
            resultSet = statement.executeQuery();
        }
        catch (SQLException e) {
            closeQuietly();
            throw translate(e);
        }
        readTimeNanos += System.nanoTime() - start;
    }

    private String sql(List<Object> parameters)
            throws SQLException
    {
        StringBuilder sql = new StringBuilder("SELECT ");
        if (columns.isEmpty()) {
            sql.append("NULL");
        }
        else {
            sql.append(String.join(", ", columns.stream().map(column -> Sql.quoteIdentifier(column.name())).toList()));
        }
        sql.append(" FROM ").append(Sql.qualified(split.schema(), split.partition()));
        // rows below W belong to Iceberg, even while an archived partition still exists detached for the reader grace
        sql.append(" WHERE \"from\" >= ?");
        parameters.add(timestamp(split.watermarkEpochMicros()));
        if (split.lowerEpochMicros().isPresent()) {
            sql.append(" AND \"from\" >= ?");
            parameters.add(timestamp(split.lowerEpochMicros().get()));
        }
        if (split.upperEpochMicros().isPresent()) {
            sql.append(" AND \"from\" < ?");
            parameters.add(timestamp(split.upperEpochMicros().get()));
        }
        Optional<Map<MeterstoreColumnHandle, Domain>> domains = predicate.getDomains();
        if (domains.isPresent()) {
            for (Map.Entry<MeterstoreColumnHandle, Domain> entry : domains.get().entrySet()) {
                MeterstoreColumnHandle column = entry.getKey();
                Domain domain = entry.getValue();
                if (column.type() != VARCHAR || domain.isNullAllowed() || !domain.getValues().isDiscreteSet()) {
                    continue;
                }
                List<Object> values = domain.getValues().getDiscreteSet();
                if (values.size() > MAX_PUSHED_VALUES) {
                    continue;
                }
                Array array = connection.createArrayOf("text", values.stream().map(value -> ((Slice) value).toStringUtf8()).toArray());
                sql.append(" AND ").append(Sql.quoteIdentifier(column.name())).append(" = ANY(?)");
                parameters.add(array);
            }
        }
        if (split.limit().isPresent()) {
            // a pushed LIMIT: any rows will do, so PostgreSQL stops early; Trino still applies its own limit
            sql.append(" LIMIT ?");
            parameters.add(split.limit().getAsLong());
        }
        return sql.toString();
    }

    private static OffsetDateTime timestamp(long epochMicros)
    {
        return OffsetDateTime.ofInstant(MeterstoreTypes.fromEpochMicros(epochMicros), ZoneOffset.UTC);
    }

    @Override
    public SourcePage getNextSourcePage()
    {
        if (finished) {
            return null;
        }
        long start = System.nanoTime();
        try {
            int rows = 0;
            while (rows < MAX_PAGE_ROWS && !pageBuilder.isFull()) {
                if (!resultSet.next()) {
                    finished = true;
                    break;
                }
                pageBuilder.declarePosition();
                for (int channel = 0; channel < columns.size(); channel++) {
                    appendValue(resultSet, channel + 1, columns.get(channel), pageBuilder.getBlockBuilder(channel));
                }
                rows++;
            }
        }
        catch (SQLException e) {
            throw translate(e);
        }
        finally {
            readTimeNanos += System.nanoTime() - start;
        }
        Page page = pageBuilder.build();
        pageBuilder.reset();
        completedPositions += page.getPositionCount();
        if (finished) {
            closeQuietly();
        }
        return SourcePage.create(page);
    }

    private static void appendValue(ResultSet resultSet, int index, MeterstoreColumnHandle column, BlockBuilder builder)
            throws SQLException
    {
        ReadingsColumn.ColumnKind kind = column.column().kind();
        switch (kind) {
            case STRING -> {
                String value = resultSet.getString(index);
                if (value == null) {
                    builder.appendNull();
                }
                else {
                    VARCHAR.writeSlice(builder, utf8Slice(value));
                }
            }
            case TIMESTAMP_TZ -> {
                OffsetDateTime value = resultSet.getObject(index, OffsetDateTime.class);
                if (value == null) {
                    builder.appendNull();
                }
                else {
                    MeterstoreTypes.TIMESTAMP_TZ_MICROS.writeObject(builder, MeterstoreTypes.toTimestamp(MeterstoreTypes.toEpochMicros(value.toInstant())));
                }
            }
            case QUANTITY -> {
                BigDecimal value = resultSet.getBigDecimal(index);
                if (value == null) {
                    builder.appendNull();
                }
                else {
                    MeterstoreTypes.QUANTITY.writeLong(builder, value.setScale(MeterstoreTypes.QUANTITY.getScale()).unscaledValue().longValueExact());
                }
            }
            case VERSION -> {
                BigDecimal value = resultSet.getBigDecimal(index);
                if (value == null) {
                    builder.appendNull();
                }
                else {
                    MeterstoreTypes.VERSION.writeObject(builder, Int128.valueOf(value.setScale(0).unscaledValue()));
                }
            }
            case DATE -> {
                LocalDate value = resultSet.getObject(index, LocalDate.class);
                if (value == null) {
                    builder.appendNull();
                }
                else {
                    DATE.writeLong(builder, value.toEpochDay());
                }
            }
        }
    }

    private TrinoException translate(SQLException e)
    {
        if (UNDEFINED_TABLE.equals(e.getSQLState())) {
            return new TrinoException(METERSTORE_PARTITION_MISSING, "Hot partition '%s.%s' was planned for this query but no longer exists: it was dropped after its archival, because the query ran longer than the archiver's reader grace; run the query again, or raise reader_grace above the longest query"
                    .formatted(split.schema(), split.partition()), e);
        }
        return new TrinoException(METERSTORE_HOT_READ_FAILED, "Cannot read hot partition '%s.%s': %s".formatted(split.schema(), split.partition(), e.getMessage()), e);
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
                MeterstoreMetrics.HOT_PARTITIONS_READ, 1L,
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
        try {
            connection.rollback();
        }
        catch (SQLException | RuntimeException ignored) {
            // the connection is closed next; nothing was written
        }
        try {
            connection.close();
        }
        catch (SQLException ignored) {
            // nothing to release beyond the connection itself
        }
    }
}
