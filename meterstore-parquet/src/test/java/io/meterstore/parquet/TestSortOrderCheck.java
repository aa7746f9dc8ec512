package io.meterstore.parquet;

import io.airlift.slice.Slices;
import io.meterstore.core.ReadingsColumn;
import io.trino.spi.Page;
import io.trino.spi.block.Block;
import io.trino.spi.block.BlockBuilder;
import io.trino.spi.type.Int128;
import io.trino.spi.type.LongTimestampWithTimeZone;
import io.trino.spi.type.Type;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.meterstore.parquet.ReadingsParquetSchema.TIMESTAMP_TZ_MICROS;
import static io.meterstore.parquet.ReadingsParquetSchema.VERSION;
import static io.trino.spi.type.TimeZoneKey.UTC_KEY;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static org.assertj.core.api.Assertions.assertThat;

final class TestSortOrderCheck
{
    private record Key(String maloId, String obisCode, long fromMillis, long version) {}

    @Test
    void testKeyOrderIsSorted()
    {
        SortOrderCheck check = new SortOrderCheck(new int[0]);
        check.add(page(
                new Key("51000000001", "1-1:1.29.0", 1_000, 1),
                new Key("51000000001", "1-1:1.29.0", 1_000, 2),
                new Key("51000000001", "1-1:1.29.0", 2_000, 1),
                new Key("51000000001", "1-1:2.29.0", 0, 1)));
        // across pages too
        check.add(page(
                new Key("51000000002", "1-1:1.29.0", 0, 1),
                new Key("51000000002", "1-1:1.29.0", 0, 1)));
        assertThat(check.sorted()).isTrue();
    }

    @Test
    void testStringsCompareByteWise()
    {
        // a collation that ignores punctuation would put "1-1:1.8.0" after "1-1:1.29.0"; byte order does not
        SortOrderCheck check = new SortOrderCheck(new int[0]);
        check.add(page(new Key("51000000001", "1-1:1.8.0", 0, 1), new Key("51000000001", "1-1:1.29.0", 0, 1)));
        assertThat(check.sorted()).isFalse();
    }

    @Test
    void testDescendingAcrossPagesIsUnsorted()
    {
        SortOrderCheck check = new SortOrderCheck(new int[0]);
        check.add(page(new Key("51000000002", "1-1:1.29.0", 0, 1)));
        check.add(page(new Key("51000000001", "1-1:1.29.0", 0, 1)));
        assertThat(check.sorted()).isFalse();
    }

    @Test
    void testLowerVersionLaterIsUnsorted()
    {
        SortOrderCheck check = new SortOrderCheck(new int[0]);
        check.add(page(new Key("51000000001", "1-1:1.29.0", 0, 2), new Key("51000000001", "1-1:1.29.0", 0, 1)));
        assertThat(check.sorted()).isFalse();
    }

    private static Page page(Key... keys)
    {
        List<Type> types = ReadingsParquetSchema.trinoTypes();
        Block[] blocks = new Block[types.size()];
        for (int channel = 0; channel < types.size(); channel++) {
            BlockBuilder builder = types.get(channel).createBlockBuilder(null, keys.length);
            ReadingsColumn column = ReadingsColumn.values()[channel];
            for (Key key : keys) {
                switch (column) {
                    case MALO_ID -> VARCHAR.writeSlice(builder, Slices.utf8Slice(key.maloId()));
                    case OBIS_CODE -> VARCHAR.writeSlice(builder, Slices.utf8Slice(key.obisCode()));
                    case FROM -> TIMESTAMP_TZ_MICROS.writeObject(builder, LongTimestampWithTimeZone.fromEpochMillisAndFraction(key.fromMillis(), 0, UTC_KEY));
                    case VERSION -> VERSION.writeObject(builder, Int128.valueOf(key.version()));
                    default -> builder.appendNull();
                }
            }
            blocks[channel] = builder.build();
        }
        return new Page(keys.length, blocks);
    }
}
