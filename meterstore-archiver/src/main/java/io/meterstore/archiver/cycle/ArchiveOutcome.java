package io.meterstore.archiver.cycle;

import io.meterstore.core.TieringWatermark;

import java.util.List;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * What one cycle did to one table. Only {@link Kind#ARCHIVED} moved the watermark; the others leave it where it was
 * and are not failures.
 */
public record ArchiveOutcome(
        String table,
        Kind kind,
        Optional<ArchivalWindow> window,
        long rows,
        int files,
        long bytes,
        TieringWatermark watermark,
        Optional<Long> snapshotId,
        List<String> droppedPartitions)
{
    public enum Kind
    {
        /** A window was committed to Iceberg and the watermark moved to its end. */
        ARCHIVED,
        /** Nothing closed to archive. */
        IDLE,
        /** Publishing the window or its DETACH did not get its lock within the lock timeout; the next cycle tries again. */
        DEFERRED,
        /** Another archiver moved the watermark first; what this cycle wrote was deleted. */
        SUPERSEDED,
        /** Another archiver holds this table's lease; not a failure: this cycle changed nothing. */
        LEASE_CONTENDED,
    }

    public ArchiveOutcome
    {
        requireNonNull(table, "table is null");
        requireNonNull(kind, "kind is null");
        requireNonNull(window, "window is null");
        requireNonNull(watermark, "watermark is null");
        requireNonNull(snapshotId, "snapshotId is null");
        droppedPartitions = List.copyOf(requireNonNull(droppedPartitions, "droppedPartitions is null"));
        checkArgument(rows >= 0 && files >= 0 && bytes >= 0, "rows, files and bytes must not be negative");
        checkArgument(kind == Kind.ARCHIVED || (rows == 0 && files == 0 && bytes == 0), "Only an archival writes rows");
        checkArgument(kind != Kind.ARCHIVED || window.isPresent(), "An archival has a window");
        checkArgument(kind != Kind.LEASE_CONTENDED || (window.isEmpty() && snapshotId.isEmpty() && droppedPartitions.isEmpty()), "A cycle without the lease changes nothing");
    }

    /** One line for an operator: what the cycle did, and where the watermark stands. */
    public String describe()
    {
        String dropped = droppedPartitions.isEmpty() ? "" : ", dropped %s".formatted(String.join(", ", droppedPartitions));
        return switch (kind) {
            case ARCHIVED -> "%s: archived %s: %s rows in %s files (%s bytes), watermark %s%s"
                    .formatted(table, window.orElseThrow(), rows, files, bytes, watermark, dropped);
            case IDLE -> "%s: idle, nothing closed to archive, watermark %s%s".formatted(table, watermark, dropped);
            case DEFERRED -> window.isEmpty()
                    ? "%s: deferred, publishing the next window timed out waiting for the writers in flight; the next cycle retries, watermark %s%s".formatted(table, watermark, dropped)
                    : "%s: deferred, detaching %s timed out waiting for a lock another session holds; the next cycle retries, watermark %s%s"
                            .formatted(table, window.flatMap(ArchivalWindow::partition).map(partition -> "'%s'".formatted(partition.name())).orElse("the partition"), watermark, dropped);
            case SUPERSEDED -> "%s: superseded, another archiver moved the watermark to %s first; nothing committed%s".formatted(table, watermark, dropped);
            case LEASE_CONTENDED -> "%s: lease contended, another archiver (or a DELETE, or INSERTs of rows of an archived window, longer than meterstore.postgresql.lock-timeout) held this table's lease; nothing changed, watermark %s".formatted(table, watermark);
        };
    }
}
