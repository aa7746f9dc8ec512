package io.meterstore.archiver.maintenance;

import java.time.Instant;
import java.time.InstantSource;

import static java.util.Objects.requireNonNull;

/**
 * The archiver's time as maintenance reads it: now, and when a wall-clock stamp that MeterStore does not make happened
 * on this clock. Iceberg stamps each snapshot at its commit from the wall clock (its API takes no clock), the
 * connector an erasure's statement, the storage each file at its write; snapshot expiry, erasure completion, orphan
 * removal and compaction judge ages by those stamps. A deployment's clock is the wall clock, on which a stamp reads as
 * itself; a clock that runs a year in an hour (the soak's) reads a stamp as the time it showed when the stamp was made.
 */
public interface MaintenanceClock
        extends InstantSource
{
    /** When {@code wallClockStamp} happened on this clock. */
    Instant stampTime(Instant wallClockStamp);

    /** {@code clock} itself if it reads stamps; otherwise {@code clock}, on which every stamp reads as itself. */
    static MaintenanceClock of(InstantSource clock)
    {
        requireNonNull(clock, "clock is null");
        if (clock instanceof MaintenanceClock maintenanceClock) {
            return maintenanceClock;
        }
        return new MaintenanceClock()
        {
            @Override
            public Instant instant()
            {
                return clock.instant();
            }

            @Override
            public Instant stampTime(Instant wallClockStamp)
            {
                return wallClockStamp;
            }
        };
    }

    /** Fixed at {@code now}, reading every stamp as itself: a command run at one instant of the wall clock. */
    static MaintenanceClock fixed(Instant now)
    {
        return of(InstantSource.fixed(now));
    }
}
