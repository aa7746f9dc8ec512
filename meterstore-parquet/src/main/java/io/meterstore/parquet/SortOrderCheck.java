package io.meterstore.parquet;

import io.airlift.slice.Slice;
import io.meterstore.core.ReadingsColumn;
import io.trino.spi.Page;
import io.trino.spi.block.Block;
import io.trino.spi.type.Int128;
import io.trino.spi.type.LongTimestampWithTimeZone;

import static io.meterstore.parquet.ReadingsParquetSchema.TIMESTAMP_TZ_MICROS;
import static io.meterstore.parquet.ReadingsParquetSchema.VERSION;
import static io.trino.spi.type.VarcharType.VARCHAR;

/**
 * Whether the rows of one file arrive in the readings sort order as Parquet and Iceberg compare it: malo_id and
 * obis_code byte-wise (code point order), then "from", then the key's other columns byte-wise (melo_id in a table keyed
 * by it, the identity columns), then version. PostgreSQL returns the primary key's order,
 * which is that order when the key columns collate as "C"; a file is only declared sorted when it was.
 */
final class SortOrderCheck
{
    private static final int MALO_ID = ReadingsColumn.MALO_ID.ordinal();
    private static final int OBIS_CODE = ReadingsColumn.OBIS_CODE.ordinal();
    private static final int FROM = ReadingsColumn.FROM.ordinal();
    private static final int VERSION_CHANNEL = ReadingsColumn.VERSION.ordinal();

    // the channels of the key's columns after malo_id, obis_code and "from", compared before version: none for the default key
    private static final Slice[] NO_KEY = new Slice[0];

    private final int[] keyChannels;
    private Slice[] lastKey;
    private boolean sorted = true;
    private boolean hasLast;
    private Slice lastMaloId;
    private Slice lastObisCode;
    private long lastFromMillis;
    private int lastFromPicos;
    private Int128 lastVersion;

    SortOrderCheck(int[] keyChannels)
    {
        this.keyChannels = keyChannels.clone();
        this.lastKey = new Slice[keyChannels.length];
    }

    boolean sorted()
    {
        return sorted;
    }

    void add(Page page)
    {
        if (!sorted || page.getPositionCount() == 0) {
            return;
        }
        Block maloIds = page.getBlock(MALO_ID);
        Block obisCodes = page.getBlock(OBIS_CODE);
        Block froms = page.getBlock(FROM);
        Block versions = page.getBlock(VERSION_CHANNEL);
        for (int position = 0; position < page.getPositionCount(); position++) {
            Slice maloId = VARCHAR.getSlice(maloIds, position);
            Slice obisCode = VARCHAR.getSlice(obisCodes, position);
            LongTimestampWithTimeZone from = (LongTimestampWithTimeZone) TIMESTAMP_TZ_MICROS.getObject(froms, position);
            Int128 version = (Int128) VERSION.getObject(versions, position);
            // the default key has no other columns: no array per row
            Slice[] key = keyChannels.length == 0 ? NO_KEY : new Slice[keyChannels.length];
            for (int index = 0; index < keyChannels.length; index++) {
                key[index] = VARCHAR.getSlice(page.getBlock(keyChannels[index]), position);
            }
            if (hasLast && compareToLast(maloId, obisCode, from, key, version) < 0) {
                sorted = false;
                return;
            }
            hasLast = true;
            lastMaloId = maloId;
            lastObisCode = obisCode;
            lastFromMillis = from.getEpochMillis();
            lastFromPicos = from.getPicosOfMilli();
            lastVersion = version;
            lastKey = key;
        }
        // the last row outlives its page: keep a copy, not a view of the page's memory
        lastMaloId = lastMaloId.copy();
        lastObisCode = lastObisCode.copy();
        for (int index = 0; index < lastKey.length; index++) {
            lastKey[index] = lastKey[index].copy();
        }
    }

    private int compareToLast(Slice maloId, Slice obisCode, LongTimestampWithTimeZone from, Slice[] key, Int128 version)
    {
        int comparison = maloId.compareTo(lastMaloId);
        if (comparison != 0) {
            return comparison;
        }
        comparison = obisCode.compareTo(lastObisCode);
        if (comparison != 0) {
            return comparison;
        }
        comparison = Long.compare(from.getEpochMillis(), lastFromMillis);
        if (comparison != 0) {
            return comparison;
        }
        comparison = Integer.compare(from.getPicosOfMilli(), lastFromPicos);
        if (comparison != 0) {
            return comparison;
        }
        for (int index = 0; index < key.length; index++) {
            comparison = key[index].compareTo(lastKey[index]);
            if (comparison != 0) {
                return comparison;
            }
        }
        return version.compareTo(lastVersion);
    }
}
