package io.meterstore.trino.versions;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableSet;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.ResolutionRule;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.meterstore.trino.base.MeterstoreTypes;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.Range;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.predicate.ValueSet;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static io.meterstore.core.ReadingsColumn.FROM;
import static io.meterstore.core.ReadingsColumn.MALO_ID;
import static io.meterstore.core.ReadingsColumn.OBIS_CODE;
import static io.meterstore.core.ReadingsColumn.RECORDED_AT;
import static io.meterstore.core.ReadingsColumn.VERSION;
import static io.meterstore.core.ReadingsColumn.VERSION_SCOPE;
import static java.util.Objects.requireNonNull;

/**
 * How a read resolves versions: the winner of a merge key (malo_id, obis_code, "from", and the columns a table's shape adds
 * to it) is max(version) within its
 * version_scope, ties broken by the latest recorded_at; FOR TIMESTAMP AS OF first drops every version recorded after
 * the instant. A read of {@code <table>_versions} without AS OF needs neither and reads its columns as they are.
 *
 * @param resolve whether to keep only the winning version of each merge key
 * @param knownAtEpochMicros keep only versions recorded at or before this instant, before resolution
 */
public record VersionResolution(boolean resolve, Optional<Long> knownAtEpochMicros)
{
    /** Columns whose predicates select whole merge keys, so they may be applied before resolution. */
    private static final Set<ReadingsColumn> KEY_COLUMNS = ImmutableSet.copyOf(ResolutionRule.PARTITION);
    /** What resolution reads besides the query's columns, in the order of {@link Layout}'s channels. */
    private static final List<ReadingsColumn> RESOLUTION_COLUMNS = ImmutableList.of(MALO_ID, OBIS_CODE, FROM, VERSION, VERSION_SCOPE, RECORDED_AT);
    /** What resolution reads from a tier that orders each key's versions itself: the key and the version scope. */
    private static final List<ReadingsColumn> ORDERED_RESOLUTION_COLUMNS = ImmutableList.of(MALO_ID, OBIS_CODE, FROM, VERSION_SCOPE);

    public static final VersionResolution NONE = new VersionResolution(false, Optional.empty());

    public VersionResolution
    {
        requireNonNull(knownAtEpochMicros, "knownAtEpochMicros is null");
    }

    public boolean isNone()
    {
        return !resolve && knownAtEpochMicros.isEmpty();
    }

    /**
     * The part of a predicate that may be applied before resolution: on the merge key's columns (malo_id, obis_code,
     * "from", and a table's melo_id or identity columns where its key holds them), which select every version of a key or
     * none. A predicate on any other column (value, quality, ...) would drop the winning version and let an older one
     * win, so it stays with Trino, after resolution.
     */
    public TupleDomain<MeterstoreColumnHandle> pushable(TupleDomain<MeterstoreColumnHandle> predicate)
    {
        if (!resolve) {
            return predicate;
        }
        return predicate.filter((column, _) -> column.readingsColumn().filter(KEY_COLUMNS::contains).isPresent() || column.column().keyColumn());
    }

    /** The predicate the tiers prune with: the pushable part, and recorded_at <= t for AS OF. */
    public TupleDomain<MeterstoreColumnHandle> pruning(TupleDomain<MeterstoreColumnHandle> predicate)
    {
        TupleDomain<MeterstoreColumnHandle> pruning = pushable(predicate);
        if (knownAtEpochMicros.isPresent()) {
            MeterstoreColumnHandle recordedAt = MeterstoreTypes.columnHandle(RECORDED_AT);
            Domain knownAt = Domain.create(ValueSet.ofRanges(Range.lessThanOrEqual(recordedAt.type(), MeterstoreTypes.toTimestamp(knownAtEpochMicros.get()))), false);
            pruning = pruning.intersect(TupleDomain.withColumnDomains(Map.of(recordedAt, knownAt)));
        }
        return pruning;
    }

    /** The columns a tier reads: the query's, then those resolution needs and the query does not read. */
    public Layout layout(List<MeterstoreColumnHandle> columns)
    {
        return layout(columns, List.of());
    }

