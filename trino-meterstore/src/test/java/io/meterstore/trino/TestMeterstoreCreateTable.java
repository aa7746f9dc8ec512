package io.meterstore.trino;

import com.google.common.collect.ImmutableMap;
import io.meterstore.core.HotPartition;
import io.meterstore.core.HotTier;
import io.meterstore.core.PartitionNaming;
import io.meterstore.core.Reading;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsInserts;
import io.meterstore.testing.ReadingsOracle;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.meterstore.trino.base.MeterstoreErrorCode;
import io.trino.testing.DistributedQueryRunner;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.net.URI;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;
import static io.trino.spi.StandardErrorCode.INVALID_TABLE_PROPERTY;
import static io.trino.spi.StandardErrorCode.NOT_SUPPORTED;
import static io.trino.spi.StandardErrorCode.TABLE_ALREADY_EXISTS;
import static io.trino.spi.StandardErrorCode.TABLE_NOT_FOUND;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.TestInstance.Lifecycle.PER_CLASS;

/**
 * CREATE TABLE and DROP TABLE of readings tables through the Trino JDBC driver: a table created with its shape in the
 * WITH clause, written and read; shapes and columns that cannot be stored refused with nothing created; DROP TABLE
 * refused unless the catalogue allows it, and then both tiers gone; a catalogue whose meterstore.tables entry declares
 * another shape than the table stores refused; {@code "T$config"} showing the stored shape.
 */
@TestInstance(PER_CLASS)
final class TestMeterstoreCreateTable
{
    private static final String TABLES = "readings,lastgang,zaehlerstaende,dropme";
    private static final String COLUMNS = """
            (malo_id varchar NOT NULL, melo_id varchar, obis_code varchar NOT NULL, sparte varchar NOT NULL,
             "from" timestamp(6) with time zone NOT NULL, "to" timestamp(6) with time zone NOT NULL, value decimal(18,6) NOT NULL,
             unit varchar NOT NULL, quality varchar NOT NULL, resolution varchar NOT NULL, source_kind varchar NOT NULL,
             source_detail varchar, provenance varchar, version decimal(20,0) NOT NULL, version_scope varchar NOT NULL,
             recorded_at timestamp(6) with time zone, balancing_day date)""";

    private TestingWarehouse warehouse;
    private DistributedQueryRunner queryRunner;
    private TestingClient client;

