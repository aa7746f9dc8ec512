package io.meterstore.core;

import java.math.BigInteger;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import static io.meterstore.core.ReadingsColumn.FROM;
import static io.meterstore.core.ReadingsColumn.MALO_ID;
import static io.meterstore.core.ReadingsColumn.OBIS_CODE;
import static io.meterstore.core.ReadingsColumn.RECORDED_AT;
import static io.meterstore.core.ReadingsColumn.VERSION;
import static io.meterstore.core.ReadingsColumn.VERSION_SCOPE;
import static java.util.Objects.requireNonNull;

/**
 * Which version of a reading wins: within its merge key (malo_id, obis_code, "from") and version scope, the highest
 * version, a tie broken by the latest recorded_at. The connector resolves reads with it ({@link #compare}), the writers
 * of the cold tier split winners from superseded versions with it ({@link #beats}); another engine reading the raw
 * rows applies it as {@link #sql}, the statement {@code "<table>$resolution"} publishes. A key delivered under two
 * version scopes has a winner in each.
 */
public final class ResolutionRule
{
    /** A winner is chosen among the versions that agree on these: the merge key and the version scope. */
    public static final List<ReadingsColumn> PARTITION = List.of(MALO_ID, OBIS_CODE, FROM, VERSION_SCOPE);
    /**
     * The columns of {@link #PARTITION} for a table whose merge key has {@code keyColumns} besides malo_id, obis_code and
     * "from" ({@link TableColumns#keyNames()}): a winner per key and version scope.
     */
    public static List<String> partition(List<String> keyColumns)
    {
        return Stream.of(Stream.of(MALO_ID.columnName(), OBIS_CODE.columnName(), FROM.columnName()), keyColumns.stream(), Stream.of(VERSION_SCOPE.columnName()))
                .flatMap(columns -> columns)
                .toList();
    }

    /** The winner is the first in this order, each descending. */
    public static final List<ReadingsColumn> ORDER = List.of(VERSION, RECORDED_AT);

    private ResolutionRule() {}

    /** Positive when the first version beats the second, negative when it loses, zero when they are equal. */
    public static int compare(BigInteger version, Instant recordedAt, BigInteger otherVersion, Instant otherRecordedAt)
    {
        int byVersion = version.compareTo(otherVersion);
        if (byVersion != 0) {
            return byVersion;
        }
        return recordedAt.compareTo(otherRecordedAt);
    }

    /**
     * As {@link #compare(BigInteger, Instant, BigInteger, Instant)}, for versions held as the two halves of a signed
     * 128-bit integer (as Trino's decimal(20,0) blocks hold them) and recorded_at as microseconds since the epoch.
     */
    public static int compare(long versionHigh, long versionLow, long recordedAtMicros, long otherVersionHigh, long otherVersionLow, long otherRecordedAtMicros)
    {
        int byVersion = Long.compare(versionHigh, otherVersionHigh);
        if (byVersion == 0) {
            byVersion = Long.compareUnsigned(versionLow, otherVersionLow);
        }
        if (byVersion != 0) {
            return byVersion;
        }
        return Long.compare(recordedAtMicros, otherRecordedAtMicros);
    }

    /** Whether {@code reading} beats {@code other}, a version of the same key and scope. */
    public static boolean beats(Reading reading, Reading other)
    {
        return compare(reading.version(), reading.recordedAt(), other.version(), other.recordedAt()) > 0;
    }

    /** Whether two versions compete: the same merge key in the same version scope. */
    public static boolean sameKey(Reading reading, Reading other)
    {
        requireNonNull(reading, "reading is null");
        requireNonNull(other, "other is null");
        return reading.maloId().equals(other.maloId())
                && reading.obisCode().equals(other.obisCode())
                && reading.from().equals(other.from())
                && reading.versionScope().equals(other.versionScope());
    }

    /** The winners of {@code relation} (every version of every reading) in plain SQL, for any engine. */
    public static String sql(String relation)
    {
        return sql(relation, TableColumns.READINGS);
    }

    /** As {@link #sql(String)}, of a table of {@code table}: its attribute columns, which the rule never reads, selected too. */
    public static String sql(String relation, TableColumns table)
    {
        String columns = String.join(", ", Stream.concat(Arrays.stream(ReadingsColumn.values()).map(ResolutionRule::quoted), table.attributeNames().stream()).toList());
        return """
                SELECT %s FROM (
                  SELECT *, ROW_NUMBER() OVER (
                    PARTITION BY %s
                    ORDER BY %s
                  ) AS meterstore_rank
                  FROM %s
                ) AS meterstore_resolved WHERE meterstore_rank = 1""".formatted(
                columns,
                String.join(", ", Stream.of(Stream.of(MALO_ID, OBIS_CODE, FROM).map(ResolutionRule::quoted), table.keyNames().stream(), Stream.of(quoted(VERSION_SCOPE)))
                        .flatMap(names -> names).toList()),
                String.join(", ", ORDER.stream().map(column -> quoted(column) + " DESC").toList()),
                relation);
    }

    private static String quoted(ReadingsColumn column)
    {
        // "from" and "to" are reserved words in every SQL dialect
        return column == FROM || column == ReadingsColumn.TO ? Sql.quoteIdentifier(column.columnName()) : column.columnName();
    }
}
