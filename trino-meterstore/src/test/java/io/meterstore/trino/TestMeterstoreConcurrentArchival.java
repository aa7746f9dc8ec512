package io.meterstore.trino;

import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.core.WatermarkReader;
import io.meterstore.testing.ReadingsGenerator;
import io.meterstore.testing.ReadingsLoader;
import io.meterstore.testing.ReadingsOracle;
import io.meterstore.testing.ReadingsOracle.Summary;
import io.meterstore.testing.ReadingsOracle.View;
import io.meterstore.testing.TestingPostgresServer;
import io.meterstore.testing.TestingWarehouse;
import io.trino.testing.DistributedQueryRunner;
import org.apache.iceberg.Table;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static io.meterstore.testing.ReadingsOracle.maloId;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Queries concurrent with archival return exact answers: four query loops through the Trino JDBC driver run while the
 * archiver commits window after window, and every answer equals the oracle; nothing is lost, nothing doubled.
 */
final class TestMeterstoreConcurrentArchival
{
    private static final int CYCLES = 12;
    private static final int READERS = 4;

    @Test
    void testReadersDuringArchivalSeeExactAnswers()
            throws Exception
    {
        TestingWarehouse warehouse = TestingWarehouse.create(TestingPostgresServer.shared().createDatabase("concurrent"));
        Table table = TestingMeterstoreTables.createTables(warehouse);
        ReadingsGenerator generator = ReadingsGenerator.builder()
                .seed(31)
                .meters(40)
                .startDay(LocalDate.of(2026, 9, 20))
                .days(16)
                .correctionsFraction(0.03)
                .build();
        ReadingsOracle oracle = ReadingsOracle.of(generator.iterator());
        try (Connection connection = warehouse.database().connect()) {
            new ReadingsLoader(TestingMeterstoreTables.hotTier()).load(connection, generator);
        }
        String meter = generator.maloIds().get(3);
        Instant rangeStart = generator.start().plus(Duration.ofDays(4));
        Instant rangeEnd = generator.start().plus(Duration.ofDays(9));
        List<Probe> probes = List.of(
                new Probe("SELECT count(*), sum(value) FROM readings_versions", oracle.summary(View.VERSIONS, ReadingsOracle.all())),
                new Probe("SELECT count(*), sum(value) FROM readings_versions WHERE malo_id = '%s'".formatted(meter), oracle.summary(View.VERSIONS, maloId(meter))),
                new Probe("SELECT count(*), sum(value) FROM readings_versions WHERE \"from\" >= from_iso8601_timestamp('%s') AND \"from\" < from_iso8601_timestamp('%s')".formatted(rangeStart, rangeEnd),
                        oracle.summary(View.VERSIONS, ReadingsOracle.fromRange(rangeStart, rangeEnd))),
                new Probe("SELECT count(*), sum(value) FROM readings", oracle.summary(View.RESOLVED, ReadingsOracle.all())));

        try (DistributedQueryRunner queryRunner = MeterstoreQueryRunner.builder(warehouse).withoutIceberg().build()) {
            String url = "jdbc:trino://%s/meterstore/metering".formatted(queryRunner.getCoordinator().getAddress());
            AtomicBoolean archiving = new AtomicBoolean(true);
            AtomicLong answers = new AtomicLong();
            Queue<String> wrong = new ConcurrentLinkedQueue<>();
            ExecutorService executor = Executors.newFixedThreadPool(READERS);
            List<Future<?>> readers = new ArrayList<>();
            for (int reader = 0; reader < READERS; reader++) {
                Probe probe = probes.get(reader);
                readers.add(executor.submit(() -> {
                    // at least one answer after archival ended, so every loop also checks the final state
                    boolean last = false;
                    while (!last) {
                        last = !archiving.get();
                        probe.check(url, wrong);
                        answers.incrementAndGet();
                    }
                    return null;
                }));
            }

            // the reader grace is never exceeded here: every plan, however old, must find its partitions
            ArchivalCycle archival = TestingArchival.cycle(warehouse, InstantSource.fixed(TestingArchival.LATER));
            List<Instant> watermarks = new ArrayList<>();
            for (int cycle = 0; cycle < CYCLES; cycle++) {
                ArchiveOutcome outcome = archival.archiveOnce();
                assertThat(outcome.kind()).as(outcome.describe()).isEqualTo(ArchiveOutcome.Kind.ARCHIVED);
                watermarks.add(outcome.watermark().instant());
                // let the readers answer against this watermark before the next one moves it (bounded: a stuck reader fails below)
                long target = answers.get() + READERS;
                for (int attempt = 0; attempt < 600 && answers.get() < target && wrong.isEmpty(); attempt++) {
                    Thread.sleep(100);
                }
            }
            archiving.set(false);
            for (Future<?> reader : readers) {
                reader.get();
            }
            executor.shutdownNow();

            assertThat(wrong).isEmpty();
            assertThat(answers.get()).isGreaterThanOrEqualTo(CYCLES);
            assertThat(watermarks).isSorted().doesNotHaveDuplicates();
            table.refresh();
            assertThat(WatermarkReader.current(table).watermark().instant()).isEqualTo(watermarks.getLast());
        }
    }

    private record Probe(String sql, Summary expected)
    {
        void check(String url, Queue<String> wrong)
        {
            try (Connection connection = DriverManager.getConnection(url, "reader", null);
                    Statement statement = connection.createStatement();
                    ResultSet result = statement.executeQuery(sql)) {
                result.next();
                long count = result.getLong(1);
                BigDecimal sum = result.getBigDecimal(2);
                if (count != expected.count() || sum == null || sum.compareTo(expected.sum()) != 0) {
                    wrong.add("%s returned %s rows summing to %s, expected %s rows summing to %s".formatted(sql, count, sum, expected.count(), expected.sum()));
                }
            }
            catch (SQLException e) {
                wrong.add("%s failed: %s".formatted(sql, e.getMessage()));
            }
        }
    }
}
