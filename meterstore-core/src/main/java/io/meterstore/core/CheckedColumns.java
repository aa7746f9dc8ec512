package io.meterstore.core;

import com.google.common.collect.ImmutableMap;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * A table's checked columns ({@link TableShape#checkedColumns()}) applied to its readings: each value parsed by its
 * column's {@link ValueCheck} and given its canonical spelling, which is what the write path stores. NULL stays NULL in
 * a column that may hold it; a column that may not is the readings model's to refuse.
 */
public final class CheckedColumns
{
    private final Map<String, ValueCheck> checks;
    // those a stored reading needs besides Reading.validate, which refuses a MaLo-ID or MeLo-ID spelt otherwise already
    private final Map<String, ValueCheck> storedChecks;
    // the columns after the readings columns, in the order of a reading's attributes
    private final List<String> attributeNames;

    public CheckedColumns(Map<String, ValueCheck> checks, List<String> attributeNames)
    {
        this.checks = ImmutableMap.copyOf(requireNonNull(checks, "checks is null"));
        this.attributeNames = List.copyOf(requireNonNull(attributeNames, "attributeNames is null"));
        for (String column : checks.keySet()) {
            checkArgument(readingsColumn(column).isPresent() || attributeNames.contains(column), "Checked column '%s' is not a column of the table", column);
        }
        this.storedChecks = this.checks.entrySet().stream()
                .filter(check -> !check.getKey().equals(ReadingsColumn.MALO_ID.columnName()) && !check.getKey().equals(ReadingsColumn.MELO_ID.columnName()))
                .collect(ImmutableMap.toImmutableMap(Map.Entry::getKey, Map.Entry::getValue));
    }

    /** The checked columns of a table of {@code shape}. */
    public static CheckedColumns of(TableShape shape)
    {
        return new CheckedColumns(shape.checkedColumns(), TableColumns.of(shape).attributeNames());
    }

    /**
     * {@code reading} with the value of every checked column in its canonical spelling; throws
     * {@link InvalidReadingException} naming the column, the value and its check for one that does not parse.
     */
    public Reading canonical(Reading reading)
    {
        return apply(reading, checks, false);
    }

    /**
     * Refuses a stored {@code reading} whose checked columns do not hold canonical values (a writer straight into
     * PostgreSQL passes the shape CHECKs with a wrong check character, rows stored before them with any spelling):
     * archival must not carry one into Iceberg.
     */
    public Reading requireCanonical(Reading reading)
    {
        if (storedChecks.isEmpty()) {
            return reading;
        }
        return apply(reading, storedChecks, true);
    }

    private Reading apply(Reading reading, Map<String, ValueCheck> applied, boolean stored)
    {
        String maloId = reading.maloId();
        Optional<String> meloId = reading.meloId();
        String sourceKind = reading.sourceKind();
        Optional<String> sourceDetail = reading.sourceDetail();
        Optional<String> provenance = reading.provenance();
        List<Optional<String>> attributes = new ArrayList<>(reading.attributes());
        for (Map.Entry<String, ValueCheck> entry : applied.entrySet()) {
            String column = entry.getKey();
            ValueCheck check = entry.getValue();
            UnaryOperator<String> canonical = value -> {
                String spelled = check.canonical(column, value);
                if (stored && !spelled.equals(value)) {
                    throw new InvalidReadingException("Column '%s' holds '%s', whose canonical spelling as %s is '%s'".formatted(column, value, check, spelled));
                }
                return spelled;
            };
            Optional<ReadingsColumn> readingsColumn = readingsColumn(column);
            if (readingsColumn.isEmpty()) {
                int attribute = attributeNames.indexOf(column);
                attributes.set(attribute, attributes.get(attribute).map(canonical));
                continue;
            }
            switch (readingsColumn.get()) {
                case MALO_ID -> maloId = canonical.apply(maloId);
                case MELO_ID -> meloId = meloId.map(canonical);
                case SOURCE_KIND -> sourceKind = canonical.apply(sourceKind);
                case SOURCE_DETAIL -> sourceDetail = sourceDetail.map(canonical);
                case PROVENANCE -> provenance = provenance.map(canonical);
                case OBIS_CODE, SPARTE, FROM, TO, VALUE, UNIT, QUALITY, RESOLUTION, VERSION, VERSION_SCOPE, RECORDED_AT, BALANCING_DAY ->
                        throw new IllegalStateException("Column '%s' is not one a check names".formatted(column));
            }
        }
        if (stored) {
            return reading;
        }
        return new Reading(maloId, meloId, reading.obisCode(), reading.sparte(), reading.from(), reading.to(), reading.value(), reading.unit(), reading.quality(),
                reading.resolution(), sourceKind, sourceDetail, provenance, reading.version(), reading.versionScope(), reading.recordedAt(), reading.balancingDay(), attributes);
    }

    private static Optional<ReadingsColumn> readingsColumn(String name)
    {
        return Arrays.stream(ReadingsColumn.values()).filter(column -> column.columnName().equals(name)).findFirst();
    }
}
