package io.meterstore.trino.write;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import io.meterstore.core.CheckedColumns;
import io.meterstore.core.TableShape;
import io.meterstore.core.TableColumns;
import io.meterstore.core.ValueCheck;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.trino.spi.connector.ConnectorInsertTableHandle;
import io.trino.spi.connector.SchemaTableName;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * An INSERT into {@code <table>_versions}.
 *
 * @param storageTable the table's name in both tiers
 * @param timeModel the table's time model: whether a row has a "to" (interval) or not (point)
 * @param snapshotId the Iceberg snapshot current at beginInsert; empty for a table without snapshots
 * @param watermarkEpochMicros the watermark that snapshot carries; the write re-reads it under the archival fence
 * @param statementStartEpochMicros the statement's start: the recorded_at of every row that leaves it NULL
 * @param latestRecordedAtEpochMicros the latest recorded_at a row may carry: the statement's start plus the tolerated clock skew
 * @param columns the columns of the pages the page sinks receive, in channel order
 * @param staging where the page sinks stage the validated rows for finishInsert
 * @param attributeColumns the attribute columns the table's shape declares, in their order ({@link #tableColumns()})
 * @param keyColumns the columns of the table's merge key besides malo_id, obis_code and "from" ({@link TableShape#keyColumns()})
 * @param checkedColumns the checked columns the table's shape declares, each with its check ({@link #checkedColumns()})
 */
public record MeterstoreInsertTableHandle(
        SchemaTableName schemaTableName,
        String storageTable,
        TableShape.TimeModel timeModel,
        Optional<Long> snapshotId,
        long watermarkEpochMicros,
        long statementStartEpochMicros,
        long latestRecordedAtEpochMicros,
        List<MeterstoreColumnHandle> columns,
        InsertStaging staging,
        List<String> attributeColumns,
        List<String> keyColumns,
        Map<String, ValueCheck> checkedColumns)
        implements ConnectorInsertTableHandle
{
    public MeterstoreInsertTableHandle
    {
        requireNonNull(schemaTableName, "schemaTableName is null");
        requireNonNull(storageTable, "storageTable is null");
        requireNonNull(timeModel, "timeModel is null");
        requireNonNull(snapshotId, "snapshotId is null");
        checkArgument(latestRecordedAtEpochMicros >= statementStartEpochMicros, "latestRecordedAtEpochMicros is before the statement's start");
        columns = ImmutableList.copyOf(requireNonNull(columns, "columns is null"));
        requireNonNull(staging, "staging is null");
        attributeColumns = ImmutableList.copyOf(requireNonNull(attributeColumns, "attributeColumns is null"));
        keyColumns = ImmutableList.copyOf(requireNonNull(keyColumns, "keyColumns is null"));
        checkedColumns = ImmutableMap.copyOf(requireNonNull(checkedColumns, "checkedColumns is null"));
    }

    /** Every column the table stores: the readings columns, then its identity columns and its attribute columns. */
    public TableColumns tableColumns()
    {
        return TableColumns.of(timeModel, keyColumns, attributeColumns);
    }

    /** The checked columns, which parse each row's values and give them their canonical spelling. */
    public CheckedColumns checks()
    {
        return new CheckedColumns(checkedColumns, tableColumns().attributeNames());
    }
}
