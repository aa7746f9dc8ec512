package io.meterstore.trino.write;

import io.meterstore.core.HotPartition;
import io.meterstore.core.HotTier;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.TableColumn;
import io.meterstore.core.TableColumns;
import io.meterstore.core.Tier;
import io.meterstore.core.TieringWatermark;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

import static io.meterstore.core.Sql.quoteIdentifier;
import static java.util.Objects.requireNonNull;

/**
 * The hot half of one INSERT: moves the staged rows at or above W into their PostgreSQL partitions inside the
 * statement's transaction, in PostgreSQL alone, whatever their number. A version already stored is skipped
 * ({@code ON CONFLICT DO NOTHING}); a skipped row whose stored version has another payload fails the statement.
 */
final class HotRowWriter
{

    /** How many staged rows belong to the hot tier, and how many of them were new. */
    record Result(long staged, long inserted)
    {
        long unchanged()
        {
            return staged - inserted;
        }
    }

    private final Connection connection;
    private final HotTier hotTier;
    private final TableColumns columns;
    // every column but the key and recorded_at, the attribute columns too: a redelivery may be recorded at another
    // instant and is still the same version
    private final List<TableColumn> payload;
    private final InsertStaging staging;
    private final TieringWatermark watermark;

    /**
     * @param connection the statement's open transaction, which holds the archival fence: no row it writes at or above
     * {@code watermark} lies in a window being archived, so no commit moves W past one before it ends
     */
    HotRowWriter(Connection connection, HotTier hotTier, TableColumns columns, InsertStaging staging, TieringWatermark watermark)
    {
        this.connection = requireNonNull(connection, "connection is null");
        this.hotTier = requireNonNull(hotTier, "hotTier is null");
        this.columns = requireNonNull(columns, "columns is null");
        this.payload = columns.all().stream()
                .filter(column -> !column.is(ReadingsColumn.RECORDED_AT) && column.readingsColumn().filter(ReadingsColumn.SORT_KEY::contains).isEmpty()
                        && !columns.keyColumns().contains(column))
                .toList();
        this.staging = requireNonNull(staging, "staging is null");
        this.watermark = requireNonNull(watermark, "watermark is null");
    }

    Result write()
            throws SQLException
    {
        List<Bucket> buckets = stagedBuckets();
        if (buckets.isEmpty()) {
            return new Result(0, 0);
        }
        // the partitions whose catalogue bounds hold the staged rows, which may be wider or narrower than the step;
        // never one entirely below W: its rows belong to Iceberg
        List<HotPartition> holding = new ArrayList<>();
        for (Bucket bucket : buckets) {
            Optional<Instant> next = Optional.of(bucket.first());
            while (next.isPresent()) {
                HotPartition partition = holdingPartition(holding, next.get());
                next = partition.end().isAfter(bucket.last()) ? Optional.empty() : firstStaged(partition.end(), bucket.last());
            }
        }
        // a detached partition at or above W is an interrupted archival's: written by name, archived whole by its next cycle
        List<HotPartition> detached = holding.stream().filter(partition -> !partition.attached()).toList();
        long inserted = 0;
        for (HotPartition partition : detached) {
            inserted += insert(hotTier.qualifiedPartition(partition.name()), Tier.sqlBetween("?", "?"), List.of(partition.start(), partition.end()));
        }
        // the rest through the parent, which routes each row to the attached partition whose bound holds it
        List<Instant> excluded = new ArrayList<>();
        StringBuilder outsideDetached = new StringBuilder("TRUE");
        for (HotPartition partition : detached) {
            outsideDetached.append(" AND NOT (").append(Tier.sqlBetween("?", "?")).append(")");
            excluded.add(partition.start());
            excluded.add(partition.end());
        }
        inserted += insert(hotTier.qualifiedParent(), outsideDetached.toString(), excluded);

        long staged = buckets.stream().mapToLong(Bucket::rows).sum();
        if (inserted < staged) {
            // some rows were skipped: redeliveries, or a version the statement carries twice; each must match what is stored
            requireSamePayloads(hotTier.qualifiedParent());
            for (HotPartition partition : detached) {
                requireSamePayloads(hotTier.qualifiedPartition(partition.name()));
            }
        }
        return new Result(staged, inserted);
    }

    /** The staged rows at or above W of one step: how many, the first and the last "from". */
    private record Bucket(long rows, Instant first, Instant last) {}

