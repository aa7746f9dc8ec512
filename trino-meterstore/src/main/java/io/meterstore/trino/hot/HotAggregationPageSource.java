package io.meterstore.trino.hot;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import io.meterstore.core.HotTier;
import io.meterstore.core.ResolutionRule;
import io.meterstore.core.Sql;
import io.meterstore.core.Tier;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.meterstore.trino.base.MeterstoreMetrics;
import io.meterstore.trino.base.MeterstoreTypes;
import io.meterstore.trino.base.PostgresConnectionPool;
import io.meterstore.trino.versions.VersionResolution;
import io.trino.spi.Page;
import io.trino.spi.PageBuilder;
import io.trino.spi.TrinoException;
import io.trino.spi.block.BlockBuilder;
import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.SourcePage;
import io.trino.spi.metrics.Metrics;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.type.DecimalType;
import io.trino.spi.type.Decimals;
import io.trino.spi.type.Int128;
import io.trino.spi.type.Type;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.stream.Collectors;

import static io.airlift.slice.Slices.utf8Slice;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_HOT_READ_FAILED;
import static io.trino.spi.StandardErrorCode.NUMERIC_VALUE_OUT_OF_RANGE;
import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.DateType.DATE;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * Answers a pushed-down aggregation with one PostgreSQL statement: the named partitions' rows (each branch with
 * "from" >= W and the pushed predicates, never the parent) in a UNION ALL, grouped and aggregated by PostgreSQL.
 * The statement runs without a cursor because PostgreSQL plans no parallel query for one; its result is the
 * aggregated rows, not the readings.
 */
