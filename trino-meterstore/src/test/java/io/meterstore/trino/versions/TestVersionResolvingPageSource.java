package io.meterstore.trino.versions;

import com.google.common.collect.ImmutableList;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.meterstore.trino.base.MeterstoreTypes;
import io.trino.spi.Page;
import io.trino.spi.PageBuilder;
import io.trino.spi.block.Block;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.FixedPageSource;
import io.trino.spi.connector.SourcePage;
import io.trino.spi.type.Int128;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static io.airlift.slice.Slices.utf8Slice;
import static io.meterstore.trino.base.MeterstoreTypes.QUANTITY;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Resolution over sorted pages, with the page boundaries where a one-pass resolver can go wrong: a key whose versions
 * straddle two pages, whose winner lies in the earlier page, under two version scopes, and versions tied on version.
 */
final class TestVersionResolvingPageSource
{
    private static final Instant FROM = Instant.parse("2026-03-01T00:00:00Z");
    private static final Instant RECORDED = Instant.parse("2026-03-02T06:00:00Z");
    private static final String SCOPE = "9900000000003:2026-03";

    private final VersionResolution.Layout layout = VersionResolution.NONE.layout(ImmutableList.of(MeterstoreTypes.columnHandle(ReadingsColumn.VALUE)));

    @Test
    void testWinnerIsTheHighestVersionAcrossPages()
    {
        List<Page> pages = ImmutableList.of(
                page(row("41373559241", 0, 1, SCOPE, 0, 10), row("41373559241", 15, 1, SCOPE, 0, 20), row("41373559241", 15, 2, SCOPE, 1, 21)),
                page(row("41373559241", 15, 3, SCOPE, 2, 22), row("41373559241", 30, 1, SCOPE, 0, 30)),
                page(row("41373559241", 30, 2, SCOPE, 3, 31)),
                page(row("52891047363", 30, 1, SCOPE, 0, 40)));
        assertThat(values(pages, new VersionResolution(true, Optional.empty()))).containsExactlyInAnyOrder(10L, 22L, 31L, 40L);
    }

    @Test
    void testVersionsRecordedAfterTheInstantNeitherShowNorHide()
    {
        List<Page> pages = ImmutableList.of(
                page(row("41373559241", 0, 1, SCOPE, 0, 10), row("41373559241", 0, 2, SCOPE, 5, 11)),
                // the winner as known at +2 days is in the first page, the page that ends with it is followed by a later version
                page(row("41373559241", 15, 1, SCOPE, 0, 20), row("41373559241", 15, 2, SCOPE, 1, 21)),
                page(row("41373559241", 15, 3, SCOPE, 4, 22)));
        VersionResolution asOf = new VersionResolution(true, Optional.of(MeterstoreTypes.toEpochMicros(RECORDED.plusSeconds(2 * 86_400))));
        assertThat(values(pages, asOf)).containsExactlyInAnyOrder(10L, 21L);
        assertThat(values(pages, new VersionResolution(true, Optional.empty()))).containsExactlyInAnyOrder(11L, 22L);
        // every version, as known then
        assertThat(values(pages, new VersionResolution(false, asOf.knownAtEpochMicros()))).containsExactlyInAnyOrder(10L, 20L, 21L);
    }

    @Test
    void testEachVersionScopeHasAWinnerAndTiesGoToTheLatestRecording()
    {
        List<Page> pages = ImmutableList.of(
                page(row("41373559241", 0, 1, SCOPE, 0, 10), row("41373559241", 0, 1, "9900000000010:2026-03", 0, 11)),
                page(row("41373559241", 0, 2, SCOPE, 1, 12), row("41373559241", 15, 4, SCOPE, 1, 20)),
                page(row("41373559241", 15, 4, SCOPE, 3, 21), row("41373559241", 15, 4, SCOPE, 2, 22)));
        assertThat(values(pages, new VersionResolution(true, Optional.empty()))).containsExactlyInAnyOrder(11L, 12L, 21L);
    }

