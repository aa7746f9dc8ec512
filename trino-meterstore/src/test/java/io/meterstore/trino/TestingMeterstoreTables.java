package io.meterstore.trino;

import io.meterstore.core.ArchivalHistory;
import io.meterstore.core.HotTier;
import io.meterstore.core.IcebergTableSpec;
import io.meterstore.core.PartitionNaming;
import io.meterstore.testing.TestingWarehouse;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;

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

    static Table createTables(TestingWarehouse warehouse)
            throws SQLException
    {
        try (Connection connection = warehouse.database().connect()) {
            hotTier().createParent(connection);
        }
        Table table = IcebergTableSpec.createIfMissing(warehouse.catalog(), TableIdentifier.of(SCHEMA, TABLE));
        if (ArchivalHistory.recordedStep(table).isEmpty()) {
            ArchivalHistory.recordStep(table, hotTier().naming().step());
        }
        return table;
    }
}
