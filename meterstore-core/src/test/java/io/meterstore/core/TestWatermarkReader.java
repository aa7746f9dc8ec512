package io.meterstore.core;

import io.meterstore.core.WatermarkReader.PinnedWatermark;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.inmemory.InMemoryCatalog;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;

import static io.meterstore.core.MeterstoreException.Reason.WATERMARK_CHAIN_BROKEN;
import static io.meterstore.core.MeterstoreException.Reason.WATERMARK_MALFORMED;
import static io.meterstore.core.MeterstoreException.Reason.WATERMARK_MISSING;
import static io.meterstore.core.TieringWatermark.WATERMARK_KEY;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class TestWatermarkReader
{
    private static final TieringWatermark FIRST = TieringWatermark.of(Instant.parse("2026-08-01T00:00:00Z"));
    private static final TieringWatermark SECOND = TieringWatermark.of(Instant.parse("2026-08-02T00:00:00Z"));

    private Table table;

    @BeforeEach
    void createTable()
    {
        InMemoryCatalog catalog = new InMemoryCatalog();
        catalog.initialize("test", Map.of());
        table = IcebergTableSpec.createIfMissing(catalog, TableIdentifier.of(Namespace.of("meterstore"), "readings"));
    }

    @Test
    void testNoSnapshotIsEpoch()
    {
        assertThat(table.currentSnapshot()).isNull();
        assertThat(WatermarkReader.current(table)).isEqualTo(new PinnedWatermark(Optional.empty(), TieringWatermark.EPOCH));
    }

    @Test
    void testCurrentSnapshotCarriesIt()
    {
        long first = commit(Optional.of(FIRST.toProperty()));
        assertThat(WatermarkReader.current(table)).isEqualTo(new PinnedWatermark(Optional.of(first), FIRST));
        long second = commit(Optional.of(SECOND.toProperty()));
        assertThat(WatermarkReader.current(table)).isEqualTo(new PinnedWatermark(Optional.of(second), SECOND));
        // a pinned older snapshot still stands for its own watermark
        assertThat(WatermarkReader.ofSnapshot(table, first)).isEqualTo(FIRST);
    }

    @Test
    void testWalkAcrossForeignSnapshots()
    {
        long first = commit(Optional.of(FIRST.toProperty()));
        long second = commit(Optional.of(SECOND.toProperty()));
        // compaction and other tools commit without the watermark
        long foreign = commit(Optional.empty());
        long newest = commitWith(Map.of(TieringWatermark.ROW_COUNT_KEY, "42"));
        assertThat(table.currentSnapshot().parentId()).isEqualTo(foreign);

        // the newest snapshot that carries one wins, not the first
        assertThat(WatermarkReader.current(table)).isEqualTo(new PinnedWatermark(Optional.of(newest), SECOND));
        assertThat(WatermarkReader.ofSnapshot(table, foreign)).isEqualTo(SECOND);
        assertThat(WatermarkReader.ofSnapshot(table, second)).isEqualTo(SECOND);
        assertThat(WatermarkReader.ofSnapshot(table, first)).isEqualTo(FIRST);
    }

    @Test
    void testNoMeterstoreSnapshotInChain()
    {
        long first = commit(Optional.empty());
        long second = commit(Optional.empty());
        assertThatThrownBy(() -> WatermarkReader.current(table))
                .isInstanceOfSatisfying(MeterstoreException.class, e -> assertThat(e.reason()).isEqualTo(WATERMARK_MISSING))
                .hasMessage("No snapshot of table '%s' from %s back to the first carries 'meterstore.tiering_watermark': the table was not written by MeterStore, or its watermark was lost; reassert the watermark before reading it"
                        .formatted(table.name(), second));
        assertThatThrownBy(() -> WatermarkReader.ofSnapshot(table, first))
                .isInstanceOfSatisfying(MeterstoreException.class, e -> assertThat(e.reason()).isEqualTo(WATERMARK_MISSING));
    }

    @Test
    void testBrokenChain()
    {
        long carrying = commit(Optional.of(FIRST.toProperty()));
        long foreign = commit(Optional.empty());
        long current = commit(Optional.empty());
        assertThat(WatermarkReader.current(table).watermark()).isEqualTo(FIRST);

        // expiring the carrying ancestor strands the boundary: the walk must fail, not fall back to the epoch
        table.expireSnapshots().expireSnapshotId(carrying).cleanExpiredFiles(false).commit();
        assertThat(table.snapshot(carrying)).isNull();
        assertThat(table.snapshot(foreign).parentId()).isEqualTo(carrying);
        assertThatThrownBy(() -> WatermarkReader.current(table))
                .isInstanceOfSatisfying(MeterstoreException.class, e -> assertThat(e.reason()).isEqualTo(WATERMARK_CHAIN_BROKEN))
                .hasMessage("The parent chain of snapshot %s of table '%s' is broken at snapshot %s, before any snapshot carrying 'meterstore.tiering_watermark': an expired ancestor strands the boundary; reassert the watermark on the current snapshot"
                        .formatted(current, table.name(), carrying));
    }

    @Test
    void testExpiredAncestorBehindCarryingSnapshot()
    {
        long old = commit(Optional.of(FIRST.toProperty()));
        long carrying = commit(Optional.of(SECOND.toProperty()));
        long current = commit(Optional.empty());
        table.expireSnapshots().expireSnapshotId(old).cleanExpiredFiles(false).commit();
        // the walk stops at the newest carrier and never needs what lies behind it
        assertThat(WatermarkReader.current(table)).isEqualTo(new PinnedWatermark(Optional.of(current), SECOND));
        assertThat(WatermarkReader.ofSnapshot(table, carrying)).isEqualTo(SECOND);
    }

    @Test
    void testUnknownSnapshot()
    {
        long snapshot = commit(Optional.of(FIRST.toProperty()));
        assertThatThrownBy(() -> WatermarkReader.ofSnapshot(table, snapshot + 1))
                .isInstanceOfSatisfying(MeterstoreException.class, e -> assertThat(e.reason()).isEqualTo(WATERMARK_CHAIN_BROKEN))
                .hasMessage("Table '%s' has no snapshot %s".formatted(table.name(), snapshot + 1));
    }

    @Test
    void testMalformed()
    {
        commit(Optional.of(FIRST.toProperty()));
        commit(Optional.of("2026-08-02 00:00"));
        commit(Optional.empty());
        // the newest carrier decides; a malformed one is an error even though an older one parses
        assertThatThrownBy(() -> WatermarkReader.current(table))
                .isInstanceOfSatisfying(MeterstoreException.class, e -> assertThat(e.reason()).isEqualTo(WATERMARK_MALFORMED))
                .hasMessageContaining("Snapshot property 'meterstore.tiering_watermark' is '2026-08-02 00:00', which is not an RFC 3339 instant");
    }

    private long commit(Optional<String> watermark)
    {
        return commitWith(watermark.map(value -> Map.of(WATERMARK_KEY, value)).orElse(Map.of()));
    }

    /** An append without data files: a snapshot whose summary carries exactly {@code properties}. */
    private long commitWith(Map<String, String> properties)
    {
        AppendFiles append = table.newAppend();
        properties.forEach(append::set);
        append.commit();
        return table.currentSnapshot().snapshotId();
    }
}
