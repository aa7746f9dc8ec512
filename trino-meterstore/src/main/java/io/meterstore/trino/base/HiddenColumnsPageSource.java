package io.meterstore.trino.base;

import io.meterstore.core.Tier;
import io.trino.spi.Page;
import io.trino.spi.block.Block;
import io.trino.spi.block.RunLengthEncodedBlock;
import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.SourcePage;

import java.util.List;
import java.util.function.ObjLongConsumer;

import static io.trino.spi.type.TypeUtils.writeNativeValue;
import static java.util.Objects.requireNonNull;

/**
 * A split's pages with the query's hidden columns put in their places: the tier's page source reads the stored
 * columns alone, and each hidden column is one value repeated, since a split reads one tier at the pinned W.
 */
public final class HiddenColumnsPageSource
        extends ForwardingPageSource
{
    // per output channel: the delegate's channel, or -1 for a hidden column
    private final int[] delegateChannels;
    // per output channel: the hidden column's value, one position; null for a stored column
    private final Block[] values;

    /**
     * @param delegate reads {@code columns} without the hidden ones, in their order
     * @param columns the query's columns, stored and hidden
     */
    public HiddenColumnsPageSource(ConnectorPageSource delegate, List<ColumnHandle> columns, Tier tier, long watermarkEpochMicros)
    {
        super(delegate);
        requireNonNull(tier, "tier is null");
        this.delegateChannels = new int[columns.size()];
        this.values = new Block[columns.size()];
        int delegateChannel = 0;
        for (int channel = 0; channel < columns.size(); channel++) {
            if (columns.get(channel) instanceof HiddenColumnHandle(HiddenColumn hidden)) {
                delegateChannels[channel] = -1;
                values[channel] = writeNativeValue(hidden.type(), hidden.value(tier, watermarkEpochMicros));
            }
            else {
                delegateChannels[channel] = delegateChannel;
                delegateChannel++;
            }
        }
    }

    /** The stored columns among {@code columns}: what the tier's page source reads. */
    public static List<MeterstoreColumnHandle> storedColumns(List<ColumnHandle> columns)
    {
        return columns.stream()
                .filter(MeterstoreColumnHandle.class::isInstance)
                .map(MeterstoreColumnHandle.class::cast)
                .toList();
    }

    /** Whether {@code columns} name a hidden column, so that the tier's pages need one put in. */
    public static boolean hasHiddenColumns(List<ColumnHandle> columns)
    {
        return columns.stream().anyMatch(HiddenColumnHandle.class::isInstance);
    }

    @Override
    public SourcePage getNextSourcePage()
    {
        SourcePage page = delegate().getNextSourcePage();
        if (page == null) {
            return null;
        }
        return new HiddenColumnsSourcePage(page);
    }

    private final class HiddenColumnsSourcePage
            implements SourcePage
    {
        private final SourcePage page;

        private HiddenColumnsSourcePage(SourcePage page)
        {
            this.page = page;
        }

        @Override
        public int getPositionCount()
        {
            return page.getPositionCount();
        }

        @Override
        public long getSizeInBytes()
        {
            return page.getSizeInBytes();
        }

        @Override
        public long getRetainedSizeInBytes()
        {
            long retained = page.getRetainedSizeInBytes();
            for (Block value : values) {
                if (value != null) {
                    retained += value.getRetainedSizeInBytes();
                }
            }
            return retained;
        }

        @Override
        public void retainedBytesForEachPart(ObjLongConsumer<Object> consumer)
        {
            page.retainedBytesForEachPart(consumer);
            for (Block value : values) {
                if (value != null) {
                    consumer.accept(value, value.getRetainedSizeInBytes());
                }
            }
        }

        @Override
        public int getChannelCount()
        {
            return delegateChannels.length;
        }

        @Override
        public Block getBlock(int channel)
        {
            if (delegateChannels[channel] < 0) {
                return RunLengthEncodedBlock.create(values[channel], page.getPositionCount());
            }
            return page.getBlock(delegateChannels[channel]);
        }

        @Override
        public Page getPage()
        {
            Block[] blocks = new Block[delegateChannels.length];
            for (int channel = 0; channel < blocks.length; channel++) {
                blocks[channel] = getBlock(channel);
            }
            return new Page(page.getPositionCount(), blocks);
        }

        @Override
        public void selectPositions(int[] positions, int offset, int size)
        {
            page.selectPositions(positions, offset, size);
        }
    }
}
