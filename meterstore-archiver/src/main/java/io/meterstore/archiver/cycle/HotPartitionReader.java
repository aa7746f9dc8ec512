package io.meterstore.archiver.cycle;

import io.airlift.slice.Slices;
import io.meterstore.core.HotTier;
import io.meterstore.core.InvalidReadingException;
import io.meterstore.core.PgBinaryCopy;
import io.meterstore.core.PgBinaryCopyReader;
import io.meterstore.core.Quality;
import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.Sparte;
import io.meterstore.core.Sparte.MeasurementUnit;
import io.meterstore.core.TableColumns;
import io.meterstore.core.Tier;
import io.meterstore.parquet.ReadingsParquetSchema;
import io.trino.spi.Page;
import io.trino.spi.block.Block;
import io.trino.spi.block.BlockBuilder;
import io.trino.spi.type.LongTimestampWithTimeZone;
import io.trino.spi.type.Type;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;
import static io.meterstore.parquet.ReadingsParquetSchema.QUANTITY;
import static io.meterstore.parquet.ReadingsParquetSchema.TIMESTAMP_TZ_MICROS;
import static io.meterstore.parquet.ReadingsParquetSchema.VERSION;
import static io.trino.spi.type.DateType.DATE;
import static io.trino.spi.type.TimeZoneKey.UTC_KEY;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.lang.Math.floorDiv;
import static java.lang.Math.floorMod;
import static java.util.Objects.requireNonNull;

/**
 * Streams one hot partition, read by its name (never through the parent), as Trino pages in the sort order of the cold
 * files, every column of the table (its attribute columns after the readings columns), as binary COPY decoded straight
 * into pages of at most {@code pageRows} rows: nothing is materialised, so peak
 * memory is a page, whatever the partition holds. Each row is also decoded as a {@link Reading} and handed to a
 * {@link ReadingCheck} before it joins a page: the write path's validation, which no writer can go around.
 */
final class HotPartitionReader
{
    private static final int MALO_ID = channel(ReadingsColumn.MALO_ID);
    private static final int MELO_ID = channel(ReadingsColumn.MELO_ID);
    private static final int OBIS_CODE = channel(ReadingsColumn.OBIS_CODE);
    private static final int SPARTE = channel(ReadingsColumn.SPARTE);
    private static final int FROM = channel(ReadingsColumn.FROM);
    private static final int TO = channel(ReadingsColumn.TO);
    private static final int VALUE = channel(ReadingsColumn.VALUE);
    private static final int UNIT = channel(ReadingsColumn.UNIT);
    private static final int QUALITY = channel(ReadingsColumn.QUALITY);
    private static final int RESOLUTION = channel(ReadingsColumn.RESOLUTION);
    private static final int SOURCE_KIND = channel(ReadingsColumn.SOURCE_KIND);
    private static final int SOURCE_DETAIL = channel(ReadingsColumn.SOURCE_DETAIL);
    private static final int PROVENANCE = channel(ReadingsColumn.PROVENANCE);
    private static final int VERSION_CHANNEL = channel(ReadingsColumn.VERSION);
    private static final int VERSION_SCOPE = channel(ReadingsColumn.VERSION_SCOPE);
    private static final int RECORDED_AT = channel(ReadingsColumn.RECORDED_AT);
    private static final int BALANCING_DAY = channel(ReadingsColumn.BALANCING_DAY);
    private final HotTier hotTier;
    // the table's columns: the readings columns, then its attribute columns, each a channel of the pages
    private final TableColumns columns;
    private final List<Type> types;
    private final int pageRows;

    HotPartitionReader(HotTier hotTier, int pageRows)
    {
        this(hotTier, TableColumns.READINGS, pageRows);
    }

    HotPartitionReader(HotTier hotTier, TableColumns columns, int pageRows)
    {
        this.hotTier = requireNonNull(hotTier, "hotTier is null");
        this.columns = requireNonNull(columns, "columns is null");
        this.types = ReadingsParquetSchema.trinoTypes(columns);
        checkArgument(pageRows > 0, "pageRows must be positive");
        this.pageRows = pageRows;
    }

    interface PageSink
    {
        void accept(Page page)
                throws IOException;
    }

    /** Sees every row's reading, in the stream's order, before it is written; throws {@link InvalidReadingException} to refuse it. */
    interface ReadingCheck
    {
        void accept(Reading reading);
    }

