package io.meterstore.trino.write;

import io.airlift.slice.Slice;
import io.meterstore.core.InvalidReadingException;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.trino.MeterstoreColumnHandle;
import io.meterstore.trino.MeterstoreTypes;
import io.trino.spi.Page;
import io.trino.spi.TrinoException;
import io.trino.spi.block.Block;
import io.trino.spi.connector.ConnectorPageSink;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_INVALID_READING;
import static java.util.Objects.requireNonNull;

/**
 * Validates every row it receives and hands the rows to the coordinator as its fragment. It writes nothing: one bad
 * row anywhere must fail the whole statement before either tier changes, and only finishInsert, which runs once,
 * sees every writer's rows.
 */
public final class MeterstorePageSink
        implements ConnectorPageSink
{
    private final MeterstoreInsertTableHandle handle;
    private final List<ReadingsColumn> columns;
    private final Instant statementStart;
    private final List<Reading> readings = new ArrayList<>();
    private long memoryUsage;

    public MeterstorePageSink(MeterstoreInsertTableHandle handle)
    {
        this.handle = requireNonNull(handle, "handle is null");
        this.columns = handle.columns().stream().map(MeterstoreColumnHandle::column).toList();
        this.statementStart = MeterstoreTypes.fromEpochMicros(handle.statementStartEpochMicros());
    }

    @Override
    public CompletableFuture<?> appendPage(Page page)
    {
        Map<ReadingsColumn, Block> blocks = ReadingsPages.blocks(columns, page::getBlock);
        for (int position = 0; position < page.getPositionCount(); position++) {
            readings.add(validReading(blocks, position));
        }
        memoryUsage += page.getSizeInBytes();
        return NOT_BLOCKED;
    }

    private Reading validReading(Map<ReadingsColumn, Block> blocks, int position)
    {
        try {
            return ReadingsPages.read(blocks, position, statementStart).validate();
        }
        catch (InvalidReadingException e) {
            throw new TrinoException(METERSTORE_INVALID_READING, "Row %s of the INSERT into '%s' is invalid: %s; nothing was written"
                    .formatted(RowDescription.describe(blocks, position), handle.schemaTableName(), e.getMessage()), e);
        }
    }

    @Override
    public long getMemoryUsage()
    {
        return memoryUsage;
    }

    @Override
    public CompletableFuture<Collection<Slice>> finish()
    {
        return CompletableFuture.completedFuture(List.of(ReadingsCodec.encode(readings)));
    }

    @Override
    public void abort()
    {
        // nothing was written
        readings.clear();
    }
}
