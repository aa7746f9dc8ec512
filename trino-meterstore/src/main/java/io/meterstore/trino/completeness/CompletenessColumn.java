package io.meterstore.trino.completeness;

import io.trino.spi.connector.ColumnMetadata;
import io.trino.spi.type.Type;

import static io.trino.spi.type.BigintType.BIGINT;
import static io.trino.spi.type.BooleanType.BOOLEAN;
import static io.trino.spi.type.DateType.DATE;
import static io.trino.spi.type.VarcharType.VARCHAR;

/**
 * The columns of {@code meter_completeness}, in the order of the Rust MeterStore's report; a table whose merge key has
 * further columns shows them after malo_id ({@link CompletenessColumnHandle#columns}).
 */
public enum CompletenessColumn
{
    MALO_ID("malo_id", VARCHAR),
    OBIS_CODE("obis_code", VARCHAR),
    SPARTE("sparte", VARCHAR),
    RESOLUTION("resolution", VARCHAR),
    EXPECTED("expected", BIGINT),
    ACTUAL("actual", BIGINT),
    MISSING("missing", BIGINT),
    SURPLUS("surplus", BIGINT),
    FIRST_GAP("first_gap", DATE),
    SUBSTITUTED("substituted", BIGINT),
    NOT_BILLABLE("not_billable", BIGINT),
    COMPLETE("complete", BOOLEAN),
    MEASURABLE("measurable", BOOLEAN);

    private final String columnName;
    private final Type type;

    CompletenessColumn(String columnName, Type type)
    {
        this.columnName = columnName;
        this.type = type;
    }

    public String columnName()
    {
        return columnName;
    }

    public Type type()
    {
        return type;
    }

    public ColumnMetadata toColumnMetadata()
    {
        return ColumnMetadata.builder().setName(columnName).setType(type).setNullable(this == FIRST_GAP).build();
    }
}
