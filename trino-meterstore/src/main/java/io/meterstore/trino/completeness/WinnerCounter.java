package io.meterstore.trino.completeness;

import com.google.common.collect.ImmutableList;
import io.airlift.slice.Slice;
import io.meterstore.core.CompletenessPeriod;
import io.meterstore.core.CompletenessTally;
import io.meterstore.core.InvalidReadingException;
import io.meterstore.core.Quality;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.Sparte;
import io.meterstore.core.TableColumns;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.meterstore.trino.base.MeterstoreTypes;
import io.trino.spi.TrinoException;
import io.trino.spi.block.Block;
import io.trino.spi.connector.SourcePage;

import java.time.Instant;
import java.time.LocalDate;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static io.airlift.slice.Slices.utf8Slice;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_UNSUPPORTED_TABLE_LAYOUT;
import static io.trino.spi.type.DateType.DATE;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * Counts the winners of one read into a {@link CompletenessTally}: per reading (the merge key without "from"), grid and
 * balancing day, the rows inside the period (with how many are substituted or not billable), and the grid each reading
 * last had in the roster window.
 * Rows of a reading's day arrive together (every split is read in key order), so the count runs until the key changes
 * and the tally sees one entry per run (per page). "from" is decoded only where the day alone does not place a row (at the
 * edges of the period and of the roster window) and for the first and last row of a run.
 */
final class WinnerCounter
{
    // the columns a read for the report returns, in this order, then the key's further columns
    private static final List<MeterstoreColumnHandle> COLUMNS = ImmutableList.of(
            MeterstoreTypes.columnHandle(ReadingsColumn.MALO_ID),
            MeterstoreTypes.columnHandle(ReadingsColumn.OBIS_CODE),
            MeterstoreTypes.columnHandle(ReadingsColumn.SPARTE),
            MeterstoreTypes.columnHandle(ReadingsColumn.RESOLUTION),
            MeterstoreTypes.columnHandle(ReadingsColumn.QUALITY),
            MeterstoreTypes.columnHandle(ReadingsColumn.BALANCING_DAY),
            MeterstoreTypes.columnHandle(ReadingsColumn.FROM));
    private static final int MALO_ID = 0;
    private static final int OBIS_CODE = 1;
    private static final int SPARTE = 2;
    private static final int RESOLUTION = 3;
    private static final int QUALITY = 4;
    private static final int BALANCING_DAY = 5;
    private static final int FROM = 6;
    private static final int FIRST_KEY_COLUMN = 7;
    private static final Slice SUBSTITUTED = utf8Slice(Quality.SUBSTITUTED.name());

    /** Where a winner lies on its commodity's period; {@link HotWinnerCounts} names them by ordinal. */
    enum Placement
    {
        INSIDE,
        ROSTER,
        OUTSIDE,
    }

    /** Where a commodity's period and roster window lie, as epoch days and microseconds. */
    private record Bounds(long firstWholeDay, long lastWholeDay, long start, long end, long rosterStart)
    {
        static Bounds of(CompletenessPeriod period, Optional<Instant> seenSince, Sparte sparte)
        {
            List<LocalDate> days = period.balancingDays(sparte);
            long first = days.getFirst().toEpochDay() + (period.coversWholeDay(sparte, days.getFirst()) ? 0 : 1);
            long last = days.getLast().toEpochDay() - (period.coversWholeDay(sparte, days.getLast()) ? 0 : 1);
            long start = MeterstoreTypes.toEpochMicros(period.start(sparte));
            return new Bounds(first, last, start, MeterstoreTypes.toEpochMicros(period.end(sparte)), seenSince.map(MeterstoreTypes::toEpochMicros).orElse(start));
        }

        Placement place(long day, Block from, int position)
        {
            if (day >= firstWholeDay && day <= lastWholeDay) {
                return Placement.INSIDE;
            }
            long micros = MeterstoreTypes.epochMicros(from, position);
            if (micros >= start && micros < end) {
                return Placement.INSIDE;
            }
            return micros >= rosterStart && micros < start ? Placement.ROSTER : Placement.OUTSIDE;
        }
    }

