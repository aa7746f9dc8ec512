package io.meterstore.core;

import com.google.common.collect.ImmutableMap;
import org.apache.iceberg.Table;
import org.apache.iceberg.UpdateProperties;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.meterstore.core.MeterstoreException.Reason.SHAPE_MISMATCH;
import static java.util.Objects.requireNonNull;

/**
 * Creates both tiers of a readings table, or brings an existing one up to date, with its shape stored in each: what
 * the archiver's {@code create} and the connector's CREATE TABLE both run. The shape is settled before anything is
 * created: a declaration that differs from what the table stores, or that this release cannot store, creates nothing.
 */
public final class ReadingsTableCreation
{
    /**
     * The Iceberg table property that marks a table CREATE TABLE created: every archiver over its schema archives it,
     * where a table the archiver's {@code create} made is archived by the archivers whose {@code meterstore.tables} list it.
     */
    public static final String CREATED_BY = "meterstore.created-by";
    public static final Map<String, String> BY_CREATE_TABLE = ImmutableMap.of(CREATED_BY, "CREATE TABLE");

    private ReadingsTableCreation() {}

    /** Whether an Iceberg table's properties say CREATE TABLE created it ({@link #BY_CREATE_TABLE}). */
    public static boolean isCreatedByCreateTable(Map<String, String> properties)
    {
        return BY_CREATE_TABLE.get(CREATED_BY).equals(properties.get(CREATED_BY));
    }

    /**
     * What a creation found and did.
     *
     * @param existed whether both tiers were there before
     * @param shape the shape the table stores now
     * @param shapeRecorded whether this creation stored the shape in a tier that lacked it (a table created before shapes)
     * @param brokenChecks the hot tier's CHECK constraints that rows stored before them break ({@link HotTier#createParent})
     * @param brokenPairs the rules that pairs of stored rows break ({@link StoredRuleViolations#find})
     */
    public record Created(boolean existed, TableShape shape, boolean shapeRecorded, List<String> brokenChecks, List<String> brokenPairs, Table icebergTable)
    {
        public Created
        {
            requireNonNull(shape, "shape is null");
            brokenChecks = List.copyOf(brokenChecks);
            brokenPairs = List.copyOf(brokenPairs);
            requireNonNull(icebergTable, "icebergTable is null");
        }
    }

    /**
     * The shape {@code identifier} stores, read from both tiers: empty when neither stores one (a table created before
     * shapes were declared, or none at all). Tiers that store different shapes are refused, naming both.
     */
    public static Optional<TableShape> storedShape(Connection connection, HotTier hotTier, Catalog catalog, TableIdentifier identifier)
            throws SQLException
    {
        Optional<TableShape> hot = hotTier.storedShape(connection);
        Optional<TableShape> cold = catalog.tableExists(identifier) ? TableShape.ofProperties(catalog.loadTable(identifier).properties()) : Optional.empty();
        if (hot.isPresent() && cold.isPresent() && !hot.get().equals(cold.get())) {
            throw new MeterstoreException(SHAPE_MISMATCH, "The tiers of table '%s' store different shapes: PostgreSQL table %s's comment %s, Iceberg table '%s' %s; the Iceberg table properties are the declaration: write them into the comment (COMMENT ON TABLE) or restore the one changed outside MeterStore"
                    .formatted(identifier, hotTier.qualifiedParent(), hot.get().settings(), identifier, cold.get().settings()));
        }
        return cold.or(() -> hot);
    }

    /**
     * Creates what is missing of {@code identifier}'s two tiers and stores its shape in both: {@code declared} if given,
     * else the one stored, else {@link TableShape#DEFAULT}. Refused before anything is created when {@code declared}
     * differs from the stored shape ({@code declaredIn} names where it was declared) or the shape cannot be stored yet.
     */
    public static Created create(Connection connection, HotTier hotTier, Catalog catalog, TableIdentifier identifier, Optional<TableShape> declared, String declaredIn)
            throws SQLException
    {
        return create(connection, hotTier, catalog, identifier, declared, declaredIn, ImmutableMap.of());
    }

    /**
     * As {@link #create}, the Iceberg table, if this creates it, with {@code creationProperties} besides the shape's:
     * CREATE TABLE passes {@link #BY_CREATE_TABLE}.
     */
    public static Created create(Connection connection, HotTier hotTier, Catalog catalog, TableIdentifier identifier, Optional<TableShape> declared, String declaredIn,
            Map<String, String> creationProperties)
            throws SQLException
    {
        String table = identifier.toString();
        Optional<TableShape> stored = storedShape(connection, hotTier, catalog, identifier);
        if (declared.isPresent() && stored.isPresent()) {
            stored.get().requireAgrees(table, declared.get(), declaredIn);
        }
        boolean existed = hotTier.parentExists(connection) && catalog.tableExists(identifier);
        if (declared.isPresent() && stored.isEmpty() && existed) {
            // a table created before shapes has the default one, whatever is declared for it now
            TableShape.DEFAULT.requireAgrees(table, declared.get(), declaredIn);
        }
        TableShape shape = declared.or(() -> stored).orElse(TableShape.DEFAULT);

        List<String> brokenChecks = hotTier.createParent(connection, shape);
        // rows stored before the rules that break one between them, in one pass over the hot tier
        List<String> brokenPairs = existed ? StoredRuleViolations.find(connection, hotTier, TableColumns.of(shape).keyNames()) : List.of();
        // the audit trail of erasures and the suppression list INSERT checks, one per schema
        ErasureLog.create(connection, hotTier.schema());
        boolean recorded = false;
        if (!hotTier.storedShape(connection).equals(Optional.of(shape))) {
            hotTier.recordShape(connection, shape);
            recorded = true;
        }
        Table icebergTable = IcebergTableSpec.createIfMissing(catalog, identifier,
                ImmutableMap.<String, String>builder().putAll(shape.properties()).putAll(creationProperties).buildKeepingLast(), TableColumns.of(shape));
        Map<String, String> missing = shape.properties().entrySet().stream()
                .filter(entry -> !entry.getValue().equals(icebergTable.properties().get(entry.getKey())))
                .collect(ImmutableMap.toImmutableMap(Map.Entry::getKey, Map.Entry::getValue));
        if (!missing.isEmpty()) {
            UpdateProperties update = icebergTable.updateProperties();
            missing.forEach(update::set);
            update.commit();
            recorded = true;
        }
        return new Created(existed, shape, recorded && existed, brokenChecks, brokenPairs, icebergTable);
    }
}
