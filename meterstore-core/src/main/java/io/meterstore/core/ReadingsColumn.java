package io.meterstore.core;

import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

import java.util.List;

import static java.util.Objects.requireNonNull;

/**
 * The columns of a readings table, in storage order. The names, their order and the Iceberg field ids match
 * the Rust MeterStore's storage schema, so a table written by either can be read by the other.
 */
public enum ReadingsColumn
{
    MALO_ID(1, "malo_id", ColumnKind.STRING, false),
    MELO_ID(2, "melo_id", ColumnKind.STRING, true),
    OBIS_CODE(3, "obis_code", ColumnKind.STRING, false),
    SPARTE(4, "sparte", ColumnKind.STRING, false),
    FROM(5, "from", ColumnKind.TIMESTAMP_TZ, false),
    TO(6, "to", ColumnKind.TIMESTAMP_TZ, false),
    VALUE(7, "value", ColumnKind.QUANTITY, false),
    UNIT(8, "unit", ColumnKind.STRING, false),
    QUALITY(9, "quality", ColumnKind.STRING, false),
    RESOLUTION(10, "resolution", ColumnKind.STRING, false),
    SOURCE_KIND(11, "source_kind", ColumnKind.STRING, false),
    SOURCE_DETAIL(12, "source_detail", ColumnKind.STRING, true),
    PROVENANCE(13, "provenance", ColumnKind.STRING, true),
    VERSION(14, "version", ColumnKind.VERSION, false),
    VERSION_SCOPE(15, "version_scope", ColumnKind.STRING, false),
    RECORDED_AT(16, "recorded_at", ColumnKind.TIMESTAMP_TZ, false),
    BALANCING_DAY(17, "balancing_day", ColumnKind.DATE, false),
    /**/;

    /** The merge key: one winning version per (malo_id, obis_code, "from") and version scope. */
    public static final List<ReadingsColumn> MERGE_KEY = List.of(MALO_ID, OBIS_CODE, FROM);
    /** The order rows are written to Parquet in, and declared in the footer. */
    public static final List<ReadingsColumn> SORT_KEY = List.of(MALO_ID, OBIS_CODE, FROM, VERSION);

    private final int fieldId;
    private final String columnName;
    private final ColumnKind kind;
    private final boolean nullable;

    ReadingsColumn(int fieldId, String columnName, ColumnKind kind, boolean nullable)
    {
        this.fieldId = fieldId;
        this.columnName = requireNonNull(columnName, "columnName is null");
        this.kind = requireNonNull(kind, "kind is null");
        this.nullable = nullable;
    }

    public int fieldId()
    {
        return fieldId;
    }

    public String columnName()
    {
        return columnName;
    }

    public ColumnKind kind()
    {
        return kind;
    }

    public boolean nullable()
    {
        return nullable;
    }

    public Type icebergType()
    {
        return kind.icebergType();
    }

    public String postgresType()
    {
        return kind.postgresType();
    }

    public static ReadingsColumn byName(String name)
    {
        for (ReadingsColumn column : values()) {
            if (column.columnName.equals(name)) {
                return column;
            }
        }
        throw new IllegalArgumentException("Unknown readings column '%s'".formatted(name));
    }

    /** The value domains of the schema; each engine maps them to its own types. */
    public enum ColumnKind
    {
        STRING(Types.StringType.get(), "text"),
        TIMESTAMP_TZ(Types.TimestampType.withZone(), "timestamptz"),
        /** An exact quantity: decimal(18,6), never a double. */
        QUANTITY(Types.DecimalType.of(18, 6), "numeric(18,6)"),
        /** A correction version: decimal(20,0) holds the 14+ digit MSCONS versions. */
        VERSION(Types.DecimalType.of(20, 0), "numeric(20,0)"),
        DATE(Types.DateType.get(), "date");

        private final Type icebergType;
        private final String postgresType;

        ColumnKind(Type icebergType, String postgresType)
        {
            this.icebergType = icebergType;
            this.postgresType = postgresType;
        }

        public Type icebergType()
        {
            return icebergType;
        }

        public String postgresType()
        {
            return postgresType;
        }
    }
}
