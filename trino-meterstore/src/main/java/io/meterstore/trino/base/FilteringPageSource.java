package io.meterstore.trino.base;

import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.SourcePage;

/**
 * Passes a delegate's pages on, each trimmed to the positions a subclass keeps; everything else is the delegate's.
 * The page's blocks stay lazy: only the columns the subclass reads to decide are loaded.
 */
public abstract class FilteringPageSource
        extends ForwardingPageSource
{

    protected FilteringPageSource(ConnectorPageSource delegate)
    {
        super(delegate);
    }

    /** Writes the positions of {@code page} to keep, ascending, into {@code kept}; returns how many. */
    protected abstract int keep(SourcePage page, int[] kept);

    @Override
    public SourcePage getNextSourcePage()
    {
        SourcePage page = delegate().getNextSourcePage();
        if (page == null) {
            return null;
        }
        int[] kept = new int[page.getPositionCount()];
        int count = keep(page, kept);
        if (count < page.getPositionCount()) {
            page.selectPositions(kept, 0, count);
        }
        return page;
    }
}
