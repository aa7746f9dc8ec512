package io.meterstore.parquet;

import com.google.common.collect.ImmutableMap;
import io.meterstore.core.PgBinaryCopyReader;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.ReadingsColumn.ColumnKind;
import io.meterstore.core.TableColumn;
import io.meterstore.core.TableColumns;
import io.trino.spi.type.DateType;
import io.trino.spi.type.DecimalType;
import io.trino.spi.type.Int128;
import io.trino.spi.type.TimestampWithTimeZoneType;
import io.trino.spi.type.Type;
import io.trino.spi.type.VarcharType;
import org.apache.iceberg.Schema;
import org.apache.iceberg.types.TypeUtil;
import org.apache.iceberg.types.Types.NestedField;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.LogicalTypeAnnotation.TimeUnit;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type.Repetition;
import org.apache.parquet.schema.Types;

import java.util.List;
import java.util.Map;

/**
 * The Parquet layout of a readings data file: the Iceberg schema's columns in field-id order, each carrying its Iceberg
 * field id (readers resolve columns by id, not by name), with the physical types Iceberg's own writer chooses. A table
 * whose shape declares attribute columns has them after the readings columns ({@link TableColumns}), optional strings.
 */
public final class ReadingsParquetSchema
{
    public static final TimestampWithTimeZoneType TIMESTAMP_TZ_MICROS = TimestampWithTimeZoneType.createTimestampWithTimeZoneType(6);
    public static final DecimalType QUANTITY = DecimalType.createDecimalType(18, 6);
    public static final DecimalType VERSION = DecimalType.createDecimalType(20, 0);
    public static final List<ReadingsColumn> COLUMNS = List.of(ReadingsColumn.values());
    private static final String MESSAGE_NAME = "table";

    private ReadingsParquetSchema() {}

    /** A version field of PostgreSQL's binary COPY as {@link #VERSION}'s value, through a long where one holds it. */
    public static Int128 version(PgBinaryCopyReader row, int field)
    {
        if (row.numericFitsLong(field, VERSION.getScale())) {
            return Int128.valueOf(row.numericUnscaled(field, VERSION.getScale()));
        }
        return Int128.valueOf(row.numericUnscaledBig(field, VERSION.getScale()));
    }

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

    public static List<Type> trinoTypes()
    {
        return trinoTypes(TableColumns.READINGS);
    }

    /** The Trino type of every column of a table, in storage order: the channels of a page of every column. */
    public static List<Type> trinoTypes(TableColumns columns)
    {
        return columns.all().stream().map(column -> trinoType(column.kind())).toList();
    }

    public static MessageType messageType()
    {
        return messageType(TableColumns.READINGS);
    }

    /** The file schema of a table's data files: every column of it, the attribute columns after the readings columns. */
    public static MessageType messageType(TableColumns columns)
    {
        Types.MessageTypeBuilder builder = Types.buildMessage();
        for (TableColumn column : columns.all()) {
            builder.addField(parquetType(column));
        }
        return builder.named(MESSAGE_NAME);
    }

    /** The Trino type of every leaf column, keyed by its path, as Trino's Parquet writer takes them. */
    public static Map<List<String>, Type> primitiveTypes()
    {
        return primitiveTypes(TableColumns.READINGS);
    }

    /** As {@link #primitiveTypes()}, for every column of a table. */
    public static Map<List<String>, Type> primitiveTypes(TableColumns columns)
    {
        ImmutableMap.Builder<List<String>, Type> types = ImmutableMap.builder();
        for (TableColumn column : columns.all()) {
            types.put(List.of(column.name()), trinoType(column.kind()));
        }
        return types.buildOrThrow();
    }

    private static PrimitiveType parquetType(TableColumn column)
    {
        Repetition repetition = column.nullable() ? Repetition.OPTIONAL : Repetition.REQUIRED;
        Types.PrimitiveBuilder<PrimitiveType> builder = switch (column.kind()) {
            case STRING -> Types.primitive(PrimitiveTypeName.BINARY, repetition)
                    .as(LogicalTypeAnnotation.stringType());
            case TIMESTAMP_TZ -> Types.primitive(PrimitiveTypeName.INT64, repetition)
                    .as(LogicalTypeAnnotation.timestampType(true, TimeUnit.MICROS));
            case QUANTITY -> Types.primitive(PrimitiveTypeName.INT64, repetition)
                    .as(LogicalTypeAnnotation.decimalType(QUANTITY.getScale(), QUANTITY.getPrecision()));
            // precision 20 does not fit INT64: the smallest fixed length that holds it, as Iceberg writes it
            case VERSION -> Types.primitive(PrimitiveTypeName.FIXED_LEN_BYTE_ARRAY, repetition)
                    .length(TypeUtil.decimalRequiredBytes(VERSION.getPrecision()))
                    .as(LogicalTypeAnnotation.decimalType(VERSION.getScale(), VERSION.getPrecision()));
            case DATE -> Types.primitive(PrimitiveTypeName.INT32, repetition)
                    .as(LogicalTypeAnnotation.dateType());
        };
        return builder.id(column.fieldId()).named(column.name());
    }
}
