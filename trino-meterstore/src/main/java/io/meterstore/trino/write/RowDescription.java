package io.meterstore.trino.write;

import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.TableColumn;
import io.meterstore.core.TableColumns;
import io.meterstore.core.TieringWatermark;
import io.meterstore.trino.base.MeterstoreTypes;
import io.trino.spi.block.Block;
import io.trino.spi.type.Int128;
import io.trino.spi.type.LongTimestampWithTimeZone;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.meterstore.trino.base.MeterstoreTypes.TIMESTAMP_TZ_MICROS;
import static io.meterstore.trino.base.MeterstoreTypes.VERSION;
import static io.trino.spi.type.VarcharType.VARCHAR;

/** How an error names a row: its key, (malo_id, obis_code, "from", version), as far as the row has one. */
final class RowDescription
{
    private RowDescription() {}

    static String describe(Reading reading)
    {
        return describe(reading, TableColumns.READINGS);
    }

    /** {@code reading} of a table of {@code columns}: its merge key's other columns (a tenant, melo_id) after malo_id, as the key orders them. */
    static String describe(Reading reading, TableColumns columns)
    {
        StringBuilder key = new StringBuilder();
        List<TableColumn> keyColumns = columns.keyColumns();
        List<Optional<String>> values = columns.keyValues(reading);
        for (int index = 0; index < keyColumns.size(); index++) {
            key.append(", %s %s".formatted(keyColumns.get(index).name(), values.get(index).map(value -> "'" + value + "'").orElse("NULL")));
        }
        return "(malo_id '%s'%s, obis_code '%s', \"from\" %s, version %s)".formatted(reading.maloId(), key, reading.obisCode(), TieringWatermark.formatInstant(reading.from()), reading.version());
    }

    /**
     * The row at {@code position} of an INSERT's page into a table of {@code columns}, before it is a reading: its merge
     * key's other columns (a tenant, melo_id) after malo_id, as {@link #describe(Reading, TableColumns)} names them.
     */
    static String describe(ReadingsPages.PageBlocks pageBlocks, int position, TableColumns columns)
    {
        Map<ReadingsColumn, Block> blocks = pageBlocks.readings();
        StringBuilder key = new StringBuilder();
        for (TableColumn column : columns.keyColumns()) {
            // melo_id is a readings column; an identity column comes with the attribute columns
            int attribute = pageBlocks.attributeNames().indexOf(column.name());
            Block block = attribute >= 0 ? pageBlocks.attributes()[attribute] : blocks.get(ReadingsColumn.MELO_ID);
            key.append(", %s %s".formatted(column.name(), string(block, position)));
        }
        return "(malo_id %s%s, obis_code %s, \"from\" %s, version %s)".formatted(
                string(blocks.get(ReadingsColumn.MALO_ID), position),
                key,
                string(blocks.get(ReadingsColumn.OBIS_CODE), position),
                from(blocks.get(ReadingsColumn.FROM), position),
                version(blocks.get(ReadingsColumn.VERSION), position));
    }

    private static String string(Block block, int position)
    {
        return block == null || block.isNull(position) ? "NULL" : "'" + VARCHAR.getSlice(block, position).toStringUtf8() + "'";
    }

    private static String from(Block block, int position)
    {
        if (block == null || block.isNull(position)) {
            return "NULL";
        }
        return TieringWatermark.formatInstant(MeterstoreTypes.fromEpochMicros(MeterstoreTypes.toEpochMicros((LongTimestampWithTimeZone) TIMESTAMP_TZ_MICROS.getObject(block, position))));
    }

    private static String version(Block block, int position)
    {
        return block == null || block.isNull(position) ? "NULL" : ((Int128) VERSION.getObject(block, position)).toBigInteger().toString();
    }
}