    /** The primary key of a row, which names it wherever it is stored. */
    record RowKey(String maloId, String obisCode, Instant from, BigInteger version) {}

    /** A row that cannot be read as a reading, or that the check refused: the stream stops at it, nothing of it is written. */
    static final class RefusedRowException
            extends RuntimeException
    {
        private final RowKey key;

        RefusedRowException(RowKey key, RuntimeException cause)
        {
            super(cause.getMessage(), cause);
            this.key = requireNonNull(key, "key is null");
        }

        RowKey key()
        {
            return key;
        }
    }

    /**
     * Streams the rows of {@code partition} with "from" at or above {@code from} and below {@code to} (to its end when
     * empty) into {@code sink}; returns how many there were. A row at or after {@code windowEnd} fails the stream: the
     * window would move the watermark below it, and the partition would then be dropped with it. A row {@code check}
     * refuses, or that is no reading at all (an unknown sparte, unit or quality), fails it with {@link RefusedRowException}.
     */
    long read(Connection connection, String partition, Instant from, Optional<Instant> to, Instant windowEnd, ReadingCheck check, PageSink sink)
            throws SQLException, IOException
    {
        long windowEndMicros = Math.addExact(Math.multiplyExact(windowEnd.getEpochSecond(), 1_000_000), windowEnd.getNano() / 1_000);
        boolean autoCommit = connection.getAutoCommit();
        // the COPY's parameters are settings of this transaction
        connection.setAutoCommit(false);
        PgBinaryCopy copy = null;
        try {
            // the sort key is the partition's primary key: rows stream from the first message, where sorting a whole
            // day first would spill it to temporary files on the server
            copy = PgBinaryCopy.startInIndexOrder(connection, query(partition), List.of(from.toString(), to.map(Instant::toString).orElse("infinity")));
            PgBinaryCopyReader row = copy.rows();
            long rows = 0;
            BlockBuilder[] builders = newBuilders();
            int pageSize = 0;
            while (nextRow(row)) {
                if (row.timestampMicros(FROM) >= windowEndMicros) {
                    throw new ArchivalException(ArchivalException.Reason.PARTITION_NOT_COVERED,
                            "Partition '%s' of table '%s' holds a row from %s, at or after the end %s of the window archived from it: the partition reaches beyond its catalogue bound; nothing was committed, move the row into the partition holding it"
                                    .formatted(partition, hotTier.qualifiedParent(), micros(row.timestampMicros(FROM)), windowEnd));
                }
                RowKey key = key(row);
                try {
                    check.accept(reading(row, key));
                }
                catch (InvalidReadingException e) {
                    throw new RefusedRowException(key, e);
                }
                append(columns, row, builders);
                pageSize++;
                rows++;
                if (pageSize == pageRows) {
                    sink.accept(page(builders, pageSize));
                    builders = newBuilders();
                    pageSize = 0;
                }
            }
            if (pageSize > 0) {
                sink.accept(page(builders, pageSize));
            }
            return rows;
        }
        finally {
            if (copy != null && copy.isActive()) {
                // failed mid-stream (the sink, or a row past the window): closing the connection ends the COPY on the
                // server too, where cancelling it leaves the driver's protocol state behind; the cycle fails with it
                connection.close();
            }
            else {
                // the read changed nothing: end the transaction and hand the connection back as it came
                connection.rollback();
                connection.setAutoCommit(autoCommit);
            }
        }
    }

    private static RowKey key(PgBinaryCopyReader row)
    {
        return new RowKey(row.text(MALO_ID), row.text(OBIS_CODE), micros(row.timestampMicros(FROM)), ReadingsParquetSchema.version(row, VERSION_CHANNEL).toBigInteger());
    }

