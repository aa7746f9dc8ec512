package io.meterstore.core;

import com.google.common.collect.ImmutableList;

import java.time.LocalDate;
import java.util.List;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * The completeness of one reading on one grid over a period: a row of {@code meter_completeness}.
 *
 * @param keyValues the values of the merge key's columns besides malo_id, obis_code and "from" (melo_id in a table keyed
 * by it, then the identity columns, {@link TableShape#keyColumns()}); empty for the default key
 * @param expected intervals the calendar says the days charged to this grid hold (92, 96 or 100 quarter-hours a day)
 * @param actual winning versions stored
 * @param missing intervals short, summed per balancing day: a surplus on one day never hides a gap on another
 * @param surplus winners beyond the expectation, summed per balancing day (e.g. one interval delivered under two
 * network operators' version scopes, each keeping a winner)
 * @param firstGap the first balancing day that is short
 * @param substituted winners with quality SUBSTITUTED
 * @param notBillable winners whose quality may not be billed (FAULTY, UNKNOWN, or a quality this model does not know)
 */
public record ChannelCompleteness(
        String maloId,
        List<String> keyValues,
        String obisCode,
        Sparte sparte,
        String resolution,
        long expected,
        long actual,
        long missing,
        long surplus,
        Optional<LocalDate> firstGap,
        long substituted,
        long notBillable)
{
    public ChannelCompleteness
    {
        requireNonNull(maloId, "maloId is null");
        keyValues = ImmutableList.copyOf(requireNonNull(keyValues, "keyValues is null"));
        requireNonNull(obisCode, "obisCode is null");
        requireNonNull(sparte, "sparte is null");
        requireNonNull(resolution, "resolution is null");
        requireNonNull(firstGap, "firstGap is null");
        checkArgument(expected >= 0 && actual >= 0 && missing >= 0 && surplus >= 0 && substituted >= 0 && notBillable >= 0, "counts are never negative");
    }

    /** Exactly what the calendar expects: nothing missing, nothing in surplus. */
    public boolean complete()
    {
        return missing == 0 && surplus == 0;
    }

    /** Whether an expectation exists at all: a fixed or daily grid and at least one interval expected. */
    public boolean measurable()
    {
        return expected > 0;
    }

    /** Delivered nothing in the period; reported only because a roster window saw it before. */
    public boolean silent()
    {
        return actual == 0;
    }
}
