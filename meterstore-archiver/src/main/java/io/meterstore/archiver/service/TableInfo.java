package io.meterstore.archiver.service;

import io.airlift.units.Duration;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/** One table in {@code GET /v1/info}: where its watermark stands and what its last cycle did. */
public record TableInfo(
        String name,
        Optional<Instant> watermark,
        Optional<Duration> watermarkLag,
        Optional<CycleResult> lastResult,
        Optional<String> lastCycle,
        Optional<Instant> lastCycleFinished,
        List<String> invariantViolations)
{
    public TableInfo
    {
        requireNonNull(name, "name is null");
        requireNonNull(watermark, "watermark is null");
        requireNonNull(watermarkLag, "watermarkLag is null");
        requireNonNull(lastResult, "lastResult is null");
        requireNonNull(lastCycle, "lastCycle is null");
        requireNonNull(lastCycleFinished, "lastCycleFinished is null");
        invariantViolations = List.copyOf(requireNonNull(invariantViolations, "invariantViolations is null"));
    }
}
