package io.meterstore.trino.system;

import io.meterstore.core.ArchivalHistory;
import io.meterstore.core.HotTier;
import io.meterstore.core.InvariantCheck;
import io.meterstore.core.InvariantReport;
import io.meterstore.core.MeterstoreException;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.TableStatus;
import io.meterstore.core.TiersConfig;
import io.meterstore.trino.base.MeterstoreErrorCode;
import io.meterstore.trino.base.MeterstoreTables;
import io.meterstore.trino.base.PostgresConnectionPool;
import io.trino.spi.TrinoException;
import io.trino.spi.connector.ConnectorSession;
import org.apache.iceberg.Table;

import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;

import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_HOT_READ_FAILED;
import static java.util.Objects.requireNonNull;

/**
 * What the system tables of one readings table look at: its Iceberg table as the catalogue has it now (not a query's
 * pinned snapshot: these tables describe the present), the invariant check {@code bin/archiver status} runs, and the
 * settings the archiver works with.
 */
final class TableInspector
{
    private final MeterstoreTables tables;
    private final TiersConfig tiers;
    private final String table;

    record Inspection(Table icebergTable, InvariantReport invariant, TableStatus status, Optional<Duration> recordedStep)
    {
        Inspection
        {
            requireNonNull(icebergTable, "icebergTable is null");
            requireNonNull(invariant, "invariant is null");
            requireNonNull(status, "status is null");
            requireNonNull(recordedStep, "recordedStep is null");
        }
    }

    TableInspector(MeterstoreTables tables, TiersConfig tiers, String table)
    {
        this.tables = requireNonNull(tables, "tables is null");
        this.tiers = requireNonNull(tiers, "tiers is null");
        this.table = requireNonNull(table, "table is null");
    }

    /** The table as {@code bin/archiver status} names it: schema.table. */
    String table()
    {
        return tables.schema() + "." + table;
    }

    String storageTable()
    {
        return table;
    }

    Duration readerGrace()
    {
        return tiers.getReaderGrace().toJavaTime();
    }

    HotTier hotTier()
    {
        return tables.hotTier(table);
    }

    Table icebergTable()
    {
        return tables.loadIcebergTable(table);
    }

    /** A read of the hot tier that can be repeated; see {@link PostgresConnectionPool#read}. */
    <T> T read(PostgresConnectionPool.SqlRead<T> read)
            throws SQLException
    {
        return tables.readPostgres(read);
    }

    /** A fresh invariant check and the status it gives, at the query's start. */
    Inspection inspect(ConnectorSession session)
    {
        Table icebergTable = icebergTable();
        try {
            InvariantReport report = read(connection -> InvariantCheck.check(icebergTable, hotTier(), connection));
            Optional<Duration> recordedStep = ArchivalHistory.recordedStep(icebergTable);
            TableStatus status = new TableStatus(report, session.getStart(), recordedStep.orElse(PartitionNaming.DEFAULT_STEP), tiers.getSettlementLag().toJavaTime());
            return new Inspection(icebergTable, report, status, recordedStep);
        }
        catch (MeterstoreException e) {
            throw MeterstoreErrorCode.toTrinoException(e);
        }
        catch (SQLException e) {
            throw new TrinoException(METERSTORE_HOT_READ_FAILED, "Cannot check the tiers of table '%s': %s".formatted(table(), e.getMessage()), e);
        }
    }
}
