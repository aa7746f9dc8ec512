package io.meterstore.trino;

import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.ReadingsColumn.ColumnKind;
import io.trino.spi.type.DateType;
import io.trino.spi.type.DecimalType;
import io.trino.spi.type.TimestampWithTimeZoneType;
import io.trino.spi.type.Type;
import io.trino.spi.type.VarcharType;

import java.util.Arrays;
import java.util.List;

/** The Trino type of each value domain of the readings schema. */
public final class MeterstoreTypes
{
    public static final TimestampWithTimeZoneType TIMESTAMP_TZ_MICROS = TimestampWithTimeZoneType.createTimestampWithTimeZoneType(6);
    public static final DecimalType QUANTITY = DecimalType.createDecimalType(18, 6);
    public static final DecimalType VERSION = DecimalType.createDecimalType(20, 0);

    private MeterstoreTypes() {}

    public static Type trinoType(ColumnKind kind)
    {
        return switch (kind) {
            case STRING -> VarcharType.VARCHAR;
            case TIMESTAMP_TZ -> TIMESTAMP_TZ_MICROS;
            case QUANTITY -> QUANTITY;
            case VERSION -> VERSION;
            case DATE -> DateType.DATE;
        };
    }

    public static MeterstoreColumnHandle columnHandle(ReadingsColumn column)
    {
        return new MeterstoreColumnHandle(column, trinoType(column.kind()));
    }

    public static List<MeterstoreColumnHandle> columnHandles()
    {
        return Arrays.stream(ReadingsColumn.values()).map(MeterstoreTypes::columnHandle).toList();
    }
}
