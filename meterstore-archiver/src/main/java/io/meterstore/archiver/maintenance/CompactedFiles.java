package io.meterstore.archiver.maintenance;

import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.UUID;

import static java.util.Objects.requireNonNull;

/**
 * The names of the files month compaction writes: {@code compacted-20240402T060000Z-<uuid>-2024-03-00001.winners.parquet}.
 * The prefix tells a compacted month's own files from those later corrections added, and the time in it is when the
 * month was last compacted, read from the manifests alone for as long as the files live (a snapshot summary would
 * expire with its snapshot). The role stays the name's suffix, as {@link io.meterstore.core.ColdFileRole} reads it.
 */
final class CompactedFiles
{
    private static final String PREFIX = "compacted-";
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);
    private static final int TIME_LENGTH = "20240402T060000Z".length();

    private CompactedFiles() {}

    /** The name prefix of the files one compaction of {@code month} at {@code at} writes. */
    static String namePrefix(Instant at, YearMonth month)
    {
        return "%s%s-%s-%s".formatted(PREFIX, TIME.format(at), UUID.randomUUID(), month);
    }

    /** When the file at {@code location} was written by month compaction; empty for every other file. */
    static Optional<Instant> compactedAt(String location)
    {
        requireNonNull(location, "location is null");
        String name = location.substring(location.lastIndexOf('/') + 1);
        if (!name.startsWith(PREFIX) || name.length() < PREFIX.length() + TIME_LENGTH) {
            return Optional.empty();
        }
        try {
            return Optional.of(Instant.from(TIME.parse(name.substring(PREFIX.length(), PREFIX.length() + TIME_LENGTH))));
        }
        catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }
}
