package io.meterstore.core;

import io.meterstore.core.Sparte.MeasurementUnit;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.YearMonth;
import java.util.List;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * One version of one reading: a row of {@code readings_versions}, in both tiers. A reading of an interval table spans
 * ["from", "to"); one of a point table ({@link TableShape.TimeModel#POINT}) is the register at "from" and has no "to".
 *
 * @param attributes the values of the table's attribute columns ({@link TableColumns#attributes()}), in their order:
 *        carried with the reading, compared as its payload, never read by the resolution; empty for a table without them
 */
public record Reading(
        String maloId,
        Optional<String> meloId,
        String obisCode,
        Sparte sparte,
        Instant from,
        Optional<Instant> to,
        BigDecimal value,
        MeasurementUnit unit,
        Quality quality,
        String resolution,
        String sourceKind,
        Optional<String> sourceDetail,
        Optional<String> provenance,
        BigInteger version,
        String versionScope,
        Instant recordedAt,
        LocalDate balancingDay,
        List<Optional<String>> attributes)
{
    public static final int VALUE_PRECISION = 18;
    public static final int VALUE_SCALE = 6;
    private static final BigInteger MAX_VERSION = BigInteger.TEN.pow(20);

    public Reading
    {
        requireNonNull(maloId, "maloId is null");
        requireNonNull(meloId, "meloId is null");
        requireNonNull(obisCode, "obisCode is null");
        requireNonNull(sparte, "sparte is null");
        requireNonNull(from, "from is null");
        requireNonNull(to, "to is null");
        requireNonNull(value, "value is null");
        requireNonNull(unit, "unit is null");
        requireNonNull(quality, "quality is null");
        requireNonNull(resolution, "resolution is null");
        requireNonNull(sourceKind, "sourceKind is null");
        requireNonNull(sourceDetail, "sourceDetail is null");
        requireNonNull(provenance, "provenance is null");
        requireNonNull(version, "version is null");
        requireNonNull(versionScope, "versionScope is null");
        requireNonNull(recordedAt, "recordedAt is null");
        requireNonNull(balancingDay, "balancingDay is null");
        attributes = List.copyOf(requireNonNull(attributes, "attributes is null"));
    }

    /** A reading of a table without attribute columns. */
    public Reading(
            String maloId,
            Optional<String> meloId,
            String obisCode,
            Sparte sparte,
            Instant from,
            Optional<Instant> to,
            BigDecimal value,
            MeasurementUnit unit,
            Quality quality,
            String resolution,
            String sourceKind,
            Optional<String> sourceDetail,
            Optional<String> provenance,
            BigInteger version,
            String versionScope,
            Instant recordedAt,
            LocalDate balancingDay)
    {
        this(maloId, meloId, obisCode, sparte, from, to, value, unit, quality, resolution, sourceKind, sourceDetail, provenance, version, versionScope, recordedAt, balancingDay, List.of());
    }

    /** This reading carrying {@code attributes}, the values of its table's attribute columns in their order. */
    public Reading withAttributes(List<Optional<String>> attributes)
    {
        return new Reading(maloId, meloId, obisCode, sparte, from, to, value, unit, quality, resolution, sourceKind, sourceDetail, provenance, version, versionScope, recordedAt, balancingDay, attributes);
    }

    /** An interval reading, over ["from", "to"). */
    public Reading(String maloId, Optional<String> meloId, String obisCode, Sparte sparte, Instant from, Instant to, BigDecimal value, MeasurementUnit unit,
            Quality quality, String resolution, String sourceKind, Optional<String> sourceDetail, Optional<String> provenance, BigInteger version,
            String versionScope, Instant recordedAt, LocalDate balancingDay)
    {
        this(maloId, meloId, obisCode, sparte, from, Optional.of(requireNonNull(to, "to is null")), value, unit, quality, resolution, sourceKind, sourceDetail, provenance,
                version, versionScope, recordedAt, balancingDay);
    }

    /** The time model a reading of this kind belongs to: a point has no "to". */
    public TableShape.TimeModel timeModel()
    {
        return to.isPresent() ? TableShape.TimeModel.INTERVAL : TableShape.TimeModel.POINT;
    }

    /** The end of an interval reading; refused for a point reading, which has none. */
    public Instant end()
    {
        return to.orElseThrow(() -> new IllegalStateException("A point reading has no \"to\""));
    }

    /**
     * Refuses a reading of another time model than {@code table}'s: an interval row into a point table or the reverse
     * would be stored under the wrong meaning of "value".
     */
    public Reading requireTimeModel(TableShape.TimeModel timeModel, String table)
    {
        if (timeModel() == timeModel) {
            return this;
        }
        throw switch (timeModel) {
            case INTERVAL -> new InvalidReadingException("Reading of MaLo-ID '%s' at %s has \"to\" NULL, a register reading, but table '%s' has time_model 'interval': write the interval's end into \"to\", or write register readings into a table created WITH (time_model = 'point')"
                    .formatted(maloId, from, table));
            case POINT -> new InvalidReadingException("Reading [%s, %s) of MaLo-ID '%s' has a \"to\", but table '%s' has time_model 'point', whose value is the register at \"from\": write \"to\" NULL, or write intervals into a table of time_model 'interval'"
                    .formatted(from, to.orElseThrow(), maloId, table));
        };
    }

    /**
     * Refuses a reading without a value in a column of its table's merge key besides malo_id, obis_code and "from"
     * ({@link TableColumns#keyColumns()}: melo_id in a table keyed by it, the identity columns): it would be no reading
     * of the table, and a NULL never identifies one.
     */
    public Reading requireKeyValues(TableColumns columns, String table)
    {
        List<Optional<String>> values = columns.keyValues(this);
        for (int index = 0; index < values.size(); index++) {
            if (values.get(index).isEmpty()) {
                String column = columns.keyColumns().get(index).name();
                throw new InvalidReadingException("Reading of MaLo-ID '%s' at %s has no %s, but table '%s' keys its readings by malo_id, %s, obis_code and \"from\": write the reading's %s"
                        .formatted(maloId, from, column, table, String.join(", ", columns.keyNames()), column));
            }
        }
        return this;
    }

    /**
     * Checks every rule of the model and throws {@link InvalidReadingException} naming the first one broken:
     * identifiers, the unit of the commodity and the OBIS code, the interval on its resolution's grid, the version scope's month,
     * the value's precision.
     */
    public Reading validate()
    {
        MaloId.parse(maloId);
        meloId.ifPresent(MeloId::new);
        sparte.requireFits(unit, new ObisCode(obisCode));
        IntervalResolution grid = IntervalResolution.parse(resolution);
        if (to.isEmpty()) {
            requireOnCadence(grid);
        }
        else {
            if (!from.isBefore(to.get())) {
                throw new InvalidReadingException("Interval [%s, %s) of MaLo-ID '%s' is empty or reversed: \"from\" must be before \"to\"".formatted(from, to.get(), maloId));
            }
            requireOnGrid(grid, to.get());
        }
        BigDecimal scaled;
        try {
            scaled = value.setScale(VALUE_SCALE);
        }
        catch (ArithmeticException e) {
            throw new InvalidReadingException("Value %s of MaLo-ID '%s' at %s has more than %s decimal places".formatted(value.toPlainString(), maloId, from, VALUE_SCALE));
        }
        if (scaled.precision() > VALUE_PRECISION) {
            throw new InvalidReadingException("Value %s of MaLo-ID '%s' at %s does not fit decimal(18,6)".formatted(value.toPlainString(), maloId, from));
        }
        if (version.signum() < 0 || version.compareTo(MAX_VERSION) >= 0) {
            throw new InvalidReadingException("Version %s of MaLo-ID '%s' at %s does not fit decimal(20,0)".formatted(version, maloId, from));
        }
        YearMonth expectedMonth = MeteringCalendar.settlementMonth(sparte, from);
        VersionScope scope = VersionScope.tryParse(versionScope)
                .orElseThrow(() -> new InvalidReadingException("Version scope '%s' of MaLo-ID '%s' must be '<13-digit operator id>:<YYYY-MM>'".formatted(versionScope, maloId)));
        if (!scope.month().equals(expectedMonth)) {
            throw new InvalidReadingException("Version scope '%s' of MaLo-ID '%s' does not cover the interval at %s, whose settlement month is %s".formatted(versionScope, maloId, from, expectedMonth));
        }
        LocalDate expectedDay = MeteringCalendar.balancingDay(sparte, from);
        if (!balancingDay.equals(expectedDay)) {
            throw new InvalidReadingException("Balancing day %s of MaLo-ID '%s' at %s should be %s".formatted(balancingDay, maloId, from, expectedDay));
        }
        return this;
    }

    // both ends on the grid's calendar: a fixed step from the epoch, a P1D row its balancing day, a P1M row its balancing
    // month, each as long as the calendar makes it (23 to 25 hours, 28 to 31 days), so "to" is checked, never derived
    private void requireOnGrid(IntervalResolution grid, Instant to)
    {
        Optional<IntervalResolution.Span> fitting = grid.intervalHolding(sparte, from);
        if (fitting.isEmpty()) {
            throw new InvalidReadingException("Resolution '%s' of MaLo-ID '%s' is a calendar period INSERT does not take: use a step that divides a day (PT15M, PT1H), P1D (one value a balancing day) or P1M (one a balancing month)"
                    .formatted(resolution, maloId));
        }
        IntervalResolution.Span span = fitting.get();
        if (span.from().equals(from) && span.to().equals(to)) {
            return;
        }
        switch (grid.kind()) {
            case FIXED -> {
                Duration step = grid.step().orElseThrow();
                throw new InvalidReadingException("Interval [%s, %s) of MaLo-ID '%s' is not on the %s grid: it must start at a multiple of %s and last exactly %s"
                        .formatted(from, to, maloId, resolution, step, step));
            }
            case DAILY -> throw new InvalidReadingException("Interval [%s, %s) of MaLo-ID '%s' is not a P1D interval of sparte %s, whose day is %s: for balancing day %s write \"from\" %s and \"to\" %s"
                    .formatted(from, to, maloId, sparte, MeteringCalendar.describeBalancingDay(sparte), MeteringCalendar.balancingDay(sparte, from), span.from(), span.to()));
            case MONTHLY -> throw new InvalidReadingException("Interval [%s, %s) of MaLo-ID '%s' is not a P1M interval of sparte %s, whose month is %s: for balancing month %s write \"from\" %s and \"to\" %s"
                    .formatted(from, to, maloId, sparte, MeteringCalendar.describeBalancingMonth(sparte), MeteringCalendar.settlementMonth(sparte, from), span.from(), span.to()));
            case CALENDAR -> throw new IllegalStateException("a calendar period has no interval");
        }
    }

    // a register reading's resolution is its cadence: read at the start of each interval of the grid, so "from" is such
    // a start (a multiple of PT15M, the start of a balancing day for P1D, of a balancing month for P1M)
    private void requireOnCadence(IntervalResolution grid)
    {
        Optional<IntervalResolution.Span> fitting = grid.intervalHolding(sparte, from);
        if (fitting.isEmpty()) {
            throw new InvalidReadingException("Resolution '%s' of MaLo-ID '%s' is a calendar period INSERT does not take: a register reading's resolution is how often it is read, a step that divides a day (PT15M, PT1H), P1D (at the start of each balancing day) or P1M (at the start of each balancing month)"
                    .formatted(resolution, maloId));
        }
        Instant start = fitting.get().from();
        if (start.equals(from)) {
            return;
        }
        throw switch (grid.kind()) {
            case FIXED -> new InvalidReadingException("Register reading of MaLo-ID '%s' at %s is not on its %s cadence: it must be read at a multiple of %s, e.g. %s"
                    .formatted(maloId, from, resolution, grid.step().orElseThrow(), start));
            case DAILY -> new InvalidReadingException("Register reading of MaLo-ID '%s' at %s is not on its P1D cadence: a daily register reading of sparte %s is read at the start of the balancing day, %s; for balancing day %s write \"from\" %s"
                    .formatted(maloId, from, sparte, MeteringCalendar.describeBalancingDay(sparte), MeteringCalendar.balancingDay(sparte, from), start));
            case MONTHLY -> new InvalidReadingException("Register reading of MaLo-ID '%s' at %s is not on its P1M cadence: a monthly register reading of sparte %s is read at the start of the balancing month, %s; for balancing month %s write \"from\" %s"
                    .formatted(maloId, from, sparte, MeteringCalendar.describeBalancingMonth(sparte), MeteringCalendar.settlementMonth(sparte, from), start));
            case CALENDAR -> new IllegalStateException("a calendar period has no interval");
        };
    }

    /**
     * Whether {@code other} carries the same payload: every column but recorded_at, values compared as numbers, the
     * attribute columns too. A
     * redelivered version with the same payload is the same fact learned again; any other difference is a conflict.
     */
    public boolean samePayload(Reading other)
    {
        return maloId.equals(other.maloId)
                && meloId.equals(other.meloId)
                && obisCode.equals(other.obisCode)
                && sparte == other.sparte
                && from.equals(other.from)
                && to.equals(other.to)
                && value.compareTo(other.value) == 0
                && unit == other.unit
                && quality == other.quality
                && resolution.equals(other.resolution)
                && sourceKind.equals(other.sourceKind)
                && sourceDetail.equals(other.sourceDetail)
                && provenance.equals(other.provenance)
                && version.equals(other.version)
                && versionScope.equals(other.versionScope)
                && balancingDay.equals(other.balancingDay)
                && attributes.equals(other.attributes);
    }

    /** The length of a fixed ISO-8601 resolution: {@code PT15M}, {@code PT1H}, {@code PT60S}, ...; P1D and P1M have none. */
    public static Duration resolutionDuration(String resolution)
    {
        return IntervalResolution.parse(resolution).length();
    }

    public static String versionScope(String operatorId, Sparte sparte, Instant from)
    {
        return VersionScope.of(operatorId, sparte, from).toString();
    }
}
