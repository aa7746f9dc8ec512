package io.meterstore.trino;

import io.meterstore.core.ArchivalHistory;
import io.meterstore.core.HotTier;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.ReadingsTableCreation;
import io.meterstore.testing.TestingWarehouse;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;

import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;

/** Creates a readings table in both tiers of a testing warehouse, as {@code meterstore-archiver create} does. */
final class TestingMeterstoreTables
{
    static final String TABLE = "readings";

    private TestingMeterstoreTables() {}

    static HotTier hotTier()
    {
        return new HotTier(SCHEMA, new PartitionNaming(TABLE, PartitionNaming.DEFAULT_STEP), Duration.ofSeconds(5));
    }

    /** The tables as a release before shapes created them: no shape stored in either tier (read as the default one). */
    static Table createTables(TestingWarehouse warehouse)
            throws SQLException
    {
        try (Connection connection = warehouse.database().connect()) {
            hotTier().createParent(connection);
        }
        return withStep(IcebergTableSpec.createIfMissing(warehouse.catalog(), TableIdentifier.of(SCHEMA, TABLE)));
    }

    /** The tables as the archiver's {@code create} makes them today: the default shape stored in both tiers. */
    static Table createDeclaredTables(TestingWarehouse warehouse)
            throws SQLException
    {
        try (Connection connection = warehouse.database().connect()) {
            return withStep(ReadingsTableCreation.create(connection, hotTier(), warehouse.catalog(), TableIdentifier.of(SCHEMA, TABLE), Optional.empty(), "meterstore.tables").icebergTable());
        }
    }

    private static Table withStep(Table table)
    {
        if (ArchivalHistory.recordedStep(table).isEmpty()) {
            ArchivalHistory.recordStep(table, hotTier().naming().step());
        }
        return table;
    }
}
