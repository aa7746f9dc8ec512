package io.meterstore.core;

import io.meterstore.core.TierSplit.Range;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.util.DateTimeUtil;

import java.time.Instant;
import java.util.Optional;

/**
 * The one rule that puts a row in a tier: Iceberg (cold) holds the rows with "from" &lt; W, PostgreSQL (hot) those with
 * "from" &gt;= W. A row on the boundary is hot. Every target renders the rule from here: PostgreSQL conditions, Iceberg
 * expressions, ranges of instants. A partition's bound [start, end) divides "from" the same way at each end (its rows
 * are at or above its start, below its end), so the partitions' DDL CHECK and the archiver's bounds render from here too.
 */
public enum Tier
{
    /** "from" below the boundary: at the watermark, the rows Iceberg holds. */
    COLD,
    /** "from" at or above the boundary: at the watermark, the rows PostgreSQL holds. */
    HOT;

    private static final String FROM = ReadingsColumn.FROM.columnName();

    /** The tier of an interval starting at {@code from}. */
    public static Tier of(Instant from, TieringWatermark watermark)
    {
        return side(from, watermark.instant());
    }

    /** The side of {@code boundary} an interval starting at {@code from} lies on: the comparison every rendering spells. */
    public static Tier side(Instant from, Instant boundary)
    {
        return from.isBefore(boundary) ? COLD : HOT;
    }

    /** Whether an interval starting at {@code from} lies on this side of {@code boundary}. */
    public boolean holds(Instant from, Instant boundary)
    {
        return side(from, boundary) == this;
    }

    /** This side of {@code boundary} as a half-open range of instants. */
    public Range range(Instant boundary)
    {
        return switch (this) {
            case COLD -> new Range(Optional.empty(), Optional.of(boundary));
            case HOT -> new Range(Optional.of(boundary), Optional.empty());
        };
    }

    /** PostgreSQL: the condition on "from" for this side of {@code boundary}, an SQL operand (a bind marker, a cast parameter, a literal). */
    public String sql(String boundary)
    {
        String operator = switch (this) {
            case COLD -> " < ";
            case HOT -> " >= ";
        };
        return Sql.quoteIdentifier(FROM) + operator + boundary;
    }

    /** PostgreSQL: "from" in [{@code lower}, {@code upper}), both SQL operands. */
    public static String sqlBetween(String lower, String upper)
    {
        return HOT.sql(lower) + " AND " + COLD.sql(upper);
    }

    /** Iceberg: the expression selecting this side of {@code boundary}, for planning and pruning. */
    public Expression iceberg(Instant boundary)
    {
        long micros = DateTimeUtil.microsFromInstant(boundary);
        return switch (this) {
            case COLD -> Expressions.lessThan(FROM, micros);
            case HOT -> Expressions.greaterThanOrEqual(FROM, micros);
        };
    }

    /** Iceberg: "from" in [{@code lower}, {@code upper}). */
    public static Expression icebergBetween(Instant lower, Instant upper)
    {
        return Expressions.and(HOT.iceberg(lower), COLD.iceberg(upper));
    }
}
