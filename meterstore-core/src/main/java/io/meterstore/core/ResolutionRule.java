package io.meterstore.core;

import java.util.Arrays;
import java.util.List;

import static io.meterstore.core.ReadingsColumn.FROM;
import static io.meterstore.core.ReadingsColumn.MALO_ID;
import static io.meterstore.core.ReadingsColumn.OBIS_CODE;
import static io.meterstore.core.ReadingsColumn.RECORDED_AT;
import static io.meterstore.core.ReadingsColumn.VERSION;
import static io.meterstore.core.ReadingsColumn.VERSION_SCOPE;

/**
 * Which version of a reading wins: within its merge key (malo_id, obis_code, "from") and version scope, the highest
 * version, a tie broken by the latest recorded_at. The connector resolves by it as it reads; another engine reading
 * the raw rows applies it as {@link #sql}, the statement {@code "<table>$resolution"} publishes.
 */
public final class ResolutionRule
{
    /** A winner is chosen among the versions that agree on these: the merge key and the version scope. */
    public static final List<ReadingsColumn> PARTITION = List.of(MALO_ID, OBIS_CODE, FROM, VERSION_SCOPE);
    /** The winner is the first in this order, each descending. */
    public static final List<ReadingsColumn> ORDER = List.of(VERSION, RECORDED_AT);

    private ResolutionRule() {}

    /** The winners of {@code relation} (every version of every reading) in plain SQL, for any engine. */
    public static String sql(String relation)
    {
        String columns = String.join(", ", Arrays.stream(ReadingsColumn.values()).map(ResolutionRule::quoted).toList());
        return """
                SELECT %s FROM (
                  SELECT *, ROW_NUMBER() OVER (
                    PARTITION BY %s
                    ORDER BY %s
                  ) AS meterstore_rank
                  FROM %s
                ) AS meterstore_resolved WHERE meterstore_rank = 1""".formatted(
                columns,
                String.join(", ", PARTITION.stream().map(ResolutionRule::quoted).toList()),
                String.join(", ", ORDER.stream().map(column -> quoted(column) + " DESC").toList()),
                relation);
    }

    private static String quoted(ReadingsColumn column)
    {
        // "from" and "to" are reserved words in every SQL dialect
        return column == FROM || column == ReadingsColumn.TO ? Sql.quoteIdentifier(column.columnName()) : column.columnName();
    }
}
