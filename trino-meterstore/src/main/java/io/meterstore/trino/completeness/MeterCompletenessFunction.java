package io.meterstore.trino.completeness;

import com.google.common.collect.ImmutableList;
import com.google.inject.Inject;
import io.airlift.slice.Slice;
import io.meterstore.core.CompletenessPeriod;
import io.meterstore.core.InvalidReadingException;
import io.meterstore.core.MaloId;
import io.meterstore.core.MeterstoreException;
import io.meterstore.core.ObisCode;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.WatermarkReader;
import io.meterstore.core.WatermarkReader.PinnedWatermark;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.meterstore.trino.base.MeterstoreErrorCode;
import io.meterstore.trino.handle.MeterstoreTableHandle;
import io.meterstore.trino.base.MeterstoreTables;
import io.meterstore.trino.base.MeterstoreTypes;
import io.meterstore.trino.system.MeterstoreFunctions;
import io.trino.spi.TrinoException;
import io.trino.spi.block.Block;
import io.trino.spi.connector.ConnectorAccessControl;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.ConnectorTransactionHandle;
import io.trino.spi.connector.SchemaTableName;
import io.trino.spi.function.table.AbstractConnectorTableFunction;
import io.trino.spi.function.table.Argument;
import io.trino.spi.function.table.ScalarArgument;
import io.trino.spi.function.table.ScalarArgumentSpecification;
import io.trino.spi.function.table.TableFunctionAnalysis;
import io.trino.spi.predicate.Domain;
import io.trino.spi.predicate.Range;
import io.trino.spi.predicate.TupleDomain;
import io.trino.spi.predicate.ValueSet;
import io.trino.spi.type.ArrayType;
import io.trino.spi.type.LongTimestampWithTimeZone;
import org.apache.iceberg.Table;

import java.time.Instant;
import java.time.YearMonth;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

