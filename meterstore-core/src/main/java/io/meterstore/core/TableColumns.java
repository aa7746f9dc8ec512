package io.meterstore.core;

import com.google.common.collect.ImmutableList;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Types.NestedField;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.IntStream;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * The columns a readings table stores, in storage order: the 17 {@link ReadingsColumn}s ("to" nullable in a point table), then the attribute columns its
 * shape declares ({@link TableShape#attributeColumns()}), nullable strings with Iceberg field ids after the readings
 * columns' 17 (18, 19, ... in declaration order). The one place the writers and readers of both tiers ask for a table's
 * columns: the hot tier's DDL and COPY column lists, the Iceberg schema, the Parquet layout, the connector's columns.
 * A table without attribute columns has exactly {@link #READINGS}, the readings columns whose positions never move:
 * every channel of a readings column is its {@link ReadingsColumn#ordinal()} in a table of any shape.
 */
public final class TableColumns
{
    /** The columns of a table without attribute columns: the readings columns alone, as every table before shapes. */
    public static final TableColumns READINGS = new TableColumns(TableShape.TimeModel.INTERVAL, List.of());

    // names PostgreSQL keeps for itself in every table, and the column of the hot tier's supersession marks
    private static final Set<String> RESERVED = Set.of("tableoid", "xmin", "cmin", "xmax", "cmax", "ctid", HotTierSupersession.COLUMN);

    private final TableShape.TimeModel timeModel;
    private final List<TableColumn> columns;
    private final List<TableColumn> attributes;

    private TableColumns(TableShape.TimeModel timeModel, List<String> attributeColumns)
    {
        this.timeModel = timeModel;
        int first = ReadingsColumn.values().length + 1;
        this.attributes = IntStream.range(0, attributeColumns.size())
                .mapToObj(index -> TableColumn.attribute(attributeColumns.get(index), first + index))
                .collect(ImmutableList.toImmutableList());
        this.columns = ImmutableList.<TableColumn>builder()
                .addAll(ReadingsSchema.COLUMNS.stream().map(column -> TableColumn.of(column, timeModel)).toList())
                .addAll(attributes)
                .build();
    }

    /** The columns of a table of {@code shape}. */
    public static TableColumns of(TableShape shape)
    {
        return of(shape.timeModel(), shape.attributeColumns());
    }

    /** The columns of an interval table whose shape declares {@code attributeColumns}, in that order. */
    public static TableColumns ofAttributes(List<String> attributeColumns)
    {
        return of(TableShape.TimeModel.INTERVAL, attributeColumns);
    }

    /** The columns of a table of {@code timeModel} whose shape declares {@code attributeColumns}, in that order: "to" is nullable in a point table. */
    public static TableColumns of(TableShape.TimeModel timeModel, List<String> attributeColumns)
    {
        requireNonNull(timeModel, "timeModel is null");
        requireNonNull(attributeColumns, "attributeColumns is null");
        return timeModel == TableShape.TimeModel.INTERVAL && attributeColumns.isEmpty() ? READINGS : new TableColumns(timeModel, attributeColumns);
    }

    /** The columns of the Iceberg table {@code table}, by the shape its properties store (the readings columns for a table created before shapes). */
    public static TableColumns of(Table table)
    {
        return TableShape.ofProperties(table.properties()).map(TableColumns::of).orElse(READINGS);
    }

    /** Whether PostgreSQL or the hot tier keep {@code name} for themselves, so that no attribute column can take it. */
    public static boolean isReserved(String name)
    {
        return RESERVED.contains(name);
    }

    /** The time model of the table: whether "to" holds the end of an interval or is NULL, as in a point table. */
    public TableShape.TimeModel timeModel()
    {
        return timeModel;
    }

    /** Every column in storage order: the readings columns, then the attribute columns. */
    public List<TableColumn> all()
    {
        return columns;
    }

    /** The attribute columns, in declaration order: the channels after the readings columns'. */
    public List<TableColumn> attributes()
    {
        return attributes;
    }

    public List<String> attributeNames()
    {
        return attributes.stream().map(TableColumn::name).toList();
    }

    public boolean hasAttributes()
    {
        return !attributes.isEmpty();
    }

    /** How many columns a row of the table has: its channels in a page of every column. */
    public int size()
    {
        return columns.size();
    }

    /** The channel of attribute column {@code index} (declaration order) in a page of every column. */
    public int attributeChannel(int index)
    {
        checkArgument(index >= 0 && index < attributes.size(), "No attribute column %s", index);
        return ReadingsColumn.values().length + index;
    }

    /** The column named {@code name}, if the table stores one. */
    public Optional<TableColumn> column(String name)
    {
        return columns.stream().filter(column -> column.name().equals(name)).findFirst();
    }

    /** The Iceberg schema: the readings columns' fields, then an optional string field per attribute column. */
    public Schema icebergSchema()
    {
        return new Schema(columns.stream()
                .map(column -> column.nullable()
                        ? NestedField.optional(column.fieldId(), column.name(), column.icebergType())
                        : NestedField.required(column.fieldId(), column.name(), column.icebergType()))
                .toList());
    }

    /** The column list of a PostgreSQL CREATE TABLE, every identifier quoted; an attribute column is TEXT, nullable. */
    public String postgresColumnDefinitions()
    {
        return String.join(",\n    ", columns.stream()
                // C collation: the primary-key index then walks text in byte order, the order Parquet and Iceberg sort in
                .map(column -> "%s %s%s%s".formatted(
                        Sql.quoteIdentifier(column.name()),
                        column.postgresType(),
                        column.kind() == ReadingsColumn.ColumnKind.STRING ? " COLLATE \"C\"" : "",
                        column.nullable() ? "" : " NOT NULL"))
                .toList());
    }

    /** The quoted column list in storage order, for SELECT, INSERT and COPY. */
    public String postgresColumnList()
    {
        return String.join(", ", columns.stream().map(column -> Sql.quoteIdentifier(column.name())).toList());
    }

    /** The quoted column list of table alias {@code alias}, in storage order. */
    public String postgresColumnList(String alias)
    {
        return String.join(", ", columns.stream().map(column -> alias + "." + Sql.quoteIdentifier(column.name())).toList());
    }

    @Override
    public boolean equals(Object other)
    {
        return other instanceof TableColumns that && columns.equals(that.columns);
    }

    @Override
    public int hashCode()
    {
        return columns.hashCode();
    }

    @Override
    public String toString()
    {
        return columns.stream().map(TableColumn::name).toList().toString();
    }
}