public final class HotAggregationPageSource
        implements ConnectorPageSource
{
    private static final String RESOLUTION_ORDER = ResolutionRule.ORDER.stream().map(column -> Sql.quoteIdentifier(column.columnName()) + " DESC").collect(Collectors.joining(", "));

    // the key and version scope whose winner an unmarked partition's resolution keeps
    private final String resolutionPartition;

    private final HotAggregationSplit split;
    private final List<ColumnHandle> columns;
    private final List<Type> types;
    private final PageBuilder pageBuilder;
    private final Connection connection;
    private final VersionResolution resolution;
    private long resolvedPartitions;
    private long completedPositions;
    private long readTimeNanos;
    private boolean finished;

    /**
     * @param columns the scan's columns: grouping columns ({@link MeterstoreColumnHandle}) and aggregates ({@link HotAggregateColumn})
     * @param constraint the handle's pushed constraint, every domain of it enforced by the statement
     * @param resolution what the aggregation reads: every version, or the winners (of the marked partitions by their
     * marks, of the others resolved in the statement), as known now or at an AS OF instant
     */
    public HotAggregationPageSource(PostgresConnectionPool pool, Connection connection, HotAggregationSplit split, HotAggregation aggregation, List<ColumnHandle> columns, TupleDomain<MeterstoreColumnHandle> constraint,
            VersionResolution resolution)
    {
        this(pool, connection, split, aggregation, columns, constraint, resolution, List.of());
    }

    /**
     * As the constructor above, of a table whose merge key has {@code keyColumns} besides malo_id, obis_code and "from":
     * a partition not yet marked is resolved per key and version scope.
     */
    public HotAggregationPageSource(PostgresConnectionPool pool, Connection connection, HotAggregationSplit split, HotAggregation aggregation, List<ColumnHandle> columns, TupleDomain<MeterstoreColumnHandle> constraint,
            VersionResolution resolution, List<String> keyColumns)
    {
        requireNonNull(pool, "pool is null");
        this.resolutionPartition = ResolutionRule.partition(keyColumns).stream().map(Sql::quoteIdentifier).collect(Collectors.joining(", "));
        this.connection = requireNonNull(connection, "connection is null");
        this.split = requireNonNull(split, "split is null");
        this.columns = ImmutableList.copyOf(requireNonNull(columns, "columns is null"));
        this.types = this.columns.stream().map(HotAggregationPageSource::type).toList();
        this.pageBuilder = new PageBuilder(types);
        requireNonNull(aggregation, "aggregation is null");
        requireNonNull(constraint, "constraint is null");
        this.resolution = requireNonNull(resolution, "resolution is null");
        long start = System.nanoTime();
        try {
            if (split.partitions().isEmpty()) {
                // no partition: a global aggregation still has its one row, a grouped one has none
                if (aggregation.groupingColumns().isEmpty()) {
                    pageBuilder.declarePosition();
                    for (int channel = 0; channel < this.columns.size(); channel++) {
                        HotAggregateColumn aggregate = (HotAggregateColumn) this.columns.get(channel);
                        BlockBuilder builder = pageBuilder.getBlockBuilder(channel);
                        switch (aggregate.function()) {
                            case COUNT_ALL, COUNT -> BIGINT.writeLong(builder, 0);
                            case SUM, MIN, MAX -> builder.appendNull();
                        }
                    }
                }
                return;
            }
            // the query's snapshot, which its other hot reads see too
            split.snapshot().orElseThrow().begin(connection);
            List<Object> parameters = new ArrayList<>();
            String sql = sql(aggregation, constraint, resolution, parameters);
            // its rows come only when the statement ends: the pool asks PostgreSQL whether it executes it meanwhile
            pool.execute(connection, executing -> {
                try (PreparedStatement statement = executing.prepareStatement(sql)) {
                    for (int index = 0; index < parameters.size(); index++) {
                        statement.setObject(index + 1, parameters.get(index));
                    }
                    try (ResultSet resultSet = statement.executeQuery()) {
                        while (resultSet.next()) {
                            pageBuilder.declarePosition();
                            for (int channel = 0; channel < this.columns.size(); channel++) {
                                writeValue(resultSet, channel + 1, types.get(channel), pageBuilder.getBlockBuilder(channel));
                            }
                        }
                    }
                }
            });
        }
        catch (SQLException e) {
            throw translate(e);
        }
        finally {
            readTimeNanos += System.nanoTime() - start;
            closeQuietly();
        }
    }

    private String sql(HotAggregation aggregation, TupleDomain<MeterstoreColumnHandle> constraint, VersionResolution resolution, List<Object> parameters)
            throws SQLException
    {
        List<String> selected = new ArrayList<>();
        for (ColumnHandle column : columns) {
            selected.add(switch (column) {
                case MeterstoreColumnHandle grouping -> Sql.quoteIdentifier(grouping.name());
                case HotAggregateColumn aggregate -> aggregate.sql();
                default -> throw new IllegalArgumentException("Unknown column " + column);
            });
        }
        // each branch reads only the columns the aggregation needs: SELECT * would make PostgreSQL unpack every column of every row
        Set<String> read = new LinkedHashSet<>();
        aggregation.groupingColumns().forEach(column -> read.add(Sql.quoteIdentifier(column.name())));
        aggregation.aggregates().forEach(aggregate -> aggregate.argument().ifPresent(column -> read.add(Sql.quoteIdentifier(column.name()))));
        String branchColumns = read.isEmpty() ? "1 AS meterstore_row" : String.join(", ", read);
        StringBuilder sql = new StringBuilder("SELECT ")
                .append(selected.isEmpty() ? "NULL" : String.join(", ", selected))
                .append(" FROM (");
        for (int index = 0; index < split.partitions().size(); index++) {
            if (index > 0) {
                sql.append(" UNION ALL ");
            }
            String partition = split.partitions().get(index);
            boolean resolving = resolution.resolve() && !split.markedPartitions().contains(partition);
            // every branch reads one partition by name, never the parent, and only its rows at or above W; a partition
            // not yet marked has its versions resolved here, as a user of a plain PostgreSQL table would
            sql.append("SELECT ").append(branchColumns).append(" FROM ");
            if (resolving) {
                sql.append("(SELECT DISTINCT ON (").append(resolutionPartition).append(") * FROM ");
            }
            sql.append(Sql.qualified(split.schema(), partition));
            sql.append(" WHERE ").append(Tier.HOT.sql("?"));
            parameters.add(timestamp(split.watermarkEpochMicros()));
            if (split.lowerEpochMicros().isPresent()) {
                sql.append(" AND ").append(Tier.HOT.sql("?"));
                parameters.add(timestamp(split.lowerEpochMicros().get()));
            }
            if (split.upperEpochMicros().isPresent()) {
                sql.append(" AND ").append(Tier.COLD.sql("?"));
                parameters.add(timestamp(split.upperEpochMicros().get()));
            }
            for (Map.Entry<MeterstoreColumnHandle, Domain> entry : constraint.getDomains().orElseThrow().entrySet()) {
                if (HotSqlPredicate.isPushedAsEquality(entry.getKey(), entry.getValue())) {
                    sql.append(" AND ").append(Sql.quoteIdentifier(entry.getKey().name())).append(" = ANY(?)");
                    parameters.add(connection.createArrayOf("text", HotSqlPredicate.texts(entry.getValue()).toArray()));
                }
            }
            if (resolution.knownAtEpochMicros().isPresent()) {
                sql.append(" AND recorded_at <= ?");
                parameters.add(timestamp(resolution.knownAtEpochMicros().get()));
            }
            if (resolving) {
                sql.append(" ORDER BY ").append(resolutionPartition).append(", ").append(RESOLUTION_ORDER).append(") AS resolved");
                resolvedPartitions++;
            }
            else if (resolution.resolve()) {
                sql.append(" AND ").append(HotPageSource.winnersByMarks(resolution, "?"));
                resolution.knownAtEpochMicros().ifPresent(knownAt -> parameters.add(timestamp(knownAt)));
            }
        }
        sql.append(") AS readings");
        if (!aggregation.groupingColumns().isEmpty()) {
            sql.append(" GROUP BY ").append(String.join(", ", aggregation.groupingColumns().stream().map(column -> Sql.quoteIdentifier(column.name())).toList()));
        }
        return sql.toString();
    }

    private static Type type(ColumnHandle column)
    {
        return switch (column) {
            case MeterstoreColumnHandle grouping -> grouping.type();
            case HotAggregateColumn aggregate -> aggregate.type();
            default -> throw new IllegalArgumentException("Unknown column " + column);
        };
    }

    private static OffsetDateTime timestamp(long epochMicros)
    {
        return OffsetDateTime.ofInstant(MeterstoreTypes.fromEpochMicros(epochMicros), ZoneOffset.UTC);
    }

    private static void writeValue(ResultSet resultSet, int index, Type type, BlockBuilder builder)
            throws SQLException
    {
        if (type == BIGINT) {
            long value = resultSet.getLong(index);
            if (resultSet.wasNull()) {
                builder.appendNull();
            }
            else {
                BIGINT.writeLong(builder, value);
            }
            return;
        }
        if (type instanceof DecimalType decimalType) {
            BigDecimal value = resultSet.getBigDecimal(index);
            if (value == null) {
                builder.appendNull();
                return;
            }
            // sum, min and max of exact decimals are exact: rescaling never rounds
            BigDecimal rescaled = value.setScale(decimalType.getScale(), RoundingMode.UNNECESSARY);
            if (rescaled.precision() > decimalType.getPrecision()) {
                throw new TrinoException(NUMERIC_VALUE_OUT_OF_RANGE, "Decimal overflow: %s does not fit %s".formatted(value, decimalType));
            }
            if (decimalType.isShort()) {
                decimalType.writeLong(builder, rescaled.unscaledValue().longValueExact());
            }
            else {
                decimalType.writeObject(builder, Decimals.valueOf(rescaled.unscaledValue()));
            }
            return;
        }
        if (type == VARCHAR) {
            String value = resultSet.getString(index);
            if (value == null) {
                builder.appendNull();
            }
            else {
                VARCHAR.writeSlice(builder, utf8Slice(value));
            }
            return;
        }
        if (type == DATE) {
            LocalDate value = resultSet.getObject(index, LocalDate.class);
            if (value == null) {
                builder.appendNull();
            }
            else {
                DATE.writeLong(builder, value.toEpochDay());
            }
            return;
        }
        if (type.equals(MeterstoreTypes.TIMESTAMP_TZ_MICROS)) {
            OffsetDateTime value = resultSet.getObject(index, OffsetDateTime.class);
            if (value == null) {
                builder.appendNull();
            }
            else {
                MeterstoreTypes.TIMESTAMP_TZ_MICROS.writeObject(builder, MeterstoreTypes.toTimestamp(MeterstoreTypes.toEpochMicros(value.toInstant())));
            }
            return;
        }
        throw new IllegalArgumentException("Unsupported type of a pushed-down aggregation: " + type);
    }

    private TrinoException translate(SQLException e)
    {
        if (HotTier.isUndefinedTable(e)) {
            return HotPageSource.partitionMissing("A hot partition of %s (%s)".formatted(split.partitions(), e.getMessage()), e);
        }
        return new TrinoException(METERSTORE_HOT_READ_FAILED, "Cannot aggregate hot partitions %s: %s".formatted(split.partitions(), e.getMessage()), e);
    }

    @Override
    public SourcePage getNextSourcePage()
    {
        if (finished) {
            return null;
        }
        finished = true;
        Page page = pageBuilder.build();
        completedPositions += page.getPositionCount();
        return SourcePage.create(page);
    }

    @Override
    public Metrics getMetrics()
    {
        return MeterstoreMetrics.counts(ImmutableMap.of(
                MeterstoreMetrics.HOT_PARTITIONS_READ, (long) split.partitions().size(),
                MeterstoreMetrics.HOT_PARTITIONS_RESOLVED, resolvedPartitions,
                MeterstoreMetrics.HOT_AGGREGATED_ROWS, completedPositions));
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
    }

    private void closeQuietly()
    {
        try {
            if (!connection.getAutoCommit()) {
                connection.rollback();
            }
            connection.close();
        }
        catch (SQLException ignored) {
            // nothing was written; nothing to release beyond the connection itself
        }
    }
}
