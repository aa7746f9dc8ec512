package io.meterstore.archiver.cycle;

import com.google.common.base.Ticker;
import io.airlift.log.Logger;

import java.time.Duration;
import java.util.function.Consumer;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * Progress of one window being streamed into Parquet, for the log: a window of a day can take minutes, and an operator
 * watching it should see rows moving. The cycle reports every page it writes; a line is logged at most once per
 * interval, so the cost per page is one addition and one clock read.
 * <p>
 * Not thread-safe: one cycle, one thread.
 */
public final class ArchivalProgress
{
    public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(30);
    private static final Logger log = Logger.get(ArchivalProgress.class);

    private final String table;
    private final ArchivalWindow window;
    private final long intervalNanos;
    private final Ticker ticker;
    private final Consumer<String> sink;
    private final long startNanos;

    private long rows;
    private long lastReportNanos;

    public ArchivalProgress(String table, ArchivalWindow window, Duration interval, Ticker ticker, Consumer<String> sink)
    {
        this.table = requireNonNull(table, "table is null");
        this.window = requireNonNull(window, "window is null");
        requireNonNull(interval, "interval is null");
        checkArgument(interval.isPositive(), "interval must be positive");
        this.intervalNanos = interval.toNanos();
        this.ticker = requireNonNull(ticker, "ticker is null");
        this.sink = requireNonNull(sink, "sink is null");
        this.startNanos = ticker.read();
        this.lastReportNanos = startNanos;
    }

    /** Logs at INFO every 30 seconds of the window's streaming. */
    public static ArchivalProgress start(String table, ArchivalWindow window)
    {
        return new ArchivalProgress(table, window, DEFAULT_INTERVAL, Ticker.systemTicker(), log::info);
    }

    /** Counts {@code count} more rows written; logs a line if the interval has passed since the last one. */
    public void rowsWritten(long count)
    {
        checkArgument(count >= 0, "count is negative");
        rows += count;
        long now = ticker.read();
        if (now - lastReportNanos >= intervalNanos) {
            lastReportNanos = now;
            sink.accept(describe(now));
        }
    }

    public long rows()
    {
        return rows;
    }

    /** {@code Archiving window [...) of table 't': 1234567 rows so far, 85000 rows/s} */
    public String describe()
    {
        return describe(ticker.read());
    }

    private String describe(long now)
    {
        double seconds = (now - startNanos) / 1e9;
        long rate = seconds > 0 ? Math.round(rows / seconds) : 0;
        return "Archiving window %s of table '%s': %s rows so far, %s rows/s".formatted(window, table, rows, rate);
    }
}
