package io.meterstore.trino;

import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchivalSettings;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.core.Reading;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.TestingWarehouse;
import org.apache.iceberg.catalog.TableIdentifier;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;

import static io.meterstore.trino.MeterstoreQueryRunner.SCHEMA;
import static org.assertj.core.api.Assertions.assertThat;

/** Runs the real archiver against a testing warehouse, with a clock the test chooses. */
final class TestingArchival
{
    // far enough ahead that every generated day is closed
    static final Instant LATER = Instant.parse("2100-01-01T00:00:00Z");

    private TestingArchival() {}

    static ArchivalCycle cycle(TestingWarehouse warehouse, InstantSource clock)
    {
        return new ArchivalCycle(
                warehouse.catalog(),
                TableIdentifier.of(SCHEMA, TestingMeterstoreTables.TABLE),
                TestingMeterstoreTables.hotTier(),
                () -> warehouse.database().connect(),
                ArchivalSettings.DEFAULTS,
                clock);
    }

    /** Archives the next {@code windows} closed windows, one commit each. */
    static void archiveWindows(TestingWarehouse warehouse, int windows)
            throws Exception
    {
        ArchivalCycle cycle = cycle(warehouse, InstantSource.fixed(LATER));
        for (int window = 0; window < windows; window++) {
            ArchiveOutcome outcome = cycle.archiveOnce();
            assertThat(outcome.kind()).as(outcome.describe()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);
        }
    }

    /**
     * Loads {@code generator}'s readings and {@code extra} into the hot tier and analyses it, then archives the first
     * {@code windows} windows, so that the rows lie on both sides of W.
     */
    static void loadAndArchive(TestingWarehouse warehouse, ReadingsGenerator generator, List<Reading> extra, int windows)
            throws Exception
    {
        try (Connection connection = warehouse.database().connect(); Statement statement = connection.createStatement()) {
            ReadingsLoader loader = new ReadingsLoader(TestingMeterstoreTables.hotTier());
            loader.load(connection, generator);
            loader.load(connection, extra);
            statement.execute("ANALYZE " + TestingMeterstoreTables.hotTier().qualifiedParent());
        }
        archiveWindows(warehouse, windows);
    }

    static Instant alignedToUtcDay(Instant instant)
    {
        long day = Duration.ofDays(1).toSeconds();
        return Instant.ofEpochSecond(Math.floorDiv(instant.getEpochSecond(), day) * day);
    }
}
