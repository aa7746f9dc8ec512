package io.meterstore.trino.completeness;

import com.google.common.collect.ImmutableList;
import io.airlift.slice.Slice;
import io.meterstore.core.CompletenessPeriod;
import io.meterstore.core.HotTier;
import io.meterstore.core.HotTierSupersession;
import io.meterstore.core.Quality;
import io.meterstore.core.Sparte;
import io.meterstore.core.Sql;
import io.meterstore.core.Tier;
import io.meterstore.trino.base.MeterstoreTypes;
import io.meterstore.trino.base.PostgresConnectionPool;
import io.meterstore.trino.hot.HotPageSource;
import io.meterstore.trino.hot.HotSplit;
import io.trino.spi.TrinoException;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import static com.google.common.collect.Iterables.getOnlyElement;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_HOT_READ_FAILED;
import static java.util.Objects.requireNonNull;
import static java.util.stream.Collectors.joining;

/**
 * Counts the winners of one hot partition for a completeness report inside PostgreSQL: one statement resolves the
 * versions and groups the winners per reading, grid, balancing day and placement (in the period, in the roster window,
 * outside both), so that only the counts leave the database, never the readings. The rows it returns are the runs
 * {@link WinnerCounter} would have counted from a resolved read of the partition, with the same figures.
 */
final class HotWinnerCounts
{
    private final PostgresConnectionPool pool;
    private final String queryId;
    private final CompletenessPeriod period;
    private final Optional<Instant> seenSince;
    private final Optional<Set<Slice>> maloIds;
    private final Optional<Set<Slice>> obisCodes;
    private final List<String> keyColumns;

    /**
     * @param queryId the report's query, whose turn at the pool's connections the partitions take
     * @param keyColumns the columns of the table's merge key besides malo_id, obis_code and "from": a reading is counted per their values too
     */
    HotWinnerCounts(PostgresConnectionPool pool, String queryId, CompletenessPeriod period, Optional<Instant> seenSince, Optional<Set<Slice>> maloIds, Optional<Set<Slice>> obisCodes, List<String> keyColumns)
    {
        this.pool = requireNonNull(pool, "pool is null");
        this.queryId = requireNonNull(queryId, "queryId is null");
        this.period = requireNonNull(period, "period is null");
        this.seenSince = requireNonNull(seenSince, "seenSince is null");
        this.maloIds = requireNonNull(maloIds, "maloIds is null");
        this.obisCodes = requireNonNull(obisCodes, "obisCodes is null");
        this.keyColumns = ImmutableList.copyOf(requireNonNull(keyColumns, "keyColumns is null"));
    }

    /**
     * Adds the winners of the partition's rows at or above the split's watermark and inside its bounds to {@code counter}.
     *
     * @return how long the count waited for a connection, in nanoseconds
     */
    long count(HotSplit split, WinnerCounter counter)
    {
        long waitingSince = System.nanoTime();
        try (Connection connection = pool.connection(queryId)) {
            long waitNanos = System.nanoTime() - waitingSince;
            try {
                // the settings live only as long as this transaction; the partition is read, never written, in the
                // query's snapshot, as every other hot read of the query
                split.snapshot().begin(connection);
                try (PreparedStatement settings = connection.prepareStatement("SELECT set_config('enable_sort', 'off', true), set_config('enable_incremental_sort', 'off', true)")) {
                    // the versions of a key are compared in the primary key's order, which the index gives without a sort;
                    // the counts are grouped by hashing (an incremental sort of each meter's rows for the grouping cost a
                    // third of the statement's time at 10,000 meters)
                    settings.execute();
                }
                List<Object> parameters = new ArrayList<>();
                String sql = sql(connection, split, parameters);
                // the counts come only when the statement ends: the pool asks PostgreSQL whether it executes it meanwhile
                pool.execute(connection, executing -> {
                    try (PreparedStatement statement = executing.prepareStatement(sql)) {
                        for (int index = 0; index < parameters.size(); index++) {
                            statement.setObject(index + 1, parameters.get(index));
                        }
                        try (ResultSet counts = statement.executeQuery()) {
                            while (counts.next()) {
                                // the values of the key's further columns follow the eleven counts
                                ImmutableList.Builder<String> keyValues = ImmutableList.builder();
                                for (int index = 0; index < keyColumns.size(); index++) {
                                    keyValues.add(counts.getString(12 + index));
                                }
                                counter.addCounts(
                                        counts.getString(1),
                                        keyValues.build(),
                                        counts.getString(2),
                                        counts.getString(3),
                                        counts.getString(4),
                                        counts.getObject(5, LocalDate.class),
                                        counts.getInt(6),
                                        counts.getLong(7),
                                        counts.getLong(8),
                                        counts.getLong(9),
                                        counts.getObject(10, OffsetDateTime.class).toInstant(),
                                        counts.getObject(11, OffsetDateTime.class).toInstant());
                            }
                        }
                    }
                });
            }
            finally {
                connection.rollback();
            }
            return waitNanos;
        }
        catch (SQLException e) {
            if (HotTier.isUndefinedTable(e)) {
                throw HotPageSource.partitionMissing("The " + split.describePartitions(), e);
            }
            throw new TrinoException(METERSTORE_HOT_READ_FAILED, "Cannot count the winners of %s for the completeness report: %s".formatted(split.describePartitions(), e.getMessage()), e);
        }
    }

