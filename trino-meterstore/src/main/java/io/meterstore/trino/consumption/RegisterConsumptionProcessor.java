package io.meterstore.trino.consumption;

import com.google.common.collect.ImmutableList;
import io.meterstore.core.InvalidReadingException;
import io.meterstore.core.Sparte;
import io.trino.spi.Page;
import io.trino.spi.PageBuilder;
import io.trino.spi.TrinoException;
import io.trino.spi.block.Block;
import io.trino.spi.function.table.TableFunctionDataProcessor;
import io.trino.spi.function.table.TableFunctionProcessorState;
import io.trino.spi.type.DecimalType;
import io.trino.spi.type.Decimals;
import io.trino.spi.type.LongTimestampWithTimeZone;
import io.trino.spi.type.TimestampWithTimeZoneType;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Optional;

import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_INVALID_READING;
import static io.trino.spi.function.table.TableFunctionProcessorState.Finished.FINISHED;
import static io.trino.spi.function.table.TableFunctionProcessorState.Processed.usedInput;
import static io.trino.spi.function.table.TableFunctionProcessorState.Processed.usedInputAndProduced;
import static io.trino.spi.type.DateTimeEncoding.unpackMillisUtc;
import static io.trino.spi.type.DateType.DATE;
import static io.trino.spi.type.Timestamps.PICOSECONDS_PER_NANOSECOND;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * One register's readings, in "from" order, to its consumption per period: each reading that opens a period (exactly
 * at its start) is remembered, and where the next such reading opens the very next period the difference is that
 * period's consumption. A period whose start or end reading is missing gets no row, so a gap never puts two periods'
 * energy on one; readings inside a period (PT15M at P1D) are only checked, never differenced.
 */
final class RegisterConsumptionProcessor
        implements TableFunctionDataProcessor
{
    private final RegisterConsumptionHandle handle;
    private final TimestampWithTimeZoneType fromType;
    private final DecimalType valueType;
    private final DecimalType consumptionType;
    private final PageBuilder output;

    private String register;
    private Sparte sparte;
    private Instant previousFrom;
    private BigDecimal previousValue;
    private LocalDate openPeriod;
    private BigDecimal openValue;

    RegisterConsumptionProcessor(RegisterConsumptionHandle handle)
    {
        this.handle = requireNonNull(handle, "handle is null");
        this.fromType = (TimestampWithTimeZoneType) handle.fromType();
        this.valueType = (DecimalType) handle.valueType();
        this.consumptionType = (DecimalType) handle.consumptionType();
        this.output = new PageBuilder(ImmutableList.of(DATE, consumptionType));
    }

    @Override
    public TableFunctionProcessorState process(List<Optional<Page>> input)
    {
        if (input == null) {
            // the partition ended: its last period has no reading after it
            return FINISHED;
        }
        Page page = input.getFirst().orElseThrow();
        output.reset();
        for (int position = 0; position < page.getPositionCount(); position++) {
            read(page, position);
        }
        if (output.isEmpty()) {
            return usedInput();
        }
        return usedInputAndProduced(output.build());
    }

    private void read(Page page, int position)
    {
        if (register == null) {
            register = register(page, position);
        }
        Block fromBlock = page.getBlock(handle.fromChannel());
        Block valueBlock = page.getBlock(handle.valueChannel());
        Block sparteBlock = page.getBlock(handle.sparteChannel());
        if (fromBlock.isNull(position) || valueBlock.isNull(position) || sparteBlock.isNull(position)) {
            throw refused("Register %s has a reading whose \"from\", value or sparte is NULL: pass readings only, e.g. WHERE value IS NOT NULL".formatted(register));
        }
        Instant from = instant(fromBlock, position);
        BigDecimal value = Decimals.readBigDecimal(valueType, valueBlock, position);
        Sparte readingSparte = sparte(sparteBlock, position, from);

        if (previousFrom != null) {
            if (!from.isAfter(previousFrom)) {
                throw refused(from.equals(previousFrom)
                        ? "Register %s has two readings at %s: read the winners (the table, not its _versions) and partition the input by every column that identifies a register, e.g. PARTITION BY (malo_id, obis_code)".formatted(register, from)
                        : "Register %s has its reading at %s after the one at %s: order the input by \"from\" ascending (ORDER BY \"from\")".formatted(register, from, previousFrom));
            }
            if (value.compareTo(previousValue) < 0) {
                throw refused(("Register %s runs backwards: %s at %s after %s at %s. A meter exchange or register reset starts a new register: derive its consumption before and after it in two calls "
                        + "(e.g. WHERE \"from\" < TIMESTAMP '...' and WHERE \"from\" >= TIMESTAMP '...'), or correct the reading").formatted(register, value.toPlainString(), from, previousValue.toPlainString(), previousFrom));
            }
        }
        previousFrom = from;
        previousValue = value;

        Optional<LocalDate> period = handle.period().startingAt(readingSparte, from);
        if (period.isEmpty()) {
            return;
        }
        if (openPeriod != null && handle.period().next(openPeriod).equals(period.get())) {
            DATE.writeLong(output.getBlockBuilder(0), openPeriod.toEpochDay());
            Decimals.writeBigDecimal(consumptionType, output.getBlockBuilder(1), value.subtract(openValue));
            output.declarePosition();
        }
        openPeriod = period.get();
        openValue = value;
    }

    private Sparte sparte(Block block, int position, Instant from)
    {
        Sparte readingSparte;
        try {
            readingSparte = Sparte.parse(VARCHAR.getSlice(block, position).toStringUtf8());
        }
        catch (InvalidReadingException e) {
            throw refused("Register %s, reading at %s: %s".formatted(register, from, e.getMessage()));
        }
        if (sparte == null) {
            sparte = readingSparte;
        }
        else if (sparte != readingSparte) {
            throw refused("Register %s has readings of sparte %s and %s: partition the input by the columns that identify one register, e.g. PARTITION BY (malo_id, obis_code)".formatted(register, sparte, readingSparte));
        }
        return readingSparte;
    }

    private Instant instant(Block block, int position)
    {
        if (fromType.isShort()) {
            return Instant.ofEpochMilli(unpackMillisUtc(fromType.getLong(block, position)));
        }
        LongTimestampWithTimeZone timestamp = (LongTimestampWithTimeZone) fromType.getObject(block, position);
        return Instant.ofEpochMilli(timestamp.getEpochMillis()).plusNanos(timestamp.getPicosOfMilli() / PICOSECONDS_PER_NANOSECOND);
    }

    /** The register as the caller partitioned it, for a refusal: {@code malo_id '51238696781', obis_code '1-1:1.8.0'}. */
    private String register(Page page, int position)
    {
        StringBuilder register = new StringBuilder();
        for (int channel = 0; channel < handle.partitionColumns().size(); channel++) {
            if (channel > 0) {
                register.append(", ");
            }
            Block block = page.getBlock(channel);
            register.append(handle.partitionColumns().get(channel)).append(block.isNull(position) ? " NULL" : " '%s'".formatted(handle.partitionTypes().get(channel).getObjectValue(block, position)));
        }
        return register.toString();
    }

    private static TrinoException refused(String message)
    {
        return new TrinoException(METERSTORE_INVALID_READING, message);
    }
}
