package io.meterstore.trino.write;

import com.google.inject.Inject;
import io.airlift.log.Logger;
import io.airlift.slice.Slice;
import io.meterstore.core.CorrectionCommitter;
import io.meterstore.core.HotTier;
import io.meterstore.core.MeterstoreException;
import io.meterstore.core.Reading;
import io.meterstore.core.TableColumns;
import io.meterstore.core.TableShape;
import io.meterstore.core.Tier;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.WatermarkReader;
import io.meterstore.core.WatermarkReader.PinnedWatermark;
import io.meterstore.trino.base.MeterstoreColumnHandle;
import io.meterstore.trino.base.MeterstoreErrorCode;
import io.meterstore.trino.base.MeterstoreTables;
import io.meterstore.trino.base.MeterstoreTypes;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.SchemaTableName;
import org.apache.iceberg.Table;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_WRITE_FAILED;
import static java.util.Objects.requireNonNull;

/**
 * Writes one INSERT: beginInsert creates the statement's {@link InsertStaging} table, the page sinks validate the rows
 * and stage them there, and finishInsert, once, on the coordinator, moves them into the tiers by "from" against the
 * current watermark W: at or above W into their PostgreSQL partitions ({@link HotRowWriter}), below W into Iceberg in
 * a commit that republishes W unchanged ({@link ColdInsertCommit}), every version already stored with the same payload
 * skipped ({@link ColdRedeliveryLookup} for the cold rows), one stored with a different payload failing the statement
 * before anything is committed. No step holds the statement's rows: PostgreSQL streams and sorts them.
 * <p>
 * The move happens in one PostgreSQL transaction that first takes the {@link ArchivalFence}: W is read under it, and
 * the statement waits for an archival cycle only when its rows lie in the cycle's window, which is why a row planned
 * hot whose day was archived since goes to Iceberg, and never to a detached or re-created partition, while rows of
 * later days are written during the cycle. Commit order: Iceberg first, then PostgreSQL. A failure before the Iceberg commit changes nothing; one
 * between the two leaves the cold rows committed and the hot rows rolled back, and running the statement again skips
 * the former and writes the latter.
 */
public final class InsertWriter
{
    private static final Logger log = Logger.get(InsertWriter.class);
    // the cold rows are looked up in Iceberg this many at a time: a bounded map, and one pruned scan per chunk
    private static final int COLD_CHUNK_ROWS = 8192;

    private final MeterstoreTables tables;
    private final ColdRedeliveryLookup coldLookup;
    private final CorrectionCommitter committer = new CorrectionCommitter();
    // the staging tables this coordinator created, by query id, until their query is cleaned up
    private final Map<String, InsertStaging> stagingTables = new ConcurrentHashMap<>();

    @Inject
    public InsertWriter(MeterstoreTables tables, ColdRedeliveryLookup coldLookup)
    {
        this.tables = requireNonNull(tables, "tables is null");
        this.coldLookup = requireNonNull(coldLookup, "coldLookup is null");
    }

    /** What a statement did: rows new in each tier, and redelivered rows already stored with the same payload. */
    public record Written(long hotRows, long coldRows, long unchanged) {}

    /** Starts an INSERT: pins nothing but creates the table its page sinks stage the rows in. */
    public MeterstoreInsertTableHandle begin(ConnectorSession session, SchemaTableName table, String storageTable, List<MeterstoreColumnHandle> columns, Duration maxClockSkew)
    {
        PinnedWatermark pinned;
        TableShape shape;
        try {
            Table icebergTable = tables.loadIcebergTable(storageTable);
            // the current W, not the one a read of the same table pinned; the write re-reads it under the archival fence
            pinned = WatermarkReader.current(icebergTable);
            // the model the rows must have, and the columns after the readings columns they carry, as the table's shape declares them
            shape = tables.shape(storageTable, icebergTable);
        }
        catch (MeterstoreException e) {
            throw MeterstoreErrorCode.toTrinoException(e);
        }
        InsertStaging staging = InsertStaging.of(tables.schema(), session.getQueryId());
        try (Connection connection = tables.connectPostgres()) {
            staging.create(connection, tables.hotTier(storageTable).qualifiedParent());
        }
        catch (SQLException e) {
            throw new TrinoException(METERSTORE_WRITE_FAILED, "INSERT into '%s' cannot create its staging table %s in PostgreSQL: %s; nothing was written, check that the user may create tables in schema '%s'"
                    .formatted(table, staging.qualifiedName(), e.getMessage(), tables.schema()), e);
        }
        stagingTables.put(session.getQueryId(), staging);
        return new MeterstoreInsertTableHandle(
                table,
                storageTable,
                shape.timeModel(),
                pinned.snapshotId(),
                MeterstoreTypes.toEpochMicros(pinned.watermark().instant()),
                MeterstoreTypes.toEpochMicros(session.getStart()),
                MeterstoreTypes.toEpochMicros(session.getStart().plus(maxClockSkew)),
                columns,
                staging,
                shape.attributeColumns(),
                shape.keyColumns(),
                shape.checkedColumns());
    }

