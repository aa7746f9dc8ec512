package io.meterstore.archiver.service;

import io.airlift.units.Duration;

import java.time.Instant;
import java.util.List;

import static java.util.Objects.requireNonNull;

/** {@code GET /v1/info}: liveness, the running version, and where each table stands. */
public record ArchiverInfo(String version, String environment, Instant startTime, Duration uptime, ArchiverState state, List<TableInfo> tables)
{
    public ArchiverInfo
    {
        requireNonNull(version, "version is null");
        requireNonNull(environment, "environment is null");
        requireNonNull(startTime, "startTime is null");
        requireNonNull(uptime, "uptime is null");
        requireNonNull(state, "state is null");
        tables = List.copyOf(requireNonNull(tables, "tables is null"));
    }
}
