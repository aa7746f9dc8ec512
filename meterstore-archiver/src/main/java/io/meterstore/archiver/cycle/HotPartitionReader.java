package io.meterstore.archiver.cycle;

import io.airlift.slice.Slices;
import io.meterstore.core.HotTier;
import io.meterstore.core.PgBinaryCopy;
import io.meterstore.core.PgBinaryCopyReader;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.Tier;
import io.meterstore.parquet.ReadingsParquetSchema;
import io.trino.spi.Page;
import io.trino.spi.block.Block;
import io.trino.spi.block.BlockBuilder;
import io.trino.spi.type.LongTimestampWithTimeZone;
import io.trino.spi.type.Type;

import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

import static com.google.common.base.Preconditions.checkArgument;
import static io.meterstore.parquet.ReadingsParquetSchema.QUANTITY;
import static io.meterstore.parquet.ReadingsParquetSchema.TIMESTAMP_TZ_MICROS;
import static io.meterstore.parquet.ReadingsParquetSchema.VERSION;
import static io.meterstore.core.Sql.quoteIdentifier;
import static io.trino.spi.type.DateType.DATE;
import static io.trino.spi.type.TimeZoneKey.UTC_KEY;
import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.lang.Math.floorDiv;
import static java.lang.Math.floorMod;
import static java.util.Objects.requireNonNull;

/**
 * Streams one hot partition, read by its name (never through the parent), as Trino pages in the sort order of the cold
 * files, as binary COPY decoded straight into pages of at most {@code pageRows} rows: nothing is materialised, so peak
 * memory is a page, whatever the partition holds.
 */
final class HotPartitionReader
{
    private static final List<Type> TYPES = ReadingsParquetSchema.trinoTypes();
    private final HotTier hotTier;
    private final int pageRows;

    HotPartitionReader(HotTier hotTier, int pageRows)
    {
        this.hotTier = requireNonNull(hotTier, "hotTier is null");
        checkArgument(pageRows > 0, "pageRows must be positive");
        this.pageRows = pageRows;
    }

    interface PageSink
    {
        void accept(Page page)
                throws IOException;
    }

    /**
     * Streams the rows of {@code partition} with "from" at or above {@code from} and below {@code to} (to its end when
     * empty) into {@code sink}; returns how many there were. A row at or after {@code windowEnd} fails the stream: the
     * window would move the watermark below it, and the partition would then be dropped with it.
     */
    long read(Connection connection, String partition, Instant from, Optional<Instant> to, Instant windowEnd, PageSink sink)
            throws SQLException, IOException
    {
        long windowEndMicros = Math.addExact(Math.multiplyExact(windowEnd.getEpochSecond(), 1_000_000), windowEnd.getNano() / 1_000);
        int fromChannel = ReadingsParquetSchema.COLUMNS.indexOf(ReadingsColumn.FROM);
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
                if (row.timestampMicros(fromChannel) >= windowEndMicros) {
                    throw new ArchivalException(ArchivalException.Reason.PARTITION_NOT_COVERED,
                            "Partition '%s' of table '%s' holds a row from %s, at or after the end %s of the window archived from it: the partition reaches beyond its catalogue bound; nothing was committed, move the row into the partition holding it"
                                    .formatted(partition, hotTier.qualifiedParent(), micros(row.timestampMicros(fromChannel)), windowEnd));
                }
                append(row, builders);
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
        String columns = ReadingsParquetSchema.COLUMNS.stream()
                .map(column -> quoteIdentifier(column.columnName()))
                .collect(Collectors.joining(", "));
        String order = ReadingsColumn.SORT_KEY.stream()
                .map(column -> quoteIdentifier(column.columnName()))
                .collect(Collectors.joining(", "));
        return "SELECT %s FROM %s WHERE %s ORDER BY %s".formatted(
                columns, hotTier.qualifiedPartition(partition), Tier.sqlBetween(PgBinaryCopy.parameter(1, "timestamptz"), PgBinaryCopy.parameter(2, "timestamptz")), order);
    }

    private static BlockBuilder[] newBuilders()
    {
        BlockBuilder[] builders = new BlockBuilder[TYPES.size()];
        for (int channel = 0; channel < builders.length; channel++) {
            builders[channel] = TYPES.get(channel).createBlockBuilder(null, 1024);
        }
        return builders;
    }

    private static void append(PgBinaryCopyReader row, BlockBuilder[] builders)
    {
        for (int channel = 0; channel < builders.length; channel++) {
            BlockBuilder builder = builders[channel];
            if (row.isNull(channel)) {
                builder.appendNull();
                continue;
            }
            switch (ReadingsParquetSchema.COLUMNS.get(channel).kind()) {
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
