package io.meterstore.archiver.cycle;

import com.google.common.base.Ticker;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

final class TestArchivalProgress
{
    private static final ArchivalWindow WINDOW = new ArchivalWindow(Instant.parse("2024-03-05T00:00:00Z"), Instant.parse("2024-03-06T00:00:00Z"), Optional.empty());

    @Test
    void testLogsOncePerInterval()
    {
        AtomicLong nanos = new AtomicLong();
        Ticker ticker = new Ticker()
        {
            @Override
            public long read()
            {
                return nanos.get();
            }
        };
        List<String> lines = new ArrayList<>();
        ArchivalProgress progress = new ArchivalProgress("metering.readings", WINDOW, Duration.ofSeconds(30), ticker, lines::add);

        progress.rowsWritten(4096);
        nanos.addAndGet(TimeUnit.SECONDS.toNanos(10));
        progress.rowsWritten(4096);
        assertThat(lines).isEmpty();

        nanos.addAndGet(TimeUnit.SECONDS.toNanos(20));
        progress.rowsWritten(3808);
        assertThat(lines).containsExactly("Archiving window [2024-03-05T00:00:00Z, 2024-03-06T00:00:00Z) of table 'metering.readings': 12000 rows so far, 400 rows/s");

        // the next line comes a full interval after the last one, not after the start
        nanos.addAndGet(TimeUnit.SECONDS.toNanos(29));
        progress.rowsWritten(18_000);
        assertThat(lines).hasSize(1);
        nanos.addAndGet(TimeUnit.SECONDS.toNanos(1));
        progress.rowsWritten(0);
        assertThat(lines).hasSize(2).last().isEqualTo("Archiving window [2024-03-05T00:00:00Z, 2024-03-06T00:00:00Z) of table 'metering.readings': 30000 rows so far, 500 rows/s");
        assertThat(progress.rows()).isEqualTo(30_000);
        assertThat(progress.describe()).isEqualTo(lines.getLast());
    }
}