    /** Moves the staged rows of a finished statement into the tiers; {@code fragments} are its page sinks'. */
    public Written finish(ConnectorSession session, MeterstoreInsertTableHandle handle, Collection<Slice> fragments)
    {
        long staged = MeterstorePageSink.stagedRows(fragments);
        InsertFailpoints.beforeFence();
        Table table = tables.loadIcebergTable(handle.storageTable());
        HotTier hotTier = tables.hotTierForWrites(handle.storageTable(), table);
        Written written = WriteTransaction.run(tables, "INSERT into", handle.schemaTableName(), _ -> {}, connection -> {
            Written rows = staged == 0 ? new Written(0, 0, 0) : write(session, handle, connection, hotTier, table, staged);
            // in the transaction of the hot rows: gone exactly when they are committed
            handle.staging().drop(connection);
            return rows;
        });
        stagingTables.remove(session.getQueryId());
        return written;
    }

    /** Drops the staging table of a query that did not finish its INSERT; the last thing Trino does for any query. */
    public void cleanup(ConnectorSession session)
    {
        Optional<InsertStaging> staging = Optional.ofNullable(stagingTables.remove(session.getQueryId()));
        if (staging.isEmpty()) {
            return;
        }
        try (Connection connection = tables.connectPostgres()) {
            staging.get().drop(connection);
        }
        catch (SQLException | RuntimeException e) {
            log.warn(e, "Cannot drop staging table %s of query %s; drop it by hand, it holds nothing any reader sees", staging.get().qualifiedName(), session.getQueryId());
        }
    }

    private Written write(ConnectorSession session, MeterstoreInsertTableHandle handle, Connection connection, HotTier hotTier, Table table, long staged)
            throws SQLException
    {
        Instant firstFrom = handle.staging().firstFrom(connection).orElseThrow(() -> new TrinoException(METERSTORE_WRITE_FAILED,
                "INSERT into '%s' staged %s rows but found none in %s; nothing of this statement was committed, run it again".formatted(handle.schemaTableName(), staged, handle.staging().qualifiedName())));
        // W, whatever beginInsert saw, read under the fence: it routes every row to the tier that holds it at the commit
        PinnedWatermark pinned = ArchivalFence.take(connection, hotTier, table, handle.staging(), firstFrom, () -> hotTier.holdColdWrites(connection, ArchivalFence.ARCHIVAL_WAIT));
        // under the boundary lock (and the cold-write lock for cold rows), so an erasure either committed before (its row
        // is read) or deletes what this statement writes
        ErasureSuppression.check(connection, tables, handle.schemaTableName(), handle.storageTable(), handle.staging());
        TieringWatermark watermark = pinned.watermark();
        // no instant counted twice: the statement's cold rows against each other here and against Iceberg's versions as
        // they are looked up; the hot rows against each other and PostgreSQL's versions by the hot tier's own trigger
        ReadingRulesCheck rules = new ReadingRulesCheck(connection, handle.staging(), handle.tableColumns());
        rules.requireStagedCompatible(watermark);
        // and across W, where a P1D or P1M span below it reaches above it: no trigger sees a pair in two tiers
        rules.requireColdSpansCompatibleWithHot(watermark, hotTier);
        rules.requireHotRowsCompatibleWithCold(watermark, coldLookup.spansReachingAbove(session, table, pinned), table.name());

        ColdInsertCommit cold = new ColdInsertCommit(handle, session, table, pinned, coldLookup, committer);
        try {
            // every check before any commit: a conflicting redelivery in either tier fails the statement with nothing written
            long coldStaged = writeCold(session, handle, connection, table, pinned, cold);
            HotRowWriter.Result hot;
            try {
                hot = new HotRowWriter(connection, hotTier, handle.tableColumns(), handle.staging(), watermark).write();
            }
            catch (SQLException e) {
                try (Connection fresh = tables.connectPostgres()) {
                    rules.refuseBrokenRule(e, hotTier, fresh);
                }
                throw e;
            }
            if (hot.staged() + coldStaged != staged) {
                throw new TrinoException(METERSTORE_WRITE_FAILED, "INSERT into '%s' staged %s rows but found %s in %s; nothing of this statement was committed, run it again"
                        .formatted(handle.schemaTableName(), staged, hot.staged() + coldStaged, handle.staging().qualifiedName()));
            }
            if (cold.rows() > 0) {
                cold.commit();
            }
            // a crash here leaves the cold rows committed and the hot rows rolled back: running the statement again completes it
            InsertFailpoints.betweenTiers();
            long unchanged = hot.unchanged() + (coldStaged - cold.rows());
            log.debug("INSERT into '%s' at watermark %s: %s rows to PostgreSQL, %s to Iceberg, %s already stored", handle.schemaTableName(), watermark, hot.inserted(), cold.rows(), unchanged);
            return new Written(hot.inserted(), cold.rows(), unchanged);
        }
        catch (SQLException | RuntimeException e) {
            cold.abort();
            throw e;
        }
    }

