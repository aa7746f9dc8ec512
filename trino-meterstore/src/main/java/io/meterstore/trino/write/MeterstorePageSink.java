package io.meterstore.trino.write;

import io.airlift.slice.Slice;
import io.meterstore.core.InvalidReadingException;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.trino.MeterstoreColumnHandle;
import io.meterstore.trino.MeterstoreConfig;
import io.meterstore.trino.MeterstoreTypes;
import io.trino.spi.Page;
import io.trino.spi.TrinoException;
import io.trino.spi.block.Block;
import io.trino.spi.connector.ConnectorPageSink;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static io.airlift.units.Duration.succinctDuration;
import static io.meterstore.trino.MeterstoreErrorCode.METERSTORE_INVALID_READING;
import static java.util.Objects.requireNonNull;
import static java.util.concurrent.TimeUnit.MILLISECONDS;

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
    private final Instant latestRecordedAt;
    private final List<Reading> readings = new ArrayList<>();
    private long memoryUsage;

    public MeterstorePageSink(MeterstoreInsertTableHandle handle)
    {
        this.handle = requireNonNull(handle, "handle is null");
        this.columns = handle.columns().stream().map(MeterstoreColumnHandle::column).toList();
        this.statementStart = MeterstoreTypes.fromEpochMicros(handle.statementStartEpochMicros());
        this.latestRecordedAt = MeterstoreTypes.fromEpochMicros(handle.latestRecordedAtEpochMicros());
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
        Reading reading;
        try {
            reading = ReadingsPages.read(blocks, position, statementStart).validate();
        }
        catch (InvalidReadingException e) {
            throw new TrinoException(METERSTORE_INVALID_READING, "Row %s of the INSERT into '%s' is invalid: %s; nothing was written"
                    .formatted(RowDescription.describe(blocks, position), handle.schemaTableName(), e.getMessage()), e);
        }
        // a version recorded in the future would be invisible to "as known at" until then, and AS OF reruns would change
        if (reading.recordedAt().isAfter(latestRecordedAt)) {
            throw new TrinoException(METERSTORE_INVALID_READING, ("Row %s of the INSERT into '%s' is invalid: recorded_at %s lies after the statement's start %s plus the tolerated clock skew of %s ('%s'): "
                    + "leave recorded_at NULL to record the version at the statement's start, or fix the sending system's clock; nothing was written")
                    .formatted(RowDescription.describe(blocks, position), handle.schemaTableName(), reading.recordedAt(), statementStart,
                            succinctDuration(Duration.between(statementStart, latestRecordedAt).toMillis(), MILLISECONDS), MeterstoreConfig.MAX_CLOCK_SKEW_PROPERTY));
        }
        return reading;
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
