package io.meterstore.archiver.service;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import com.google.inject.Inject;
import io.airlift.bootstrap.LifeCycleManager;
import io.airlift.log.Logger;
import io.airlift.units.Duration;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeoutException;

import static com.google.common.util.concurrent.Uninterruptibles.sleepUninterruptibly;
import static io.airlift.concurrent.Threads.daemonThreadsNamed;
import static java.lang.Thread.currentThread;
import static java.util.Objects.requireNonNull;
import static java.util.concurrent.Executors.newSingleThreadExecutor;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;

/**
 * A shutdown asked for over HTTP, as Trino's {@code GracefulShutdownHandler} does it: drain the scheduler (the cycles
 * in flight finish their step, no new one starts), stop the life cycle within a bounded time, then end the process.
 * A signal takes the same path through the life cycle's shutdown hook, which drains the scheduler in its
 * {@code @PreDestroy}.
 */
public final class ShutdownHandler
{
    private static final Logger log = Logger.get(ShutdownHandler.class);
    private static final Duration LIFECYCLE_STOP_TIMEOUT = new Duration(30, SECONDS);
    private static final Duration ANSWER_GRACE = new Duration(1, SECONDS);

    private final ExecutorService shutdownExecutor = newSingleThreadExecutor(daemonThreadsNamed("shutdown-handler-%s"));
    private final ExecutorService lifeCycleStopper = newSingleThreadExecutor(daemonThreadsNamed("lifecycle-stopper-%s"));
    private final ArchiverScheduler scheduler;
    private final LifeCycleManager lifeCycleManager;
    private final ShutdownAction shutdownAction;

    @GuardedBy("this")
    private boolean shutdownRequested;

    @Inject
    public ShutdownHandler(ArchiverScheduler scheduler, LifeCycleManager lifeCycleManager, ShutdownAction shutdownAction)
    {
        this.scheduler = requireNonNull(scheduler, "scheduler is null");
        this.lifeCycleManager = requireNonNull(lifeCycleManager, "lifeCycleManager is null");
        this.shutdownAction = requireNonNull(shutdownAction, "shutdownAction is null");
    }

    /** Idempotent: the first call starts the shutdown, later calls change nothing. */
    public synchronized void requestShutdown()
    {
        if (shutdownRequested) {
            return;
        }
        shutdownRequested = true;
        log.info("Shutdown requested");
        shutdownExecutor.execute(() -> {
            scheduler.drain();
            // the request that asked for the shutdown gets its answer before the HTTP server stops, as Trino's
            // graceful shutdown waits its grace period first
            sleepUninterruptibly(ANSWER_GRACE.toMillis(), MILLISECONDS);

            Future<?> stopped = lifeCycleStopper.submit(() -> {
                lifeCycleManager.stop();
                return null;
            });
            // end the process even if some component does not stop in time: no cycle is running any more
            try {
                stopped.get(LIFECYCLE_STOP_TIMEOUT.toMillis(), MILLISECONDS);
            }
            catch (TimeoutException e) {
                log.warn(e, "Timed out waiting for the life cycle to stop");
            }
            catch (InterruptedException e) {
                log.warn(e, "Interrupted while waiting for the life cycle to stop");
                currentThread().interrupt();
            }
            catch (ExecutionException e) {
                log.warn(e, "Problem stopping the life cycle");
            }
            log.info("Shutdown complete");
            shutdownAction.onShutdown();
        });
    }

    public synchronized boolean isShutdownRequested()
    {
        return shutdownRequested;
    }

    public ArchiverState state()
    {
        return isShutdownRequested() || scheduler.isDraining() ? ArchiverState.SHUTTING_DOWN : ArchiverState.ACTIVE;
    }
}