    private final List<MeterstoreColumnHandle> columns;
    private final int keyColumns;
    private final Bounds[] bounds;
    private final Optional<Set<Slice>> maloIds;
    private final Optional<Set<Slice>> obisCodes;
    private final CompletenessTally tally = new CompletenessTally();
    private final Map<Slice, Sparte> spartes = new HashMap<>();
    private final Map<Slice, Boolean> billable = new HashMap<>();

    // the run being counted
    private Slice maloId;
    private final Slice[] keyValues;
    private Slice obisCode;
    private Sparte sparte;
    private Slice resolution;
    private long day;
    private Placement placement;
    private long actual;
    private long substituted;
    private long notBillable;
    private Block runFroms;
    private int runFirst;
    private int runLast;
    private long rows;
    private long groups;

    /**
     * @param maloIds the meters the report lists, if it lists some: a cold read returns every row of the row groups it
     * cannot prune, so the rows are filtered here, as the engine filters them for a query
     * @param obisCodes the OBIS codes the report lists, if it lists some
     * @param table the columns of the table: a reading is counted per the values of its key's further columns too (melo_id, a tenant)
     */
    WinnerCounter(CompletenessPeriod period, Optional<Instant> seenSince, Optional<Set<Slice>> maloIds, Optional<Set<Slice>> obisCodes, TableColumns table)
    {
        requireNonNull(period, "period is null");
        requireNonNull(table, "table is null");
        this.columns = ImmutableList.<MeterstoreColumnHandle>builder()
                .addAll(COLUMNS)
                .addAll(table.keyColumns().stream().map(MeterstoreTypes::columnHandle).toList())
                .build();
        this.keyColumns = table.keyColumns().size();
        this.keyValues = new Slice[keyColumns];
        requireNonNull(seenSince, "seenSince is null");
        this.maloIds = requireNonNull(maloIds, "maloIds is null");
        this.obisCodes = requireNonNull(obisCodes, "obisCodes is null");
        bounds = new Bounds[Sparte.values().length];
        for (Sparte value : Sparte.values()) {
            bounds[value.ordinal()] = Bounds.of(period, seenSince, value);
        }
    }

    void add(SourcePage page)
    {
        Block maloBlock = page.getBlock(MALO_ID);
        Block obisBlock = page.getBlock(OBIS_CODE);
        Block spartes = page.getBlock(SPARTE);
        Block resolutions = page.getBlock(RESOLUTION);
        Block qualities = page.getBlock(QUALITY);
        Block days = page.getBlock(BALANCING_DAY);
        Block froms = page.getBlock(FROM);
        Block[] keyBlocks = new Block[keyColumns];
        for (int index = 0; index < keyColumns; index++) {
            keyBlocks[index] = page.getBlock(FIRST_KEY_COLUMN + index);
        }
        for (int position = 0; position < page.getPositionCount(); position++) {
            Slice rowMalo = VARCHAR.getSlice(maloBlock, position);
            Slice rowObis = VARCHAR.getSlice(obisBlock, position);
            if ((maloIds.isPresent() && !maloIds.get().contains(rowMalo)) || (obisCodes.isPresent() && !obisCodes.get().contains(rowObis))) {
                continue;
            }
            Sparte rowSparte = sparte(VARCHAR.getSlice(spartes, position));
            Slice rowResolution = VARCHAR.getSlice(resolutions, position);
            long rowDay = DATE.getLong(days, position);
            Placement rowPlacement = bounds[rowSparte.ordinal()].place(rowDay, froms, position);
            boolean sameRun = placement != null
                    && rowDay == day
                    && rowPlacement == placement
                    && rowSparte == sparte
                    && rowMalo.equals(maloId)
                    && rowObis.equals(obisCode)
                    && rowResolution.equals(resolution)
                    && sameKeyValues(keyBlocks, position);
            if (!sameRun) {
                flush();
                maloId = rowMalo;
                for (int index = 0; index < keyColumns; index++) {
                    keyValues[index] = VARCHAR.getSlice(keyBlocks[index], position);
                }
                obisCode = rowObis;
                sparte = rowSparte;
                resolution = rowResolution;
                day = rowDay;
                placement = rowPlacement;
                runFroms = froms;
                runFirst = position;
            }
            runLast = position;
            if (rowPlacement != Placement.OUTSIDE) {
                rows++;
            }
            if (rowPlacement != Placement.INSIDE) {
                continue;
            }
            actual++;
            Slice quality = VARCHAR.getSlice(qualities, position);
            if (quality.equals(SUBSTITUTED)) {
                substituted++;
            }
            if (!billable.computeIfAbsent(quality, value -> Quality.isBillable(value.toStringUtf8()))) {
                notBillable++;
            }
        }
        // a run that goes on in the next page is counted there again; the tally adds the two
        flush();
    }

