package io.meterstore.trino.base;

import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.SourcePage;

import static com.google.common.base.Preconditions.checkArgument;

/** Stops a split after a pushed LIMIT's rows and closes its reader, so the rest of the split is never read. */
public final class LimitingPageSource
        extends FilteringPageSource
{
    private long remaining;

    public LimitingPageSource(ConnectorPageSource delegate, long limit)
    {
        super(delegate);
        checkArgument(limit >= 0, "limit is negative: %s", limit);
        this.remaining = limit;
    }

    @Override
    public SourcePage getNextSourcePage()
    {
        // the reader stays open until Trino closes this source: the last page's blocks load lazily from it
        if (remaining == 0) {
            return null;
        }
        return super.getNextSourcePage();
    }

    @Override
    protected int keep(SourcePage page, int[] kept)
    {
        int positions = (int) Math.min(remaining, page.getPositionCount());
        for (int position = 0; position < positions; position++) {
            kept[position] = position;
        }
        remaining -= positions;
        return positions;
    }

    @Override
    public boolean isFinished()
    {
        return remaining == 0 || super.isFinished();
    }
}
