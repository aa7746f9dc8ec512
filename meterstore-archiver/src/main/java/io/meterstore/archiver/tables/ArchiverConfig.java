package io.meterstore.archiver.tables;

import com.google.common.collect.ImmutableList;
import io.airlift.configuration.Config;
import io.airlift.configuration.ConfigDescription;
import io.airlift.units.DataSize;
import io.airlift.units.Duration;
import io.airlift.units.MinDataSize;
import io.airlift.units.MinDuration;
import io.meterstore.archiver.maintenance.RetentionPeriod;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.TiersConfig;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;

import java.util.List;
import java.util.Optional;

import static io.airlift.units.DataSize.Unit.MEGABYTE;
import static java.util.concurrent.TimeUnit.DAYS;

/**
 * What only the archiver reads. The keys it shares with the connector (PostgreSQL, schema, tables, Iceberg catalogue,
 * warehouse, lock timeout, settlement lag, reader grace) are {@link io.meterstore.core.TiersConfig}, one definition for both.
 */
public class ArchiverConfig
{
    private Duration archivalStep = new Duration(1, DAYS);
    private int chunkRows = 10_000;
    private Duration snapshotRetention = new Duration(3653, DAYS);
    private int minSnapshotsToKeep = 20;
    private Duration orphanSafetyAge = new Duration(3, DAYS);
    private Duration compactionDelay = new Duration(14, DAYS);
    private DataSize compactionTargetFileSize = DataSize.of(128, MEGABYTE);
    private int compactionCorrectionFiles = 12;
    private Duration partitionHeadroom = new Duration(2, DAYS);
    private String retention;

    @NotNull
    @MinDuration("1m")
    public Duration getArchivalStep()
    {
        return archivalStep;
    }

    @Config("meterstore.archival-step")
    @ConfigDescription("Length of one hot partition and of one archival window; must match the step the table was archived with")
    public ArchiverConfig setArchivalStep(Duration archivalStep)
    {
        this.archivalStep = archivalStep;
        return this;
    }

    // partitions are named to the minute and aligned so that every day starts one
    @AssertTrue(message = "meterstore.archival-step must be whole minutes that divide a day (15m, 1h, 6h), or whole days")
    public boolean isArchivalStepAligned()
    {
        return archivalStep == null || PartitionNaming.isValidStep(archivalStep.toJavaTime());
    }

    @Min(1)
    public int getChunkRows()
    {
        return chunkRows;
    }

    @Config("meterstore.chunk-rows")
    @ConfigDescription("Rows per page streamed from PostgreSQL into the Parquet writer; bounds the archiver's memory")
    public ArchiverConfig setChunkRows(int chunkRows)
    {
        this.chunkRows = chunkRows;
        return this;
    }

    @NotNull
    public Duration getSnapshotRetention()
    {
        return snapshotRetention;
    }

    @Config("meterstore.snapshot-retention")
    @ConfigDescription("Snapshots older than this are expired (FOR VERSION AS OF them fails from then on) and the files only they referenced deleted; recorded as the table property history.expire.max-snapshot-age-ms")
    public ArchiverConfig setSnapshotRetention(Duration snapshotRetention)
    {
        this.snapshotRetention = snapshotRetention;
        return this;
    }

    @Min(1)
    public int getMinSnapshotsToKeep()
    {
        return minSnapshotsToKeep;
    }

    @Config("meterstore.min-snapshots-to-keep")
    @ConfigDescription("The newest snapshots kept whatever their age; recorded as the table property history.expire.min-snapshots-to-keep")
    public ArchiverConfig setMinSnapshotsToKeep(int minSnapshotsToKeep)
    {
        this.minSnapshotsToKeep = minSnapshotsToKeep;
        return this;
    }

    @NotNull
    @MinDuration("1h")
    public Duration getOrphanSafetyAge()
    {
        return orphanSafetyAge;
    }

