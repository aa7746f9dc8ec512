package io.meterstore.benchmark;

import com.google.common.collect.ImmutableMap;
import io.meterstore.archiver.cycle.ArchivalCycle;
import io.meterstore.archiver.cycle.ArchivalSettings;
import io.meterstore.archiver.cycle.ArchiveOutcome;
import io.meterstore.core.HotTier;
import io.meterstore.core.IcebergCatalogs;
import io.meterstore.core.IcebergCatalogs.JdbcCatalogSpec;
import io.meterstore.core.PartitionNaming;
import io.meterstore.storage.ColdStorage;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;

import java.io.Closeable;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.sql.DriverManager;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Archival cycles in a JVM of their own, so the heap is the archiver's alone: the first as
 * {@code meterstore-archiver archive-once} runs it, in a fresh JVM, then a second one in the same JVM, warm, as the
 * service's scheduler runs every cycle after its first. Prints each cycle's time (without JVM start-up and catalogue
 * loading) and the heap's peak.
 * <p>
 * Arguments: PostgreSQL JDBC URL, user, Iceberg catalogue name, warehouse location, schema, table, then the storage
 * properties as {@code key=value} ({@code fs.s3.enabled=true}, {@code s3.endpoint=...}), none for a local warehouse.
 */
public final class ArchiveOnceProbe
{
    public static final String RESULT_PREFIX = "archive-once-probe:";
    public static final String WARM_RESULT_PREFIX = "archive-once-probe-warm:";

    private ArchiveOnceProbe() {}

    public static void main(String[] args)
            throws Exception
    {
        if (args.length < 6) {
            System.err.println("Usage: ArchiveOnceProbe <jdbc-url> <user> <catalog-name> <warehouse> <schema> <table> [<storage property>=<value> ...]");
            System.exit(2);
        }
        String url = args[0];
        String user = args[1];
        Map<String, String> storageProperties = Arrays.stream(args, 6, args.length)
                .map(argument -> argument.split("=", 2))
                .collect(ImmutableMap.toImmutableMap(pair -> pair[0], pair -> pair[1]));
        // a local warehouse keeps the catalogue's own FileIO, as before the storage properties existed
        Optional<ColdStorage> storage = storageProperties.isEmpty() ? Optional.empty() : Optional.of(ColdStorage.create(storageProperties));
        JdbcCatalogSpec spec = new JdbcCatalogSpec(args[2], url, user, Optional.empty(), args[3]);
        Catalog catalog = storage
                .map(value -> IcebergCatalogs.jdbc(spec, properties -> value.fileIo("meterstore-archiver")))
                .orElseGet(() -> IcebergCatalogs.jdbc(spec));
        try {
            HotTier hotTier = new HotTier(args[4], new PartitionNaming(args[5], PartitionNaming.DEFAULT_STEP), Duration.ofSeconds(5));
            ArchivalCycle cycle = new ArchivalCycle(
                    catalog,
                    TableIdentifier.of(args[4], args[5]),
                    hotTier,
                    () -> DriverManager.getConnection(url, user, null),
                    ArchivalSettings.DEFAULTS,
                    InstantSource.fixed(BenchmarkDataset.LATER));
            List<MemoryPoolMXBean> heap = ManagementFactory.getMemoryPoolMXBeans().stream().filter(pool -> pool.getType() == MemoryType.HEAP).toList();
            for (String prefix : List.of(RESULT_PREFIX, WARM_RESULT_PREFIX)) {
                System.gc();
                heap.forEach(MemoryPoolMXBean::resetPeakUsage);
                long start = System.nanoTime();
                ArchiveOutcome outcome = cycle.archiveOnce();
                long nanos = System.nanoTime() - start;
                // each pool's own peak, added: an upper bound of the heap in use at any one moment
                long peak = heap.stream().mapToLong(pool -> pool.getPeakUsage().getUsed()).sum();
                System.out.println(outcome.describe());
                System.out.printf("%s kind=%s rows=%d nanos=%d peak_heap_bytes=%d max_heap_bytes=%d%n",
                        prefix, outcome.kind(), outcome.rows(), nanos, peak, Runtime.getRuntime().maxMemory());
            }
        }
        finally {
            if (catalog instanceof Closeable closeable) {
                closeable.close();
            }
            storage.ifPresent(ColdStorage::close);
        }
    }
}