    // a key's versions are sorted by "from" before its further columns, so two MeLos' rows of one day may alternate
    private boolean sameKeyValues(Block[] keyBlocks, int position)
    {
        for (int index = 0; index < keyColumns; index++) {
            if (!VARCHAR.getSlice(keyBlocks[index], position).equals(keyValues[index])) {
                return false;
            }
        }
        return true;
    }

    /** The columns a read for the report returns, in this order: those {@link #add} takes a page of. */
    List<MeterstoreColumnHandle> columns()
    {
        return columns;
    }

    /**
     * Winners another reader has already counted per reading, grid, balancing day and placement (the ordinal of a
     * {@link Placement}), with the first and last interval start among them: a run, as {@link #add} finds them.
     */
    void addCounts(String maloId, List<String> keyValues, String obisCode, String sparteName, String resolution, LocalDate day, int placement, long winners, long substituted, long notBillable, Instant first, Instant last)
    {
        // the commodity first: a row of an unknown one has no period to be placed in
        Sparte known = sparte(utf8Slice(sparteName));
        groups++;
        if (placement != Placement.OUTSIDE.ordinal()) {
            rows += winners;
        }
        CompletenessTally.Reading reading = new CompletenessTally.Reading(maloId, keyValues, obisCode, known);
        switch (Placement.values()[placement]) {
            case INSIDE -> tally.add(reading, resolution, day, winners, substituted, notBillable, first, last);
            case ROSTER -> tally.addToRoster(reading, resolution, last);
            case OUTSIDE -> {}
        }
    }

    private void flush()
    {
        if (placement == null) {
            return;
        }
        // rows of a run arrive in "from" order, so its first and last rows bound it
        Instant first = MeterstoreTypes.fromEpochMicros(MeterstoreTypes.epochMicros(runFroms, runFirst));
        Instant last = MeterstoreTypes.fromEpochMicros(MeterstoreTypes.epochMicros(runFroms, runLast));
        CompletenessTally.Reading reading = new CompletenessTally.Reading(maloId.toStringUtf8(), Arrays.stream(keyValues).map(Slice::toStringUtf8).toList(), obisCode.toStringUtf8(), sparte);
        switch (placement) {
            case INSIDE -> tally.add(reading, resolution.toStringUtf8(), LocalDate.ofEpochDay(day), actual, substituted, notBillable, first, last);
            case ROSTER -> tally.addToRoster(reading, resolution.toStringUtf8(), last);
            case OUTSIDE -> {}
        }
        placement = null;
        runFroms = null;
        actual = 0;
        substituted = 0;
        notBillable = 0;
    }

    private Sparte sparte(Slice value)
    {
        Sparte known = spartes.get(value);
        if (known != null) {
            return known;
        }
        try {
            Sparte parsed = Sparte.parse(value.toStringUtf8());
            spartes.put(value.copy(), parsed);
            return parsed;
        }
        catch (InvalidReadingException e) {
            // the day a row is judged on follows its commodity: a row of an unknown one cannot be placed
            throw new TrinoException(METERSTORE_UNSUPPORTED_TABLE_LAYOUT, "A reading has sparte '%s', which is none of STROM, GAS, WAERME, WASSER, so its balancing day is unknown: correct the rows another tool wrote".formatted(value.toStringUtf8()), e);
        }
    }

    long rows()
    {
        return rows;
    }

    /** The counts {@link #addCounts} was given: what crossed from the database instead of the rows. */
    long groups()
    {
        return groups;
    }

    CompletenessTally tally()
    {
        return tally;
    }
}
