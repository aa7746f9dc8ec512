package io.meterstore.trino.write;

import com.google.inject.Inject;
import io.airlift.log.Logger;
import io.meterstore.core.CorrectionCommitter;
import io.meterstore.core.CorrectionCommitter.Committed;
import io.meterstore.core.CorrectionCommitter.RejectedCorrectionException;
import io.meterstore.core.ErasureKey;
import io.meterstore.core.ErasureLog;
import io.meterstore.core.ErasureLog.Erasure;
import io.meterstore.core.ErasureLog.NewErasure;
import io.meterstore.core.ErasureLog.Trigger;
import io.meterstore.core.HotPartition;
import io.meterstore.core.HotTier;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.Tier;
import io.meterstore.core.TieringWatermark;
import io.meterstore.core.TiersConfig;
import io.meterstore.core.WatermarkReader;
import io.meterstore.core.WatermarkReader.PinnedWatermark;
import io.meterstore.trino.base.MeterstoreTables;
import io.meterstore.trino.cold.IcebergExpressions;
import io.meterstore.trino.handle.MeterstoreTableHandle;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.ConnectorSession;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.util.PropertyUtil;
import org.apache.iceberg.util.SnapshotUtil;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

import static com.google.common.collect.ImmutableSet.toImmutableSet;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_ERASURE_KEY_MISSING;
import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_WRITE_FAILED;
import static java.util.Objects.requireNonNull;

/**
 * Erases what one DELETE names ({@link ErasureRequest}) from both tiers, and records it in the audit trail, whose
 * unlifted rows are the suppression list INSERT checks. In one PostgreSQL transaction that first takes the archiver's
 * lease in shared mode (no archival cycle or compaction commit runs until it ends) and the cold-write lock (no other
 * MeterStore writer writes Iceberg: an INSERT with cold rows that read the suppression list before waits for it, one
 * after sees the erasure): the cold rows first, rewritten out of the current snapshot's files in one commit that
 * republishes W ({@link ColdErasure}, {@code CorrectionCommitter.commitErasure}); then, under the table's boundary lock
 * in exclusive mode, which holds INSERTs of hot rows for that moment only, the hot rows, one DELETE per partition that
 * meets the range, attached or detached at or above W (a detached partition below W is the archived copy kept for the
 * reader grace, which the archiver drops); then the audit row; then the PostgreSQL commit. A failure before the Iceberg
 * commit changes nothing; one between the commits leaves the cold rows erased and the hot ones not, and running the
 * statement again erases those (the cold tier has nothing left to erase).
 */
public final class ErasureWriter
{
    private static final Logger log = Logger.get(ErasureWriter.class);

    private final MeterstoreTables tables;
    private final CorrectionCommitter committer = new CorrectionCommitter();

    @Inject
    public ErasureWriter(MeterstoreTables tables)
    {
        this.tables = requireNonNull(tables, "tables is null");
    }

    /** The rows a statement erased from each tier, and its audit row. */
    public record Erased(long hotRows, long coldRows, Erasure erasure)
    {
        public Erased
        {
            requireNonNull(erasure, "erasure is null");
        }

        public long rows()
        {
            return hotRows + coldRows;
        }
    }

    /** The key the scope is recorded under; refuses the DELETE when none is configured. */
    public ErasureKey requireKey(MeterstoreTableHandle handle)
    {
        return tables.erasureKey().orElseThrow(() -> new TrinoException(METERSTORE_ERASURE_KEY_MISSING,
                "DELETE from '%s' is refused: erasures record the malo_ids they erase as HMACs under a secret key, and none is configured; set %s (at least %s characters, e.g. ${ENV:METERSTORE_ERASURE_HMAC_KEY}) in the catalog properties and the archiver's, the same in both"
                        .formatted(handle.schemaTableName(), TiersConfig.ERASURE_HMAC_KEY_PROPERTY, ErasureKey.MIN_LENGTH)));
    }

    public Erased erase(ConnectorSession session, MeterstoreTableHandle handle)
    {
        ErasureKey key = requireKey(handle);
        ErasureRequest request = ErasureRequest.of(handle.schemaTableName(), handle.constraint());
        Table table = tables.loadIcebergTable(handle.storageTable());
        HotTier hotTier = tables.hotTierForWrites(handle.storageTable(), table);
        // the log is created before the statement's transaction, in a transaction of its own on first use
        return WriteTransaction.run(tables, "DELETE from", handle.schemaTableName(),
                connection -> ErasureLog.create(connection, tables.schema()),
                connection -> erase(session, handle, request, key, connection, hotTier, table));
    }

