package io.meterstore.trino.system;

import com.google.inject.Inject;
import io.meterstore.core.TiersConfig;
import io.meterstore.trino.base.MeterstoreConfig;
import io.meterstore.trino.base.MeterstoreTables;
import io.trino.spi.connector.SchemaTableName;
import io.trino.spi.connector.SystemTable;

import java.util.List;
import java.util.Locale;
import java.util.Optional;

import static java.util.Objects.requireNonNull;

/**
 * The metadata tables of each configured table {@code T}, named as Trino's Iceberg connector names its own:
 * {@code "T$watermark"}, {@code "T$partitions"}, {@code "T$archival"}, {@code "T$invariant"}, {@code "T$config"},
 * {@code "T$resolution"} and {@code "T$erasures"}. A dashboard alerts from them over JDBC; none reads a data file.
 */
public final class MeterstoreSystemTables
{
    private final MeterstoreTables tables;
    private final TiersConfig tiers;
    private final MeterstoreConfig config;

    @Inject
    public MeterstoreSystemTables(MeterstoreTables tables, TiersConfig tiers, MeterstoreConfig config)
    {
        this.tables = requireNonNull(tables, "tables is null");
        this.tiers = requireNonNull(tiers, "tiers is null");
        this.config = requireNonNull(config, "config is null");
    }

    /** Whether {@code name} names a metadata table of a configured table (which may still be an unknown kind). */
    public boolean isSystemTableName(SchemaTableName name)
    {
        int separator = name.getTableName().indexOf('$');
        return separator > 0 && tables.isResolvedTable(new SchemaTableName(name.getSchemaName(), name.getTableName().substring(0, separator)));
    }

    public Optional<SystemTable> systemTable(SchemaTableName name)
    {
        if (!isSystemTableName(name)) {
            return Optional.empty();
        }
        int separator = name.getTableName().indexOf('$');
        String table = name.getTableName().substring(0, separator);
        String kind = name.getTableName().substring(separator + 1).toLowerCase(Locale.ROOT);
        TableInspector inspector = new TableInspector(tables, tiers, table);
        return Optional.ofNullable(switch (kind) {
            case "watermark" -> new WatermarkTable(name, inspector);
            case "partitions" -> new PartitionsTable(name, inspector);
            case "archival" -> new ArchivalTable(name, inspector);
            case "invariant" -> new InvariantTable(name, inspector);
            case "config" -> new ConfigTable(name, inspector, List.of(tiers, config));
            case "resolution" -> new ResolutionTable(name, inspector, tables.schema());
            case "erasures" -> new ErasuresTable(name, inspector, tables.schema());
            default -> null;
        });
    }
}
