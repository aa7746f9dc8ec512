package io.meterstore.core;

import com.google.common.collect.ImmutableList;
import io.meterstore.core.CorrectionCommitter.Committed;
import io.meterstore.core.CorrectionCommitter.RejectedCorrectionException;
import org.apache.iceberg.BaseTable;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.PartitionData;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableOperations;
import org.apache.iceberg.TableProperties;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.encryption.EncryptionManager;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.inmemory.InMemoryCatalog;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.FileIO;
import org.apache.iceberg.io.LocationProvider;
import org.apache.iceberg.jdbc.UncheckedSQLException;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.util.SnapshotUtil;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.sql.SQLException;
import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static io.meterstore.core.TieringWatermark.ARCHIVED_RANGE_KEY;
import static io.meterstore.core.TieringWatermark.ROW_COUNT_KEY;
import static io.meterstore.core.TieringWatermark.WATERMARK_KEY;
import static java.util.Objects.requireNonNull;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Late corrections against a real Iceberg catalogue (the in-memory one, with its compare-and-swap commit). Races are
 * driven deterministically: the correction's table runs on table operations that commit an archival through another
 * table instance at an exact point of the correction's commit.
 */
final class TestCorrectionCommitter
{
    private static final TableIdentifier IDENTIFIER = TableIdentifier.of(Namespace.of("metering"), "readings");
    private static final Instant W1 = Instant.parse("2024-03-05T00:00:00Z");
    private static final Instant W2 = Instant.parse("2024-03-06T00:00:00Z");

    private InMemoryCatalog catalog;

    @BeforeEach
    void createTable()
    {
        catalog = new InMemoryCatalog();
        catalog.initialize("test", Map.of());
        IcebergTableSpec.createIfMissing(catalog, IDENTIFIER);
        // what the archiver committed so far: everything below W1
        archive(Instant.EPOCH, W1, "archived-1.parquet", 96);
    }

    @Test
    void testRepublishesTheBaseWatermark()
    {
        Table table = catalog.loadTable(IDENTIFIER);
        long base = table.currentSnapshot().snapshotId();
        DataFile correction = file("correction.parquet", W1.minusSeconds(86_400), W1.minusSeconds(900), 3);

        Committed committed = new CorrectionCommitter().commit(table, List.of(correction));

        assertThat(committed).isEqualTo(new Committed(table.currentSnapshot().snapshotId(), TieringWatermark.of(W1), 3, 1));
        Table reloaded = catalog.loadTable(IDENTIFIER);
        Snapshot snapshot = reloaded.currentSnapshot();
        assertThat(snapshot.parentId()).isEqualTo(base);
        assertThat(snapshot.summary())
                .containsEntry(WATERMARK_KEY, "2024-03-05T00:00:00Z")
                .containsEntry(ROW_COUNT_KEY, "3")
                .doesNotContainKey(ARCHIVED_RANGE_KEY);
        assertThat(WatermarkReader.current(reloaded).watermark()).isEqualTo(TieringWatermark.of(W1));
        assertThat(locations(reloaded)).containsExactlyInAnyOrder("archived-1.parquet", "correction.parquet");
    }

    @Test
    void testRefusesRowsAtOrAboveTheWatermark()
    {
        Table table = catalog.loadTable(IDENTIFIER);
        long base = table.currentSnapshot().snapshotId();
        CorrectionCommitter committer = new CorrectionCommitter();

        // one row exactly at W is a hot row: the whole correction is refused, nothing is committed
        DataFile below = file("below.parquet", W1.minusSeconds(3_600), W1.minusSeconds(900), 2);
        DataFile atWatermark = file("at.parquet", W1.minusSeconds(900), W1, 2);
        assertThatThrownBy(() -> committer.commit(table, List.of(below, atWatermark)))
                .isInstanceOfSatisfying(RejectedCorrectionException.class, e -> assertThat(e.reason()).isEqualTo(RejectedCorrectionException.Reason.NOT_BELOW_WATERMARK))
                .hasMessage("Correction of table 'test.metering.readings' holds rows from 2024-03-05T00:00:00Z, at or above the tiering watermark 2024-03-05T00:00:00Z: rows at or above the watermark belong to PostgreSQL; write them there");

        // without a bound on "from" nothing shows the rows are cold
        DataFile unbounded = DataFiles.builder(table.spec())
                .withPath("unbounded.parquet")
                .withFormat("parquet")
                .withPartition(month(table, W1.minusSeconds(900)))
                .withFileSizeInBytes(1024)
                .withRecordCount(1)
                .build();
        assertThatThrownBy(() -> committer.commit(table, List.of(unbounded)))
                .isInstanceOfSatisfying(RejectedCorrectionException.class, e -> assertThat(e.reason()).isEqualTo(RejectedCorrectionException.Reason.FROM_BOUND_MISSING))
                .hasMessageStartingWith("Correction file 'unbounded.parquet' for table 'test.metering.readings' declares no upper bound of \"from\"");

        assertThat(catalog.loadTable(IDENTIFIER).currentSnapshot().snapshotId()).isEqualTo(base);
    }

