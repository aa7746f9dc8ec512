package io.meterstore.archiver.cycle;

import io.airlift.slice.Slices;
import io.meterstore.core.HotTier;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.parquet.ReadingsParquetSchema;
import io.trino.spi.Page;
import io.trino.spi.block.Block;
import io.trino.spi.block.BlockBuilder;
import io.trino.spi.type.Int128;
import io.trino.spi.type.LongTimestampWithTimeZone;
import io.trino.spi.type.Type;

import java.io.IOException;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
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
 * files. A server-side cursor fetches {@code chunkRows} rows per round trip and each page holds at most
 * {@code pageRows}: nothing is materialised, so peak memory is the chunk, whatever the partition holds.
 */
final class HotPartitionReader
{
    private static final List<Type> TYPES = ReadingsParquetSchema.trinoTypes();
    // every number of up to 18 digits fits a long
    private static final int MAX_LONG_DIGITS = 18;

    private final HotTier hotTier;
    private final int chunkRows;
    private final int pageRows;

    HotPartitionReader(HotTier hotTier, int chunkRows, int pageRows)
    {
        this.hotTier = requireNonNull(hotTier, "hotTier is null");
        checkArgument(chunkRows > 0, "chunkRows must be positive");
        checkArgument(pageRows > 0, "pageRows must be positive");
        this.chunkRows = chunkRows;
        this.pageRows = pageRows;
    }

    interface PageSink
    {
        void accept(Page page)
                throws IOException;
    }

    /** Streams the rows of {@code partition} with "from" in [from, to) into {@code sink}; returns how many there were. */
    long read(Connection connection, String partition, Instant from, Instant to, PageSink sink)
            throws SQLException, IOException
    {
        boolean autoCommit = connection.getAutoCommit();
        // a cursor only streams inside a transaction; without one the driver fetches the whole result
        connection.setAutoCommit(false);
        try {
            try (Statement statement = connection.createStatement()) {
                // walk the primary key index, which is the sort order: rows stream from the first fetch, where sorting
                // a whole day first would spill it to temporary files on the server
                statement.execute("SET LOCAL enable_sort = off");
            }
            try (PreparedStatement statement = connection.prepareStatement(query(partition))) {
                statement.setFetchSize(chunkRows);
                statement.setObject(1, OffsetDateTime.ofInstant(from, ZoneOffset.UTC));
                statement.setObject(2, OffsetDateTime.ofInstant(to, ZoneOffset.UTC));
                long rows = 0;
                try (ResultSet result = statement.executeQuery()) {
                    BlockBuilder[] builders = newBuilders();
                    int pageSize = 0;
                    while (result.next()) {
                        append(result, builders);
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
                }
                return rows;
            }
        }
        finally {
            // the read changed nothing: end the transaction and hand the connection back as it came
            connection.rollback();
            connection.setAutoCommit(autoCommit);
        }
    }

    /**
     * Instants, quantities and days arrive as exact integers in Trino's encodings, computed by the server: no
     * client-side parsing of zone- and DateStyle-dependent text. The order is the primary key's, so the index provides
     * it; strings compare in the columns' collation, which is the byte order Parquet declares only for "C" columns
     * (the file writer checks the order it receives before declaring it).
     */
    String query(String partition)
    {
        String columns = ReadingsParquetSchema.COLUMNS.stream()
                .map(HotPartitionReader::selectExpression)
                .collect(Collectors.joining(", "));
        String order = ReadingsColumn.SORT_KEY.stream()
                .map(column -> quoteIdentifier(column.columnName()))
                .collect(Collectors.joining(", "));
        String from = quoteIdentifier(ReadingsColumn.FROM.columnName());
        return "SELECT %s FROM %s WHERE %s >= ? AND %s < ? ORDER BY %s".formatted(columns, hotTier.qualifiedPartition(partition), from, from, order);
    }

    private static String selectExpression(ReadingsColumn column)
    {
        String name = quoteIdentifier(column.columnName());
        return switch (column.kind()) {
            case STRING, VERSION -> name;
            case TIMESTAMP_TZ -> "(EXTRACT(EPOCH FROM %s) * 1000000)::int8".formatted(name);
            case QUANTITY -> "(%s * %s)::int8".formatted(name, BigInteger.TEN.pow(QUANTITY.getScale()));
            case DATE -> "(%s - DATE '1970-01-01')".formatted(name);
        };
    }

    private static BlockBuilder[] newBuilders()
    {
        BlockBuilder[] builders = new BlockBuilder[TYPES.size()];
        for (int channel = 0; channel < builders.length; channel++) {
            builders[channel] = TYPES.get(channel).createBlockBuilder(null, 1024);
        }
        return builders;
    }

    private static void append(ResultSet result, BlockBuilder[] builders)
            throws SQLException
    {
        for (int channel = 0; channel < builders.length; channel++) {
            ReadingsColumn column = ReadingsParquetSchema.COLUMNS.get(channel);
            BlockBuilder builder = builders[channel];
            int index = channel + 1;
            switch (column.kind()) {
                case STRING -> {
                    // the driver's raw text bytes, UTF-8 (it pins client_encoding): no decoding to a String and back
                    byte[] value = result.getBytes(index);
                    if (value == null) {
                        builder.appendNull();
                    }
                    else {
                        VARCHAR.writeSlice(builder, Slices.wrappedBuffer(value));
                    }
                }
                case TIMESTAMP_TZ -> {
                    long micros = result.getLong(index);
                    if (result.wasNull()) {
                        builder.appendNull();
                    }
                    else {
                        TIMESTAMP_TZ_MICROS.writeObject(builder, LongTimestampWithTimeZone.fromEpochMillisAndFraction(floorDiv(micros, 1000), floorMod(micros, 1000) * 1_000_000, UTC_KEY));
                    }
                }
                case QUANTITY -> {
                    long unscaled = result.getLong(index);
                    if (result.wasNull()) {
                        builder.appendNull();
                    }
                    else {
                        QUANTITY.writeLong(builder, unscaled);
                    }
                }
                case VERSION -> {
                    String value = result.getString(index);
                    if (value == null) {
                        builder.appendNull();
                    }
                    else {
                        VERSION.writeObject(builder, value.length() <= MAX_LONG_DIGITS ? Int128.valueOf(Long.parseLong(value)) : Int128.valueOf(new BigInteger(value)));
                    }
                }
                case DATE -> {
                    int days = result.getInt(index);
                    if (result.wasNull()) {
                        builder.appendNull();
                    }
                    else {
                        DATE.writeLong(builder, days);
                    }
                }
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
