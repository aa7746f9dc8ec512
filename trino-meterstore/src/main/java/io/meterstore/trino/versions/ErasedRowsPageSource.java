package io.meterstore.trino.versions;

import com.google.common.collect.ImmutableList;
import io.meterstore.core.ErasureKey;
import io.meterstore.trino.base.FilteringPageSource;
import io.meterstore.trino.base.MeterstoreTypes;
import io.trino.spi.block.Block;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.SourcePage;

import java.util.List;
import java.util.Optional;
import java.util.stream.IntStream;

import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * Drops the rows of erased readings from a read of an older snapshot, whose files still hold them until the archiver
 * expires it. A row's malo_id is compared by its HMAC under the catalog's key (computed once per run of equal
 * malo_ids, which the sorted files keep together); every version of an erased key goes, so it may run before
 * resolution. Reads the layout's key columns and, when the query did not ask for them, passes on only its own.
 */
public final class ErasedRowsPageSource
        extends FilteringPageSource
{
    private final List<ErasedScope> erased;
    private final ErasureKey key;
    private final VersionResolution.Layout layout;
    private final Optional<int[]> outputChannels;
    private String lastMaloId = "";
    private String lastScope = "";

    /**
     * @param project whether to pass on only the layout's output channels (the source is not resolved after this)
     */
    public ErasedRowsPageSource(ConnectorPageSource delegate, List<ErasedScope> erased, ErasureKey key, VersionResolution.Layout layout, boolean project)
    {
        super(delegate);
        this.erased = ImmutableList.copyOf(erased);
        this.key = requireNonNull(key, "key is null");
        this.layout = requireNonNull(layout, "layout is null");
        this.outputChannels = project ? Optional.of(IntStream.range(0, layout.outputChannels()).toArray()) : Optional.empty();
    }

    @Override
    public SourcePage getNextSourcePage()
    {
        SourcePage page = super.getNextSourcePage();
        if (page == null || outputChannels.isEmpty()) {
            return page;
        }
        return SourcePage.create(page.getColumns(outputChannels.get()));
    }

    @Override
    protected int keep(SourcePage page, int[] kept)
    {
        Block maloIds = page.getBlock(layout.maloId());
        Block obisCodes = page.getBlock(layout.obisCode());
        Block from = page.getBlock(layout.from());
        int count = 0;
        for (int position = 0; position < page.getPositionCount(); position++) {
            String maloId = VARCHAR.getSlice(maloIds, position).toStringUtf8();
            if (!maloId.equals(lastMaloId)) {
                lastMaloId = maloId;
                lastScope = key.scope(maloId);
            }
            String obisCode = VARCHAR.getSlice(obisCodes, position).toStringUtf8();
            long fromMicros = MeterstoreTypes.epochMicros(from, position);
            if (erased.stream().noneMatch(scope -> scope.matches(lastScope, obisCode, fromMicros))) {
                kept[count++] = position;
            }
        }
        return count;
    }
}
