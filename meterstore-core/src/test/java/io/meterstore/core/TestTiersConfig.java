package io.meterstore.core;

import com.google.common.collect.ImmutableMap;
import io.airlift.units.Duration;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;

import static io.airlift.configuration.testing.ConfigAssertions.assertDeprecatedEquivalence;
import static io.airlift.configuration.testing.ConfigAssertions.assertFullMapping;
import static io.airlift.configuration.testing.ConfigAssertions.assertRecordedDefaults;
import static io.airlift.configuration.testing.ConfigAssertions.recordDefaults;
import static java.util.concurrent.TimeUnit.DAYS;
import static java.util.concurrent.TimeUnit.HOURS;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.MINUTES;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class TestTiersConfig
{
    @Test
    void testDefaults()
    {
        assertRecordedDefaults(recordDefaults(TiersConfig.class)
                .setPostgresqlUrl(null)
                .setPostgresqlUser(null)
                .setPostgresqlPassword(null)
                .setLockTimeout(new Duration(5, SECONDS))
                .setSchema("metering")
                .setTables(List.of("readings"))
                .setIcebergCatalogName("meterstore")
                .setIcebergJdbcUrl(null)
                .setIcebergWarehouse(null)
                .setCatalogType(TiersConfig.CatalogType.JDBC)
                .setRestUri(null)
                .setRestWarehouse(null)
                .setRestToken(null)
                .setRestCredential(null)
                .setSettlementLag(new Duration(7, DAYS))
                .setReaderGrace(new Duration(1, HOURS))
                .setErasureHmacKey(null));
    }

    @Test
    void testExplicitPropertyMappings()
    {
        Map<String, String> properties = ImmutableMap.<String, String>builder()
                .put("meterstore.postgresql.url", "jdbc:postgresql://db:5432/metering")
                .put("meterstore.postgresql.user", "meterstore")
                .put("meterstore.postgresql.password", "secret")
                .put("meterstore.postgresql.lock-timeout", "2s")
                .put("meterstore.schema", "netz")
                .put("meterstore.tables", "readings, gas_readings")
                .put("meterstore.iceberg.catalog-name", "lake")
                .put("meterstore.iceberg.jdbc-url", "jdbc:postgresql://catalog:5432/iceberg")
                .put("meterstore.iceberg.warehouse", "file:///var/lib/meterstore/warehouse")
                .put("meterstore.iceberg.catalog-type", "REST")
                .put("meterstore.iceberg.rest-catalog.uri", "http://iceberg-rest:8181")
                .put("meterstore.iceberg.rest-catalog.warehouse", "metering")
                .put("meterstore.iceberg.rest-catalog.oauth2.token", "token")
                .put("meterstore.iceberg.rest-catalog.oauth2.credential", "client:secret")
                .put("meterstore.settlement-lag", "10d")
                .put("meterstore.reader-grace", "30m")
                .put("meterstore.erasure.hmac-key", "0123456789abcdef0123456789abcdef")
                .buildOrThrow();
        TiersConfig expected = new TiersConfig()
                .setPostgresqlUrl("jdbc:postgresql://db:5432/metering")
                .setPostgresqlUser("meterstore")
                .setPostgresqlPassword("secret")
                .setLockTimeout(new Duration(2, SECONDS))
                .setSchema("netz")
                .setTables(List.of("readings", "gas_readings"))
                .setIcebergCatalogName("lake")
                .setIcebergJdbcUrl("jdbc:postgresql://catalog:5432/iceberg")
                .setIcebergWarehouse("file:///var/lib/meterstore/warehouse")
                .setCatalogType(TiersConfig.CatalogType.REST)
                .setRestUri("http://iceberg-rest:8181")
                .setRestWarehouse("metering")
                .setRestToken("token")
                .setRestCredential("client:secret")
                .setSettlementLag(new Duration(10, DAYS))
                .setReaderGrace(new Duration(30, MINUTES))
                .setErasureHmacKey("0123456789abcdef0123456789abcdef");
        assertFullMapping(properties, expected);
    }

    @Test
    void testArchiverLockTimeoutNameStillWorks()
    {
        // etc/archiver.properties of earlier releases spelt it meterstore.lock-timeout
        Map<String, String> required = ImmutableMap.of(
                "meterstore.postgresql.url", "jdbc:postgresql://db:5432/metering",
                "meterstore.postgresql.user", "meterstore",
                "meterstore.iceberg.warehouse", "file:///warehouse");
        assertDeprecatedEquivalence(
                TiersConfig.class,
                ImmutableMap.<String, String>builder().putAll(required).put("meterstore.postgresql.lock-timeout", "2s").buildOrThrow(),
                ImmutableMap.<String, String>builder().putAll(required).put("meterstore.lock-timeout", "2s").buildOrThrow());
    }

    @Test
    void testTableEntryDeclaresAShape()
    {
        TiersConfig config = new TiersConfig().setTables(List.of("readings", "lastgang(time_model=interval; reading_id=malo_id; checked_columns=malo_id:MALO melo_id:MELO)"));
        // the tables are named without their declarations; an entry that is a name alone takes the stored shape
        assertThat(config.getTables()).containsExactly("readings", "lastgang");
        assertThat(config.declaredShape("readings")).isEmpty();
        assertThat(config.declaredShape("lastgang")).contains(TableShape.DEFAULT);
        assertThat(new TiersConfig().setTables(List.of("zaehler(time_model=point)")).declaredShape("zaehler").orElseThrow().timeModel()).isEqualTo(TableShape.TimeModel.POINT);
        assertThatThrownBy(() -> new TiersConfig().setTables(List.of("zaehler(time_model=daily)")))
                .hasMessage("Table 'zaehler' of meterstore.tables: Unknown time_model 'daily': write one of 'interval', 'point'");
        assertThatThrownBy(() -> new TiersConfig().setTables(List.of("zaehler(time_model=point")))
                .hasMessageStartingWith("Entry 'zaehler(time_model=point' of meterstore.tables declares a shape without its closing parenthesis");
    }

    @Test
    void testDerivedValues()
    {
        TiersConfig config = new TiersConfig()
                .setPostgresqlUrl("jdbc:postgresql://db:5432/metering")
                .setPostgresqlUser("meterstore")
                .setIcebergWarehouse("file:///warehouse")
                .setLockTimeout(new Duration(700, MILLISECONDS));
        // the catalogue lives in the hot tier's database unless configured otherwise
        assertThat(config.catalogSpec()).isEqualTo(new IcebergCatalogs.JdbcCatalogSpec("meterstore", "jdbc:postgresql://db:5432/metering", "meterstore", Optional.empty(), "file:///warehouse"));
        config.setIcebergJdbcUrl("jdbc:postgresql://catalog:5432/iceberg");
        assertThat(config.catalogJdbcUrl()).isEqualTo("jdbc:postgresql://catalog:5432/iceberg");

        assertThat(config.hotTier("readings", java.time.Duration.ofHours(1)).lockTimeout()).isEqualTo(java.time.Duration.ofMillis(700));

        // a REST catalogue needs its URI; the spec never prints its secret
        assertThat(config.setCatalogType(TiersConfig.CatalogType.REST).isRestUriSetForRest()).isFalse();
        config.setRestUri("http://iceberg-rest:8181").setRestToken("bearer-secret");
        assertThat(config.isRestUriSetForRest()).isTrue();
        assertThat(config.restCatalogSpec().toString()).contains("http://iceberg-rest:8181").doesNotContain("bearer-secret");
        assertThat(config.catalogLocation()).isEqualTo("http://iceberg-rest:8181");

        Properties properties = config.setPostgresqlPassword("secret").connectionProperties("meterstore-test");
        assertThat(properties).containsExactlyInAnyOrderEntriesOf(Map.of("user", "meterstore", "password", "secret", "ApplicationName", "meterstore-test"));

        // no erasure key unless one is configured, and a short one is refused rather than used
        assertThat(config.erasureKey()).isEmpty();
        assertThat(config.setErasureHmacKey("too-short").isErasureHmacKeyLongEnough()).isFalse();
        assertThat(config.erasureKey()).isEmpty();
        String secret = "0123456789abcdef0123456789abcdef";
        ErasureKey key = config.setErasureHmacKey(secret).erasureKey().orElseThrow();
        assertThat(config.isErasureHmacKeyLongEnough()).isTrue();
        // HMAC-SHA256 as RFC 4231 defines it (checked against: printf 51234567890 | openssl dgst -sha256 -hmac <secret>)
        assertThat(key.scope("51234567890")).isEqualTo("aeff2f365fb164d4d79ef13da4d4d2cf532fde9eb6bb37b74c2880c84b847a20").isNotEqualTo(key.scope("51234567891"));
        assertThat(key.toString()).doesNotContain(secret);
        assertThat(ErasureKey.of(secret + "x").fingerprint()).isNotEqualTo(key.fingerprint());
    }
}
