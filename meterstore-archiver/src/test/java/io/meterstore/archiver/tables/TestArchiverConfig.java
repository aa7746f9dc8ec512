package io.meterstore.archiver.tables;

import com.google.common.collect.ImmutableMap;
import io.airlift.units.DataSize;
import io.airlift.units.Duration;
import io.airlift.units.MinDataSize;
import io.airlift.units.MinDuration;
import io.meterstore.archiver.maintenance.RetentionPeriod;
import io.meterstore.core.TiersConfig;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.Pattern;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static io.airlift.configuration.testing.ConfigAssertions.assertFullMapping;
import static io.airlift.configuration.testing.ConfigAssertions.assertRecordedDefaults;
import static io.airlift.configuration.testing.ConfigAssertions.recordDefaults;
import static io.airlift.testing.ValidationAssertions.assertFailsValidation;
import static io.airlift.testing.ValidationAssertions.assertValidates;
import static io.airlift.units.DataSize.Unit.MEGABYTE;
import static java.util.concurrent.TimeUnit.DAYS;
import static java.util.concurrent.TimeUnit.HOURS;
import static java.util.concurrent.TimeUnit.MINUTES;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;

final class TestArchiverConfig
{
    @Test
    void testDefaults()
    {
        assertRecordedDefaults(recordDefaults(ArchiverConfig.class)
                .setArchivalStep(new Duration(1, DAYS))
                .setChunkRows(10_000)
                .setSnapshotRetention(new Duration(3653, DAYS))
                .setMinSnapshotsToKeep(20)
                .setOrphanSafetyAge(new Duration(3, DAYS))
                .setCompactionDelay(new Duration(14, DAYS))
                .setCompactionTargetFileSize(DataSize.of(128, MEGABYTE))
                .setCompactionCorrectionFiles(12)
                .setPartitionHeadroom(new Duration(2, DAYS))
                .setRetention(null));
    }

    @Test
    void testExplicitPropertyMappings()
    {
        Map<String, String> properties = ImmutableMap.<String, String>builder()
                .put("meterstore.archival-step", "1h")
                .put("meterstore.chunk-rows", "5000")
                .put("meterstore.snapshot-retention", "400d")
                .put("meterstore.min-snapshots-to-keep", "50")
                .put("meterstore.orphan-safety-age", "7d")
                .put("meterstore.compaction-delay", "30d")
                .put("meterstore.compaction-target-file-size", "256MB")
                .put("meterstore.compaction-correction-files", "40")
                .put("meterstore.partition-headroom", "0s")
                .put("meterstore.retention", "3y")
                .buildOrThrow();

        ArchiverConfig expected = new ArchiverConfig()
                .setArchivalStep(new Duration(1, HOURS))
                .setChunkRows(5000)
                .setSnapshotRetention(new Duration(400, DAYS))
                .setMinSnapshotsToKeep(50)
                .setOrphanSafetyAge(new Duration(7, DAYS))
                .setCompactionDelay(new Duration(30, DAYS))
                .setCompactionTargetFileSize(DataSize.of(256, MEGABYTE))
                .setCompactionCorrectionFiles(40)
                .setPartitionHeadroom(new Duration(0, SECONDS))
                .setRetention("3y");

        assertFullMapping(properties, expected);
    }

    @Test
    void testSettlementLagMustCoverStep()
    {
        // the settlement lag is a shared key, the step the archiver's own: the check spans both beans
        TiersConfig tiers = new TiersConfig();
        assertThat(new ArchiverConfig().violations(tiers)).isEmpty();
        assertThat(new ArchiverConfig().setArchivalStep(new Duration(2, DAYS)).violations(tiers.setSettlementLag(new Duration(1, DAYS))))
                .containsExactly("meterstore.settlement-lag must be at least meterstore.archival-step");
    }

    @Test
    void testSnapshotRetentionMustCoverReaderGrace()
    {
        TiersConfig tiers = new TiersConfig();
        ArchiverConfig config = new ArchiverConfig()
                .setSnapshotRetention(new Duration(1, HOURS));
        assertValidates(config);
        assertThat(config.violations(tiers)).isEmpty();
        // a snapshot younger than the reader grace may be what a running query reads
        assertThat(config.setSnapshotRetention(new Duration(30, MINUTES)).violations(tiers))
                .containsExactly("meterstore.snapshot-retention must be at least meterstore.reader-grace");
        assertThat(config.violations(tiers.setReaderGrace(new Duration(10, MINUTES)))).isEmpty();
        assertFailsValidation(new ArchiverConfig().setMinSnapshotsToKeep(0), "minSnapshotsToKeep", "must be greater than or equal to 1", Min.class);
        assertFailsValidation(new ArchiverConfig().setOrphanSafetyAge(new Duration(10, MINUTES)), "orphanSafetyAge", "must be greater than or equal to 1h", MinDuration.class);
        assertFailsValidation(new ArchiverConfig().setCompactionCorrectionFiles(0), "compactionCorrectionFiles", "must be greater than or equal to 1", Min.class);
        assertFailsValidation(new ArchiverConfig().setRetention("3 years"), "retention", "must be whole settlement years, e.g. 3y (or unset: readings are kept for ever)", Pattern.class);
        assertFailsValidation(new ArchiverConfig().setRetention("0y"), "retention", "must be whole settlement years, e.g. 3y (or unset: readings are kept for ever)", Pattern.class);
        assertThat(new ArchiverConfig().setRetention("3y").retentionPeriod()).contains(new RetentionPeriod(3));
        assertThat(new ArchiverConfig().retentionPeriod()).isEmpty();
        assertFailsValidation(new ArchiverConfig().setCompactionTargetFileSize(DataSize.of(100, DataSize.Unit.KILOBYTE)), "compactionTargetFileSize", "must be greater than or equal to 1MB", MinDataSize.class);
        assertFailsValidation(new ArchiverConfig().setArchivalStep(new Duration(7, MINUTES)), "archivalStepAligned", "meterstore.archival-step must be whole minutes that divide a day (15m, 1h, 6h), or whole days", AssertTrue.class);
        assertFailsValidation(new ArchiverConfig().setArchivalStep(new Duration(36, HOURS)), "archivalStepAligned", "meterstore.archival-step must be whole minutes that divide a day (15m, 1h, 6h), or whole days", AssertTrue.class);
        assertValidates(new ArchiverConfig().setArchivalStep(new Duration(15, MINUTES)));
        assertValidates(new ArchiverConfig().setArchivalStep(new Duration(2, DAYS)));
    }
}
