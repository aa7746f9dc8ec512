package io.meterstore.archiver.cycle;

import static java.util.Objects.requireNonNull;

/** A state of a table the archiver refuses to archive or maintain. The message says what is wrong and what to do. */
public class ArchivalException
        extends RuntimeException
{
    private final Reason reason;

    public ArchivalException(Reason reason, String message)
    {
        super(message);
        this.reason = requireNonNull(reason, "reason is null");
    }

    public ArchivalException(Reason reason, String message, Throwable cause)
    {
        super(message, cause);
        this.reason = requireNonNull(reason, "reason is null");
    }

    public Reason reason()
    {
        return reason;
    }

    public enum Reason
    {
        /** An attached partition below the watermark: its rows are in neither tier for any query. */
        INVARIANT_VIOLATED,
        /** The configured step differs from the step the table was archived with. */
        STEP_MISMATCH,
        /** Two partitions reaching above the watermark whose catalogue bounds overlap. */
        PARTITION_OVERLAP,
        /** A partition holding rows outside the window being archived from it, or rows its archival commits lack. */
        PARTITION_NOT_COVERED,
        /** The Iceberg commit kept failing against a base whose watermark did not move. */
        COMMIT_FAILED,
        /** The table's storage cannot list its files, so files no snapshot references cannot be found. */
        FILES_NOT_LISTABLE,
        /** The table forbids deleting its files (Iceberg's gc.enabled = false), which expiry and orphan removal do. */
        GC_DISABLED,
        /** An erasure cannot be made physical: a tag, a branch or a kept snapshot's watermark needs a snapshot holding its rows. */
        ERASURE_BLOCKED,
        /** A file of a month past the retention holds rows the retention keeps: it would have to be rewritten. */
        RETENTION_SPANS_CUT,
        /** The configured warehouse does not exist or cannot be written. */
        WAREHOUSE_NOT_WRITABLE,
        /** A row of the window that the write path's validation refuses: nothing of the window is archived until it is repaired. */
        READING_REFUSED,
    }
}
