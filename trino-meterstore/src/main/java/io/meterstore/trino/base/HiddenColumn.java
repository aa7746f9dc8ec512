package io.meterstore.trino.base;

import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.Tier;
import io.trino.spi.connector.ColumnHandle;
import io.trino.spi.connector.ColumnMetadata;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.Range;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.predicate.ValueSet;
import io.trino.spi.type.LongTimestampWithTimeZone;
import io.trino.spi.type.Type;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static com.google.common.collect.ImmutableMap.toImmutableMap;
import static io.airlift.slice.Slices.utf8Slice;
import static io.trino.spi.type.VarcharType.VARCHAR;

/**
 * What an answer stands on, as hidden columns of every served table (as Trino's Iceberg connector has "$path"): the
 * tier a row was read from and the watermark W the query was planned against. Both are constant for a split, which
 * reads one tier at the W pinned in the table handle; {@code SELECT *} and DESCRIBE leave them out.
 */
public enum HiddenColumn
{
    /** 'cold' for a row whose "from" lies below W, 'hot' at or above it: the tier that answered for it. */
    TIER("$tier", VARCHAR),
    /** The watermark W pinned in the table handle: the query's, or the snapshot's read FOR VERSION AS OF. */
    WATERMARK("$watermark", MeterstoreTypes.TIMESTAMP_TZ_MICROS);

    /**
     * The "from" range a predicate on the hidden columns leaves to read: "$tier" = 'cold' is "from" &lt; W, since the
     * tier of a row is the side of W its "from" lies on, so a tier no row of the answer can come from is never read.
     */
    public static TupleDomain<MeterstoreColumnHandle> pruning(TupleDomain<ColumnHandle> predicate, long watermarkEpochMicros)
    {
        if (predicate.isNone()) {
            return TupleDomain.none();
        }
        Map<HiddenColumn, Domain> hidden = predicate.getDomains().orElseThrow().entrySet().stream()
                .filter(entry -> entry.getKey() instanceof HiddenColumnHandle)
                .collect(toImmutableMap(entry -> ((HiddenColumnHandle) entry.getKey()).column(), Map.Entry::getValue));
        List<Tier> read = Arrays.stream(Tier.values())
                .filter(tier -> hidden.entrySet().stream().allMatch(entry -> entry.getKey().holds(entry.getValue(), tier, watermarkEpochMicros)))
                .toList();
        if (read.size() == Tier.values().length) {
            return TupleDomain.all();
        }
        if (read.isEmpty()) {
            return TupleDomain.none();
        }
        MeterstoreColumnHandle from = MeterstoreTypes.columnHandle(ReadingsColumn.FROM);
        LongTimestampWithTimeZone watermark = MeterstoreTypes.toTimestamp(watermarkEpochMicros);
        Range range = switch (read.getFirst()) {
            case COLD -> Range.lessThan(from.type(), watermark);
            case HOT -> Range.greaterThanOrEqual(from.type(), watermark);
        };
        return TupleDomain.withColumnDomains(Map.of(from, Domain.create(ValueSet.ofRanges(range), false)));
    }

    private final String columnName;
    private final Type type;

    HiddenColumn(String columnName, Type type)
    {
        this.columnName = columnName;
        this.type = type;
    }

    public String columnName()
    {
        return columnName;
    }

    public Type type()
    {
        return type;
    }

    public ColumnMetadata toColumnMetadata()
    {
        return ColumnMetadata.builder()
                .setName(columnName)
                .setType(type)
                .setNullable(false)
                .setHidden(true)
                .build();
    }

    /** Whether {@code domain}, a predicate on this column, holds for the rows of {@code tier} read at W. */
    public boolean holds(Domain domain, Tier tier, long watermarkEpochMicros)
    {
        return domain.includesNullableValue(value(tier, watermarkEpochMicros));
    }

    /** This column's value, in Trino's native representation of its type, for every row of a split of {@code tier} read at W. */
    public Object value(Tier tier, long watermarkEpochMicros)
    {
        return switch (this) {
            case TIER -> utf8Slice(tier.name().toLowerCase(Locale.ROOT));
            case WATERMARK -> MeterstoreTypes.toTimestamp(watermarkEpochMicros);
        };
    }
}
