package io.meterstore.archiver.cycle;

import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;

import static java.util.Objects.requireNonNull;

/**
 * Named points of the archival cycle and of the maintenance steps where a crash test stops the archiver. Every point is a no-op unless the system
 * property {@value #PROPERTY} names it; the named point prints {@code FAILPOINT <name>} to stdout and blocks forever,
 * so the test kills the process (SIGKILL) at exactly that step and then shows that recovery is the ordinary path.
 */
public final class Failpoints
{
    public static final String PROPERTY = "meterstore.failpoint";

    private static final String ARMED_NAME = System.getProperty(PROPERTY, "");
    private static final Optional<Failpoint> ARMED = Failpoint.find(ARMED_NAME);

    private Failpoints() {}

    public enum Failpoint
    {
        /** The window's partition is detached; nothing is written yet. */
        AFTER_DETACH("after-detach"),
        /** The first page of rows is in the Parquet writer; the file is incomplete. */
        MID_STREAM("mid-stream"),
        /** Every Parquet file of the window is complete; nothing is committed. */
        AFTER_WRITE("after-write"),
        /** The Iceberg commit moved W; the partition is detached, not dropped. */
        AFTER_COMMIT("after-commit"),
        /** A detached partition below W, past its reader grace, is about to be dropped. */
        BEFORE_DROP("before-drop"),
        /** Snapshot expiry committed the table without the expired snapshots; none of their files is deleted yet. */
        EXPIRY_AFTER_COMMIT("expiry-after-commit"),
        /** Snapshot expiry deleted one file of the expired snapshots; the others are still there. */
        EXPIRY_MID_DELETE("expiry-mid-delete"),
        /** Orphan-file removal deleted one orphan; the others are still there. */
        ORPHANS_MID_DELETE("orphans-mid-delete"),
        /** Month compaction wrote a month's new files; nothing is committed and the lease is not taken for the commit yet. */
        COMPACTION_AFTER_WRITE("compaction-after-write"),
        /** Month compaction holds the lease and built the month's commit on the current base; the commit has not run. */
        COMPACTION_BEFORE_COMMIT("compaction-before-commit"),
        /** Month compaction committed a month; the next month has not started. */
        COMPACTION_AFTER_COMMIT("compaction-after-commit"),
        /** Month compaction committed every month; the manifests are not rewritten and the run is not recorded yet. */
        COMPACTION_BEFORE_CLEANUP("compaction-before-cleanup"),
        /** An erasure's completion committed the expiry of the snapshots holding its rows; none of their files is deleted yet. */
        ERASURE_AFTER_EXPIRY("erasure-after-expiry"),
        /** An erasure's removed files are deleted; its physical completion is not recorded yet. */
        ERASURE_BEFORE_RECORD("erasure-before-record"),
        /** A retention sweep committed the removal of a month's files; its audit row is not recorded yet. */
        RETENTION_AFTER_COMMIT("retention-after-commit"),
        /**/;

        private final String pointName;

        Failpoint(String pointName)
        {
            this.pointName = requireNonNull(pointName, "pointName is null");
        }

        /** The name the system property and the printed line use. */
        public String pointName()
        {
            return pointName;
        }

        static Optional<Failpoint> find(String name)
        {
            return Arrays.stream(values()).filter(failpoint -> failpoint.pointName.equals(name)).findFirst();
        }
    }

    /**
     * Refuses a {@value #PROPERTY} that names no point, which would otherwise never stop the process: the archiver checks
     * it before any command runs.
     */
    public static void checkArmed()
    {
        if (!ARMED_NAME.isEmpty() && ARMED.isEmpty()) {
            throw new IllegalArgumentException("Unknown failpoint '%s' in -D%s: use one of %s"
                    .formatted(ARMED_NAME, PROPERTY, Arrays.stream(Failpoint.values()).map(Failpoint::pointName).toList()));
        }
    }

    /** Blocks forever if {@code failpoint} is the armed one; returns at once otherwise. */
    public static void hit(Failpoint failpoint)
    {
        checkArmed();
        if (ARMED.isEmpty() || ARMED.get() != failpoint) {
            return;
        }
        System.out.println("FAILPOINT " + failpoint.pointName());
        System.out.flush();
        // nothing after the failpoint may run: the test kills the process here, interrupted or not
        while (true) {
            LockSupport.park();
        }
    }
}