    /**
     * As {@link #layout(List)}, of a table whose merge key has {@code keyColumns} besides malo_id, obis_code and "from"
     * (melo_id in a table keyed by it, the identity columns), which resolution reads too.
     */
    public Layout layout(List<MeterstoreColumnHandle> columns, List<MeterstoreColumnHandle> keyColumns)
    {
        return layout(columns, keyColumns, RESOLUTION_COLUMNS, false);
    }

    /**
     * The columns of a read whose tier returns each key's versions in ascending version order, and none recorded after
     * the AS OF instant: a hot partition read in primary-key order (malo_id, obis_code, "from", version) with
     * recorded_at &lt;= t in its statement. The last version of a scope is then its winner, so version and recorded_at
     * are not read: at 10,000 meters their output and decoding were more than a third of PostgreSQL's ordered read.
     */
    public Layout layoutInVersionOrder(List<MeterstoreColumnHandle> columns)
    {
        return layoutInVersionOrder(columns, List.of());
    }

    /** As {@link #layoutInVersionOrder(List)}, of a table whose merge key has {@code keyColumns} besides malo_id, obis_code and "from". */
    public Layout layoutInVersionOrder(List<MeterstoreColumnHandle> columns, List<MeterstoreColumnHandle> keyColumns)
    {
        return layout(columns, keyColumns, ORDERED_RESOLUTION_COLUMNS, true);
    }

    private static Layout layout(List<MeterstoreColumnHandle> columns, List<MeterstoreColumnHandle> keyColumns, List<ReadingsColumn> resolutionColumns, boolean inVersionOrder)
    {
        List<MeterstoreColumnHandle> read = new ArrayList<>(columns);
        int[] resolutionChannels = new int[RESOLUTION_COLUMNS.size()];
        for (int index = 0; index < RESOLUTION_COLUMNS.size(); index++) {
            MeterstoreColumnHandle column = MeterstoreTypes.columnHandle(RESOLUTION_COLUMNS.get(index));
            int channel = read.indexOf(column);
            if (channel < 0 && resolutionColumns.contains(RESOLUTION_COLUMNS.get(index))) {
                channel = read.size();
                read.add(column);
            }
            resolutionChannels[index] = channel;
        }
        int[] keyChannels = new int[keyColumns.size()];
        for (int index = 0; index < keyColumns.size(); index++) {
            int channel = read.indexOf(keyColumns.get(index));
            if (channel < 0) {
                channel = read.size();
                read.add(keyColumns.get(index));
            }
            keyChannels[index] = channel;
        }
        return new Layout(ImmutableList.copyOf(read), columns.size(), resolutionChannels, keyChannels, inVersionOrder);
    }

    /**
     * The columns a tier reads for a resolving read.
     *
     * @param columns what the tier reads: the query's columns first, then the ones resolution adds
     * @param outputChannels how many leading channels the query asked for
     * @param resolutionChannels the channels of malo_id, obis_code, "from", version, version_scope, recorded_at; -1 for
     * version and recorded_at when they are not read
     * @param keyChannels the channels of the merge key's columns after malo_id, obis_code and "from" (melo_id in a table
     * keyed by it, the identity columns); none for the default key
     * @param inVersionOrder the tier returns each key's versions in ascending version order and none recorded after the
     * AS OF instant, so a later row of a key's scope beats an earlier one
     */
    public record Layout(List<MeterstoreColumnHandle> columns, int outputChannels, int[] resolutionChannels, int[] keyChannels, boolean inVersionOrder)
    {
        public Layout
        {
            columns = ImmutableList.copyOf(requireNonNull(columns, "columns is null"));
            requireNonNull(resolutionChannels, "resolutionChannels is null");
            requireNonNull(keyChannels, "keyChannels is null");
        }

        int maloId()
        {
            return resolutionChannels[0];
        }

        int obisCode()
        {
            return resolutionChannels[1];
        }

        int from()
        {
            return resolutionChannels[2];
        }

        int version()
        {
            return resolutionChannels[3];
        }

        int versionScope()
        {
            return resolutionChannels[4];
        }

        int recordedAt()
        {
            return resolutionChannels[5];
        }
    }
}
