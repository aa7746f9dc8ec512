package io.meterstore.archiver.cycle;

import io.meterstore.core.HotPartition;
import io.meterstore.core.HotTier;
import io.meterstore.core.TieringWatermark;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;

import static com.google.common.base.Preconditions.checkArgument;
import static com.google.common.collect.ImmutableList.toImmutableList;
import static com.google.common.collect.ImmutableSet.toImmutableSet;
import static java.util.Objects.requireNonNull;

/**
 * The hot partitions ahead of now, as the Rust MeterStore's partition headroom: each cycle makes sure a partition holds
 * every instant of {@code [now, now + headroom)}, so writers find the partition of the interval they write (no DDL in
 * their statement, no wait for the partition lock) and a table nobody wrote today still has partitions ahead of now,
 * which is what status and {@code "<table>$watermark"} count as healthy. Partitions are created as writers create
 * them ({@link HotTier#ensurePartition}: one step wide, cut short by a neighbour, under the table's DDL lock), never
 * below W, whose rows belong to Iceberg.
 */
public final class PartitionHeadroom
{
    private PartitionHeadroom() {}

    /** Creates the partitions missing from {@code [now, now + headroom)} above {@code watermark}; returns their names. */
    public static List<String> ensure(Connection connection, HotTier hotTier, TieringWatermark watermark, Instant now, Duration headroom)
            throws SQLException
    {
        requireNonNull(watermark, "watermark is null");
        checkArgument(!headroom.isNegative(), "Partition headroom must not be negative");
        Instant end = now.plus(headroom);
        Set<String> before = names(hotTier.partitions(connection));
        Instant instant = watermark.isHot(now) ? now : watermark.instant();
        while (instant.isBefore(end)) {
            hotTier.ensurePartition(connection, instant);
            instant = hotTier.naming().alignDown(instant).plus(hotTier.naming().step());
        }
        return hotTier.partitions(connection).stream()
                .map(HotPartition::name)
                .filter(name -> !before.contains(name))
                .collect(toImmutableList());
    }

    private static Set<String> names(List<HotPartition> partitions)
    {
        return partitions.stream().map(HotPartition::name).collect(toImmutableSet());
    }
}
