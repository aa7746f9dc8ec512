package io.meterstore.trino;

import com.google.common.collect.ImmutableList;
import io.meterstore.core.TableShape;
import io.trino.spi.TrinoException;
import io.trino.spi.session.PropertyMetadata;
import io.trino.spi.type.ArrayType;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static com.google.common.collect.ImmutableList.toImmutableList;
import static io.trino.spi.StandardErrorCode.INVALID_TABLE_PROPERTY;
import static io.trino.spi.session.PropertyMetadata.stringProperty;
import static io.trino.spi.type.VarcharType.VARCHAR;

/**
 * The properties of CREATE TABLE ... WITH (...), as Trino's Iceberg connector declares its own: a table's shape
 * ({@link TableShape}), each setting under its SQL name, the column lists as arrays. Shown by SHOW CREATE TABLE.
 */
public final class MeterstoreTableProperties
{
    private final List<PropertyMetadata<?>> tableProperties = ImmutableList.<PropertyMetadata<?>>builder()
            .add(stringProperty(TableShape.TIME_MODEL, "interval (a value per interval) or point (the register at \"from\")", TableShape.DEFAULT.timeModel().sqlName(), false))
            // no default here: left out, it follows time_model (malo_id for an interval table, melo_id for a point table)
            .add(stringProperty(TableShape.READING_ID, "The column that identifies a reading: malo_id or melo_id (default: malo_id for an interval table, melo_id for a point table)", null, false))
            .add(columnList(TableShape.IDENTITY_COLUMNS, "Columns that join the merge key, e.g. a tenant", TableShape.DEFAULT.identityColumns()))
            .add(columnList(TableShape.ATTRIBUTE_COLUMNS, "Columns carried with a reading, not part of its key", TableShape.DEFAULT.attributeColumns()))
            .add(columnList(TableShape.CHECKED_COLUMNS, "Columns parsed and stored canonical, each '<column>:<EIC|MALO|MELO|BDEW>'", checkedColumns(TableShape.DEFAULT)))
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

    /** The shape CREATE TABLE declares by its properties; a malformed setting is refused naming it. */
    public static TableShape shape(Map<String, Object> properties)
    {
        Map<String, String> settings = new LinkedHashMap<>();
        properties.forEach((name, value) -> settings.put(name, switch (value) {
            case List<?> list -> String.join(",", list.stream().map(String.class::cast).toList());
            default -> String.valueOf(value);
        }));
        try {
            return TableShape.declared(settings);
        }
        catch (IllegalArgumentException e) {
            throw new TrinoException(INVALID_TABLE_PROPERTY, e.getMessage(), e);
        }
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