    private List<Bucket> stagedBuckets()
            throws SQLException
    {
        List<Bucket> buckets = new ArrayList<>();
        String sql = "SELECT count(*), min(\"from\"), max(\"from\") FROM %s WHERE %s GROUP BY %s ORDER BY 2"
                .formatted(staging.qualifiedName(), Tier.HOT.sql("?"), hotTier.naming().alignDownSql("\"from\""));
        try (PreparedStatement select = connection.prepareStatement(sql)) {
            select.setObject(1, timestamp(watermark.instant()));
            try (ResultSet result = select.executeQuery()) {
                while (result.next()) {
                    buckets.add(new Bucket(result.getLong(1), result.getObject(2, OffsetDateTime.class).toInstant(), result.getObject(3, OffsetDateTime.class).toInstant()));
                }
            }
        }
        return buckets;
    }

    private HotPartition holdingPartition(List<HotPartition> holding, Instant from)
            throws SQLException
    {
        for (HotPartition partition : holding) {
            if (partition.contains(from)) {
                return partition;
            }
        }
        // attached or detached, found by its catalogue bound, or created one step wide, clipped by its neighbours
        HotPartition partition = hotTier.partitionFor(connection, from, watermark);
        holding.add(partition);
        return partition;
    }

    /** The first staged "from" in [lower, last], if any: a partition narrower than the step left rows after its end. */
    private Optional<Instant> firstStaged(Instant lower, Instant last)
            throws SQLException
    {
        try (PreparedStatement select = connection.prepareStatement("SELECT min(\"from\") FROM %s WHERE \"from\" >= ? AND \"from\" <= ?".formatted(staging.qualifiedName()))) {
            select.setObject(1, timestamp(lower));
            select.setObject(2, timestamp(last));
            try (ResultSet result = select.executeQuery()) {
                result.next();
                return Optional.ofNullable(result.getObject(1, OffsetDateTime.class)).map(OffsetDateTime::toInstant);
            }
        }
    }

    private long insert(String target, String condition, List<Instant> parameters)
            throws SQLException
    {
        String columns = this.columns.postgresColumnList();
        try (PreparedStatement insert = connection.prepareStatement("INSERT INTO %s (%s) SELECT %s FROM %s WHERE %s AND %s ON CONFLICT (%s) DO NOTHING"
                .formatted(target, columns, columns, staging.qualifiedName(), Tier.HOT.sql("?"), condition, HotTier.primaryKey(this.columns)))) {
            insert.setObject(1, timestamp(watermark.instant()));
            for (int index = 0; index < parameters.size(); index++) {
                insert.setObject(index + 2, timestamp(parameters.get(index)));
            }
            return insert.executeLargeUpdate();
        }
    }

    /**
     * Fails the statement at the first staged row whose version {@code target} holds with another payload. A stored row
     * this transaction inserted is one the statement itself carries twice.
     */
    private void requireSamePayloads(String target)
            throws SQLException
    {
        String differs = String.join(" OR ", payload.stream()
                .map(column -> "s.%1$s IS DISTINCT FROM p.%1$s".formatted(quoteIdentifier(column.name())))
                .toList());
        String sql = """
                SELECT %s, %s, p.xmin = pg_current_xact_id()::xid AS same_statement, p.tableoid::regclass::text AS stored_in
                FROM %s s JOIN %s p ON p.malo_id = s.malo_id AND p.obis_code = s.obis_code AND p."from" = s."from"%s AND p.version = s.version
                WHERE s.%s AND (%s)""".formatted(HotRows.selectList(columns, "s", "s_"), HotRows.selectList(columns, "p", "p_"), staging.qualifiedName(), target,
                columns.keyNames().stream().map(column -> " AND p.%1$s = s.%1$s".formatted(quoteIdentifier(column))).collect(Collectors.joining()),
                Tier.HOT.sql("?"), differs);
        try (PreparedStatement select = connection.prepareStatement(sql)) {
            select.setObject(1, timestamp(watermark.instant()));
            select.setFetchSize(1_000);
            try (ResultSet result = select.executeQuery()) {
                while (result.next()) {
                    Reading reading = HotRows.reading(result, "s_", columns);
                    Reading stored = HotRows.reading(result, "p_", columns);
                    String where = result.getBoolean("same_statement") ? "the statement itself carries it twice" : "PostgreSQL partition %s holds it".formatted(result.getString("stored_in"));
                    Redeliveries.requireSamePayload(stored, reading, where, columns);
                }
            }
        }
    }

    private static OffsetDateTime timestamp(Instant instant)
    {
        return OffsetDateTime.ofInstant(instant, ZoneOffset.UTC);
    }
}