    @Test
    void testInVersionOrderTheLastVersionOfEachScopeWins()
    {
        // as a hot partition arrives in primary-key order: version and recorded_at are not read, a later row is a higher version
        VersionResolution.Layout ordered = VersionResolution.NONE.layoutInVersionOrder(ImmutableList.of(MeterstoreTypes.columnHandle(ReadingsColumn.VALUE)));
        assertThat(ordered.columns()).extracting(MeterstoreColumnHandle::readingsColumn).doesNotContain(Optional.of(ReadingsColumn.VERSION), Optional.of(ReadingsColumn.RECORDED_AT));
        List<Page> pages = ImmutableList.of(
                page(ordered, row("41373559241", 0, 1, SCOPE, 0, 10), row("41373559241", 0, 2, "9900000000010:2026-03", 0, 11)),
                // the key's last version, in the next page, wins its scope; the other scope keeps its one version
                page(ordered, row("41373559241", 0, 3, SCOPE, 0, 12), row("41373559241", 15, 1, SCOPE, 0, 20)),
                page(ordered, row("41373559241", 15, 2, SCOPE, 0, 21)),
                page(ordered, row("52891047363", 15, 1, SCOPE, 0, 30)));
        assertThat(values(pages, new VersionResolution(true, Optional.empty()), ordered)).containsExactlyInAnyOrder(11L, 12L, 21L, 30L);
    }

    private List<Long> values(List<Page> pages, VersionResolution resolution)
    {
        return values(pages, resolution, layout);
    }

    private static List<Long> values(List<Page> pages, VersionResolution resolution, VersionResolution.Layout layout)
    {
        List<Long> values = new ArrayList<>();
        try (ConnectorPageSource source = new VersionResolvingPageSource(new FixedPageSource(pages), resolution, layout)) {
            while (!source.isFinished()) {
                SourcePage page = source.getNextSourcePage();
                if (page == null) {
                    continue;
                }
                assertThat(page.getChannelCount()).isEqualTo(1);
                Block block = page.getBlock(0);
                for (int position = 0; position < page.getPositionCount(); position++) {
                    values.add(QUANTITY.getLong(block, position) / 1_000_000);
                }
            }
        }
        catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return values;
    }

    private record Row(String maloId, int minute, long version, String scope, int recordedDaysLater, long value) {}

    private static Row row(String maloId, int minute, long version, String scope, int recordedDaysLater, long value)
    {
        return new Row(maloId, minute, version, scope, recordedDaysLater, value);
    }

    private Page page(Row... rows)
    {
        return page(layout, rows);
    }

    private static Page page(VersionResolution.Layout layout, Row... rows)
    {
        PageBuilder builder = new PageBuilder(layout.columns().stream().map(MeterstoreColumnHandle::type).toList());
        for (Row row : rows) {
            builder.declarePosition();
            QUANTITY.writeLong(builder.getBlockBuilder(0), row.value() * 1_000_000);
            VARCHAR.writeSlice(builder.getBlockBuilder(layout.maloId()), utf8Slice(row.maloId()));
            VARCHAR.writeSlice(builder.getBlockBuilder(layout.obisCode()), utf8Slice("1-1:1.29.0"));
            MeterstoreTypes.TIMESTAMP_TZ_MICROS.writeObject(builder.getBlockBuilder(layout.from()), MeterstoreTypes.toTimestamp(MeterstoreTypes.toEpochMicros(FROM.plusSeconds(60L * row.minute()))));
            VARCHAR.writeSlice(builder.getBlockBuilder(layout.versionScope()), utf8Slice(row.scope()));
            if (!layout.inVersionOrder()) {
                MeterstoreTypes.VERSION.writeObject(builder.getBlockBuilder(layout.version()), Int128.valueOf(row.version()));
                MeterstoreTypes.TIMESTAMP_TZ_MICROS.writeObject(builder.getBlockBuilder(layout.recordedAt()), MeterstoreTypes.toTimestamp(MeterstoreTypes.toEpochMicros(RECORDED.plusSeconds(86_400L * row.recordedDaysLater()))));
            }
        }
        return builder.build();
    }
}
