package io.meterstore.benchmark;

import io.meterstore.archiver.maintenance.MaintenanceClock;

import java.time.Instant;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.concurrent.ConcurrentSkipListMap;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.base.Preconditions.checkState;
import static java.util.Objects.requireNonNull;

/**
 * The soak's one clock: the simulated time the run moves to each evening, and, for the stamps the wall clock puts on
 * what the run writes (Iceberg's snapshots, the storage's files, an erasure's statement), the simulated time in force
 * when the stamp was made. So snapshot expiry, erasure completion, orphan removal and compaction judge ages in
 * simulated days as a deployment's maintenance judges them in real ones, where every stamp reads as itself.
 */
final class SoakClock
        implements MaintenanceClock
{
    // the wall clock's instant of each move, and the simulated time from then on
    private final NavigableMap<Instant, Instant> moves = new ConcurrentSkipListMap<>();
    private volatile Instant now;

    /** Moves the simulated time to {@code simulated}, never back. */
    void set(Instant simulated)
    {
        requireNonNull(simulated, "simulated is null");
        checkArgument(now == null || !simulated.isBefore(now), "The soak's clock moves forward only: %s is before %s", simulated, now);
        now = simulated;
        moves.put(Instant.now(), simulated);
    }

    @Override
    public Instant instant()
    {
        checkState(now != null, "The soak's clock is not set before the first simulated evening");
        return now;
    }

    /** The simulated time in force at {@code wallClockStamp}; before the first move, the first simulated time. */
    @Override
    public Instant stampTime(Instant wallClockStamp)
    {
        return Optional.ofNullable(moves.floorEntry(wallClockStamp))
                .or(() -> Optional.ofNullable(moves.firstEntry()))
                .map(Map.Entry::getValue)
                .orElseThrow(() -> new IllegalStateException("The soak's clock is not set before the first simulated evening"));
    }
}
