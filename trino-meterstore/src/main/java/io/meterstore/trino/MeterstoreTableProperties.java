package io.meterstore.trino;

import com.google.common.collect.ImmutableList;
import io.meterstore.core.TableShape;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.SchemaTableName;
import io.trino.spi.session.PropertyMetadata;
import io.trino.spi.type.ArrayType;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

import static com.google.common.collect.ImmutableList.toImmutableList;
import static io.trino.spi.StandardErrorCode.INVALID_TABLE_PROPERTY;
import static io.trino.spi.session.PropertyMetadata.stringProperty;
import static io.trino.spi.type.VarcharType.VARCHAR;

/**
 * The properties of CREATE TABLE ... WITH (...), as Trino's Iceberg connector declares its own: a table's shape
 * ({@link TableShape}), each setting under its SQL name, the column lists as arrays. Shown by SHOW CREATE TABLE. The
 * attribute columns are columns of the table too: CREATE TABLE declares them as varchar columns after the readings
 * columns, and {@code attribute_columns}, which may be left out, must name exactly those.
 */
public final class MeterstoreTableProperties
{
    private final List<PropertyMetadata<?>> tableProperties = ImmutableList.<PropertyMetadata<?>>builder()
            .add(stringProperty(TableShape.TIME_MODEL, "interval (a value per interval) or point (the register at \"from\")", TableShape.DEFAULT.timeModel().sqlName(), false))
            // no default here: left out, it follows time_model (malo_id for an interval table, melo_id for a point table)
            .add(stringProperty(TableShape.READING_ID, "The column that identifies a reading: malo_id or melo_id (default: malo_id for an interval table, melo_id for a point table)", null, false))
            .add(columnList(TableShape.IDENTITY_COLUMNS, "Columns that join the merge key, e.g. a tenant", TableShape.DEFAULT.identityColumns()))
            // no default: left out, the attribute columns are the varchar columns after the readings columns; given, it must name exactly those
            .add(columnList(TableShape.ATTRIBUTE_COLUMNS, "Columns carried with a reading, not part of its key: the varchar columns after the readings columns, in their order", null))
            .add(columnList(TableShape.CHECKED_COLUMNS, "Columns parsed and stored canonical, each '<column>:<check>', the check EIC, EIC:<object types among X Y Z W T V A, separated by '|'>, MALO, MELO or BDEW", checkedColumns(TableShape.DEFAULT)))
            .build();

    public List<PropertyMetadata<?>> getTableProperties()
    {
        return tableProperties;
    }

    private static PropertyMetadata<List<String>> columnList(String name, String description, List<String> defaultValue)
    {
        @SuppressWarnings("unchecked")
        Class<List<String>> type = (Class<List<String>>) (Class<?>) List.class;
        return new PropertyMetadata<>(
                name,
                description,
                new ArrayType(VARCHAR),
                type,
                defaultValue,
                false,
                value -> ((List<?>) value).stream().map(String.class::cast).collect(toImmutableList()),
                value -> value);
    }

    /**
     * The shape CREATE TABLE of {@code table} declares by its properties and its column list, whose columns after the
     * readings columns are {@code extraColumns}: those {@code identity_columns} does not name are the attribute columns
     * the table stores. An {@code attribute_columns} property that names other columns, or the same in another order, is
     * refused naming the difference; a malformed setting is refused naming it.
     */
    public static TableShape shape(SchemaTableName table, Map<String, Object> properties, List<String> extraColumns)
    {
        Map<String, String> settings = new LinkedHashMap<>();
        properties.forEach((name, value) -> settings.put(name, switch (value) {
            case List<?> list -> String.join(",", list.stream().map(String.class::cast).toList());
            default -> String.valueOf(value);
        }));
        List<String> identityColumns = columnNames(properties.get(TableShape.IDENTITY_COLUMNS));
        List<String> attributeColumns = extraColumns.stream().filter(column -> !identityColumns.contains(column)).toList();
        if (properties.get(TableShape.ATTRIBUTE_COLUMNS) != null) {
            List<String> named = columnNames(properties.get(TableShape.ATTRIBUTE_COLUMNS));
            attributeColumnsDifference(named, attributeColumns).ifPresent(difference -> {
                throw new TrinoException(INVALID_TABLE_PROPERTY, "CREATE TABLE '%s' declares attribute_columns %s, but its column list has %s after the readings columns: %s; the attribute columns are the varchar columns after the readings columns, in their order: list the same in attribute_columns, or leave it out"
                        .formatted(table, sqlArray(named), attributeColumns.isEmpty() ? "no columns" : "the columns %s".formatted(sqlArray(attributeColumns)), difference));
            });
        }
        settings.put(TableShape.ATTRIBUTE_COLUMNS, String.join(",", attributeColumns));
        try {
            return TableShape.declared(settings);
        }
        catch (IllegalArgumentException e) {
            throw new TrinoException(INVALID_TABLE_PROPERTY, e.getMessage(), e);
        }
    }

    private static List<String> columnNames(Object property)
    {
        if (!(property instanceof List<?> list)) {
            return List.of();
        }
        return list.stream().map(String.class::cast).map(column -> column.trim().toLowerCase(Locale.ROOT)).toList();
    }

    /** What sets the attribute_columns property {@code named} apart from the attribute columns of the column list; empty when they agree. */
    private static Optional<String> attributeColumnsDifference(List<String> named, List<String> listed)
    {
        if (named.equals(listed)) {
            return Optional.empty();
        }
        List<String> differences = new ArrayList<>();
        named.stream().filter(column -> !listed.contains(column))
                .forEach(column -> differences.add("'%s' is not a column of the list (add '%s varchar' after the readings columns)".formatted(column, column)));
        listed.stream().filter(column -> !named.contains(column))
                .forEach(column -> differences.add("column '%s' is not named in attribute_columns".formatted(column)));
        if (differences.isEmpty()) {
            differences.add(named.size() == listed.size() ? "they are in another order" : "a column is named twice");
        }
        return Optional.of(String.join(", ", differences));
    }

    private static String sqlArray(List<String> columns)
    {
        return columns.stream().map(column -> "'" + column + "'").collect(Collectors.joining(",", "ARRAY[", "]"));
    }

    /** The properties SHOW CREATE TABLE shows for {@code shape}. */
    public static Map<String, Object> properties(TableShape shape)
    {
        Map<String, Object> properties = new LinkedHashMap<>();
        properties.put(TableShape.TIME_MODEL, shape.timeModel().sqlName());
        properties.put(TableShape.READING_ID, shape.readingId().sqlName());
        properties.put(TableShape.IDENTITY_COLUMNS, shape.identityColumns());
        properties.put(TableShape.ATTRIBUTE_COLUMNS, shape.attributeColumns());
        properties.put(TableShape.CHECKED_COLUMNS, checkedColumns(shape));
        return properties;
    }

    private static List<String> checkedColumns(TableShape shape)
    {
        return shape.checkedColumns().entrySet().stream()
                .sorted(Map.Entry.comparingByKey())
                .map(entry -> entry.getKey() + ":" + entry.getValue())
                .collect(toImmutableList());
    }
}
