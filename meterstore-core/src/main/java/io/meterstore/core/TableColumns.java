package io.meterstore.core;

import com.google.common.collect.ImmutableList;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.types.Types.NestedField;

import java.util.Comparator;
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
    public static final TableColumns READINGS = new TableColumns(TableShape.TimeModel.INTERVAL, List.of(), List.of());

    // names PostgreSQL keeps for itself in every table, and the column of the hot tier's supersession marks
    private static final Set<String> RESERVED = Set.of("tableoid", "xmin", "cmin", "xmax", "cmax", "ctid", HotTierSupersession.COLUMN);

    private final TableShape.TimeModel timeModel;
    private final List<TableColumn> columns;
    private final List<TableColumn> attributes;
    private final List<TableColumn> keyColumns;
    private final int[] keyChannels;
    // the key columns that are not readings columns: the identity columns, each a partition field of the cold tier
    private final List<TableColumn> identityColumns;

    private TableColumns(TableShape.TimeModel timeModel, List<String> keyColumns, List<String> attributeColumns)
    {
        this.timeModel = timeModel;
        boolean meloKeyed = keyColumns.contains(ReadingsColumn.MELO_ID.columnName());
        List<String> identityColumns = keyColumns.stream().filter(column -> !column.equals(ReadingsColumn.MELO_ID.columnName())).toList();
        // identity columns first, then attribute columns: the declared columns' channels and field ids, in that order
        int first = ReadingsColumn.values().length + 1;
        this.attributes = ImmutableList.<TableColumn>builder()
                .addAll(IntStream.range(0, identityColumns.size())
                        .mapToObj(index -> TableColumn.identity(identityColumns.get(index), first + index))
                        .toList())
                .addAll(IntStream.range(0, attributeColumns.size())
                        .mapToObj(index -> TableColumn.attribute(attributeColumns.get(index), first + identityColumns.size() + index))
                        .toList())
                .build();
        this.columns = ImmutableList.<TableColumn>builder()
                .addAll(ReadingsSchema.COLUMNS.stream()
                        // melo_id in the key holds a value in every row, as every column of the key
                        .map(column -> column == ReadingsColumn.MELO_ID && meloKeyed ? TableColumn.keyed(TableColumn.of(column, timeModel)) : TableColumn.of(column, timeModel))
                        .toList())
                .addAll(attributes)
                .build();
        this.keyColumns = keyColumns.stream()
                .map(name -> this.columns.stream().filter(column -> column.name().equals(name)).findFirst().orElseThrow())
                .collect(ImmutableList.toImmutableList());
        this.keyChannels = this.keyColumns.stream().mapToInt(this.columns::indexOf).toArray();
        this.identityColumns = this.keyColumns.stream().filter(TableColumn::attributeColumn).collect(ImmutableList.toImmutableList());
    }

    /** The columns of a table of {@code shape}. */
    public static TableColumns of(TableShape shape)
    {
        return of(shape.timeModel(), shape.keyColumns(), shape.attributeColumns());
    }

    /** The columns of a table of {@code timeModel} whose shape declares {@code attributeColumns}, in that order: "to" is nullable in a point table. */
    public static TableColumns of(TableShape.TimeModel timeModel, List<String> attributeColumns)
    {
        requireNonNull(timeModel, "timeModel is null");
        requireNonNull(attributeColumns, "attributeColumns is null");
        return of(timeModel, List.of(), attributeColumns);
    }

    /**
     * The columns of a table of {@code timeModel} whose merge key has {@code keyColumns} besides malo_id, obis_code and
     * "from" ({@link TableShape#keyColumns()}: melo_id, then the identity columns) and whose shape declares
     * {@code attributeColumns}: the identity columns are stored after the readings columns, then the attribute columns.
     */
    public static TableColumns of(TableShape.TimeModel timeModel, List<String> keyColumns, List<String> attributeColumns)
    {
        requireNonNull(timeModel, "timeModel is null");
        requireNonNull(keyColumns, "keyColumns is null");
        requireNonNull(attributeColumns, "attributeColumns is null");
        return timeModel == TableShape.TimeModel.INTERVAL && keyColumns.isEmpty() && attributeColumns.isEmpty() ? READINGS : new TableColumns(timeModel, keyColumns, attributeColumns);
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

    /**
     * The columns of the merge key besides malo_id, obis_code and "from", in the order the key sorts them after those:
     * melo_id in a table keyed by it, then the identity columns. Empty for the default key, whose paths stay as they were.
     */
    public List<TableColumn> keyColumns()
    {
        return keyColumns;
    }

    /** The names of {@link #keyColumns()}. */
    public List<String> keyNames()
    {
        return keyColumns.stream().map(TableColumn::name).toList();
    }

    /**
     * The identity columns of the table's shape ({@link TableShape#identityColumns()}), in declaration order: the key
     * columns that are not readings columns, each also a partition field of the cold tier ({@link ColdPartitions}).
     */
    public List<TableColumn> identityColumns()
    {
        return identityColumns;
    }

    /** The channels of {@link #identityColumns()} in a page of every column. */
    public int[] identityChannels()
    {
        return identityColumns.stream().mapToInt(columns::indexOf).toArray();
    }

    /** The channels of {@link #keyColumns()} in a page of every column. */
    public int[] keyChannels()
    {
        return keyChannels.clone();
    }

    public boolean hasKeyColumns()
    {
        return !keyColumns.isEmpty();
    }

    /** The order of the cold tier's files for readings of this table: (malo_id, obis_code, "from", {@link #keyColumns()}, version). */
    public Comparator<Reading> sortOrder()
    {
        Comparator<Reading> order = Comparator.comparing(Reading::maloId).thenComparing(Reading::obisCode).thenComparing(Reading::from);
        for (int index = 0; index < keyColumns.size(); index++) {
            int column = index;
            // every row holds a value in a column of the key
            order = order.thenComparing(reading -> keyValues(reading).get(column).orElse(""));
        }
        return order.thenComparing(Reading::version);
    }

    /** Whether two readings of this table have the same merge key: malo_id, obis_code, "from" and {@link #keyColumns()}. */
    public boolean sameMergeKey(Reading reading, Reading other)
    {
        return reading.maloId().equals(other.maloId()) && reading.obisCode().equals(other.obisCode()) && reading.from().equals(other.from())
                && keyValues(reading).equals(keyValues(other));
    }

    /**
     * The values of {@link #keyColumns()} in {@code reading}, a reading of this table: its melo_id, its identity columns'
     * values (the first of its {@link Reading#attributes()}). Empty for the default key.
     */
    public List<Optional<String>> keyValues(Reading reading)
    {
        if (keyColumns.isEmpty()) {
            return List.of();
        }
        ImmutableList.Builder<Optional<String>> values = ImmutableList.builder();
        for (TableColumn column : keyColumns) {
            values.add(column.is(ReadingsColumn.MELO_ID) ? reading.meloId() : reading.attributes().get(attributes.indexOf(column)));
        }
        return values.build();
    }

    /** The values of {@link #identityColumns()} in {@code reading}, a reading of this table, which holds one in each. */
    public List<String> identityValues(Reading reading)
    {
        return identityColumns.stream()
                .map(column -> reading.attributes().get(attributes.indexOf(column)).orElseThrow(() -> new IllegalArgumentException("Identity column '%s' of a reading holds no value".formatted(column.name()))))
                .collect(ImmutableList.toImmutableList());
    }

    /**
     * The columns after the readings columns, in storage order: the identity columns, then the attribute columns. Both are
     * strings carried with a reading the same way; only the identity columns join the key ({@link #keyColumns()}).
     */
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
