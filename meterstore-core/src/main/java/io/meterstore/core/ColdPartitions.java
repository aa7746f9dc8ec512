package io.meterstore.core;

import org.apache.iceberg.ContentFile;
import org.apache.iceberg.PartitionData;
import org.apache.iceberg.PartitionField;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;

import java.time.YearMonth;
import java.util.List;
import java.util.stream.Collectors;

import static com.google.common.base.Preconditions.checkArgument;

/**
 * The partitions of the cold tier: identity(each identity column of the table's shape, in declaration order), then
 * month("from"), as the Rust MeterStore partitions its tables. A table without identity columns, and one created before
 * identity columns were partition fields, is partitioned by month("from") alone. Either way the month is the last
 * field, so every file's month is read the same way, and a month's files are the files of every partition of it.
 */
public final class ColdPartitions
{
    private ColdPartitions() {}

    /** The partition spec of a new table of {@code columns}. */
    public static PartitionSpec spec(Schema schema, TableColumns columns)
    {
        PartitionSpec.Builder builder = PartitionSpec.builderFor(schema);
        columns.identityColumns().forEach(column -> builder.identity(column.name()));
        return builder.month(ReadingsColumn.FROM.columnName()).build();
    }

    /**
     * Whether {@code spec} is one a readings table of {@code columns} is partitioned by: its own spec, or month("from")
     * alone, the spec of every table created before identity columns were partition fields.
     */
    public static boolean accepted(PartitionSpec spec, TableColumns columns)
    {
        List<PartitionField> fields = spec.fields();
        if (fields.isEmpty() || !isMonthOfFrom(fields.getLast())) {
            return false;
        }
        if (fields.size() == 1) {
            return true;
        }
        List<TableColumn> identity = columns.identityColumns();
        if (fields.size() != identity.size() + 1) {
            return false;
        }
        for (int index = 0; index < identity.size(); index++) {
            PartitionField field = fields.get(index);
            if (!field.transform().isIdentity() || field.sourceId() != identity.get(index).fieldId()) {
                return false;
            }
        }
        return true;
    }

    /** What {@link #accepted} accepts, for a message: {@code a readings table is partitioned by month("from")}. */
    public static String describe(TableColumns columns)
    {
        if (columns.identityColumns().isEmpty()) {
            return "a readings table is partitioned by month(\"from\")";
        }
        String identity = columns.identityColumns().stream().map(column -> "identity(%s), ".formatted(column.name())).collect(Collectors.joining());
        return "a readings table of identity columns %s is partitioned by %smonth(\"from\") (or by month(\"from\") alone, as one created before identity columns were partition fields)"
                .formatted(columns.identityColumns().stream().map(TableColumn::name).toList(), identity);
    }

    /** The month of "from" a file of a readings table lies in: its partition's last field. */
    public static YearMonth month(ContentFile<?> file)
    {
        return month(file.partition());
    }

    /** The month of "from" of a partition of a readings table: its last field. */
    public static YearMonth month(StructLike partition)
    {
        return PartitionMonths.ofPartitionValue(partition.get(partition.size() - 1, Integer.class));
    }

    /**
     * The partition of {@code table} that holds the readings of {@code month} whose identity columns hold
     * {@code identityValues} (in {@link TableColumns#identityColumns()} order; ignored by a spec of month("from") alone).
     */
    public static PartitionData partition(Table table, YearMonth month, List<String> identityValues)
    {
        PartitionSpec spec = table.spec();
        List<TableColumn> identity = TableColumns.of(table).identityColumns();
        checkArgument(identityValues.size() == identity.size(), "Table '%s' has identity columns %s, given values %s", table.name(), identity, identityValues);
        PartitionData partition = new PartitionData(spec.partitionType());
        List<PartitionField> fields = spec.fields();
        for (int index = 0; index < fields.size() - 1; index++) {
            int sourceId = fields.get(index).sourceId();
            int column = identity.stream().map(TableColumn::fieldId).toList().indexOf(sourceId);
            checkArgument(column >= 0, "Partition field %s of table '%s' is not an identity column's", fields.get(index), table.name());
            partition.set(index, identityValues.get(column));
        }
        partition.set(fields.size() - 1, PartitionMonths.partitionValue(month));
        return partition;
    }

    private static boolean isMonthOfFrom(PartitionField field)
    {
        return field.sourceId() == ReadingsColumn.FROM.fieldId() && field.transform().toString().equals("month");
    }
}