    /**
     * The row as the write path sees a reading, its identity and attribute columns too (a check may name one); the
     * enumerations' parsers refuse a value they do not know.
     */
    private Reading reading(PgBinaryCopyReader row, RowKey key)
    {
        // no list to fill for a table of the readings columns alone, most tables: this runs for every archived row
        List<Optional<String>> attributes = List.of();
        if (columns.hasAttributes()) {
            attributes = new ArrayList<>(columns.attributes().size());
            for (int index = 0; index < columns.attributes().size(); index++) {
                attributes.add(optionalText(row, columns.attributeChannel(index)));
            }
        }
        return new Reading(
                key.maloId(),
                optionalText(row, MELO_ID),
                key.obisCode(),
                Sparte.parse(row.text(SPARTE)),
                key.from(),
                // NULL for a register reading of a point table
                row.isNull(TO) ? Optional.empty() : Optional.of(micros(row.timestampMicros(TO))),
                BigDecimal.valueOf(row.numericUnscaled(VALUE, QUANTITY.getScale()), QUANTITY.getScale()),
                MeasurementUnit.parse(row.text(UNIT)),
                Quality.parse(row.text(QUALITY)),
                row.text(RESOLUTION),
                row.text(SOURCE_KIND),
                optionalText(row, SOURCE_DETAIL),
                optionalText(row, PROVENANCE),
                key.version(),
                row.text(VERSION_SCOPE),
                micros(row.timestampMicros(RECORDED_AT)),
                LocalDate.ofEpochDay(row.epochDay(BALANCING_DAY)),
                attributes);
    }

    private static Optional<String> optionalText(PgBinaryCopyReader row, int channel)
    {
        return row.isNull(channel) ? Optional.empty() : Optional.of(row.text(channel));
    }

    private static int channel(ReadingsColumn column)
    {
        return ReadingsParquetSchema.COLUMNS.indexOf(column);
    }

    private static Instant micros(long micros)
    {
        return Instant.ofEpochSecond(floorDiv(micros, 1_000_000), floorMod(micros, 1_000_000) * 1_000L);
    }

    private static boolean nextRow(PgBinaryCopyReader row)
            throws SQLException, IOException
    {
        try {
            return row.nextRow();
        }
        catch (SQLException | IOException | RuntimeException e) {
            throw e;
        }
        catch (Exception e) {
            throw new IOException(e);
        }
    }

    /**
     * The columns as stored, streamed in PostgreSQL's binary format: instants, quantities and days arrive as exact
     * integers, with no text to parse. The order is the primary key's, so the index provides it; strings compare in the
     * columns' collation, which is the byte order Parquet declares only for "C" columns (the file writer checks the
     * order it receives before declaring it).
     */
    String query(String partition)
    {
        // (malo_id, obis_code, "from", the key's other columns, version): the default key's order when it has none
        String order = HotTier.primaryKey(columns);
        return "SELECT %s FROM %s WHERE %s ORDER BY %s".formatted(
                columns.postgresColumnList(), hotTier.qualifiedPartition(partition), Tier.sqlBetween(PgBinaryCopy.parameter(1, "timestamptz"), PgBinaryCopy.parameter(2, "timestamptz")), order);
    }

    private BlockBuilder[] newBuilders()
    {
        BlockBuilder[] builders = new BlockBuilder[types.size()];
        for (int channel = 0; channel < builders.length; channel++) {
            builders[channel] = types.get(channel).createBlockBuilder(null, 1024);
        }
        return builders;
    }

    private static void append(TableColumns columns, PgBinaryCopyReader row, BlockBuilder[] builders)
    {
        for (int channel = 0; channel < builders.length; channel++) {
            BlockBuilder builder = builders[channel];
            if (row.isNull(channel)) {
                builder.appendNull();
                continue;
            }
            switch (columns.all().get(channel).kind()) {
                // UTF-8 bytes as the server sent them: no decoding to a String and back
                case STRING -> VARCHAR.writeSlice(builder, Slices.wrappedBuffer(row.buffer(), row.offset(channel), row.length(channel)));
                case TIMESTAMP_TZ -> {
                    long micros = row.timestampMicros(channel);
                    TIMESTAMP_TZ_MICROS.writeObject(builder, LongTimestampWithTimeZone.fromEpochMillisAndFraction(floorDiv(micros, 1000), floorMod(micros, 1000) * 1_000_000, UTC_KEY));
                }
                case QUANTITY -> QUANTITY.writeLong(builder, row.numericUnscaled(channel, QUANTITY.getScale()));
                case VERSION -> VERSION.writeObject(builder, ReadingsParquetSchema.version(row, channel));
                case DATE -> DATE.writeLong(builder, row.epochDay(channel));
            }
        }
    }

    private static Page page(BlockBuilder[] builders, int positionCount)
    {
        Block[] blocks = new Block[builders.length];
        for (int channel = 0; channel < builders.length; channel++) {
            blocks[channel] = builders[channel].build();
        }
        return new Page(positionCount, blocks);
    }
}
