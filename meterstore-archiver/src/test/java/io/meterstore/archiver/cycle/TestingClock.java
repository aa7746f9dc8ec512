package io.meterstore.archiver.cycle;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicReference;

import static java.util.Objects.requireNonNull;

/** A clock the test moves by hand. */
public final class TestingClock
        implements InstantSource
{
    private final AtomicReference<Instant> now;

    public TestingClock(Instant now)
    {
        this.now = new AtomicReference<>(requireNonNull(now, "now is null"));
    }

    @Override
    public Instant instant()
    {
        return now.get();
    }

    public void set(Instant instant)
    {
        now.set(requireNonNull(instant, "instant is null"));
    }

    public void advance(Duration duration)
    {
        now.updateAndGet(instant -> instant.plus(duration));
    }
}
