package io.meterstore.trino.write;

import io.airlift.slice.Slice;
import io.airlift.slice.Slices;
import io.meterstore.core.CheckedColumns;
import io.meterstore.core.InvalidReadingException;
import io.meterstore.core.PgBinaryCopyWriter;
import io.meterstore.core.Reading;
import io.meterstore.core.TableColumn;
import io.meterstore.core.TableColumns;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.meterstore.trino.base.MeterstoreConfig;
import io.meterstore.trino.base.MeterstoreTypes;
import io.meterstore.trino.base.PostgresConnectionPool;
import io.trino.spi.Page;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.ConnectorPageSink;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static io.airlift.units.Duration.succinctDuration;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_INVALID_READING;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_WRITE_FAILED;
import static java.util.Objects.requireNonNull;
import static java.util.concurrent.TimeUnit.MILLISECONDS;

/**
 * Validates every row it receives and stages it in the statement's {@link InsertStaging} table, a chunk at a time, as
 * Trino's JDBC connectors stage an INSERT in a temporary table: the sink holds one chunk, never the statement. Nothing
 * is written to either tier here: one bad row anywhere must fail the whole statement before either tier changes, and
 * only finishInsert, which runs once, sees every writer's rows (its fragment is the number of rows it staged).
 */
public final class MeterstorePageSink
        implements ConnectorPageSink
{
    // one COPY statement per chunk: large enough that a statement's cost vanishes per row, small enough to hold
    private static final int CHUNK_BYTES = 1 << 20;
    private static final int CHUNK_CAPACITY = CHUNK_BYTES + (64 << 10);

    private final MeterstoreInsertTableHandle handle;
    private final PostgresConnectionPool postgres;
    // the table's columns, and the INSERT's columns among them, in channel order
    private final TableColumns tableColumns;
    private final List<TableColumn> columns;
    private final CheckedColumns checks;
    private final Instant statementStart;
    private final Instant latestRecordedAt;
    private PgBinaryCopyWriter chunk = new PgBinaryCopyWriter(CHUNK_CAPACITY);
    private long chunkRows;
    private long rows;
    // the chunks on their way to PostgreSQL, one after another; the sink accepts pages again once they are staged
    private CompletableFuture<?> staging = CompletableFuture.completedFuture(null);
    private volatile long stagingBytes;

    public MeterstorePageSink(MeterstoreInsertTableHandle handle, PostgresConnectionPool postgres)
    {
        this.handle = requireNonNull(handle, "handle is null");
        this.postgres = requireNonNull(postgres, "postgres is null");
        this.tableColumns = handle.tableColumns();
        this.columns = handle.columns().stream().map(MeterstoreColumnHandle::column).toList();
        this.checks = handle.checks();
        this.statementStart = MeterstoreTypes.fromEpochMicros(handle.statementStartEpochMicros());
        this.latestRecordedAt = MeterstoreTypes.fromEpochMicros(handle.latestRecordedAtEpochMicros());
    }

    /** The fragment of a sink that staged {@code rows} rows. */
    static Slice fragment(long rows)
    {
        Slice fragment = Slices.allocate(Long.BYTES);
        fragment.setLong(0, rows);
        return fragment;
    }

    /** How many rows the sinks whose fragments these are staged together. */
    static long stagedRows(Collection<Slice> fragments)
    {
        return fragments.stream().mapToLong(fragment -> fragment.getLong(0)).sum();
    }

    @Override
    public CompletableFuture<?> appendPage(Page page)
    {
        ReadingsPages.PageBlocks blocks = ReadingsPages.blocks(tableColumns, columns, page::getBlock);
        for (int position = 0; position < page.getPositionCount(); position++) {
            chunk.append(validReading(blocks, position));
            chunkRows++;
        }
        if (chunk.length() < CHUNK_BYTES) {
            return NOT_BLOCKED;
        }
        return stageChunk();
    }

    private Reading validReading(ReadingsPages.PageBlocks blocks, int position)
    {
        Reading reading;
        try {
            // the checked columns' values in their canonical spelling, which is what is stored
            reading = checks.canonical(ReadingsPages.read(blocks, position, statementStart))
                    .requireTimeModel(handle.timeModel(), handle.schemaTableName().toString())
                    .requireKeyValues(tableColumns, handle.schemaTableName().toString())
                    .validate();
        }
        catch (InvalidReadingException e) {
            throw new TrinoException(METERSTORE_INVALID_READING, "Row %s of the INSERT into '%s' is invalid: %s; nothing was written"
                    .formatted(RowDescription.describe(blocks, position, tableColumns), handle.schemaTableName(), e.getMessage()), e);
        }
        // a version recorded in the future would be invisible to "as known at" until then, and AS OF reruns would change
        if (reading.recordedAt().isAfter(latestRecordedAt)) {
            throw new TrinoException(METERSTORE_INVALID_READING, ("Row %s of the INSERT into '%s' is invalid: recorded_at %s lies after the statement's start %s plus the tolerated clock skew of %s ('%s'): "
                    + "leave recorded_at NULL to record the version at the statement's start, or fix the sending system's clock; nothing was written")
                    .formatted(RowDescription.describe(blocks, position, tableColumns), handle.schemaTableName(), reading.recordedAt(), statementStart,
                            succinctDuration(Duration.between(statementStart, latestRecordedAt).toMillis(), MILLISECONDS), MeterstoreConfig.MAX_CLOCK_SKEW_PROPERTY));
        }
        return reading;
    }

    /** Hands the chunk to a pool thread, which copies it into the staging table over a pooled connection. */
    private CompletableFuture<?> stageChunk()
    {
        PgBinaryCopyWriter staged = chunk;
        long stagedRows = chunkRows;
        staged.finish();
        chunk = new PgBinaryCopyWriter(CHUNK_CAPACITY);
        chunkRows = 0;
        rows += stagedRows;
        stagingBytes += staged.retainedBytes();
        staging = staging.thenCompose(ignored -> postgres.withConnectionAsync(connection -> copy(connection, staged, stagedRows)));
        return staging;
    }

    private long copy(Connection connection, PgBinaryCopyWriter staged, long stagedRows)
    {
        try {
            // auto-commit: each chunk commits on its own, into a table no reader sees; finishInsert moves them all in one transaction
            CopyIn copy = connection.unwrap(PGConnection.class).getCopyAPI().copyIn(handle.staging().copySql(tableColumns));
            try {
                staged.flushTo(copy);
                long copied = copy.endCopy();
                if (copied != stagedRows) {
                    throw new TrinoException(METERSTORE_WRITE_FAILED, "Staging the INSERT into '%s' copied %s rows of a chunk of %s; nothing was written, run the statement again"
                            .formatted(handle.schemaTableName(), copied, stagedRows));
                }
                return copied;
            }
            finally {
                if (copy.isActive()) {
                    copy.cancelCopy();
                }
            }
        }
        catch (SQLException e) {
            throw new TrinoException(METERSTORE_WRITE_FAILED, "Staging the rows of the INSERT into '%s' in PostgreSQL table %s failed: %s; nothing was written, run the statement again"
                    .formatted(handle.schemaTableName(), handle.staging().qualifiedName(), e.getMessage()), e);
        }
        finally {
            stagingBytes -= staged.retainedBytes();
        }
    }

    @Override
    public long getMemoryUsage()
    {
        return chunk.retainedBytes() + stagingBytes;
    }

    @Override
    public CompletableFuture<Collection<Slice>> finish()
    {
        if (chunkRows > 0) {
            stageChunk();
        }
        long staged = rows;
        return staging.thenApply(ignored -> List.of(fragment(staged)));
    }

    @Override
    public void abort()
    {
        // nothing reached either tier; the staged chunks go with the staging table, which the coordinator drops
    }
}
