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
            ImmutableMap.of("malo_id", ValueCheck.of(CheckedKind.MALO), "melo_id", ValueCheck.of(CheckedKind.MELO), "tenant", ValueCheck.of(CheckedKind.BDEW)));
    private static final TableShape GRIDS = new TableShape(TimeModel.INTERVAL, ReadingIdentifier.MALO_ID, List.of(), List.of("grid_area", "supplier"),
            ImmutableMap.of("malo_id", ValueCheck.of(CheckedKind.MALO), "melo_id", ValueCheck.of(CheckedKind.MELO), "grid_area", new ValueCheck(CheckedKind.EIC, "XY"), "supplier", ValueCheck.of(CheckedKind.BDEW)));

    @Test
    void testStoredShapeReadsBackFromBothTiers()
    {
        for (TableShape shape : List.of(TableShape.DEFAULT, TENANTS, GRIDS)) {
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
    void testCheckedColumnsDeclaredAsTheRustMeterstoreWritesThem()
    {
        // SQL's ARRAY joined by commas, a meterstore.tables entry by spaces; the object types as 'EIC:X|Y', in any order;
        // malo_id and melo_id checked as what they hold whether listed or not
        assertThat(TableShape.declared(Map.of("attribute_columns", "grid_area,supplier", "checked_columns", "grid_area:EIC:Y|X,supplier:BDEW"))).isEqualTo(GRIDS);
        assertThat(TableShape.declared(Map.of("attribute_columns", "grid_area supplier", "checked_columns", "supplier:bdew grid_area:eic:x|y melo_id:MELO"))).isEqualTo(GRIDS);
        assertThat(GRIDS.settings().get("checked_columns")).isEqualTo("grid_area:EIC:X|Y,malo_id:MALO,melo_id:MELO,supplier:BDEW");
        assertThat(TableShape.declared(Map.of("checked_columns", "source_kind:EIC")).checkedColumns()).containsEntry("source_kind", ValueCheck.of(CheckedKind.EIC));
        assertThatThrownBy(() -> TableShape.declared(Map.of("attribute_columns", "grid_area", "checked_columns", "grid_area:EIC:Q")))
                .hasMessage("Check 'EIC:Q' of column 'grid_area' allows EIC object type 'Q', which ENTSO-E does not give: list letters among X Y Z W T V A, separated by '|' (EIC:X|Y)");
        assertThatThrownBy(() -> TableShape.declared(Map.of("attribute_columns", "grid_area", "checked_columns", "grid_area:IBAN")))
                .hasMessage("Unknown check 'IBAN' of column 'grid_area': write one of EIC, EIC:<object types among X Y Z W T V A separated by '|'>, MALO, MELO, BDEW");
        assertThatThrownBy(() -> TableShape.declared(Map.of("checked_columns", "malo_id:EIC")))
                .hasMessage("Column 'malo_id' is checked as MALO, the identifier it holds: write malo_id:MALO, or leave it out of checked_columns");
        assertThatThrownBy(() -> TableShape.declared(Map.of("checked_columns", "obis_code:EIC")))
                .hasMessage("Column 'obis_code' holds values the write path checks by rules of its own: a check names malo_id, melo_id, source_kind, source_detail, provenance, or a column of identity_columns or attribute_columns");
    }

    @Test
    void testDifferencesAreNamed()
    {
        TableShape melo = TableShape.declared(Map.of("reading_id", "melo_id"));
        assertThatThrownBy(() -> TableShape.DEFAULT.requireAgrees("metering.readings", melo, "meterstore.tables's entry 'readings'"))
                .isInstanceOfSatisfying(MeterstoreException.class, e -> assertThat(e.reason()).isEqualTo(MeterstoreException.Reason.SHAPE_MISMATCH))
                .hasMessageStartingWith("Table 'metering.readings' stores reading_id 'malo_id', but meterstore.tables's entry 'readings' declares reading_id 'melo_id'");
        TableShape.DEFAULT.requireAgrees("metering.readings", TableShape.declared(Map.of("checked_columns", "melo_id:MELO,malo_id:MALO")), "CREATE TABLE");

        // a point table keyed by MeLo-ID, its default as in the Rust crate
        assertThat(TableShape.declared(Map.of("time_model", "point")).readingId()).isEqualTo(TableShape.ReadingIdentifier.MELO_ID);
    }
}
