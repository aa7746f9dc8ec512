package io.meterstore.trino.versions;

import io.meterstore.trino.base.FilteringPageSource;
import io.meterstore.trino.cold.KeyRange;
import io.trino.spi.block.Block;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.SourcePage;

import static io.meterstore.trino.base.MeterstoreTypes.epochMicros;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * The rows of one file of a resolution split that lie in the split's part of the key space: a row group straddling
 * two parts is read by both splits, and each keeps only its own keys, so no key is resolved twice.
 */
public final class KeyRangePageSource
        extends FilteringPageSource
{
    private final KeyRange.Matcher keys;
    private final int maloIdChannel;
    private final int fromChannel;

    public KeyRangePageSource(ConnectorPageSource delegate, KeyRange keys, VersionResolution.Layout layout)
    {
        super(delegate);
        this.keys = requireNonNull(keys, "keys is null").matcher();
        this.maloIdChannel = layout.maloId();
        this.fromChannel = layout.from();
    }

    @Override
    protected int keep(SourcePage page, int[] kept)
    {
        Block maloIds = page.getBlock(maloIdChannel);
        Block froms = page.getBlock(fromChannel);
        int count = 0;
        for (int position = 0; position < page.getPositionCount(); position++) {
            if (keys.contains(VARCHAR.getSlice(maloIds, position), epochMicros(froms, position))) {
                kept[count++] = position;
            }
        }
        return count;
    }
}