    @Config("meterstore.orphan-safety-age")
    @ConfigDescription("A file in a table's directories that no snapshot references is removed once it is this old; above the longest write of any engine writing the table")
    public ArchiverConfig setOrphanSafetyAge(Duration orphanSafetyAge)
    {
        this.orphanSafetyAge = orphanSafetyAge;
        return this;
    }

    @NotNull
    public Duration getCompactionDelay()
    {
        return compactionDelay;
    }

    @Config("meterstore.compaction-delay")
    @ConfigDescription("A month of \"from\" below the watermark is compacted once it ended this long ago, and a compacted month once more when its latest correction is this old; late corrections before then cost no rewrite")
    public ArchiverConfig setCompactionDelay(Duration compactionDelay)
    {
        this.compactionDelay = compactionDelay;
        return this;
    }

    @NotNull
    @MinDataSize("1MB")
    public DataSize getCompactionTargetFileSize()
    {
        return compactionTargetFileSize;
    }

    @Config("meterstore.compaction-target-file-size")
    @ConfigDescription("Compaction cuts a month's winners and superseded files at this size; the default holds a month of 10,000 meters in one winners file")
    public ArchiverConfig setCompactionTargetFileSize(DataSize compactionTargetFileSize)
    {
        this.compactionTargetFileSize = compactionTargetFileSize;
        return this;
    }

    @Min(1)
    public int getCompactionCorrectionFiles()
    {
        return compactionCorrectionFiles;
    }

    @Config("meterstore.compaction-correction-files")
    @ConfigDescription("A compacted month is compacted again once later corrections have added this many data and delete files to it (fewer are rewritten once its latest correction is meterstore.compaction-delay old)")
    public ArchiverConfig setCompactionCorrectionFiles(int compactionCorrectionFiles)
    {
        this.compactionCorrectionFiles = compactionCorrectionFiles;
        return this;
    }

    @NotNull
    public Duration getPartitionHeadroom()
    {
        return partitionHeadroom;
    }

    @Config("meterstore.partition-headroom")
    @ConfigDescription("Each cycle creates the hot partitions that hold [now, now + this), so writers find them ready and status counts them as runway; 0s turns it off")
    public ArchiverConfig setPartitionHeadroom(Duration partitionHeadroom)
    {
        this.partitionHeadroom = partitionHeadroom;
        return this;
    }

    /** Off (null) by default; validated as whole settlement years, which {@link #retentionPeriod()} parses. */
    @Pattern(regexp = "[1-9][0-9]{0,2}y", message = "must be whole settlement years, e.g. 3y (or unset: readings are kept for ever)")
    public String getRetention()
    {
        return retention;
    }

    @Config("meterstore.retention")
    @ConfigDescription("Readings are removed once this many whole settlement years have passed since the end of their settlement year (3y: 2025's readings go in 2029), month by month with an audit row each; unset keeps them for ever")
    public ArchiverConfig setRetention(String retention)
    {
        this.retention = retention;
        return this;
    }

    /** {@code meterstore.retention} parsed; empty when off. */
    public Optional<RetentionPeriod> retentionPeriod()
    {
        return Optional.ofNullable(retention).map(RetentionPeriod::parse);
    }

    /**
     * What spans this bean and the shared {@link TiersConfig}, which bean validation, one bean at a time, cannot see:
     * each a message naming the properties. The service and every command refuse to start on any of them.
     */
    public List<String> violations(TiersConfig tiers)
    {
        ImmutableList.Builder<String> violations = ImmutableList.builder();
        // a snapshot younger than the reader grace may be what a running query reads
        if (snapshotRetention != null && tiers.getReaderGrace() != null && snapshotRetention.compareTo(tiers.getReaderGrace()) < 0) {
            violations.add("meterstore.snapshot-retention must be at least meterstore.reader-grace");
        }
        if (archivalStep != null && tiers.getSettlementLag() != null && tiers.getSettlementLag().compareTo(archivalStep) < 0) {
            violations.add("meterstore.settlement-lag must be at least meterstore.archival-step");
        }
        return violations.build();
    }
}