    @Test
    void testArchivalLandingJustBeforeTheSwapIsCarried()
    {
        // the correction read its base at W1 and built its snapshot on it; the archival to W2 lands right before the
        // catalogue's compare-and-swap, which then fails; the retry must carry W2, never republish W1
        HookedOperations operations = hookedOperations();
        operations.beforeCommit(() -> archive(W1, W2, "archived-2.parquet", 96));
        Table table = new BaseTable(operations, IDENTIFIER.toString());
        DataFile correction = file("correction.parquet", W1.minusSeconds(86_400), W1.minusSeconds(900), 5);

        Committed committed = new CorrectionCommitter().commit(table, List.of(correction));

        assertThat(operations.commits()).isEqualTo(2);
        assertThat(committed.watermark()).isEqualTo(TieringWatermark.of(W2));
        assertThat(committed.attempts()).isEqualTo(2);
        assertRaceOutcome(committed);
    }

    @Test
    void testArchivalLandingBetweenReadAndCommitIsCaughtOnTheBase()
    {
        // the archival lands right after the correction read W1 and before the commit refreshes its base: the
        // validator, which runs on the base the commit lands on, rejects the summary built for W1
        HookedOperations operations = hookedOperations();
        operations.afterRefresh(() -> archive(W1, W2, "archived-2.parquet", 96));
        Table table = new BaseTable(operations, IDENTIFIER.toString());
        DataFile correction = file("correction.parquet", W1.minusSeconds(86_400), W1.minusSeconds(900), 5);

        Committed committed = new CorrectionCommitter().commit(table, List.of(correction));

        // the first attempt never reached the catalogue
        assertThat(operations.commits()).isEqualTo(1);
        assertThat(committed.watermark()).isEqualTo(TieringWatermark.of(W2));
        assertThat(committed.attempts()).isEqualTo(2);
        assertRaceOutcome(committed);
    }

    @Test
    void testLibraryRetryCannotRepublishAnOlderWatermark()
    {
        // someone turned the library's retry back on: it refreshes and re-applies the summary built for W1 on the W2
        // base, and the validator refuses that, so the loop re-derives
        catalog.loadTable(IDENTIFIER).updateProperties().set(TableProperties.COMMIT_NUM_RETRIES, "3").set(TableProperties.COMMIT_MIN_RETRY_WAIT_MS, "1").commit();
        HookedOperations operations = hookedOperations();
        operations.beforeCommit(() -> archive(W1, W2, "archived-2.parquet", 96));
        Table table = new BaseTable(operations, IDENTIFIER.toString());
        DataFile correction = file("correction.parquet", W1.minusSeconds(86_400), W1.minusSeconds(900), 5);

        Committed committed = new CorrectionCommitter().commit(table, List.of(correction));

        assertThat(committed.watermark()).isEqualTo(TieringWatermark.of(W2));
        assertRaceOutcome(committed);
    }

