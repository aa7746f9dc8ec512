package io.meterstore.trino.write;

import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.connector.ColumnMetadata;

import static io.trino.spi.type.BigintType.BIGINT;

/**
 * The row id Trino asks for while it plans a DELETE. MeterStore never hands out row ids: an erasure is executed whole
 * by {@code executeDelete}, and a DELETE that would need them is refused by {@code beginMerge}, so no split ever
 * reads this column.
 */
public record MergeRowIdHandle()
        implements ColumnHandle
{
    public ColumnMetadata toColumnMetadata()
    {
        return ColumnMetadata.builder().setName("$merge_row_id").setType(BIGINT).setHidden(true).build();
    }
}
