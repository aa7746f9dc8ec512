package io.meterstore.trino.handle;

import com.google.common.collect.ImmutableList;
import io.meterstore.core.TableColumns;
import io.meterstore.core.TableShape;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.meterstore.trino.hot.HotAggregation;
import io.meterstore.trino.versions.ErasedScope;
import io.meterstore.trino.versions.VersionResolution;
import io.trino.spi.connector.ConnectorTableHandle;
import io.trino.spi.connector.SchemaTableName;
import io.trino.spi.predicate.TupleDomain;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

import static java.util.Objects.requireNonNull;

/**
 * A readings table as one query sees it: the Iceberg snapshot pinned at planning and the watermark that snapshot
 * carries. Both tiers are split at exactly this watermark, never at one derived from which files survived pruning.
 *
 * @param storageTable the table's name in both tiers (the PostgreSQL parent and the Iceberg table)
 * @param snapshotId the pinned Iceberg snapshot; empty for a table without snapshots
 * @param watermarkEpochMicros the watermark W in microseconds since the epoch
 * @param constraint the predicate pushed into both tiers; Trino still filters every row it returns
 * @param historical read as of an older snapshot (FOR VERSION AS OF): its cold tier only, since PostgreSQL keeps no history
 * @param resolved the winning version per merge key ({@code <table>}) rather than every version ({@code <table>_versions})
 * @param knownAtEpochMicros FOR TIMESTAMP AS OF: only versions recorded at or before this instant, before resolution
 * @param limit a pushed LIMIT: each split may stop after this many rows (Trino still applies the limit)
 * @param aggregation an aggregation pushed into PostgreSQL; only for a read that is hot alone
 * @param erased the erasures a time-travel read must hide: an older snapshot still holds their rows until the archiver
 *        expires it; empty for every other read
 * @param attributeColumns the attribute columns the table's shape declares, in their order: its stored columns after
 *        the readings columns and its identity columns ({@link #columns()})
 * @param keyColumns the columns of the table's merge key besides malo_id, obis_code and "from": melo_id in a table keyed
 *        by it, then the identity columns ({@link io.meterstore.core.TableShape#keyColumns()}); none for the default key
 * @param timeModel the table's time model: "to" is NULL in every row of a point table
 */
public record MeterstoreTableHandle(
        SchemaTableName schemaTableName,
        String storageTable,
        Optional<Long> snapshotId,
        long watermarkEpochMicros,
        TupleDomain<MeterstoreColumnHandle> constraint,
        boolean historical,
        boolean resolved,
        Optional<Long> knownAtEpochMicros,
        OptionalLong limit,
        Optional<HotAggregation> aggregation,
        List<ErasedScope> erased,
        List<String> attributeColumns,
        List<String> keyColumns,
        TableShape.TimeModel timeModel)
        implements ConnectorTableHandle
{
    public MeterstoreTableHandle(
            SchemaTableName schemaTableName,
            String storageTable,
            Optional<Long> snapshotId,
            long watermarkEpochMicros,
            TupleDomain<MeterstoreColumnHandle> constraint,
            boolean historical,
            boolean resolved,
            Optional<Long> knownAtEpochMicros)
    {
        this(schemaTableName, storageTable, snapshotId, watermarkEpochMicros, constraint, historical, resolved, knownAtEpochMicros, OptionalLong.empty(), Optional.empty(), List.of(), List.of(), List.of(), TableShape.TimeModel.INTERVAL);
    }

    public MeterstoreTableHandle
    {
        requireNonNull(schemaTableName, "schemaTableName is null");
        requireNonNull(storageTable, "storageTable is null");
        requireNonNull(snapshotId, "snapshotId is null");
        requireNonNull(constraint, "constraint is null");
        requireNonNull(knownAtEpochMicros, "knownAtEpochMicros is null");
        requireNonNull(limit, "limit is null");
        requireNonNull(aggregation, "aggregation is null");
        erased = ImmutableList.copyOf(erased);
        attributeColumns = ImmutableList.copyOf(attributeColumns);
        keyColumns = ImmutableList.copyOf(keyColumns);
        requireNonNull(timeModel, "timeModel is null");
    }

    /** The columns the table stores: the readings columns, then its identity columns and its attribute columns. */
    public TableColumns columns()
    {
        return TableColumns.of(timeModel, keyColumns, attributeColumns);
    }

    /** This read of a table of {@code shape}: its time model, its key's columns and its attribute columns. */
    public MeterstoreTableHandle withShape(TableShape shape)
    {
        return new MeterstoreTableHandle(schemaTableName, storageTable, snapshotId, watermarkEpochMicros, constraint, historical, resolved, knownAtEpochMicros, limit, aggregation, erased, shape.attributeColumns(), shape.keyColumns(), shape.timeModel());
    }

    /** How this read resolves versions: none for {@code <table>_versions} read as it is now. */
    public VersionResolution resolution()
    {
        return new VersionResolution(resolved, knownAtEpochMicros);
    }

    public MeterstoreTableHandle withConstraint(TupleDomain<MeterstoreColumnHandle> constraint)
    {
        return new MeterstoreTableHandle(schemaTableName, storageTable, snapshotId, watermarkEpochMicros, constraint, historical, resolved, knownAtEpochMicros, limit, aggregation, erased, attributeColumns, keyColumns, timeModel);
    }

    public MeterstoreTableHandle withErased(List<ErasedScope> erased)
    {
        return new MeterstoreTableHandle(schemaTableName, storageTable, snapshotId, watermarkEpochMicros, constraint, historical, resolved, knownAtEpochMicros, limit, aggregation, erased, attributeColumns, keyColumns, timeModel);
    }

    public MeterstoreTableHandle withLimit(long limit)
    {
        return new MeterstoreTableHandle(schemaTableName, storageTable, snapshotId, watermarkEpochMicros, constraint, historical, resolved, knownAtEpochMicros, OptionalLong.of(limit), aggregation, erased, attributeColumns, keyColumns, timeModel);
    }

    public MeterstoreTableHandle withAggregation(HotAggregation aggregation)
    {
        return new MeterstoreTableHandle(schemaTableName, storageTable, snapshotId, watermarkEpochMicros, constraint, historical, resolved, knownAtEpochMicros, limit, Optional.of(aggregation), erased, attributeColumns, keyColumns, timeModel);
    }
}