    @Test
    void testGivesUpWhenEveryAttemptLosesTheRace()
    {
        HookedOperations operations = hookedOperations();
        // before every swap, another correction at the same watermark lands first
        AtomicInteger others = new AtomicInteger();
        operations.beforeEveryCommit(() -> {
            Table other = catalog.loadTable(IDENTIFIER);
            other.newAppend()
                    .appendFile(file("other-%s.parquet".formatted(others.incrementAndGet()), W1.minusSeconds(7_200), W1.minusSeconds(3_600), 1))
                    .set(WATERMARK_KEY, TieringWatermark.formatInstant(W1))
                    .set(ROW_COUNT_KEY, "1")
                    .commit();
        });
        Table table = new BaseTable(operations, IDENTIFIER.toString());
        DataFile correction = file("correction.parquet", W1.minusSeconds(86_400), W1.minusSeconds(900), 5);

        assertThatThrownBy(() -> new CorrectionCommitter(3).commit(table, List.of(correction)))
                .isInstanceOfSatisfying(RejectedCorrectionException.class, e -> assertThat(e.reason()).isEqualTo(RejectedCorrectionException.Reason.COMMIT_CONTENDED))
                .hasMessage("Correction of table 'metering.readings' lost the commit race 3 times: other writers keep committing; retry the correction later");
        assertThat(operations.commits()).isEqualTo(3);
        assertThat(locations(catalog.loadTable(IDENTIFIER))).doesNotContain("correction.parquet").contains("other-1.parquet", "other-2.parquet", "other-3.parquet");
    }

    @Test
    void testSwapFailingInTheCatalogueDatabaseHasAnUnknownOutcome()
    {
        // the swap ran, then the catalogue's database went away and the pool could not reconnect: did it move the pointer?
        HookedOperations operations = hookedOperations();
        operations.failAfterNextSwap(new UncheckedSQLException(new SQLException("Connection to localhost:5432 refused", "08001"), "Failed to connect: jdbc:postgresql://localhost:5432/metering"));
        Table table = new BaseTable(operations, IDENTIFIER.toString());
        DataFile correction = file("correction.parquet", W1.minusSeconds(86_400), W1.minusSeconds(900), 5);

        // the caller keeps its files: the statement run again finds out what landed
        assertThatThrownBy(() -> new CorrectionCommitter().commit(table, List.of(correction)))
                .isInstanceOf(CommitStateUnknownException.class);
    }

    /** The correction landed on the archival: it carries W2, the archival's rows stay, and no snapshot ever moved W back. */
    private void assertRaceOutcome(Committed committed)
    {
        Table table = catalog.loadTable(IDENTIFIER);
        Snapshot snapshot = table.currentSnapshot();
        assertThat(snapshot.snapshotId()).isEqualTo(committed.snapshotId());
        assertThat(snapshot.summary())
                .containsEntry(WATERMARK_KEY, "2024-03-06T00:00:00Z")
                .containsEntry(ROW_COUNT_KEY, "5");
        Snapshot parent = table.snapshot(snapshot.parentId());
        assertThat(parent.summary()).containsEntry(ARCHIVED_RANGE_KEY, "2024-03-05T00:00:00Z/2024-03-06T00:00:00Z");
        assertThat(WatermarkReader.current(table).watermark()).isEqualTo(TieringWatermark.of(W2));
        assertThat(locations(table)).containsExactlyInAnyOrder("archived-1.parquet", "archived-2.parquet", "correction.parquet");
        assertThat(watermarksOldestFirst(table)).containsExactly(W1, W2, W2);
    }

    private HookedOperations hookedOperations()
    {
        return new HookedOperations(((HasTableOperations) catalog.loadTable(IDENTIFIER)).operations());
    }

    /** An archival commit through its own table instance: its files and W moved to {@code end}. */
    private void archive(Instant start, Instant end, String location, long rows)
    {
        Table table = catalog.loadTable(IDENTIFIER);
        Instant lastFrom = end.minusSeconds(900);
        table.newAppend()
                .appendFile(file(location, start.isBefore(lastFrom.minusSeconds(86_400)) ? lastFrom.minusSeconds(86_400) : start, lastFrom, rows))
                .set(WATERMARK_KEY, TieringWatermark.formatInstant(end))
                .set(ROW_COUNT_KEY, String.valueOf(rows))
                .set(ARCHIVED_RANGE_KEY, TieringWatermark.formatInstant(start) + "/" + TieringWatermark.formatInstant(end))
                .commit();
    }

    private DataFile file(String location, Instant minFrom, Instant maxFrom, long rows)
    {
        Table table = catalog.loadTable(IDENTIFIER);
        int from = ReadingsColumn.FROM.fieldId();
        Metrics metrics = new Metrics(rows, Map.of(), Map.of(), Map.of(), Map.of(), Map.of(from, micros(minFrom)), Map.of(from, micros(maxFrom)));
        return DataFiles.builder(table.spec())
                .withPath(location)
                .withFormat("parquet")
                .withPartition(month(table, maxFrom))
                .withFileSizeInBytes(1024)
                .withMetrics(metrics)
                .build();
    }

