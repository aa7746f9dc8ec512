package io.meterstore.parquet;

import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.ResolutionRule;
import io.trino.spi.Page;
import io.trino.spi.block.Block;
import io.trino.spi.block.Fixed12Block;
import io.trino.spi.block.Int128ArrayBlock;
import io.trino.spi.block.VariableWidthBlock;

import static io.trino.spi.type.DateTimeEncoding.unpackMillisUtc;

/**
 * Reads the columns that decide a key's winner from pages of every readings column in storage order, in place: no
 * object per value. Rows are compared with {@link ResolutionRule}, never by a rule of their own.
 */
final class VersionColumns
{
    private static final int MALO_ID = ReadingsColumn.MALO_ID.ordinal();
    private static final int OBIS_CODE = ReadingsColumn.OBIS_CODE.ordinal();
    private static final int FROM = ReadingsColumn.FROM.ordinal();
    private static final int VERSION = ReadingsColumn.VERSION.ordinal();
    private static final int VERSION_SCOPE = ReadingsColumn.VERSION_SCOPE.ordinal();
    private static final int RECORDED_AT = ReadingsColumn.RECORDED_AT.ordinal();

    private VersionColumns() {}

    /**
     * Whether two rows have the same merge key (malo_id, obis_code, "from", and the key's other columns at
     * {@code keyChannels}: melo_id in a table keyed by it, the identity columns; none for the default key).
     */
    static boolean sameMergeKey(int[] keyChannels, Page left, int leftPosition, Page right, int rightPosition)
    {
        if (!(epochMicros(left.getBlock(FROM), leftPosition) == epochMicros(right.getBlock(FROM), rightPosition)
                && sameBytes(left.getBlock(MALO_ID), leftPosition, right.getBlock(MALO_ID), rightPosition)
                && sameBytes(left.getBlock(OBIS_CODE), leftPosition, right.getBlock(OBIS_CODE), rightPosition))) {
            return false;
        }
        for (int channel : keyChannels) {
            if (!sameBytes(left.getBlock(channel), leftPosition, right.getBlock(channel), rightPosition)) {
                return false;
            }
        }
        return true;
    }

    /**
     * The order of the cold tier's files, (malo_id, obis_code, "from", the key's other columns at {@code keyChannels},
     * version): negative when the left row sorts first. Strings compare as their UTF-8 bytes, unsigned, as Parquet's
     * statistics and the archiver's streams order them.
     */
    static int compareSortKey(int[] keyChannels, Page left, int leftPosition, Page right, int rightPosition)
    {
        int order = compareBytes(left.getBlock(MALO_ID), leftPosition, right.getBlock(MALO_ID), rightPosition);
        if (order != 0) {
            return order;
        }
        order = compareBytes(left.getBlock(OBIS_CODE), leftPosition, right.getBlock(OBIS_CODE), rightPosition);
        if (order != 0) {
            return order;
        }
        order = Long.compare(epochMicros(left.getBlock(FROM), leftPosition), epochMicros(right.getBlock(FROM), rightPosition));
        if (order != 0) {
            return order;
        }
        for (int channel : keyChannels) {
            order = compareBytes(left.getBlock(channel), leftPosition, right.getBlock(channel), rightPosition);
            if (order != 0) {
                return order;
            }
        }
        Block leftVersions = left.getBlock(VERSION);
        Block rightVersions = right.getBlock(VERSION);
        Int128ArrayBlock leftValues = (Int128ArrayBlock) leftVersions.getUnderlyingValueBlock();
        Int128ArrayBlock rightValues = (Int128ArrayBlock) rightVersions.getUnderlyingValueBlock();
        int leftValue = leftVersions.getUnderlyingValuePosition(leftPosition);
        int rightValue = rightVersions.getUnderlyingValuePosition(rightPosition);
        order = Long.compare(leftValues.getInt128High(leftValue), rightValues.getInt128High(rightValue));
        if (order != 0) {
            return order;
        }
        return Long.compareUnsigned(leftValues.getInt128Low(leftValue), rightValues.getInt128Low(rightValue));
    }

    static boolean sameVersionScope(Page left, int leftPosition, Page right, int rightPosition)
    {
        return sameBytes(left.getBlock(VERSION_SCOPE), leftPosition, right.getBlock(VERSION_SCOPE), rightPosition);
    }

    /** As {@link ResolutionRule#compare}: positive when the left row beats the right one. */
    static int compareVersions(Page left, int leftPosition, Page right, int rightPosition)
    {
        Block leftVersions = left.getBlock(VERSION);
        Block rightVersions = right.getBlock(VERSION);
        Int128ArrayBlock leftValues = (Int128ArrayBlock) leftVersions.getUnderlyingValueBlock();
        Int128ArrayBlock rightValues = (Int128ArrayBlock) rightVersions.getUnderlyingValueBlock();
        int leftValue = leftVersions.getUnderlyingValuePosition(leftPosition);
        int rightValue = rightVersions.getUnderlyingValuePosition(rightPosition);
        return ResolutionRule.compare(
                leftValues.getInt128High(leftValue), leftValues.getInt128Low(leftValue), epochMicros(left.getBlock(RECORDED_AT), leftPosition),
                rightValues.getInt128High(rightValue), rightValues.getInt128Low(rightValue), epochMicros(right.getBlock(RECORDED_AT), rightPosition));
    }

    private static long epochMicros(Block block, int position)
    {
        Fixed12Block values = (Fixed12Block) block.getUnderlyingValueBlock();
        int valuePosition = block.getUnderlyingValuePosition(position);
        return unpackMillisUtc(values.getFixed12First(valuePosition)) * 1_000 + values.getFixed12Second(valuePosition) / 1_000_000;
    }

    private static int compareBytes(Block left, int leftPosition, Block right, int rightPosition)
    {
        VariableWidthBlock leftValues = (VariableWidthBlock) left.getUnderlyingValueBlock();
        VariableWidthBlock rightValues = (VariableWidthBlock) right.getUnderlyingValueBlock();
        int leftValue = left.getUnderlyingValuePosition(leftPosition);
        int rightValue = right.getUnderlyingValuePosition(rightPosition);
        return leftValues.getRawSlice().compareTo(leftValues.getRawSliceOffset(leftValue), leftValues.getSliceLength(leftValue),
                rightValues.getRawSlice(), rightValues.getRawSliceOffset(rightValue), rightValues.getSliceLength(rightValue));
    }

    private static boolean sameBytes(Block left, int leftPosition, Block right, int rightPosition)
    {
        VariableWidthBlock leftValues = (VariableWidthBlock) left.getUnderlyingValueBlock();
        VariableWidthBlock rightValues = (VariableWidthBlock) right.getUnderlyingValueBlock();
        int leftValue = left.getUnderlyingValuePosition(leftPosition);
        int rightValue = right.getUnderlyingValuePosition(rightPosition);
        return leftValues.getRawSlice().equals(leftValues.getRawSliceOffset(leftValue), leftValues.getSliceLength(leftValue),
                rightValues.getRawSlice(), rightValues.getRawSliceOffset(rightValue), rightValues.getSliceLength(rightValue));
    }
}
