package io.meterstore.core;

import com.google.common.collect.ImmutableMap;
import io.meterstore.core.TableShape.CheckedKind;
import io.meterstore.core.TableShape.ReadingIdentifier;
import io.meterstore.core.TableShape.TimeModel;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

final class TestTableShape
{
    private static final TableShape TENANTS = new TableShape(TimeModel.INTERVAL, ReadingIdentifier.MALO_ID, List.of("tenant"), List.of("station"),
            ImmutableMap.of("malo_id", CheckedKind.MALO, "melo_id", CheckedKind.MELO, "tenant", CheckedKind.BDEW));

    @Test
    void testStoredShapeReadsBackFromBothTiers()
    {
        for (TableShape shape : List.of(TableShape.DEFAULT, TENANTS)) {
            assertThat(TableShape.ofProperties(shape.properties())).contains(shape);
            assertThat(TableShape.ofComment(Optional.of(shape.comment()))).contains(shape);
        }
        assertThat(TableShape.DEFAULT.properties()).isEqualTo(ImmutableMap.of(
                "meterstore.time-model", "interval",
                "meterstore.reading-id", "malo_id",
                "meterstore.identity-columns", "",
                "meterstore.attribute-columns", "",
                "meterstore.checked-columns", "malo_id:MALO,melo_id:MELO"));
        assertThat(TENANTS.mergeKey()).containsExactly("malo_id", "tenant", "obis_code", "from");
        // a table created before shapes stores neither; a comment someone else wrote is not a shape
        assertThat(TableShape.ofProperties(Map.of("format-version", "2"))).isEmpty();
        assertThat(TableShape.ofComment(Optional.of("readings of the north grid"))).isEmpty();
    }

    @Test
    void testDeclarationsAsSqlAndTheConfigurationWriteThem()
    {
        assertThat(TableShape.declared(Map.of())).isEqualTo(TableShape.DEFAULT);
        assertThat(TableShape.declared(Map.of("time_model", "INTERVAL", "reading_id", "malo_id"))).isEqualTo(TableShape.DEFAULT);
        // lists by commas (SQL, Iceberg) or spaces (a meterstore.tables entry), checks in any order
        assertThat(TableShape.declared(Map.of("identity_columns", "tenant", "attribute_columns", "station", "checked_columns", "tenant:BDEW melo_id:MELO, malo_id:malo"))).isEqualTo(TENANTS);
        assertThatThrownBy(() -> TableShape.declared(Map.of("time_model", "daily")))
                .hasMessage("Unknown time_model 'daily': write one of 'interval', 'point'");
        assertThatThrownBy(() -> TableShape.declared(Map.of("timemodel", "point")))
                .hasMessage("Unknown table setting 'timemodel': a table declares time_model, reading_id, identity_columns, attribute_columns, checked_columns");
        assertThatThrownBy(() -> TableShape.declared(Map.of("identity_columns", "malo_id")))
                .hasMessage("Column 'malo_id' is a readings column already: identity_columns and attribute_columns name columns of their own");
        assertThatThrownBy(() -> TableShape.declared(Map.of("checked_columns", "eic:EIC")))
                .hasMessage("Checked column 'eic' is neither a readings column nor one of identity_columns and attribute_columns: declare it there first");
    }

    @Test
    void testDifferencesAndWhatIsSupportedAreNamed()
    {
        TableShape melo = TableShape.declared(Map.of("reading_id", "melo_id"));
        assertThatThrownBy(() -> TableShape.DEFAULT.requireAgrees("metering.readings", melo, "meterstore.tables's entry 'readings'"))
                .isInstanceOfSatisfying(MeterstoreException.class, e -> assertThat(e.reason()).isEqualTo(MeterstoreException.Reason.SHAPE_MISMATCH))
                .hasMessageStartingWith("Table 'metering.readings' stores reading_id 'malo_id', but meterstore.tables's entry 'readings' declares reading_id 'melo_id'");
        TableShape.DEFAULT.requireAgrees("metering.readings", TableShape.declared(Map.of("checked_columns", "melo_id:MELO,malo_id:MALO")), "CREATE TABLE");

        TableShape.DEFAULT.requireSupported("metering.readings");
        // a point table keyed as an interval table is served, and keyed by MeLo-ID, its default as in the Rust crate
        TableShape.declared(Map.of("time_model", "point", "reading_id", "malo_id")).requireSupported("metering.zaehlerstaende");
        assertThat(TableShape.declared(Map.of("time_model", "point")).readingId()).isEqualTo(TableShape.ReadingIdentifier.MELO_ID);
        TableShape.declared(Map.of("time_model", "point")).requireSupported("metering.zaehlerstaende");
        TableShape.declared(Map.of("reading_id", "melo_id", "identity_columns", "tenant")).requireSupported("metering.tenants");
        // checked columns other than the default's are not yet
        assertThatThrownBy(() -> TENANTS.requireSupported("metering.tenants"))
                .isInstanceOfSatisfying(MeterstoreException.class, e -> assertThat(e.reason()).isEqualTo(MeterstoreException.Reason.SHAPE_UNSUPPORTED))
                .hasMessageStartingWith("Table 'metering.tenants' declares checked_columns 'malo_id:MALO,melo_id:MELO,tenant:BDEW', which this release cannot store yet");
    }
}