    private static ByteBuffer micros(Instant instant)
    {
        return Conversions.toByteBuffer(ReadingsColumn.FROM.icebergType(), instant.getEpochSecond() * 1_000_000 + instant.getNano() / 1_000);
    }

    private static PartitionData month(Table table, Instant instant)
    {
        YearMonth month = YearMonth.from(instant.atOffset(ZoneOffset.UTC));
        PartitionData partition = new PartitionData(table.spec().partitionType());
        partition.set(0, (month.getYear() - 1970) * 12 + month.getMonthValue() - 1);
        return partition;
    }

    private static List<String> locations(Table table)
    {
        try (CloseableIterable<FileScanTask> tasks = table.newScan().planFiles()) {
            ImmutableList.Builder<String> locations = ImmutableList.builder();
            for (FileScanTask task : tasks) {
                locations.add(task.file().location());
            }
            return locations.build();
        }
        catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static List<Instant> watermarksOldestFirst(Table table)
    {
        List<Instant> watermarks = new ArrayList<>();
        for (Snapshot snapshot : SnapshotUtil.ancestorsOf(table.currentSnapshot().snapshotId(), table::snapshot)) {
            watermarks.addFirst(TieringWatermark.fromSummary(snapshot.summary()).orElseThrow().instant());
        }
        return watermarks;
    }

    /** The catalogue's own table operations, with a hook run once after a refresh or before a compare-and-swap. */
    private static final class HookedOperations
            implements TableOperations
    {
        private final TableOperations delegate;
        private final AtomicReference<Runnable> afterRefresh = new AtomicReference<>();
        private final AtomicReference<Runnable> beforeCommit = new AtomicReference<>();
        private final AtomicReference<Runnable> beforeEveryCommit = new AtomicReference<>();
        private final AtomicReference<RuntimeException> afterCommit = new AtomicReference<>();
        private final AtomicInteger commits = new AtomicInteger();

        HookedOperations(TableOperations delegate)
        {
            this.delegate = requireNonNull(delegate, "delegate is null");
        }

        void afterRefresh(Runnable hook)
        {
            afterRefresh.set(hook);
        }

        void beforeCommit(Runnable hook)
        {
            beforeCommit.set(hook);
        }

        void beforeEveryCommit(Runnable hook)
        {
            beforeEveryCommit.set(hook);
        }

        /** The next swap happens, and then reports {@code failure}: a reply lost, as the catalogue surfaces it. */
        void failAfterNextSwap(RuntimeException failure)
        {
            afterCommit.set(failure);
        }

        int commits()
        {
            return commits.get();
        }

        @Override
        public TableMetadata current()
        {
            return delegate.current();
        }

        @Override
        public TableMetadata refresh()
        {
            TableMetadata metadata = delegate.refresh();
            Runnable hook = afterRefresh.getAndSet(null);
            if (hook != null) {
                hook.run();
            }
            return metadata;
        }

        @Override
        public void commit(TableMetadata base, TableMetadata metadata)
        {
            commits.incrementAndGet();
            Runnable hook = beforeCommit.getAndSet(null);
            if (hook != null) {
                hook.run();
            }
            Runnable every = beforeEveryCommit.get();
            if (every != null) {
                every.run();
            }
            delegate.commit(base, metadata);
            RuntimeException failure = afterCommit.getAndSet(null);
            if (failure != null) {
                throw failure;
            }
        }

        @Override
        public FileIO io()
        {
            return delegate.io();
        }

        @Override
        public EncryptionManager encryption()
        {
            return delegate.encryption();
        }

        @Override
        public String metadataFileLocation(String fileName)
        {
            return delegate.metadataFileLocation(fileName);
        }

        @Override
        public LocationProvider locationProvider()
        {
            return delegate.locationProvider();
        }

        @Override
        public TableOperations temp(TableMetadata uncommittedMetadata)
        {
            return delegate.temp(uncommittedMetadata);
        }

        @Override
        public long newSnapshotId()
        {
            return delegate.newSnapshotId();
        }

        @Override
        public boolean requireStrictCleanup()
        {
            return delegate.requireStrictCleanup();
        }
    }
}
