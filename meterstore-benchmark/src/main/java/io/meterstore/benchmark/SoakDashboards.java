package io.meterstore.benchmark;

import io.meterstore.core.Reading;
import io.meterstore.testing.ReadingsOracle.Totals;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;

import static io.meterstore.testing.ReadingsInserts.timestamp;
import static java.util.Objects.requireNonNull;

/**
 * A dashboard beside the day's deliveries: on a Trino connection of its own, one meter's last week from {@code readings}
 * (count and sum), one light query after another with a pause between them, until the deliveries end. The week before
 * the delivered day is written by nobody while the deliveries run, so each answer must be the oracle's, taken before
 * they started; a query that fails or answers otherwise is the first difference the run reports.
 */
final class SoakDashboards
{
    private static final Duration PAUSE = Duration.ofMillis(250);

    private final Connection trino;
    private final Map<String, Totals> expected;
    private final Instant lower;
    private final Instant upper;
    private final Random random;
    private final Thread thread;
    private final AtomicReference<Optional<String>> failure = new AtomicReference<>(Optional.empty());
    private volatile boolean stopped;
    private int queries;

    /** Starts querying the meters of {@code expected} over [lower, upper), whose totals the oracle expects. */
    SoakDashboards(Connection trino, Map<String, Totals> expected, Instant lower, Instant upper, long seed)
    {
        this.trino = requireNonNull(trino, "trino is null");
        this.expected = Map.copyOf(expected);
        this.lower = requireNonNull(lower, "lower is null");
        this.upper = requireNonNull(upper, "upper is null");
        this.random = new Random(seed);
        this.thread = Thread.ofPlatform().daemon().name("soak-dashboards").start(this::query);
    }

    private void query()
    {
        List<String> meters = new ArrayList<>(expected.keySet());
        if (meters.isEmpty()) {
            return;
        }
        // at least one query a day, however short its deliveries
        do {
            String meter = meters.get(random.nextInt(meters.size()));
            String sql = "SELECT count(*), sum(value) FROM readings WHERE malo_id = '%s' AND \"from\" >= %s AND \"from\" < %s".formatted(meter, timestamp(lower), timestamp(upper));
            try (Statement statement = trino.createStatement(); ResultSet result = statement.executeQuery(sql)) {
                result.next();
                Totals actual = new Totals(result.getLong(1), Optional.ofNullable(result.getBigDecimal(2)).orElse(Totals.EMPTY.sum()).setScale(Reading.VALUE_SCALE));
                queries++;
                if (!actual.equals(expected.get(meter))) {
                    failure.set(Optional.of("dashboard: meter %s from %s to %s: expected %s, actual %s".formatted(meter, lower, upper, expected.get(meter), actual)));
                    return;
                }
                Thread.sleep(PAUSE);
            }
            catch (SQLException e) {
                failure.set(Optional.of("dashboard: meter %s from %s to %s failed: %s".formatted(meter, lower, upper, e.getMessage())));
                return;
            }
            catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        while (!stopped);
    }

    /** Stops querying (the connection stays open); the queries answered, or the first failure or difference. */
    int stop()
            throws InterruptedException
    {
        stopped = true;
        thread.join();
        failure.get().ifPresent(message -> {
            throw new SoakRun.DivergenceException(message);
        });
        return queries;
    }
}