    private Erased erase(ConnectorSession session, MeterstoreTableHandle handle, ErasureRequest request, ErasureKey key, Connection connection, HotTier hotTier, Table table)
            throws SQLException
    {
        // no archival cycle runs until the transaction ends: none streams a partition whose rows this erasure deletes
        hotTier.fenceArchival(connection, ArchivalFence.ARCHIVAL_WAIT);
        hotTier.holdColdWrites(connection, ArchivalFence.ARCHIVAL_WAIT);
        // under the lease W cannot move, and under the cold-write lock no other MeterStore writer commits to Iceberg: this
        // snapshot and W hold until the transaction ends
        table.refresh();
        PinnedWatermark pinned = WatermarkReader.current(table);
        TieringWatermark watermark = pinned.watermark();

        // the cold rows failed runs of this statement erased, committed but never audited: the audit row takes them,
        // and names this run's commit if it makes one (a redelivery into the range since then is erased by it)
        List<Snapshot> unaudited = unauditedCommits(connection, table, handle.storageTable(), request.digest(key));
        long recoveredColdRows = unaudited.stream().mapToLong(snapshot -> Long.parseLong(snapshot.summary().get(CorrectionCommitter.ERASURE_KEY))).sum();
        Optional<Long> snapshotId = unaudited.stream().findFirst().map(Snapshot::snapshotId);
        long coldRows = 0;
        if (pinned.snapshotId().isPresent()) {
            Expression filter = Expressions.and(IcebergExpressions.toIcebergExpression(handle.constraint()), IcebergExpressions.belowWatermark(watermark));
            long targetFileSize = PropertyUtil.propertyAsLong(table.properties(), TableProperties.WRITE_TARGET_FILE_SIZE_BYTES, IcebergTableSpec.TARGET_FILE_SIZE_BYTES);
            ColdErasure.Rewrite rewrite = ColdErasure.rewrite(table, pinned.snapshotId().get(), filter, request, "erasure-%s-%s".formatted(session.getQueryId(), UUID.randomUUID()), targetFileSize);
            if (!rewrite.isEmpty()) {
                snapshotId = Optional.of(commit(handle, table, pinned, rewrite, request.digest(key)).snapshotId());
                coldRows = rewrite.erasedRows();
            }
        }
        // a crash here leaves the cold rows erased and the hot rows not: running the statement again erases them
        InsertFailpoints.deleteBetweenTiers();

        // the hot rows and the audit row under the boundary lock, exclusively, for as long as they take: a writer in
        // flight commits first and its rows are deleted here, one after it reads the audit row and is refused
        hotTier.holdBoundaryExclusive(connection, ArchivalFence.ARCHIVAL_WAIT);
        long hotRows = 0;
        long belowWatermark = 0;
        for (HotPartition partition : hotTier.partitions(connection)) {
            if (!partition.overlaps(request.from().lower().orElse(partition.start()), request.from().upper())) {
                continue;
            }
            if (!partition.attached() && partition.isBelow(watermark)) {
                // an archived partition kept for the reader grace: a copy of rows whose Iceberg rows were erased above,
                // read only by queries planned before its archival; the archiver drops it after the grace, once its rows
                // still equal those its archival commit streamed (so it is not changed here)
                continue;
            }
            long[] removed = deleteHot(connection, hotTier, partition, request, watermark);
            hotRows += removed[0];
            belowWatermark += removed[1];
        }
        Erasure erasure = ErasureLog.record(connection, tables.schema(), new NewErasure(
                handle.storageTable(),
                Trigger.REQUEST,
                session.getUser(),
                session.getStart(),
                Optional.of(key.fingerprint()),
                request.scope(key),
                hotRows,
                coldRows + recoveredColdRows,
                snapshotId));
        log.info("Erasure %s of '%s' by '%s': %s rows from PostgreSQL, %s from Iceberg (snapshot %s)%s%s",
                erasure.erasureId(), handle.schemaTableName(), session.getUser(), hotRows, coldRows, snapshotId.map(String::valueOf).orElse("none"),
                recoveredColdRows == 0 ? "" : ", and %s rows from Iceberg by earlier runs of this statement that failed after their commit".formatted(recoveredColdRows),
                belowWatermark == 0 ? "" : ", and %s rows below the watermark that no query read from a partition at or above it".formatted(belowWatermark));
        return new Erased(hotRows, coldRows, erasure);
    }

