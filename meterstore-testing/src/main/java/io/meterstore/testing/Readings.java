package io.meterstore.testing;

import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.ReadingsSchema;
import io.meterstore.core.Sparte;
import io.meterstore.core.Sparte.MeasurementUnit;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/** Turns rows of the readings columns read over JDBC back into {@link Reading}s, for comparing with what was written. */
public final class Readings
{
    /** Storage order: the Parquet sort key (malo_id, obis_code, "from", version). */
    public static final Comparator<Reading> SORT_ORDER = Comparator.comparing(Reading::maloId)
            .thenComparing(Reading::obisCode)
            .thenComparing(Reading::from)
            .thenComparing(Reading::version);

    private Readings() {}

    /** The quoted select list of all 17 columns, in storage order. */
    public static String selectList()
    {
        return ReadingsSchema.postgresColumnList();
    }

    /** The reading in the current row of {@code result}, which must carry all 17 columns under their names. */
    public static Reading fromResultSet(ResultSet result)
            throws SQLException
    {
        return new Reading(
                result.getString(ReadingsColumn.MALO_ID.columnName()),
                Optional.ofNullable(result.getString(ReadingsColumn.MELO_ID.columnName())),
                result.getString(ReadingsColumn.OBIS_CODE.columnName()),
                Sparte.parse(result.getString(ReadingsColumn.SPARTE.columnName())),
                instant(result, ReadingsColumn.FROM),
                instant(result, ReadingsColumn.TO),
                result.getBigDecimal(ReadingsColumn.VALUE.columnName()),
                MeasurementUnit.parse(result.getString(ReadingsColumn.UNIT.columnName())),
                Quality.parse(result.getString(ReadingsColumn.QUALITY.columnName())),
                result.getString(ReadingsColumn.RESOLUTION.columnName()),
                result.getString(ReadingsColumn.SOURCE_KIND.columnName()),
                Optional.ofNullable(result.getString(ReadingsColumn.SOURCE_DETAIL.columnName())),
                Optional.ofNullable(result.getString(ReadingsColumn.PROVENANCE.columnName())),
                result.getBigDecimal(ReadingsColumn.VERSION.columnName()).toBigIntegerExact(),
                result.getString(ReadingsColumn.VERSION_SCOPE.columnName()),
                instant(result, ReadingsColumn.RECORDED_AT),
                result.getObject(ReadingsColumn.BALANCING_DAY.columnName(), LocalDate.class));
    }

    /** Runs {@code sql} (which selects all 17 columns) with {@code parameters} bound in order and returns every row. */
    public static List<Reading> query(Connection connection, String sql, Object... parameters)
            throws SQLException
    {
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            for (int index = 0; index < parameters.length; index++) {
                statement.setObject(index + 1, parameters[index]);
            }
            List<Reading> readings = new ArrayList<>();
            try (ResultSet result = statement.executeQuery()) {
                while (result.next()) {
                    readings.add(fromResultSet(result));
                }
            }
            return readings;
        }
    }

    private static Instant instant(ResultSet result, ReadingsColumn column)
            throws SQLException
    {
        return result.getObject(column.columnName(), OffsetDateTime.class).toInstant();
    }
}