    /**
     * The winners of a key are found without sorting: in primary-key order (malo_id, obis_code, "from", the key's further
     * columns, version) the
     * last row of a key is its highest version, so it wins its version scope (the primary key makes versions of a key
     * unique, so recorded_at never breaks a tie here); each earlier row of a key (a superseded version, about 2 % of the
     * rows) wins only if no later version shares its scope, which the index answers for those rows alone. One window
     * over the partition's order compares each row with the next, cheaper than a window per key.
     */
    private String sql(Connection connection, HotSplit split, List<Object> parameters)
            throws SQLException
    {
        // the placeholders appear in the text as: the counts' filters, the placement, the versions' bounds
        List<Object> filters = new ArrayList<>();
        List<Object> placements = new ArrayList<>();
        List<Object> bounds = new ArrayList<>();
        // the report plans a split per partition
        String partition = Sql.qualified(split.schema(), getOnlyElement(split.partitions()));
        StringBuilder where = new StringBuilder();
        // rows below W belong to Iceberg, even while an archived partition still exists detached for the reader grace
        where.append(" WHERE ").append(Tier.HOT.sql("?"));
        bounds.add(timestamp(split.watermarkEpochMicros()));
        if (split.lowerEpochMicros().isPresent()) {
            where.append(" AND \"from\" >= ?");
            bounds.add(timestamp(split.lowerEpochMicros().get()));
        }
        if (split.upperEpochMicros().isPresent()) {
            where.append(" AND \"from\" < ?");
            bounds.add(timestamp(split.upperEpochMicros().get()));
        }
        // a listed meter or OBIS code selects whole keys, so it may narrow the versions before they are resolved
        if (maloIds.isPresent()) {
            where.append(" AND malo_id = ANY(?)");
            bounds.add(textArray(connection, maloIds.get()));
        }
        if (obisCodes.isPresent()) {
            where.append(" AND obis_code = ANY(?)");
            bounds.add(textArray(connection, obisCodes.get()));
        }
        String conditions = where.toString();

        // the key's further columns (melo_id, a tenant): none for the default key, whose statement stays as it was
        String keys = keyColumns.stream().map(column -> ", " + Sql.quoteIdentifier(column)).collect(joining());
        String keyChanges = keyColumns.stream()
                .map(column -> " OR lead(%1$s) OVER ordered IS DISTINCT FROM %1$s".formatted(Sql.quoteIdentifier(column)))
                .collect(joining());
        String sameKey = keyColumns.stream()
                .map(column -> " AND later.%1$s = versions.%1$s".formatted(Sql.quoteIdentifier(column)))
                .collect(joining());

        // where a winner lies, on its own commodity's period: 0 in it, 1 in the roster window before it, 2 outside; NULL for an unknown sparte
        StringBuilder placement = new StringBuilder("CASE sparte");
        for (Sparte sparte : Sparte.values()) {
            Instant start = period.start(sparte);
            placement.append(" WHEN ? THEN CASE WHEN \"from\" >= ? AND \"from\" < ? THEN 0 WHEN \"from\" >= ? AND \"from\" < ? THEN 1 ELSE 2 END");
            placements.add(sparte.name());
            placements.add(timestamp(start));
            placements.add(timestamp(period.end(sparte)));
            placements.add(timestamp(seenSince.orElse(start)));
            placements.add(timestamp(start));
        }
        placement.append(" END");

        // a marked partition's winners are its rows not superseded, read unordered; the others' are resolved here
        String winners = split.marked()
                ? """
                SELECT malo_id, obis_code, "from", sparte, resolution, quality, balancing_day, %s AS placement%s
                FROM %s%s AND %s IS NULL""".formatted(placement, keys, partition, conditions, Sql.quoteIdentifier(HotTierSupersession.COLUMN))
                : """
                SELECT malo_id, obis_code, "from", sparte, resolution, quality, balancing_day, %s AS placement%s
                FROM (SELECT malo_id, obis_code, "from", version, version_scope, sparte, resolution, quality, balancing_day%s,
                       lead("from") OVER ordered IS DISTINCT FROM "from" OR lead(obis_code) OVER ordered IS DISTINCT FROM obis_code
                           OR lead(malo_id) OVER ordered IS DISTINCT FROM malo_id%s AS last_of_key
                    FROM %s%s WINDOW ordered AS (ORDER BY malo_id, obis_code, "from"%s, version)) AS versions
                WHERE CASE WHEN last_of_key THEN true ELSE NOT EXISTS (
                    SELECT 1 FROM %s AS later
                    WHERE later.malo_id = versions.malo_id AND later.obis_code = versions.obis_code AND later."from" = versions."from"%s
                      AND later.version_scope = versions.version_scope AND later.version > versions.version) END""".formatted(placement, keys, keys, keyChanges, partition, conditions, keys, partition, sameKey);
        filters.add(Quality.SUBSTITUTED.name());
        filters.add(connection.createArrayOf("text", Arrays.stream(Quality.values()).filter(Quality::billable).map(Quality::name).toArray()));
        parameters.addAll(filters);
        parameters.addAll(placements);
        parameters.addAll(bounds);
        return """
                SELECT malo_id, obis_code, sparte, resolution, balancing_day, placement, count(*),
                       count(*) FILTER (WHERE quality = ?), count(*) FILTER (WHERE NOT coalesce(quality = ANY(?), false)),
                       min("from"), max("from")%s
                FROM (%s) AS winners
                GROUP BY malo_id, obis_code, sparte, resolution, balancing_day, placement%s""".formatted(keys, winners, keys);
    }

    private static Object textArray(Connection connection, Set<Slice> values)
            throws SQLException
    {
        return connection.createArrayOf("text", values.stream().map(Slice::toStringUtf8).toArray());
    }

    private static OffsetDateTime timestamp(long epochMicros)
    {
        return timestamp(MeterstoreTypes.fromEpochMicros(epochMicros));
    }

    private static OffsetDateTime timestamp(Instant instant)
    {
        return OffsetDateTime.ofInstant(instant, ZoneOffset.UTC);
    }
}
