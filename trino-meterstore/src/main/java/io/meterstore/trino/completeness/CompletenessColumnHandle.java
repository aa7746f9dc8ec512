package io.meterstore.trino.completeness;

import com.google.common.collect.ImmutableList;
import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.connector.ColumnMetadata;
import io.trino.spi.function.table.Descriptor;
import io.trino.spi.type.Type;

import java.util.List;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * A column of a {@code meter_completeness} report: one of {@link CompletenessColumn}, or a column of the table's merge
 * key besides malo_id, obis_code and "from" (melo_id in a table keyed by it, an identity column such as a tenant), which
 * tells the table's readings apart and is shown after malo_id.
 *
 * @param keyColumn the name of the key's column this column shows, when it is not one of {@link CompletenessColumn}
 */
public record CompletenessColumnHandle(Optional<CompletenessColumn> column, Optional<String> keyColumn)
        implements ColumnHandle
{
    public CompletenessColumnHandle
    {
        requireNonNull(column, "column is null");
        requireNonNull(keyColumn, "keyColumn is null");
        checkArgument(column.isPresent() != keyColumn.isPresent(), "a column of the report is a report column or a key column");
    }

    public CompletenessColumnHandle(CompletenessColumn column)
    {
        this(Optional.of(column), Optional.empty());
    }

    /**
     * The columns of a report over a table whose merge key has {@code keyColumns} besides malo_id, obis_code and "from"
     * ({@link io.meterstore.core.TableShape#keyColumns()}): malo_id, those, then the report's other columns. A table
     * with the default key has the report's columns alone.
     */
    public static List<CompletenessColumnHandle> columns(List<String> keyColumns)
    {
        ImmutableList.Builder<CompletenessColumnHandle> columns = ImmutableList.builder();
        for (CompletenessColumn column : CompletenessColumn.values()) {
            columns.add(new CompletenessColumnHandle(column));
            if (column == CompletenessColumn.MALO_ID) {
                keyColumns.forEach(name -> columns.add(new CompletenessColumnHandle(Optional.empty(), Optional.of(name))));
            }
        }
        return columns.build();
    }

    /** The type {@code meter_completeness} returns over a table whose key has {@code keyColumns}: {@link #columns}. */
    public static Descriptor descriptor(List<String> keyColumns)
    {
        return new Descriptor(columns(keyColumns).stream().map(column -> new Descriptor.Field(column.name(), Optional.of(column.type()))).toList());
    }

    public String name()
    {
        return column.map(CompletenessColumn::columnName).orElseGet(keyColumn::orElseThrow);
    }

    public Type type()
    {
        // every column of the key is a string
        return column.map(CompletenessColumn::type).orElse(VARCHAR);
    }

    public ColumnMetadata toColumnMetadata()
    {
        // every row of the table holds a value in each column of its key
        return column.map(CompletenessColumn::toColumnMetadata).orElseGet(() -> ColumnMetadata.builder().setName(name()).setType(type()).setNullable(false).build());
    }
}
