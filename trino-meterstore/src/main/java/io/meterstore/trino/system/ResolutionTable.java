package io.meterstore.trino.system;

import com.google.common.collect.ImmutableList;
import io.meterstore.core.MeterstoreException;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.ResolutionRule;
import io.meterstore.core.TableColumns;
import io.meterstore.trino.base.MeterstoreErrorCode;
import io.meterstore.trino.base.MeterstoreTables;
import io.trino.spi.connector.ConnectorSession;
import io.trino.spi.connector.InMemoryRecordSet;
import io.trino.spi.connector.SchemaTableName;
import io.trino.spi.predicate.TupleDomain;

import static io.trino.spi.type.VarcharType.VARCHAR;
import static java.util.Objects.requireNonNull;

/**
 * {@code "<table>$resolution"}: how to read the table's winners without the connector, as the Rust MeterStore's
 * {@code system.resolution} publishes it: the raw relation, the resolution rule as SQL with the table's exact key, the
 * balancing day column, and what goes wrong without them.
 */
final class ResolutionTable
        extends MeterstoreSystemTable
{
    private final TableInspector inspector;
    private final String schema;

    ResolutionTable(SchemaTableName name, TableInspector inspector, String schema)
    {
        super(name, ImmutableList.of(
                column("table_name", VARCHAR),
                column("setting", VARCHAR),
                column("value", VARCHAR)));
        this.inspector = requireNonNull(inspector, "inspector is null");
        this.schema = requireNonNull(schema, "schema is null");
    }

    @Override
    void addRows(InMemoryRecordSet.Builder rows, ConnectorSession session, TupleDomain<Integer> constraint)
    {
        String table = inspector.table();
        String raw = schema + "." + inspector.storageTable() + MeterstoreTables.VERSIONS_SUFFIX;
        rows.addRow(table, "raw_table", raw);
        // the table's attribute columns are selected with the readings columns: the winner's values, as the table shows them
        TableColumns columns;
        try {
            columns = TableColumns.of(inspector.icebergTable());
        }
        catch (MeterstoreException e) {
            throw MeterstoreErrorCode.toTrinoException(e);
        }
        rows.addRow(table, "resolution_sql", ResolutionRule.sql(raw, columns));
        rows.addRow(table, "cold_table", "%s.%s (Iceberg: only the rows below the watermark; PostgreSQL holds the rest)".formatted(schema, inspector.storageTable()));
        rows.addRow(table, "cold_resolution_sql", ResolutionRule.sql(schema + "." + inspector.storageTable(), columns));
        rows.addRow(table, "balancing_day_column", ReadingsColumn.BALANCING_DAY.columnName());
        rows.addRow(table, "warning", "Summing the raw rows counts a corrected interval once per version: apply resolution_sql, or read %s. Group by balancing_day (date_trunc('month', balancing_day) for the settlement month), never by date_trunc('day', \"from\"), which is the UTC day and ignores the 06:00 gas day"
                .formatted(schema + "." + inspector.storageTable()));
    }
}