import static io.airlift.slice.Slices.utf8Slice;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_INVALID_ARGUMENT;
import static io.trino.spi.function.table.ReturnTypeSpecification.GenericTable.GENERIC_TABLE;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * {@code meterstore.system.meter_completeness}: per reading (the table's merge key without "from") and grid, how many
 * intervals a period should hold on the German metering calendar and how many winning versions the table holds,
 * DST-aware, on gas days for gas. The engine gets a table handle (as trino-base-jdbc's {@code query} hands one over)
 * whose one split counts the winners of both tiers per day where they lie (in PostgreSQL for the hot tier, from the key
 * columns of the cold files) and rolls them up; no reading passes through the engine.
 */
public final class MeterCompletenessFunction
        extends AbstractConnectorTableFunction
{
    public static final String NAME = "meter_completeness";

    private static final String TABLE_NAME = "TABLE_NAME";
    private static final String RANGE_START = "RANGE_START";
    private static final String RANGE_END = "RANGE_END";
    private static final String SETTLEMENT_MONTH = "SETTLEMENT_MONTH";
    private static final String MALO_IDS = "MALO_IDS";
    private static final String OBIS_CODES = "OBIS_CODES";
    private static final String SEEN_SINCE = "SEEN_SINCE";

    private final MeterstoreTables tables;

    @Inject
    public MeterCompletenessFunction(MeterstoreTables tables)
    {
        super(
                MeterstoreFunctions.SCHEMA,
                NAME,
                ImmutableList.of(
                        ScalarArgumentSpecification.builder().name(TABLE_NAME).type(VARCHAR).defaultValue(null).build(),
                        ScalarArgumentSpecification.builder().name(RANGE_START).type(MeterstoreTypes.TIMESTAMP_TZ_MICROS).defaultValue(null).build(),
                        ScalarArgumentSpecification.builder().name(RANGE_END).type(MeterstoreTypes.TIMESTAMP_TZ_MICROS).defaultValue(null).build(),
                        ScalarArgumentSpecification.builder().name(SETTLEMENT_MONTH).type(VARCHAR).defaultValue(null).build(),
                        ScalarArgumentSpecification.builder().name(MALO_IDS).type(new ArrayType(VARCHAR)).defaultValue(null).build(),
                        ScalarArgumentSpecification.builder().name(OBIS_CODES).type(new ArrayType(VARCHAR)).defaultValue(null).build(),
                        ScalarArgumentSpecification.builder().name(SEEN_SINCE).type(MeterstoreTypes.TIMESTAMP_TZ_MICROS).defaultValue(null).build()),
                // the columns follow the table's merge key: its further columns (melo_id, a tenant) tell its readings apart
                GENERIC_TABLE,
                "Per reading and grid: the intervals a period should hold on the metering calendar against the winning versions stored");
        this.tables = requireNonNull(tables, "tables is null");
    }

    @Override
    public TableFunctionAnalysis analyze(ConnectorSession session, ConnectorTransactionHandle transaction, Map<String, Argument> arguments, ConnectorAccessControl accessControl)
    {
        String table = tableName(text(arguments, TABLE_NAME));
        CompletenessPeriod period = period(timestamp(arguments, RANGE_START), timestamp(arguments, RANGE_END), text(arguments, SETTLEMENT_MONTH));
        Optional<Instant> seenSince = timestamp(arguments, SEEN_SINCE);
        if (seenSince.isPresent() && !seenSince.get().isBefore(period.scanStart())) {
            throw invalid("SEEN_SINCE %s must lie before the period %s: it opens the roster window that precedes it".formatted(seenSince.get(), period));
        }
        Instant readFrom = seenSince.orElse(period.scanStart());
        ImmutableList.Builder<Object> maloIds = ImmutableList.builder();
        for (String maloId : texts(arguments, MALO_IDS)) {
            maloIds.add(utf8Slice(parse(() -> MaloId.parse(maloId).value())));
        }
        ImmutableList.Builder<Object> obisCodes = ImmutableList.builder();
        for (String obisCode : texts(arguments, OBIS_CODES)) {
            obisCodes.add(utf8Slice(parse(() -> ObisCode.canonicalize(obisCode))));
        }

        // the winners of the period and the roster window, narrowed as a WHERE clause on readings would narrow them
        MeterstoreColumnHandle from = MeterstoreTypes.columnHandle(ReadingsColumn.FROM);
        ImmutableList.Builder<TupleDomain<MeterstoreColumnHandle>> domains = ImmutableList.builder();
        domains.add(TupleDomain.withColumnDomains(Map.of(from, Domain.create(ValueSet.ofRanges(Range.range(
                from.type(), MeterstoreTypes.toTimestamp(MeterstoreTypes.toEpochMicros(readFrom)), true,
                MeterstoreTypes.toTimestamp(MeterstoreTypes.toEpochMicros(period.scanEnd())), false)), false))));
        List<Object> maloValues = maloIds.build();
        if (!maloValues.isEmpty()) {
            domains.add(TupleDomain.withColumnDomains(Map.of(MeterstoreTypes.columnHandle(ReadingsColumn.MALO_ID), Domain.multipleValues(VARCHAR, maloValues))));
        }
        List<Object> obisValues = obisCodes.build();
        if (!obisValues.isEmpty()) {
            domains.add(TupleDomain.withColumnDomains(Map.of(MeterstoreTypes.columnHandle(ReadingsColumn.OBIS_CODE), Domain.multipleValues(VARCHAR, obisValues))));
        }
        TupleDomain<MeterstoreColumnHandle> constraint = TupleDomain.intersect(domains.build());

        Table icebergTable = tables.pinIcebergTable(table);
        PinnedWatermark pinned;
        try {
            // pinned as a read of readings pins: both tiers split at the watermark of this snapshot
            pinned = WatermarkReader.current(icebergTable);
        }
        catch (MeterstoreException e) {
            throw MeterstoreErrorCode.toTrinoException(e);
        }
        MeterstoreTableHandle readings = new MeterstoreTableHandle(
                new SchemaTableName(tables.schema(), table),
                table,
                pinned.snapshotId(),
                MeterstoreTypes.toEpochMicros(pinned.watermark().instant()),
                constraint,
                false,
                true,
                Optional.empty())
                // a reading is the table's merge key without "from": a MeLo's or a tenant's readings are counted apart
                .withShape(tables.pinnedShape(table, icebergTable));
        return TableFunctionAnalysis.builder()
                .returnedType(CompletenessColumnHandle.descriptor(readings.keyColumns()))
                .handle(new CompletenessFunctionHandle(CompletenessTableHandle.of(readings, period, seenSince)))
                .build();
    }

    private String tableName(Optional<String> name)
    {
        if (name.isEmpty()) {
            // the catalogue's own table: a table CREATE TABLE adds later does not change what a report without a name reads
            List<String> configured = tables.configuredTables();
            if (configured.size() != 1) {
                throw invalid("Name the table: this catalog's meterstore.tables are %s, e.g. meter_completeness(table_name => '%s', ...)".formatted(configured, configured.getFirst()));
            }
            return configured.getFirst();
        }
        // the report counts winners: the raw relation names the same table
        Optional<String> table = tables.storageTableOf(new SchemaTableName(tables.schema(), name.get()));
        if (table.isEmpty()) {
            throw invalid("Table '%s' is not a MeterStore table of this catalog: use one of %s".formatted(name.get(), tables.storageTables()));
        }
        return table.get();
    }

    private static CompletenessPeriod period(Optional<Instant> start, Optional<Instant> end, Optional<String> month)
    {
        if (month.isPresent()) {
            if (start.isPresent() || end.isPresent()) {
                throw invalid("Give either SETTLEMENT_MONTH or RANGE_START and RANGE_END, not both");
            }
            try {
                return CompletenessPeriod.settlementMonth(YearMonth.parse(month.get()));
            }
            catch (DateTimeParseException e) {
                throw invalid("SETTLEMENT_MONTH '%s' is not a month: write it as 'YYYY-MM', e.g. '2026-03'".formatted(month.get()));
            }
        }
        if (start.isEmpty() || end.isEmpty()) {
            throw invalid("Give the period: RANGE_START and RANGE_END (timestamps with time zone), or SETTLEMENT_MONTH ('YYYY-MM')");
        }
        return parse(() -> CompletenessPeriod.range(start.get(), end.get()));
    }

    private static Optional<String> text(Map<String, Argument> arguments, String name)
    {
        return value(arguments, name).map(value -> ((Slice) value).toStringUtf8());
    }

    private static Optional<Instant> timestamp(Map<String, Argument> arguments, String name)
    {
        return value(arguments, name).map(value -> MeterstoreTypes.fromEpochMicros(MeterstoreTypes.toEpochMicros((LongTimestampWithTimeZone) value)));
    }

    private static List<String> texts(Map<String, Argument> arguments, String name)
    {
        Optional<Object> value = value(arguments, name);
        if (value.isEmpty()) {
            return List.of();
        }
        Block block = (Block) value.get();
        ImmutableList.Builder<String> texts = ImmutableList.builder();
        for (int position = 0; position < block.getPositionCount(); position++) {
            if (block.isNull(position)) {
                throw invalid("%s holds a NULL: list the values only".formatted(name));
            }
            texts.add(VARCHAR.getSlice(block, position).toStringUtf8());
        }
        return texts.build();
    }

    private static Optional<Object> value(Map<String, Argument> arguments, String name)
    {
        return Optional.ofNullable(arguments.get(name)).map(argument -> ((ScalarArgument) argument).getValue());
    }

    private static <T> T parse(Supplier<T> parser)
    {
        try {
            return parser.get();
        }
        catch (InvalidReadingException e) {
            throw invalid(e.getMessage());
        }
    }

    private static TrinoException invalid(String message)
    {
        return new TrinoException(METERSTORE_INVALID_ARGUMENT, message);
    }
}
