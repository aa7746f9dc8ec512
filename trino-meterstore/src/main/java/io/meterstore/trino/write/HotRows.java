package io.meterstore.trino.write;

import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.Sparte;
import io.meterstore.core.Sparte.MeasurementUnit;
import io.meterstore.core.TableColumn;
import io.meterstore.core.TableColumns;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static io.meterstore.core.Sql.quoteIdentifier;

/**
 * Readings from rows of the PostgreSQL readings columns, and a table's attribute columns, selected by name with an
 * optional prefix (a table alias's columns renamed).
 */
final class HotRows
{
    private HotRows() {}

    /** The reading of a row selected with the readings columns, without the table's attribute columns. */
    static Reading reading(ResultSet result, String prefix)
            throws SQLException
    {
        return reading(result, prefix, TableColumns.READINGS);
    }

    /** The reading of a row selected with every column of a table of {@code columns}, its attribute values too. */
    static Reading reading(ResultSet result, String prefix, TableColumns columns)
            throws SQLException
    {
        List<Optional<String>> attributes = List.of();
        if (columns.hasAttributes()) {
            attributes = new ArrayList<>(columns.attributes().size());
            for (TableColumn attribute : columns.attributes()) {
                attributes.add(Optional.ofNullable(result.getString(prefix + attribute.name())));
            }
        }
        return new Reading(
                result.getString(prefix + ReadingsColumn.MALO_ID.columnName()),
                Optional.ofNullable(result.getString(prefix + ReadingsColumn.MELO_ID.columnName())),
                result.getString(prefix + ReadingsColumn.OBIS_CODE.columnName()),
                Sparte.parse(result.getString(prefix + ReadingsColumn.SPARTE.columnName())),
                result.getObject(prefix + ReadingsColumn.FROM.columnName(), OffsetDateTime.class).toInstant(),
                Optional.ofNullable(result.getObject(prefix + ReadingsColumn.TO.columnName(), OffsetDateTime.class)).map(OffsetDateTime::toInstant),
                result.getBigDecimal(prefix + ReadingsColumn.VALUE.columnName()),
                MeasurementUnit.parse(result.getString(prefix + ReadingsColumn.UNIT.columnName())),
                Quality.parse(result.getString(prefix + ReadingsColumn.QUALITY.columnName())),
                result.getString(prefix + ReadingsColumn.RESOLUTION.columnName()),
                result.getString(prefix + ReadingsColumn.SOURCE_KIND.columnName()),
                Optional.ofNullable(result.getString(prefix + ReadingsColumn.SOURCE_DETAIL.columnName())),
                Optional.ofNullable(result.getString(prefix + ReadingsColumn.PROVENANCE.columnName())),
                result.getBigDecimal(prefix + ReadingsColumn.VERSION.columnName()).toBigIntegerExact(),
                result.getString(prefix + ReadingsColumn.VERSION_SCOPE.columnName()),
                result.getObject(prefix + ReadingsColumn.RECORDED_AT.columnName(), OffsetDateTime.class).toInstant(),
                result.getObject(prefix + ReadingsColumn.BALANCING_DAY.columnName(), LocalDate.class),
                attributes);
    }

    /** Every column of a table of {@code columns} of table alias {@code alias}, each renamed {@code <prefix><column>}, for a SELECT list. */
    static String selectList(TableColumns columns, String alias, String prefix)
    {
        return String.join(", ", columns.all().stream()
                .map(column -> "%s.%s AS %s".formatted(alias, quoteIdentifier(column.name()), quoteIdentifier(prefix + column.name())))
                .toList());
    }
}
