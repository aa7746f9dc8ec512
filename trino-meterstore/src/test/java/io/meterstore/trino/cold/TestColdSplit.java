package io.meterstore.trino.cold;

import io.airlift.json.JsonCodec;
import io.trino.spi.SplitWeight;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;

import static io.airlift.json.JsonCodec.jsonCodec;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class TestColdSplit
{
    private static final JsonCodec<ColdSplit> CODEC = jsonCodec(ColdSplit.class);

    @Test
    void testJsonRoundTrip()
    {
        ColdSplit split = new ColdSplit("file:///warehouse/meterstore/readings/data/from_month=2024-01/a.parquet", 4, 1_000, 2_000, 96);
        assertThat(CODEC.fromJson(CODEC.toJson(split))).isEqualTo(split);
    }

    @Test
    void testJsonRoundTripWithDeletesAndKeyRanges()
    {
        ColdSplit split = new ColdSplit("file:///warehouse/a.winners.parquet", 4, 1_000, 2_000, 96,
                List.of(new ColdDeleteFile("file:///warehouse/a.deletes.parquet", 300, 2)));
        assertThat(CODEC.fromJson(CODEC.toJson(split))).isEqualTo(split);
        ColdSplit other = new ColdSplit("file:///warehouse/b.superseded.parquet", 0, 500, 500, 12);
        ColdSplit wholeFile = new ColdSplit(split.path(), 0, split.fileSize(), split.fileSize(), split.fileRecordCount(), split.deletes());
        ColdFileGroupSplit group = new ColdFileGroupSplit(List.of(wholeFile, other),
                new KeyRange(Optional.of(1_000L), Optional.empty(), Optional.of("51000000003"), Optional.of("51000000100")));
        JsonCodec<ColdFileGroupSplit> groupCodec = jsonCodec(ColdFileGroupSplit.class);
        assertThat(groupCodec.fromJson(groupCodec.toJson(group))).isEqualTo(group);
        ColdFileGroupSplit single = new ColdFileGroupSplit(List.of(other), KeyRange.ALL);
        assertThat(groupCodec.fromJson(groupCodec.toJson(single))).isEqualTo(single);
    }

    @Test
    void testRetainedSizeCountsThePath()
    {
        ColdSplit shortPath = new ColdSplit("file:///a", 0, 10, 10, 1);
        ColdSplit longPath = new ColdSplit("file:///" + "a".repeat(1_000), 0, 10, 10, 1);
        assertThat(longPath.getRetainedSizeInBytes()).isGreaterThan(shortPath.getRetainedSizeInBytes() + 1_000);
    }

    @Test
    void testCoversWholeFile()
    {
        assertThat(new ColdSplit("file:///a", 0, 100, 100, 1).coversWholeFile()).isTrue();
        // the first row group starts after the 4-byte magic
        assertThat(new ColdSplit("file:///a", 4, 96, 100, 1).coversWholeFile()).isTrue();
        assertThat(new ColdSplit("file:///a", 40, 60, 100, 1).coversWholeFile()).isFalse();
        assertThat(new ColdSplit("file:///a", 0, 60, 100, 1).coversWholeFile()).isFalse();
    }

    @Test
    void testRangeMustLieInFile()
    {
        assertThatThrownBy(() -> new ColdSplit("file:///a", 50, 60, 100, 1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("range [50, 110) exceeds file size 100");
    }

    @Test
    void testSplitWeightFollowsTheRangeSize()
    {
        long target = ColdSplitPlanner.TARGET_SPLIT_SIZE_BYTES;
        assertThat(new ColdSplit("file:///a", 4, target, target + 4, 1).getSplitWeight()).isEqualTo(SplitWeight.standard());
        assertThat(new ColdSplit("file:///a", 4, target / 4, target, 1).getSplitWeight()).isEqualTo(SplitWeight.fromProportion(0.25));
        // a tiny range still costs a footer read
        assertThat(new ColdSplit("file:///a", 4, 100, 104, 1).getSplitWeight()).isEqualTo(SplitWeight.fromProportion(0.05));
    }
}
