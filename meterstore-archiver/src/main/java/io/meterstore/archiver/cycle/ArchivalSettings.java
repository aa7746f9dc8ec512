package io.meterstore.archiver.cycle;

import java.time.Duration;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * How a table is archived beyond its step: how long a window must be closed before it moves (the settlement lag, which
 * must exceed the market's correction window), how long an archived partition stays readable by name (the reader grace,
 * above the longest query), and how many rows one PostgreSQL round trip fetches (which bounds memory).
 */
public record ArchivalSettings(Duration settlementLag, Duration readerGrace, int chunkRows)
{
    public static final Duration DEFAULT_SETTLEMENT_LAG = Duration.ofDays(7);
    public static final Duration DEFAULT_READER_GRACE = Duration.ofHours(1);
    public static final int DEFAULT_CHUNK_ROWS = 10_000;
    public static final ArchivalSettings DEFAULTS = new ArchivalSettings(DEFAULT_SETTLEMENT_LAG, DEFAULT_READER_GRACE, DEFAULT_CHUNK_ROWS);

    public ArchivalSettings
    {
        requireNonNull(settlementLag, "settlementLag is null");
        requireNonNull(readerGrace, "readerGrace is null");
        checkArgument(settlementLag.isPositive(), "Settlement lag must be positive");
        checkArgument(!readerGrace.isNegative(), "Reader grace must not be negative");
        checkArgument(chunkRows > 0, "Chunk rows must be positive");
    }
}
