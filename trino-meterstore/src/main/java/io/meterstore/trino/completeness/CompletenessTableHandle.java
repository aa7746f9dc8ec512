package io.meterstore.trino.completeness;

import io.meterstore.core.CompletenessPeriod;
import io.meterstore.trino.handle.MeterstoreTableHandle;
import io.meterstore.trino.base.MeterstoreTypes;
import io.trino.spi.connector.ConnectorTableHandle;

import java.time.Instant;
import java.time.YearMonth;
import java.util.List;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static java.util.Objects.requireNonNull;

/**
 * One {@code meter_completeness} call as the engine plans it: the read of the table's winners it is computed from
 * (pinned to a snapshot and its watermark like any read of {@code readings}, narrowed to the period, the roster window
 * and the listed meters and OBIS codes), and the period and roster window it is judged over.
 *
 * @param readings the resolved read of both tiers the counts come from
 * @param seenSinceEpochMicros the start of the roster window: readings delivered since then but not in the period are reported silent
 */
public record CompletenessTableHandle(
        MeterstoreTableHandle readings,
        Optional<Long> rangeStartEpochMicros,
        Optional<Long> rangeEndEpochMicros,
        Optional<String> settlementMonth,
        Optional<Long> seenSinceEpochMicros)
        implements ConnectorTableHandle
{
    public CompletenessTableHandle
    {
        requireNonNull(readings, "readings is null");
        requireNonNull(rangeStartEpochMicros, "rangeStartEpochMicros is null");
        requireNonNull(rangeEndEpochMicros, "rangeEndEpochMicros is null");
        requireNonNull(settlementMonth, "settlementMonth is null");
        requireNonNull(seenSinceEpochMicros, "seenSinceEpochMicros is null");
        checkArgument(readings.resolved(), "completeness counts winners");
    }

    public static CompletenessTableHandle of(MeterstoreTableHandle readings, CompletenessPeriod period, Optional<Instant> seenSince)
    {
        return new CompletenessTableHandle(
                readings,
                period.rangeStart().map(MeterstoreTypes::toEpochMicros),
                period.rangeEnd().map(MeterstoreTypes::toEpochMicros),
                period.month().map(YearMonth::toString),
                seenSince.map(MeterstoreTypes::toEpochMicros));
    }

    public CompletenessPeriod period()
    {
        return new CompletenessPeriod(
                rangeStartEpochMicros.map(MeterstoreTypes::fromEpochMicros),
                rangeEndEpochMicros.map(MeterstoreTypes::fromEpochMicros),
                settlementMonth.map(YearMonth::parse));
    }

    /** The report's columns: the table's merge-key columns besides malo_id, obis_code and "from" follow malo_id. */
    public List<CompletenessColumnHandle> columns()
    {
        return CompletenessColumnHandle.columns(readings.keyColumns());
    }

    public Optional<Instant> seenSince()
    {
        return seenSinceEpochMicros.map(MeterstoreTypes::fromEpochMicros);
    }
}
