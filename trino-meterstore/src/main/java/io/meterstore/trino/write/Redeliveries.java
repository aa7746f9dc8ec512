package io.meterstore.trino.write;

import io.meterstore.core.Reading;
import io.meterstore.core.ReadingsColumn;
import io.meterstore.core.TableColumns;
import io.trino.spi.TrinoException;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static io.meterstore.trino.base.MeterstoreErrorCode.METERSTORE_CONFLICTING_REDELIVERY;

/**
 * The one rule for a version that is written again: with the same payload it is a redelivery and skipped; with another
 * payload it is refused, because a changed value needs a new version.
 */
final class Redeliveries
{
    private Redeliveries() {}

    /**
     * Fails the statement unless {@code reading} carries the payload of {@code stored}, which has its key; {@code where}
     * says where that one is. {@code columns} are the table's, whose attribute columns are part of the payload.
     */
    static void requireSamePayload(Reading stored, Reading reading, String where, TableColumns columns)
    {
        if (stored.samePayload(reading)) {
            return;
        }
        throw new TrinoException(METERSTORE_CONFLICTING_REDELIVERY, "Reading %s was already written with different values (%s) and %s: a changed value needs a new version; nothing of this statement was written"
                .formatted(RowDescription.describe(reading, columns), String.join(", ", differences(stored, reading, columns)), where));
    }

    private static List<String> differences(Reading stored, Reading reading, TableColumns columns)
    {
        List<String> differences = new ArrayList<>();
        difference(differences, ReadingsColumn.MELO_ID, stored.meloId(), reading.meloId());
        difference(differences, ReadingsColumn.SPARTE, stored.sparte(), reading.sparte());
        difference(differences, ReadingsColumn.TO, stored.to(), reading.to());
        if (stored.value().compareTo(reading.value()) != 0) {
            differences.add("value %s, now %s".formatted(stored.value().toPlainString(), reading.value().toPlainString()));
        }
        difference(differences, ReadingsColumn.UNIT, stored.unit(), reading.unit());
        difference(differences, ReadingsColumn.QUALITY, stored.quality(), reading.quality());
        difference(differences, ReadingsColumn.RESOLUTION, stored.resolution(), reading.resolution());
        difference(differences, ReadingsColumn.SOURCE_KIND, stored.sourceKind(), reading.sourceKind());
        difference(differences, ReadingsColumn.SOURCE_DETAIL, stored.sourceDetail(), reading.sourceDetail());
        difference(differences, ReadingsColumn.PROVENANCE, stored.provenance(), reading.provenance());
        difference(differences, ReadingsColumn.VERSION_SCOPE, stored.versionScope(), reading.versionScope());
        difference(differences, ReadingsColumn.BALANCING_DAY, stored.balancingDay(), reading.balancingDay());
        for (int attribute = 0; attribute < Math.min(stored.attributes().size(), reading.attributes().size()); attribute++) {
            difference(differences, columns.attributes().get(attribute).name(), stored.attributes().get(attribute), reading.attributes().get(attribute));
        }
        return differences;
    }

    private static void difference(List<String> differences, ReadingsColumn column, Object stored, Object reading)
    {
        difference(differences, column.columnName(), stored, reading);
    }

    private static void difference(List<String> differences, String column, Object stored, Object reading)
    {
        if (!stored.equals(reading)) {
            differences.add("%s %s, now %s".formatted(column, display(stored), display(reading)));
        }
    }

    private static String display(Object value)
    {
        return value instanceof Optional<?> optional ? optional.map(Object::toString).orElse("NULL") : value.toString();
    }
}