    /**
     * The erasure commits of this request in the current ancestry since its last audited one, newest first: runs of the
     * statement that failed after their Iceberg commit (a crash between the tiers, perhaps more than once). Empty when
     * the statement ran before and completed.
     */
    private List<Snapshot> unauditedCommits(Connection connection, Table table, String storageTable, String digest)
            throws SQLException
    {
        if (table.currentSnapshot() == null) {
            return List.of();
        }
        Set<Long> audited = ErasureLog.erasures(connection, tables.schema(), storageTable).stream()
                .flatMap(erasure -> erasure.recorded().snapshotId().stream())
                .collect(toImmutableSet());
        List<Snapshot> commits = new ArrayList<>();
        for (Snapshot snapshot : SnapshotUtil.currentAncestors(table)) {
            if (!digest.equals(snapshot.summary().get(CorrectionCommitter.ERASURE_SCOPE_KEY))) {
                continue;
            }
            if (audited.contains(snapshot.snapshotId())) {
                break;
            }
            commits.add(snapshot);
        }
        return commits;
    }

    private Committed commit(MeterstoreTableHandle handle, Table table, PinnedWatermark pinned, ColdErasure.Rewrite rewrite, String digest)
    {
        try {
            return committer.commitErasure(table, rewrite.removedData(), rewrite.removedDeletes(), rewrite.addedData(), pinned.snapshotId().orElseThrow(), rewrite.erasedRows(), digest);
        }
        catch (RejectedCorrectionException | CommitFailedException | ValidationException e) {
            // Iceberg refused the commit: nothing of it landed
            ColdErasure.abort(table, rewrite);
            throw new TrinoException(METERSTORE_WRITE_FAILED, "The Iceberg commit of the DELETE from '%s' was refused: %s; nothing of this statement was committed, run it again"
                    .formatted(handle.schemaTableName(), e.getMessage()), e);
        }
        catch (RuntimeException e) {
            // the swap may have landed: keep the files (orphans at worst); a rerun finds out and erases what is left
            throw new TrinoException(METERSTORE_WRITE_FAILED, "The Iceberg commit of the DELETE from '%s' has an unknown outcome: %s; run the statement again, it erases whatever is left"
                    .formatted(handle.schemaTableName(), e.getMessage()), e);
        }
    }

    /**
     * Deletes the erased rows of one partition by name, attached or detached at or above W (left by an interrupted
     * archival, archived whole later); returns {rows at or above W, rows below W}. Rows below W in such a partition
     * are outside both tiers (an invariant violation the check reports): removed, not counted as rows of the table.
     */
    private static long[] deleteHot(Connection connection, HotTier hotTier, HotPartition partition, ErasureRequest request, TieringWatermark watermark)
            throws SQLException
    {
        StringBuilder conditions = new StringBuilder("malo_id = ANY (?)");
        request.obisCodes().ifPresent(_ -> conditions.append(" AND obis_code = ANY (?)"));
        // "from" in the request's [lower, upper), and the rows at or above W counted apart from those below, as Tier renders them
        request.from().lower().ifPresent(_ -> conditions.append(" AND ").append(Tier.HOT.sql("?")));
        request.from().upper().ifPresent(_ -> conditions.append(" AND ").append(Tier.COLD.sql("?")));
        String sql = """
                WITH erased AS (DELETE FROM %s WHERE %s RETURNING "from")
                SELECT count(*) FILTER (WHERE %s), count(*) FILTER (WHERE %s) FROM erased""".formatted(hotTier.qualifiedPartition(partition.name()), conditions, Tier.HOT.sql("?"), Tier.COLD.sql("?"));
        try (PreparedStatement statement = connection.prepareStatement(sql)) {
            int index = 1;
            statement.setArray(index++, connection.createArrayOf("text", request.maloIds().toArray()));
            if (request.obisCodes().isPresent()) {
                statement.setArray(index++, connection.createArrayOf("text", request.obisCodes().get().toArray()));
            }
            if (request.from().lower().isPresent()) {
                statement.setObject(index++, OffsetDateTime.ofInstant(request.from().lower().get(), ZoneOffset.UTC));
            }
            if (request.from().upper().isPresent()) {
                statement.setObject(index++, OffsetDateTime.ofInstant(request.from().upper().get(), ZoneOffset.UTC));
            }
            OffsetDateTime boundary = OffsetDateTime.ofInstant(watermark.instant(), ZoneOffset.UTC);
            statement.setObject(index++, boundary);
            statement.setObject(index, boundary);
            try (ResultSet result = statement.executeQuery()) {
                result.next();
                return new long[] {result.getLong(1), result.getLong(2)};
            }
        }
    }
}
