package io.meterstore.archiver.service;

import com.google.common.collect.ImmutableMap;
import io.airlift.units.Duration;
import io.meterstore.archiver.maintenance.ColdTierLayout;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/** One table in {@code GET /v1/info}: where its watermark stands, what its last cycle did, and its cold tier's upkeep. */
public record TableInfo(
        String name,
        Optional<Instant> watermark,
        Optional<Duration> watermarkLag,
        Optional<CycleResult> lastResult,
        Optional<String> lastCycle,
        Optional<Instant> lastCycleFinished,
        List<String> invariantViolations,
        Optional<ColdTierInfo> coldTier,
        List<MaintenanceInfo> maintenance)
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
        requireNonNull(coldTier, "coldTier is null");
        maintenance = List.copyOf(requireNonNull(maintenance, "maintenance is null"));
    }

    /**
     * The cold tier's layout as the last maintenance read it: snapshots, manifests, data files per month of "from", when
     * month compaction last rewrote each month it rewrote, and how many months are not resolved.
     */
    public record ColdTierInfo(int snapshots, int manifests, int dataFiles, int maxDataFilesPerMonth, Map<String, Integer> dataFilesPerMonth, Map<String, Instant> lastCompactionPerMonth, int unresolvedMonths)
    {
        public ColdTierInfo
        {
            dataFilesPerMonth = ImmutableMap.copyOf(requireNonNull(dataFilesPerMonth, "dataFilesPerMonth is null"));
            lastCompactionPerMonth = ImmutableMap.copyOf(requireNonNull(lastCompactionPerMonth, "lastCompactionPerMonth is null"));
        }

        static ColdTierInfo of(ColdTierLayout layout)
        {
            ImmutableMap.Builder<String, Integer> months = ImmutableMap.builder();
            layout.months().forEach((month, files) -> months.put(month.toString(), files.files()));
            ImmutableMap.Builder<String, Instant> compactions = ImmutableMap.builder();
            layout.lastCompactions().forEach((month, at) -> compactions.put(month.toString(), at));
            return new ColdTierInfo(layout.snapshots(), layout.manifests(), layout.dataFiles(), layout.maxDataFilesPerMonth(), months.buildOrThrow(), compactions.buildOrThrow(), layout.unresolvedMonths());
        }
    }

    /** A maintenance command of the table: when it last finished, and what its last run did or why it failed. */
    public record MaintenanceInfo(String command, Optional<Instant> lastFinished, String lastRun)
    {
        public MaintenanceInfo
        {
            requireNonNull(command, "command is null");
            requireNonNull(lastFinished, "lastFinished is null");
            requireNonNull(lastRun, "lastRun is null");
        }
    }
}
