package io.meterstore.archiver;

import io.airlift.configuration.Config;
import io.airlift.configuration.ConfigDescription;
import io.airlift.units.Duration;
import io.airlift.units.MinDuration;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;

import static java.util.concurrent.TimeUnit.DAYS;
import static java.util.concurrent.TimeUnit.HOURS;

/**
 * What only the archiver reads. The keys it shares with the connector (PostgreSQL, schema, tables, Iceberg catalogue,
 * warehouse, lock timeout) are {@link io.meterstore.core.TiersConfig}, one definition for both.
 */
public class ArchiverConfig
{
    private Duration archivalStep = new Duration(1, DAYS);
    private Duration settlementLag = new Duration(7, DAYS);
    private Duration readerGrace = new Duration(1, HOURS);
    private int chunkRows = 10_000;
    private Duration snapshotRetention = new Duration(3653, DAYS);
    private int minSnapshotsToKeep = 20;
    private Duration orphanSafetyAge = new Duration(3, DAYS);

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

    @NotNull
    public Duration getSettlementLag()
    {
        return settlementLag;
    }

    @Config("meterstore.settlement-lag")
    @ConfigDescription("A window is archived once it ends this long before now; must exceed the market's correction window")
    public ArchiverConfig setSettlementLag(Duration settlementLag)
    {
        this.settlementLag = settlementLag;
        return this;
    }

    @NotNull
    public Duration getReaderGrace()
    {
        return readerGrace;
    }

    @Config("meterstore.reader-grace")
    @ConfigDescription("An archived partition is dropped once its archival commit is this old; above the longest query the deployment runs")
    public ArchiverConfig setReaderGrace(Duration readerGrace)
    {
        this.readerGrace = readerGrace;
        return this;
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

    @AssertTrue(message = "meterstore.snapshot-retention must be at least meterstore.reader-grace")
    public boolean isSnapshotRetentionAtLeastReaderGrace()
    {
        return snapshotRetention == null || readerGrace == null || snapshotRetention.compareTo(readerGrace) >= 0;
    }

    @AssertTrue(message = "meterstore.settlement-lag must be at least meterstore.archival-step")
    public boolean isSettlementLagAtLeastArchivalStep()
    {
        return settlementLag == null || archivalStep == null || settlementLag.compareTo(archivalStep) >= 0;
    }
}
