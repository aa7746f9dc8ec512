package io.meterstore.core;

import static java.util.Objects.requireNonNull;

/**
 * A state of a table that MeterStore refuses to work with. The reason lets each caller (the connector, the archiver)
 * map it to its own error code; the message says what is wrong and what to do.
 */
public class MeterstoreException
        extends RuntimeException
{
    private final Reason reason;

    public MeterstoreException(Reason reason, String message)
    {
        super(message);
        this.reason = requireNonNull(reason, "reason is null");
    }

    public MeterstoreException(Reason reason, String message, Throwable cause)
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
        /** The snapshot chain has snapshots, but none carries a tiering watermark. */
        WATERMARK_MISSING,
        /** A parent snapshot is gone before a snapshot carrying the watermark was reached. */
        WATERMARK_CHAIN_BROKEN,
        /** A watermark property that does not parse. */
        WATERMARK_MALFORMED,
        /** An Iceberg table that is not format v2, or whose schema or partitioning is not a readings table's. */
        TABLE_LAYOUT_UNSUPPORTED,
        /** A hot partition that was planned but no longer exists. */
        PARTITION_MISSING,
        /** PostgreSQL cannot be reached or refused the login. */
        POSTGRES_UNAVAILABLE,
        /** The Iceberg catalogue cannot be reached. */
        CATALOG_UNAVAILABLE,
        /** The table does not exist in one of the tiers. */
        TABLE_MISSING,
        /** A hot partition whose catalogue bounds MeterStore cannot tier by: unbounded, overlapping, off the step's grid. */
        PARTITION_BOUNDS_UNSUPPORTED,
        /** A MeterStore property of a snapshot summary or of the table that does not parse. */
        SUMMARY_MALFORMED,
        /** A declaration of a table's shape that differs from the one the table stores. */
        SHAPE_MISMATCH,
    }
}
