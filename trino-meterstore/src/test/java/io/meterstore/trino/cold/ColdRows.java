package io.meterstore.trino.cold;

import io.airlift.slice.Slice;
import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.Sparte;
import io.meterstore.core.Sparte.MeasurementUnit;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.meterstore.trino.base.MeterstoreTypes;
import io.trino.spi.block.Block;
import io.trino.spi.connector.ConnectorPageSource;
import io.trino.spi.connector.SourcePage;
import io.trino.spi.type.Int128;
import io.trino.spi.type.LongTimestampWithTimeZone;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static io.trino.spi.type.TimeZoneKey.UTC_KEY;
import static io.trino.spi.type.TypeUtils.readNativeValue;

/** Drains page sources into rows of Trino native values, and turns full rows back into readings. */
final class ColdRows
{
    private ColdRows() {}

    static List<List<Object>> drain(ConnectorPageSource source, List<MeterstoreColumnHandle> columns)
    {
        List<List<Object>> rows = new ArrayList<>();
        try (source) {
            while (!source.isFinished()) {
                SourcePage page = source.getNextSourcePage();
                if (page == null) {
                    continue;
                }
                checkArgument(page.getChannelCount() == columns.size(), "page has %s channels for %s columns", page.getChannelCount(), columns.size());
                for (int position = 0; position < page.getPositionCount(); position++) {
                    List<Object> row = new ArrayList<>(columns.size());
                    for (int channel = 0; channel < columns.size(); channel++) {
                        Block block = page.getBlock(channel);
                        row.add(readNativeValue(columns.get(channel).type(), block, position));
                    }
                    rows.add(row);
                }
            }
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return rows;
    }

    /** The positions a page source returns when no column is read. */
    static long countPositions(ConnectorPageSource source)
    {
        long positions = 0;
        try (source) {
            while (!source.isFinished()) {
                SourcePage page = source.getNextSourcePage();
                if (page != null) {
                    checkArgument(page.getChannelCount() == 0, "a page without columns has %s channels", page.getChannelCount());
                    positions += page.getPositionCount();
                }
            }
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return positions;
    }

    static List<Reading> readings(List<List<Object>> rows)
    {
        return rows.stream().map(ColdRows::reading).toList();
    }

    /** A row of all columns in schema order, as the reading it stores. */
    static Reading reading(List<Object> row)
    {
        checkArgument(row.size() == MeterstoreTypes.columnHandles().size(), "not a full row: %s", row);
        return new Reading(
                string(row, ReadingsColumn.MALO_ID),
                Optional.ofNullable(row.get(ReadingsColumn.MELO_ID.ordinal())).map(Slice.class::cast).map(Slice::toStringUtf8),
                string(row, ReadingsColumn.OBIS_CODE),
                Sparte.parse(string(row, ReadingsColumn.SPARTE)),
                instant(row, ReadingsColumn.FROM),
                instant(row, ReadingsColumn.TO),
                BigDecimal.valueOf((long) row.get(ReadingsColumn.VALUE.ordinal()), 6),
                MeasurementUnit.parse(string(row, ReadingsColumn.UNIT)),
                Quality.parse(string(row, ReadingsColumn.QUALITY)),
                string(row, ReadingsColumn.RESOLUTION),
                string(row, ReadingsColumn.SOURCE_KIND),
                Optional.ofNullable(row.get(ReadingsColumn.SOURCE_DETAIL.ordinal())).map(Slice.class::cast).map(Slice::toStringUtf8),
                Optional.ofNullable(row.get(ReadingsColumn.PROVENANCE.ordinal())).map(Slice.class::cast).map(Slice::toStringUtf8),
                ((Int128) row.get(ReadingsColumn.VERSION.ordinal())).toBigInteger(),
                string(row, ReadingsColumn.VERSION_SCOPE),
                instant(row, ReadingsColumn.RECORDED_AT),
                LocalDate.ofEpochDay((long) row.get(ReadingsColumn.BALANCING_DAY.ordinal())));
    }

    private static String string(List<Object> row, ReadingsColumn column)
    {
        return ((Slice) row.get(column.ordinal())).toStringUtf8();
    }

    static Instant instant(List<Object> row, ReadingsColumn column)
    {
        return instant((LongTimestampWithTimeZone) row.get(column.ordinal()));
    }

    /** The instant of a timestamp the cold tier returns; it must come out in UTC, whatever zone it was written in. */
    static Instant instant(LongTimestampWithTimeZone timestamp)
    {
        checkArgument(timestamp.getTimeZoneKey() == UTC_KEY.getKey(), "timestamp %s is not in UTC", timestamp);
        return Instant.ofEpochMilli(timestamp.getEpochMillis()).plusNanos(timestamp.getPicosOfMilli() / 1_000);
    }

    static List<Object> project(List<Object> row, List<MeterstoreColumnHandle> columns)
    {
        return Arrays.asList(columns.stream().map(column -> row.get(column.readingsColumn().orElseThrow().ordinal())).toArray());
    }
}