    /**
     * Streams the staged rows below W in (month, malo_id, obis_code, "from", the key's other columns, version) order, PostgreSQL sorting them,
     * and hands the versions Iceberg does not hold yet to {@code cold}, a chunk at a time. Returns the rows streamed.
     * The fence took the cold-write lock if there are any, before W was pinned: the lookup's answer holds until this
     * transaction ends, and the commit happens before that.
     */
    private long writeCold(ConnectorSession session, MeterstoreInsertTableHandle handle, Connection connection, Table table, PinnedWatermark pinned, ColdInsertCommit cold)
            throws SQLException
    {
        TableColumns columns = handle.tableColumns();
        String sql = "SELECT %s FROM %s WHERE %s ORDER BY date_trunc('month', \"from\", 'UTC'), %s"
                .formatted(columns.postgresColumnList(), handle.staging().qualifiedName(), Tier.COLD.sql("?"), HotTier.primaryKey(columns));
        long streamed = 0;
        Optional<Reading> previous = Optional.empty();
        List<Reading> chunk = new ArrayList<>(COLD_CHUNK_ROWS);
        try (PreparedStatement select = connection.prepareStatement(sql)) {
            select.setObject(1, OffsetDateTime.ofInstant(pinned.watermark().instant(), ZoneOffset.UTC));
            // a cursor: the rows arrive a fetch at a time, never all at once
            select.setFetchSize(COLD_CHUNK_ROWS);
            try (ResultSet result = select.executeQuery()) {
                while (result.next()) {
                    Reading reading = HotRows.reading(result, "", columns);
                    streamed++;
                    // the versions of a key arrive together: a second one in the statement is a repetition or a contradiction
                    if (previous.isPresent() && sameVersion(previous.get(), reading) && columns.sameMergeKey(previous.get(), reading)) {
                        Redeliveries.requireSamePayload(previous.get(), reading, "the statement itself carries it twice", columns);
                        continue;
                    }
                    previous = Optional.of(reading);
                    chunk.add(reading);
                    if (chunk.size() == COLD_CHUNK_ROWS) {
                        cold.add(coldLookup.withoutStored(session, handle, table, pinned, chunk));
                        chunk = new ArrayList<>(COLD_CHUNK_ROWS);
                    }
                }
            }
        }
        cold.add(coldLookup.withoutStored(session, handle, table, pinned, chunk));
        return streamed;
    }

    private static boolean sameVersion(Reading left, Reading right)
    {
        return left.maloId().equals(right.maloId())
                && left.obisCode().equals(right.obisCode())
                && left.from().equals(right.from())
                && left.version().equals(right.version());
    }
}