    @BeforeAll
    void setUp()
            throws Exception
    {
        warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("create_table"));
        // a table created before shapes were declared
        TestingMeterstoreTables.createTables(warehouse);
        queryRunner = MeterstoreQueryRunner.builder(warehouse)
                .withoutIceberg()
                .withCatalogOverrides(ImmutableMap.of("meterstore.tables", TABLES))
                .build();
        client = new TestingClient(queryRunner, warehouse, "create_table");
        Map<String, String> droppable = new HashMap<>(MeterstoreQueryRunner.catalogProperties(warehouse));
        droppable.put("meterstore.tables", TABLES);
        droppable.put("meterstore.allow-drop-table", "true");
        queryRunner.createCatalog("droppable", "meterstore", droppable);
        Map<String, String> declared = new HashMap<>(MeterstoreQueryRunner.catalogProperties(warehouse));
        declared.put("meterstore.tables", "readings(time_model=interval; reading_id=melo_id)");
        queryRunner.createCatalog("declared", "meterstore", declared);
    }

    @AfterAll
    void tearDown()
    {
        if (queryRunner != null) {
            queryRunner.close();
        }
    }

    @Test
    void testCreateTableThenInsertAndSelect()
            throws Exception
    {
        client.execute("CREATE TABLE lastgang " + COLUMNS + " WITH (time_model = 'interval', reading_id = 'malo_id')");
        // both tiers, each storing the shape
        assertThat(warehouse.catalog().loadTable(TableIdentifier.of(SCHEMA, "lastgang")).properties())
                .containsEntry("meterstore.time-model", "interval")
                .containsEntry("meterstore.reading-id", "malo_id")
                .containsEntry("meterstore.attribute-columns", "");
        assertThat((String) client.postgres("SELECT obj_description('metering.lastgang'::regclass, 'pg_class')")).contains("time_model=interval", "reading_id=malo_id");

        List<Reading> rows = new ArrayList<>();
        ReadingsGenerator.builder().seed(31).meters(2).startDay(LocalDate.now(ZoneOffset.UTC).minusDays(2)).days(1).correctionsFraction(0.1).build().forEach(rows::add);
        client.execute(ReadingsInserts.insert(rows).replaceFirst("INSERT INTO readings_versions", "INSERT INTO lastgang_versions"));
        BigDecimal total = rows.stream().map(Reading::value).reduce(BigDecimal.ZERO, BigDecimal::add);
        assertThat(client.value("SELECT count(*) FROM lastgang_versions")).isEqualTo((long) rows.size());
        assertThat((BigDecimal) client.value("SELECT sum(value) FROM lastgang_versions")).isEqualByComparingTo(total);
        assertThat(client.value("SELECT count(*) FROM lastgang")).isEqualTo(ReadingsOracle.of(rows).count(ReadingsOracle.View.RESOLVED, ReadingsOracle.all()));
        assertThat((long) client.value("SELECT count(*) FROM lastgang")).isLessThan(rows.size());

        // the stored declaration, where "T$config" showed constants; a table created before shapes reads as the default
        Map<String, Object> config = settings("lastgang");
        assertThat(config).containsEntry("time_model", "interval")
                .containsEntry("reading_id", "malo_id")
                .containsEntry("identity_columns", "")
                .containsEntry("checked_columns", "malo_id:MALO,melo_id:MELO")
                .containsEntry("merge_key", "malo_id, obis_code, \"from\"")
                .containsEntry("shape_stored", "yes");
        assertThat((String) settings("readings").get("shape_stored")).startsWith("no: created before shapes were declared");
        assertThat((String) client.value("SHOW CREATE TABLE lastgang")).contains("time_model = 'interval'", "reading_id = 'malo_id'");
    }

    @Test
    void testCreateTableOfANameTheCatalogueDoesNotList()
            throws Exception
    {
        // an Iceberg table another engine created in the namespace: not MeterStore's, so neither served nor listed
        warehouse.catalog().createTable(TableIdentifier.of(SCHEMA, "other_engine"), new Schema(Types.NestedField.required(1, "id", Types.LongType.get())));
        assertRefused("SELECT count(*) FROM other_engine", TABLE_NOT_FOUND.toErrorCode().getCode(), "does not exist");

        // a table whose name meterstore.tables does not list: created in both tiers with its shape, then served
        client.execute("CREATE TABLE lastgang_neu " + COLUMNS + " WITH (time_model = 'interval')");
        assertThat(warehouse.catalog().loadTable(TableIdentifier.of(SCHEMA, "lastgang_neu")).properties()).containsEntry("meterstore.time-model", "interval");
        assertThat(client.value("SELECT value FROM \"lastgang_neu$config\" WHERE setting = 'shape_stored'")).isEqualTo("yes");
        List<Reading> rows = new ArrayList<>();
        ReadingsGenerator.builder().seed(33).meters(2).startDay(LocalDate.now(ZoneOffset.UTC).minusDays(2)).days(1).correctionsFraction(0.1).build().forEach(rows::add);
        client.execute(ReadingsInserts.insert(rows).replaceFirst("INSERT INTO readings_versions", "INSERT INTO lastgang_neu_versions"));
        BigDecimal total = rows.stream().map(Reading::value).reduce(BigDecimal.ZERO, BigDecimal::add);
        long winners = ReadingsOracle.of(rows).count(ReadingsOracle.View.RESOLVED, ReadingsOracle.all());
        assertThat((BigDecimal) client.value("SELECT sum(value) FROM lastgang_neu_versions")).isEqualByComparingTo(total);
        assertThat(client.value("SELECT count(*) FROM lastgang_neu")).isEqualTo(winners);

        // listed beside the configured tables, both names, with the columns its shape stores; the foreign table is not
        List<String> tables = new ArrayList<>();
        try (Connection connection = client.connect(); Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SHOW TABLES")) {
            while (result.next()) {
                tables.add(result.getString(1));
            }
        }
        assertThat(tables).contains("readings", "readings_versions", "lastgang_neu", "lastgang_neu_versions").doesNotContain("other_engine");
        assertThat(client.value("SELECT count(*) FROM information_schema.columns WHERE table_schema = 'metering' AND table_name = 'lastgang_neu'")).isEqualTo(17L);

        // another catalog over the same tiers, whose meterstore.tables lists only readings, serves it too: the table
        // carries its declaration, and the archiver finds it the same way
        assertThat(client.value("SELECT count(*) FROM declared.metering.lastgang_neu")).isEqualTo(winners);
        assertRefused("CREATE TABLE lastgang_neu " + COLUMNS, TABLE_ALREADY_EXISTS.toErrorCode().getCode(), "already exists");
    }

    @Test
    void testTableOfTheNamespaceThatCannotBeLoadedHidesNoCreatedTable()
            throws Exception
    {
        // an Iceberg table of another engine whose metadata file is gone (or in storage MeterStore cannot read)
        TableIdentifier unreadable = TableIdentifier.of(SCHEMA, "another_engine");
        Table foreign = warehouse.catalog().createTable(unreadable, new Schema(Types.NestedField.required(1, "id", Types.LongType.get())));
        foreign.io().deleteFile(((HasTableOperations) foreign).operations().current().metadataFileLocation());
        try {
            client.execute("CREATE TABLE lastgang_spaeter " + COLUMNS + " WITH (time_model = 'interval')");
            // listed by a catalog that has not looked the name up yet: it finds it by listing the namespace
            List<String> tables = new ArrayList<>();
            try (Connection connection = client.connect(); Statement statement = connection.createStatement();
                    ResultSet result = statement.executeQuery("SHOW TABLES FROM declared.metering")) {
                while (result.next()) {
                    tables.add(result.getString(1));
                }
            }
            assertThat(tables).contains("readings", "lastgang_spaeter", "lastgang_spaeter_versions").doesNotContain("another_engine");
        }
        finally {
            // the catalogue's entry alone: there is no metadata file to purge
            warehouse.catalog().dropTable(unreadable, false);
        }
    }

    @Test
    void testShapeOrColumnsThatCannotBeStoredCreateNothing()
            throws Exception
    {
        assertRefused("CREATE TABLE zaehlerstaende " + COLUMNS + " WITH (time_model = 'point', reading_id = 'malo_id')", NOT_SUPPORTED.toErrorCode().getCode(),
                "column 'to' is declared NOT NULL, but a point table's readings have no \"to\": leave NOT NULL out");
        assertRefused("CREATE TABLE zaehlerstaende " + COLUMNS + " WITH (reading_id = 'melo_id', identity_columns = ARRAY['tenant'])", INVALID_TABLE_PROPERTY.toErrorCode().getCode(),
                "declares identity_columns [tenant], but its column list has no columns after the readings columns: declare each identity column as '<name> varchar'");
        assertRefused("CREATE TABLE zaehlerstaende " + COLUMNS + " WITH (time_model = 'daily')", INVALID_TABLE_PROPERTY.toErrorCode().getCode(),
                "Unknown time_model 'daily': write one of 'interval', 'point'");
        assertRefused("CREATE TABLE zaehlerstaende (malo_id varchar, value double)", NOT_SUPPORTED.toErrorCode().getCode(),
                "does not declare the readings columns: column 2 is 'value', a readings table's is 'melo_id'");
        assertRefused("CREATE TABLE zaehlerstaende " + COLUMNS.replace("melo_id varchar,", "melo_id varchar NOT NULL,"), NOT_SUPPORTED.toErrorCode().getCode(),
                "column 'melo_id' is declared NOT NULL, which MeterStore does not enforce for it");
        // names that are not a readings table's, whether meterstore.tables lists them or not
        assertRefused("CREATE TABLE elsewhere_versions " + COLUMNS, NOT_SUPPORTED.toErrorCode().getCode(),
                "Table name 'metering.elsewhere_versions' ends in '_versions', which names the versions of a readings table: create 'elsewhere', which is also read as 'elsewhere_versions'");
        assertRefused("CREATE TABLE \"else-where\" " + COLUMNS, NOT_SUPPORTED.toErrorCode().getCode(),
                "Table name 'metering.else-where' cannot name a readings table: use lowercase letters, digits and underscores, starting with a letter or an underscore, at most 47 characters");
        // refused by the rule meterstore.tables follows, whose first character is not a digit: the message says so
        assertRefused("CREATE TABLE \"2026_lastgang\" " + COLUMNS, NOT_SUPPORTED.toErrorCode().getCode(),
                "Table name 'metering.2026_lastgang' cannot name a readings table: use lowercase letters, digits and underscores, starting with a letter or an underscore");
        // nothing of any of them in either tier
        assertThat(warehouse.catalog().tableExists(TableIdentifier.of(SCHEMA, "zaehlerstaende"))).isFalse();
        assertThat(client.postgres("SELECT count(*) FROM pg_class WHERE relname LIKE 'zaehlerstaende%' OR relname LIKE 'else%' OR relname LIKE '2026%'")).isEqualTo(0L);
        assertRefused("SELECT count(*) FROM zaehlerstaende", TABLE_NOT_FOUND.toErrorCode().getCode(), "does not exist");
    }

    @Test
    void testDropTableIsRefusedUnlessTheCatalogueAllowsIt()
            throws Exception
    {
        client.execute("CREATE TABLE dropme (LIKE readings)");
        List<Reading> rows = new ArrayList<>();
        ReadingsGenerator.builder().seed(32).meters(1).startDay(LocalDate.now(ZoneOffset.UTC).minusDays(3)).days(2).build().forEach(rows::add);
        client.execute(ReadingsInserts.insert(rows).replaceFirst("INSERT INTO readings_versions", "INSERT INTO dropme_versions"));
        // a partition an archival left detached, which the drop removes too
        HotTier hotTier = new HotTier(SCHEMA, new PartitionNaming("dropme", PartitionNaming.DEFAULT_STEP), Duration.ofSeconds(5));
        HotPartition detached;
        try (Connection connection = warehouse.database().connect()) {
            detached = hotTier.partitions(connection).getFirst();
            hotTier.detach(connection, detached.name());
        }

        assertRefused("DROP TABLE dropme", MeterstoreErrorCode.METERSTORE_DROP_TABLE_REFUSED.toErrorCode().getCode(),
                "DROP TABLE 'metering.dropme' is refused: a readings table holds metering data that is kept for years by law, and dropping it removes both tiers and every file for good; set meterstore.allow-drop-table=true in the catalogue's properties (and restart) to allow it");
        assertThat((long) client.postgres("SELECT count(*) FROM metering.dropme") + (long) client.postgres("SELECT count(*) FROM metering." + detached.name())).isEqualTo(rows.size());
        assertThat(warehouse.catalog().tableExists(TableIdentifier.of(SCHEMA, "dropme"))).isTrue();

        assertRefused("DROP TABLE droppable.metering.dropme_versions", NOT_SUPPORTED.toErrorCode().getCode(), "DROP TABLE 'dropme', which drops both names");
        Path location = Path.of(URI.create(warehouse.catalog().loadTable(TableIdentifier.of(SCHEMA, "dropme")).location()));
        assertThat(files(location)).isNotEmpty();

        client.execute("DROP TABLE droppable.metering.dropme");
        // both tiers: the parent with its partitions, the detached partition, the Iceberg table and its files
        assertThat(client.postgres("SELECT count(*) FROM pg_class WHERE relname LIKE 'dropme%'")).isEqualTo(0L);
        assertThat(warehouse.catalog().tableExists(TableIdentifier.of(SCHEMA, "dropme"))).isFalse();
        assertThat(files(location)).isEmpty();
        assertRefused("SELECT count(*) FROM dropme_versions", TABLE_NOT_FOUND.toErrorCode().getCode(), "does not exist");
    }

    @Test
    void testCatalogueDeclaringAnotherShapeIsRefused()
    {
        assertRefused("SELECT count(*) FROM declared.metering.readings", MeterstoreErrorCode.METERSTORE_TABLE_SHAPE_MISMATCH.toErrorCode().getCode(),
                "Table 'metering.readings' stores reading_id 'malo_id', but meterstore.tables's entry 'readings' of the catalogue declares reading_id 'melo_id'");
    }

    private static List<Path> files(Path directory)
            throws IOException
    {
        if (!Files.exists(directory)) {
            return List.of();
        }
        try (Stream<Path> files = Files.walk(directory)) {
            return files.filter(Files::isRegularFile).toList();
        }
    }

    private void assertRefused(String sql, int errorCode, String message)
    {
        assertThatThrownBy(() -> client.execute(sql))
                .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).as(e.getMessage()).isEqualTo(errorCode))
                .hasMessageContaining(message);
    }

    private Map<String, Object> settings(String table)
            throws SQLException
    {
        Map<String, Object> settings = new HashMap<>();
        try (Connection connection = client.connect(); Statement statement = connection.createStatement();
                ResultSet result = statement.executeQuery("SELECT setting, value FROM \"%s$config\"".formatted(table))) {
            while (result.next()) {
                settings.put(result.getString(1), result.getString(2));
            }
        }
        return settings;
    }




}
